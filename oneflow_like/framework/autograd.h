// Autograd: the recorded graph (Node, Edge), grad mode, and the backward engine.
// Gradient formulas live with their op family (oneflow_like/ops/<family>.cc) and are written with
// the functional API, so backward runs through the VM and is traced in lazy mode like any op.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {

struct Edge {
  std::shared_ptr<Node> fn;  // null: no gradient flows there
  int input_nr = 0;          // which gradient slot of `fn` receives it
};

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
};

// Gradient of a leaf: accumulates into `.grad` (runs the leaf's hooks first).
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> variable) : variable_(variable) {}
  StatusOr<TensorList> Apply(TensorList grads, bool create_graph) override;
  std::string name() const override { return "AccumulateGrad"; }
  std::shared_ptr<TensorImpl> variable() const { return variable_.lock(); }

 private:
  std::weak_ptr<TensorImpl> variable_;
};

// The node recorded for an op call: saved tensors + attrs, backward by the op's grad formula.
class OpNode : public Node {
 public:
  OpNode(const OpDef* op, AttrMap attrs) : op_(op), attrs_(std::move(attrs)) {}
  StatusOr<TensorList> Apply(TensorList grads, bool create_graph) override;
  std::string name() const override { return std::string(op_->name) + "Backward"; }
  void ReleaseVariables() override;
  void Save(TensorSpan inputs, TensorSpan outputs);
  void RefreshOutputVersions();  // after an in-place op bumped its output's version
  std::vector<TensorMeta> input_metas;

 private:
  const OpDef* op_;
  AttrMap attrs_;
  TensorList saved_inputs_, saved_outputs_;
  std::vector<int64_t> saved_versions_;  // inputs then outputs
  bool released_ = false;
};

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
// Registers a hook on a tensor's gradient (leaf: before accumulation; non-leaf: on its grad_fn).
Status RegisterHook(Tensor& t, TensorHook hook);
Status RetainGrad(Tensor& t);

// loss.backward(): accumulates into the leaves' .grad.
Status Backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
                bool create_graph);
// autograd.grad(outputs, inputs): returns the gradients without touching .grad.
StatusOr<TensorList> Grad(const TensorList& outputs, const TensorList& inputs,
                          const TensorList& grad_outputs, bool retain_graph, bool create_graph,
                          bool allow_unused);

}  // namespace oneflow_like
