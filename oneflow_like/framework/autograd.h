// Autograd: the recorded graph (Node, Edge), grad mode, and the backward engine.
// Gradient formulas live with their op family (oneflow_like/ops/<family>.cc) and are written with
// the functional API, so backward runs through the VM and is traced in lazy mode like any op.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {

struct Edge {
  std::shared_ptr<Node> fn;  // null: no gradient flows there
  int input_nr = 0;          // which gradient slot of `fn` receives it
};

// Node hooks (torch.autograd.graph.Node.register_prehook / register_hook). A pre-hook sees the
// gradients of the node's forward outputs, a post-hook those it returned for its forward inputs
// as well; either may return replacements (nullopt: keep them).
using NodePreHook =
    std::function<StatusOr<std::optional<TensorList>>(const TensorList& grad_outputs)>;
using NodePostHook = std::function<StatusOr<std::optional<TensorList>>(
    const TensorList& grad_inputs, const TensorList& grad_outputs)>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node() = default;
  // grads has one entry per forward output (undefined = zero); returns one per forward input.
  virtual StatusOr<TensorList> Apply(TensorList grads, bool create_graph) = 0;
  virtual std::string name() const = 0;
  virtual void ReleaseVariables() {}
  int num_outputs = 1;
  uint64_t sequence_nr = 0;
  std::vector<Edge> next_edges;
  // Hooks of non-leaf tensors, per forward output: run on the summed gradient before Apply.
  std::vector<std::vector<TensorHook>> output_hooks;
  // Non-leaf tensors that called retain_grad(), per forward output; filled after the hooks ran.
  std::vector<std::weak_ptr<TensorImpl>> retained;
  // Removing a hook empties it in place (handles hold indices).
  std::vector<NodePreHook> pre_hooks;
  std::vector<NodePostHook> post_hooks;
  // The front end's per-node state (Python: the grad_fn.metadata dict), created on first use.
  std::shared_ptr<void> front_end_state;
};

// Gradient of a leaf: accumulates into `.grad` (runs the leaf's hooks first).
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> variable) : variable_(variable) {}
  StatusOr<TensorList> Apply(TensorList grads, bool create_graph) override;
  std::string name() const override { return "AccumulateGrad"; }
  std::shared_ptr<TensorImpl> variable() const { return variable_.lock(); }
  // The leaf's register_hook hooks on `g` (each may replace it).
  StatusOr<Tensor> RunTensorHooks(Tensor g) const;

 private:
  std::weak_ptr<TensorImpl> variable_;
};

// The node recorded for an op call: saved tensors + attrs, backward by the op's grad formula.
class OpNode : public Node {
 public:
  OpNode(const OpDef* op, AttrMap attrs) : op_(op), attrs_(std::move(attrs)) {}
  ~OpNode() override;
  StatusOr<TensorList> Apply(TensorList grads, bool create_graph) override;
  // torch's autograd node name for the op (derivatives.yaml: "MulBackward0", "AddmmBackward0");
  // ops torch has no node for: "<CamelName>Backward0".
  std::string name() const override;
  const OpDef* op() const { return op_; }
  const AttrMap& attrs() const { return attrs_; }
  void ReleaseVariables() override;
  // Keeps the tensors the gradient formula reads; under saved_tensors_hooks, what the active
  // pack hook made of each instead (fails with the pack hook's error).
  Status Save(TensorSpan inputs, TensorSpan outputs);
  void RefreshOutputVersions();  // after an in-place op bumped its output's version
  std::vector<TensorMeta> input_metas;

 private:
  // Under saved_tensors_hooks: the saved inputs and outputs from their packed forms.
  StatusOr<std::pair<TensorList, TensorList>> UnpackSaved(bool create_graph) const;

  const OpDef* op_;
  AttrMap attrs_;
  TensorList saved_inputs_, saved_outputs_;
  std::vector<int64_t> saved_versions_;         // inputs then outputs
  std::shared_ptr<struct PackedSaved> packed_;  // null without hooks
  bool released_ = false;
};

