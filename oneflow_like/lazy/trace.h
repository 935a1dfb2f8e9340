// Tracing for nn.Graph: while a Trace is active on a thread, every op dispatched there is
// recorded instead of run. Graph inputs become lazy tensors; eager tensors met along the way
// (parameters, buffers, optimizer state) are captured by reference and read at run time;
// in-place writes to them become assignments applied after each run.
//
// Views: a view op's lazy result is a value of its own, so the trace remembers where each view
// lies in its root (the lazy or captured tensor it was taken from: shape, strides and offset in
// the root's contiguous layout). An in-place write to a view is written back into the root
// (where(mask, as_strided_scatter(new view value), root), the root rebinds), and a view whose
// root has been written since its value was taken is re-read from the root (as_strided) before
// its next use, so views and roots see each other's writes as eager tensors do.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace lazy {

struct TracedOp {
  const OpDef* op;
  AttrMap attrs;
  std::vector<int64_t> inputs;   // value ids
  std::vector<int64_t> outputs;  // value ids
  bool inplace = false;          // recorded from an in-place call (its target rebinds)
  // Autograd would have recorded a node here (grad mode on, the op has a gradient, an input
  // requires grad), and which inputs required grad: flow.func.vmap replays the others detached
  // (detach, no_grad leave no op in the trace).
  bool differentiable = false;
  std::vector<bool> input_requires_grad;
};

struct TracedValue {
  enum Kind { kInput, kCaptured, kOpResult };
  Kind kind;
  TensorMeta meta;
  int64_t index;  // input index, capture index, or op index
};

class Trace : public std::enable_shared_from_this<Trace> {
 public:
  static std::shared_ptr<Trace> Create() { return std::shared_ptr<Trace>(new Trace()); }
  // A lazy stand-in for graph input `example` (its meta only).
  Tensor AddInput(const Tensor& example);
  void SetOutputs(const TensorList& outputs);

  // The lazy-dispatch handler (installed by Activate).
  StatusOr<TensorList> Record(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                              const std::vector<TensorMeta>& metas, const Tensor* inplace_out);

  const std::vector<TracedOp>& ops() const { return ops_; }
  const std::vector<TracedValue>& values() const { return values_; }
  int64_t num_inputs() const { return num_inputs_; }
  const std::vector<Tensor>& captured() const { return captured_; }
  // (capture index, value id): eager tensors overwritten by the graph, with their final value.
  std::vector<std::pair<int64_t, int64_t>> Assignments() const;
  const std::vector<int64_t>& output_values() const { return output_values_; }
  std::string ToString() const;

 private:
  Trace() = default;
  int64_t ValueOf(const Tensor& t);  // captures eager tensors on first use
  int64_t NewValue(TracedValue v) {
    values_.push_back(std::move(v));
    return static_cast<int64_t>(values_.size()) - 1;
  }
  Tensor MakeLazy(int64_t value);
  struct ViewOf {
    Tensor self;  // the view (held, so that its address is not reused within the trace)
    Tensor root;  // lazy, or a captured eager tensor (contiguous, offset 0)
    Shape shape;
    DimVector strides;
    int64_t offset = 0;
    int64_t derived_from = -1;  // the root value this view's current value was read from
  };
  int64_t RootValue(const Tensor& root) { return ValueOf(root); }
  // Records `view` (the single result of view op `op` on `in`) as a view of in's root; false
  // (and recorded in untracked_) when its place in the root is unknown (an eager input that is
  // not contiguous from offset 0).
  bool TrackView(const OpDef& op, const AttrMap& attrs, const Tensor& in, const Tensor& view);
  // Re-reads `t` from its root when the root was written after t's value was taken (an error
  // for an untracked view).
  Status RefreshView(const OpDef& op, const Tensor& t);
  // Writes the new value of view `t` back into its root.
  Status WriteBack(const OpDef& op, const Tensor& t);

  std::vector<TracedOp> ops_;
  std::vector<TracedValue> values_;
  int64_t num_inputs_ = 0;
  std::vector<Tensor> captured_;
  absl::flat_hash_map<TensorImpl*, int64_t> capture_value_;  // eager tensor -> current value id
  absl::flat_hash_map<TensorImpl*, int64_t> capture_index_;
  std::vector<int64_t> output_values_;
  absl::flat_hash_map<TensorImpl*, ViewOf> views_;  // lazy view -> where it lies in its root
  // Lazy views whose place in their root is unknown (a view of a non-contiguous captured tensor):
  // only `self`, `root` and `derived_from` are set; writing them, or reading them after their
  // root was written, is an error rather than a stale value.
  absl::flat_hash_map<TensorImpl*, ViewOf> untracked_;
  bool in_view_bookkeeping_ = false;  // recording the ops of a refresh / write-back
};

// Makes `trace` the active trace of this thread for the scope's lifetime.
class TraceScope {
 public:
  explicit TraceScope(std::shared_ptr<Trace> trace);
  ~TraceScope();

 private:
  std::shared_ptr<Trace> prev_;
};

std::shared_ptr<Trace> ActiveTrace();

}  // namespace lazy
}  // namespace oneflow_like