// torch.autograd.graph.saved_tensors_hooks: while a hook pair is pushed (thread-local, the
// innermost one wins), every tensor an op saves for backward goes through Pack at save time and
// the result's Unpack gives it back when backward reads it.
class PackedTensor {
 public:
  virtual ~PackedTensor() = default;
  virtual StatusOr<Tensor> Unpack() = 0;
};
class SavedTensorsHooks {
 public:
  virtual ~SavedTensorsHooks() = default;
  virtual StatusOr<std::unique_ptr<PackedTensor>> Pack(const Tensor& t) = 0;
};
// Fails with the message given to DisableSavedTensorsHooks while it is set.
Status PushSavedTensorsHooks(std::shared_ptr<SavedTensorsHooks> hooks);
Status PopSavedTensorsHooks();
std::shared_ptr<SavedTensorsHooks> CurrentSavedTensorsHooks();  // null when none is pushed
// torch.autograd.graph.disable_saved_tensors_hooks: pushing a pair fails with `message` (an
// empty optional enables them again); also fails now if a pair is already pushed.
Status DisableSavedTensorsHooks(std::optional<std::string> message);
std::optional<std::string> SavedTensorsHooksDisabledMessage();
// Checks a tensor an unpack hook returned against the saved one's shape and dtype.
Status CheckUnpacked(const std::string& node, const TensorMeta& saved, const Tensor& unpacked,
                     int index);

// The backward pass running on this thread (torch._C._current_graph_task_id; -1 outside one)
// and whether it will run `node` (torch._C._will_engine_execute_node).
int64_t CurrentGraphTaskId();
bool WillEngineExecuteNode(const Node* node);

// Thread-local grad mode.
bool GradModeEnabled();
void SetGradMode(bool enabled);
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradModeEnabled()) { SetGradMode(enabled); }
  ~AutoGradMode() { SetGradMode(prev_); }

 private:
  bool prev_;
};
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

// The edge a gradient for `t` should flow into (its grad_fn, or its leaf accumulator).
Edge GradientEdge(const Tensor& t);
// Records `node` as the producer of `outputs` (sets grad_fn / output_nr / requires_grad).
void SetHistory(TensorSpan outputs, const std::shared_ptr<Node>& node);
// In-place ops on views (torch's rebase_history). CheckViewInplace raises torch's errors for the
// views it refuses to modify in place with grad: made in no_grad mode, outputs of an op returning
// several views, views of a leaf that requires grad. RebaseHistory, after `node` (the in-place
// op's, recorded on `view`) ran: the base's grad_fn becomes CopySlices (the base's old gradient
// outside the view, `node`'s inside it) and the view's an as_strided view of the base; other
// views of the base regenerate theirs when next read (TensorImpl::view_base).
Status CheckViewInplace(const char* op, const Tensor& view);
Status RebaseHistory(const Tensor& view, const std::shared_ptr<Node>& node);
// Registers a hook on a tensor's gradient (leaf: before accumulation; non-leaf: on its grad_fn).
// Returns the hook's index in the leaf's hooks or its grad_fn's output_hooks (removing it
// empties that entry).
StatusOr<int> RegisterHook(Tensor& t, TensorHook hook);
// Tensor.register_post_accumulate_grad_hook (leaves that require grad only); returns its index.
StatusOr<int> RegisterPostAccumulateGradHook(Tensor& t, PostAccumulateGradHook hook);
Status RetainGrad(Tensor& t);

// loss.backward(): accumulates into the leaves' .grad. With `inputs` (backward(inputs=...)),
// into those tensors' .grad only (leaves or not), running only the nodes on a path to them.
Status Backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
                bool create_graph, const TensorList& inputs = {});
// autograd.grad(outputs, inputs): returns the gradients without touching .grad; runs (and, without
// retain_graph, frees) only the nodes on a path from `outputs` to `inputs`, as torch.
StatusOr<TensorList> Grad(const TensorList& outputs, const TensorList& inputs,
                          const TensorList& grad_outputs, bool retain_graph, bool create_graph,
                          bool allow_unused);

}  // namespace oneflow_like
