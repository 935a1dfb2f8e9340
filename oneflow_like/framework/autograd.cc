#include "oneflow_like/framework/autograd.h"

#include <cctype>
#include <queue>
#include <string_view>

#include <atomic>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "oneflow_like/framework/anomaly.h"
#include "oneflow_like/framework/autocast.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {

namespace {
std::atomic<bool> g_anomaly_mode{false};
std::atomic<bool> g_anomaly_check_nan{true};
}  // namespace

bool AnomalyModeEnabled() {
  return g_anomaly_mode.load(std::memory_order_relaxed);
}
bool AnomalyCheckNan() {
  return g_anomaly_check_nan.load(std::memory_order_relaxed);
}
void SetAnomalyMode(bool enabled, bool check_nan) {
  g_anomaly_mode.store(enabled);
  g_anomaly_check_nan.store(check_nan);
}

namespace {
thread_local bool t_grad_mode = true;

// Anomaly mode: fails naming `n` when one of the gradients it returned holds a NaN (as PyTorch:
// "Function 'XBackward0' returned nan values in its 0th output"). Waits for each gradient.
Status CheckNoNan(const Node& n, const TensorList& out) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& g = out[i];
    if (!g.defined() || g.is_lazy() || g.numel() == 0 || !IsFloating(g.dtype())) continue;
    ASSIGN_OR_RETURN(Tensor ne, functional::Compare(functional::CompareOp::kNe, g, g));
    ASSIGN_OR_RETURN(ne, functional::Cast(ne, DType::kF32));
    ASSIGN_OR_RETURN(Tensor count, functional::Sum(ne));
    if (!count.device().is_cpu()) {
      ASSIGN_OR_RETURN(count, functional::To(count, Device::CPU()));
    }
    float nans = 0;
    RETURN_IF_ERROR(functional::CopyToHost(count, &nans));
    if (nans > 0) {  // Aborted: a RuntimeError in Python, as torch's anomaly error
      return absl::AbortedError(absl::StrFormat(
          "[detect_anomaly] Function '%s' returned nan values in its %zuth output", n.name(), i));
    }
  }
  return Status();
}

// Sums `g` down to `shape` (undoing broadcasting) and casts to `dtype`.
StatusOr<Tensor> ReduceToMeta(Tensor g, const TensorMeta& m) {
  if (g.shape() != m.shape) {
    ASSIGN_OR_RETURN(g, functional::SumToShape(g, m.shape));
  }
  if (g.dtype() != m.dtype) {
    ASSIGN_OR_RETURN(g, functional::Cast(g, m.dtype));
  }
  return g;
}

// What a gradient formula sees for the forward tensors its op does not save (SaveInputs(false) /
// SaveOutputs(false)): stand-ins of the right shape, dtype and device (`grads` give the outputs'),
// without memory, whose blob carries an error naming the op, so a formula that reads their data
// by mistake fails with that error instead of reading past an empty list.
TensorList Unsaved(const std::string& node, const char* what,
                   const std::vector<TensorMeta>& metas) {
  TensorList r;
  r.reserve(metas.size());
  for (size_t i = 0; i < metas.size(); ++i) {
    Tensor t = Tensor::Empty(metas[i].shape, metas[i].dtype, metas[i].device);
    t.blob()->dependence()->mark_error(
        Internal("[%s] the gradient formula reads forward %s %d, which the op does not save (it is "
                 "declared Save%ss(false), or no gradient that reads it was needed)",
                 node, what, static_cast<int>(i), what[0] == 'i' ? "Input" : "Output"));
    r.push_back(std::move(t));
  }
  return r;
}

StatusOr<Tensor> Accumulate(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return functional::Add(a, b);
}
}  // namespace

bool GradModeEnabled() {
  return t_grad_mode;
}
void SetGradMode(bool enabled) {
  t_grad_mode = enabled;
}

namespace {
thread_local std::vector<std::shared_ptr<SavedTensorsHooks>> t_saved_hooks;
thread_local std::optional<std::string> t_saved_hooks_disabled;
}  // namespace

Status PushSavedTensorsHooks(std::shared_ptr<SavedTensorsHooks> hooks) {
  if (t_saved_hooks_disabled)
    return absl::AbortedError(*t_saved_hooks_disabled);  // RuntimeError, as torch
  t_saved_hooks.push_back(std::move(hooks));
  return Status();
}
Status PopSavedTensorsHooks() {
  if (t_saved_hooks.empty())
    return Internal("[saved_tensors_hooks] popping a hook pair when none is pushed");
  t_saved_hooks.pop_back();
  return Status();
}
std::shared_ptr<SavedTensorsHooks> CurrentSavedTensorsHooks() {
  return t_saved_hooks.empty() ? nullptr : t_saved_hooks.back();
}
Status DisableSavedTensorsHooks(std::optional<std::string> message) {
  if (message && !t_saved_hooks.empty()) return absl::AbortedError(*message);
  t_saved_hooks_disabled = std::move(message);
  return Status();
}
std::optional<std::string> SavedTensorsHooksDisabledMessage() {
  return t_saved_hooks_disabled;
}

Status CheckUnpacked(const std::string& node, const TensorMeta& saved, const Tensor& unpacked,
                     int index) {
  if (!unpacked.defined() || unpacked.shape() != saved.shape || unpacked.dtype() != saved.dtype)
    return InvalidArgument(
        "[%s] the unpack_hook of saved_tensors_hooks returned %s for saved tensor %d, which was "
        "%s %s when it was saved: an unpacked tensor must have the saved one's shape and dtype",
        node, unpacked.defined() ? unpacked.meta_string() : std::string("an undefined tensor"),
        index, saved.shape.ToString(), DTypeName(saved.dtype));
  return Status();
}

// The packed forms of an OpNode's saved tensors (saved_tensors_hooks), with what backward
// needs of each original: its meta (to check the unpacked tensor), its storage and version
// then (the in-place check, while that storage lives) and, for inputs, the edge its gradient
// flows into (create_graph attaches the unpacked tensor there, so double backward reaches it).
struct PackedSaved {
  struct Entry {
    std::unique_ptr<PackedTensor> packed;  // null: the formula saved an undefined tensor
    TensorMeta meta;
    std::weak_ptr<Storage> storage;
    int64_t version = 0;
    Edge edge;
  };
  std::vector<Entry> inputs, outputs;
};

namespace {
StatusOr<std::vector<PackedSaved::Entry>> PackAll(SavedTensorsHooks& hooks, TensorSpan ts,
                                                  bool with_edges) {
  std::vector<PackedSaved::Entry> out(ts.size());
  NoGradGuard no_grad;  // what a pack hook computes is not part of the graph
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (!t.defined()) continue;
    PackedSaved::Entry& e = out[i];
    e.meta = TensorMeta{t.shape(), t.dtype(), t.device()};
    e.storage = t.impl()->storage;
    e.version = t.version();
    if (with_edges) e.edge = GradientEdge(t);
    ASSIGN_OR_RETURN(e.packed, hooks.Pack(t));
  }
  return out;
}

// torch's autograd node name of one of our ops (OpNode::name), as derivatives.yaml names them:
// the ATen op's CamelCase name, "Backward", and the overload's index. Ops named like their ATen
// op take the rule (relu -> ReluBackward0); the table lists the others. The gradient ops
// themselves ("relu_grad", run under create_graph) are named like torch's double-backward nodes.
std::string CamelCase(std::string_view op) {
  std::string r;
  bool up = true;
  for (char c : op) {
    if (c == '_') {
      up = true;
      continue;
    }
    r += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return r;
}
std::string TorchNodeName(const char* op, const AttrMap& attrs,
                          const std::vector<TensorMeta>& inputs) {
  static const absl::flat_hash_map<std::string_view, const char*> kNames = {
      {"add_scalar", "AddBackward0"},
      {"mul_scalar", "MulBackward0"},
      {"rsub_scalar", "RsubBackward1"},
      {"rdiv_scalar", "MulBackward0"},  // torch: other * self.reciprocal()
      {"pow", "PowBackward1"},
      {"pow_scalar", "PowBackward0"},
      {"rpow_scalar", "PowBackward2"},
      {"clamp", "ClampBackward1"},
      {"clamp_tensor", "ClampBackward1"},
      {"where_scalar_input", "WhereBackward0"},
      {"where_scalar_other", "WhereBackward0"},
      {"lerp", "LerpBackward1"},
      {"lerp_scalar", "LerpBackward0"},
      {"reshape", "ViewBackward0"},
      {"contiguous", "CloneBackward0"},
      {"cast", "ToCopyBackward0"},
      {"to_device", "ToCopyBackward0"},
      {"copy_", "CopyBackwards"},
      {"pad", "ConstantPadNdBackward0"},
      {"layer_norm", "NativeLayerNormBackward0"},
      {"batch_norm", "NativeBatchNormBackward0"},
      {"group_norm", "NativeGroupNormBackward0"},
      {"rms_norm", "RmsNormBackward0"},
      {"conv2d", "ConvolutionBackward0"},
      {"conv3d", "ConvolutionBackward0"},
      {"max_pool2d", "MaxPool2DWithIndicesBackward0"},
      {"max_pool3d", "MaxPool3DWithIndicesBackward0"},
      {"avg_pool2d", "AvgPool2DBackward0"},
      {"avg_pool3d", "AvgPool3DBackward0"},
      {"adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"},
      {"adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0"},
      {"dropout", "NativeDropoutBackward0"},
      {"binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0"},
      {"max_dim", "MaxBackward0"},
      {"min_dim", "MinBackward0"},
      {"nanmedian_dim", "NanmedianBackward1"},
      {"norm", "LinalgVectorNormBackward0"},
      {"index", "IndexBackward0"},
      {"index_put", "IndexPutBackward0"},
      {"index_put_", "IndexPutBackward0"},
      {"scatter", "ScatterBackward0"},
      {"scatter_", "ScatterBackward0"},
      {"masked_fill_", "MaskedFillBackward0"},
      {"lstm_cell_fused", "ThnnFusedLstmCellBackward0"},
      {"gru_cell_fused", "ThnnFusedGruCellBackward0"},
      {"_scaled_dot_product_flash_attention", "ScaledDotProductFlashAttentionBackward0"},
      {"linalg_inv", "LinalgInvExBackward0"},
      {"linalg_inv_ex", "LinalgInvExBackward0"},
      {"linalg_solve", "LinalgSolveExBackward0"},
      {"linalg_cholesky", "LinalgCholeskyExBackward0"},
      {"linalg_slogdet", "LinalgSlogdetBackward0"},
      {"fill_", "FillBackward0"},
  };
  const std::string_view name(op);
  auto it = kNames.find(name);
  if (it != kNames.end()) return it->second;
  if (name == "matmul") {  // matmul dispatches to ATen's mm / bmm / addmm / mv / dot
    if (inputs.size() == 3) return "AddmmBackward0";
    const size_t a = inputs.empty() ? 2 : inputs[0].shape.ndim();
    const size_t b = inputs.size() < 2 ? 2 : inputs[1].shape.ndim();
    if (a == 1 && b == 1) return "DotBackward0";
    if (a == 2 && b == 1) return "MvBackward0";
    if (a == 3 && b == 3) return "BmmBackward0";
    if (a > 2 || b > 2) return "UnsafeViewBackward0";  // folded into mm, then viewed back
    return "MmBackward0";
  }
  if (name == "permute") {  // t() / transpose(i, j) / permute(dims)
    const std::vector<int64_t>& perm = attrs.Ints("perm");
    int moved = 0;
    for (size_t i = 0; i < perm.size(); ++i) moved += perm[i] != static_cast<int64_t>(i);
    if (moved == 2) return perm.size() == 2 ? "TBackward0" : "TransposeBackward0";
    return "PermuteBackward0";
  }
  if (name == "sum" || name == "mean" || name == "prod" || name == "std" || name == "var") {
    const size_t nd = attrs.Ints("dims").size();  // sum() / sum(dim)
    const bool all =
        nd == 0 || (!inputs.empty() && nd == inputs[0].shape.ndim() && !attrs.Bool("keepdim"));
    std::string r = CamelCase(name) + (all ? "Backward0" : "Backward1");
    if (name == "std" || name == "var") r = CamelCase(name) + "Backward0";
    return r;
  }
  if (name == "tril" && attrs.Bool("upper")) return "TriuBackward0";
  if (name.size() > 5 && name.substr(name.size() - 5) == "_grad")  // a gradient op, twice
    return CamelCase(name.substr(0, name.size() - 5)) + "BackwardBackward0";
  return CamelCase(name) + "Backward0";
}

// An output the op's gradient formula never reads (OpSpec::UnreadOutputs): not saved.
bool Unread(const OpDef& op, size_t output) {
  return output < 32 && (op.unread_outputs >> output & 1u);
}
}  // namespace

OpNode::~OpNode() = default;

std::string OpNode::name() const {
  return TorchNodeName(op_->name, attrs_, input_metas);
}

Status OpNode::Save(TensorSpan inputs, TensorSpan outputs) {
  if (!t_saved_hooks.empty()) {
    std::shared_ptr<SavedTensorsHooks> hooks = t_saved_hooks.back();  // a hook may pop it
    auto packed = std::make_shared<PackedSaved>();
    ASSIGN_OR_RETURN(packed->inputs, PackAll(*hooks, inputs, true));
    TensorList detached;  // as saved without hooks: no cycle through grad_fn
    for (size_t i = 0; i < outputs.size(); ++i)
      detached.push_back(Unread(*op_, i) ? Tensor() : outputs[i].detach());
    ASSIGN_OR_RETURN(packed->outputs, PackAll(*hooks, detached, false));
    packed_ = std::move(packed);
    return Status();
  }
  saved_inputs_.assign(inputs.begin(), inputs.end());
  saved_outputs_.clear();
  saved_outputs_.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i)  // detached: no cycle through grad_fn
    saved_outputs_.push_back(Unread(*op_, i) ? Tensor() : outputs[i].detach());
  saved_versions_.reserve(saved_versions_.size() + inputs.size() + outputs.size());
  for (auto& t : saved_inputs_) saved_versions_.push_back(t.defined() ? t.version() : 0);
  for (auto& t : saved_outputs_) saved_versions_.push_back(t.defined() ? t.version() : 0);
  return Status();
}

void OpNode::RefreshOutputVersions() {
  if (packed_) {
    for (auto& e : packed_->outputs)
      if (auto st = e.storage.lock()) e.version = st->version().load();
    return;
  }
  for (size_t i = 0; i < saved_outputs_.size(); ++i)
    if (saved_outputs_[i].defined())
      saved_versions_[saved_inputs_.size() + i] = saved_outputs_[i].version();
}

void OpNode::ReleaseVariables() {
  saved_inputs_.clear();
  saved_outputs_.clear();
  packed_.reset();
  released_ = true;
}

StatusOr<std::pair<TensorList, TensorList>> OpNode::UnpackSaved(bool create_graph) const {
  std::pair<TensorList, TensorList> r;
  int index = 0;
  for (int which = 0; which < 2; ++which) {
    const auto& entries = which == 0 ? packed_->inputs : packed_->outputs;
    TensorList& out = which == 0 ? r.first : r.second;
    for (const PackedSaved::Entry& e : entries) {
      const int i = index++;
      if (!e.packed) {
        out.emplace_back();
        continue;
      }
      auto st = e.storage.lock();
      if (st && st->version().load() != e.version)
        return InvalidArgument(
            "[%s] a tensor needed for gradient computation (%s %s, saved through "
            "saved_tensors_hooks) has been modified by an in-place operation: version %d, "
            "expected %d",
            name(), e.meta.shape.ToString(), DTypeName(e.meta.dtype), st->version().load(),
            e.version);
      Tensor t;
      {
        NoGradGuard no_grad;
        ASSIGN_OR_RETURN(t, e.packed->Unpack());
      }
      RETURN_IF_ERROR(CheckUnpacked(name(), e.meta, t, i));
      if (create_graph && e.edge.fn) {  // double backward reaches the original's producer
        t = t.detach();
        AutogradMeta* m = t.mutable_autograd_meta();
        m->requires_grad = true;
        m->grad_fn = e.edge.fn;
        m->output_nr = e.edge.input_nr;
      }
      out.push_back(std::move(t));
    }
  }
  return r;
}

StatusOr<TensorList> OpNode::Apply(TensorList grads, bool create_graph) {
  if (released_)  // RuntimeError (AbortedError), as torch
    return absl::AbortedError(absl::StrFormat(
        "[%s] Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the graph "
        "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
        "you need to backward through the graph a second time or if you need to access saved "
        "tensors after calling backward.",
        name()));
  // No gradient reached any output (a custom Function returned None for this node's result, or
  // only unused outputs led here): every input's gradient is zero, passed on as undefined, and
  // the formula (which may read its gradients) does not run.
  bool any_grad = false;
  for (const Tensor& g : grads) any_grad = any_grad || g.defined();
  if (!any_grad) return TensorList(next_edges.size());
  TensorList unpacked_inputs, unpacked_outputs;
  if (packed_) {
    ASSIGN_OR_RETURN(auto unpacked, UnpackSaved(create_graph && GradModeEnabled()));
    unpacked_inputs = std::move(unpacked.first);
    unpacked_outputs = std::move(unpacked.second);
  }
  const TensorList* saved_in = packed_ ? &unpacked_inputs : &saved_inputs_;
  // Inputs left unsaved by OpSpec::InputReaders (no gradient that reads them runs): stand-ins
  // with their meta, for formulas that look at an input's shape.
  TensorList filled;
  if (op_->input_readers && op_->save_inputs) {
    for (size_t i = 0; i < saved_in->size() && i < input_metas.size(); ++i)
      if (!(*saved_in)[i].defined()) {
        if (filled.empty()) filled = *saved_in;
        filled[i] = Unsaved(name(), "input", {input_metas[i]})[0];
      }
    if (!filled.empty()) saved_in = &filled;
  }
  const TensorList& saved_inputs = *saved_in;
  const TensorList& saved_outputs = packed_ ? unpacked_outputs : saved_outputs_;
  for (size_t i = 0; !packed_ && i < saved_inputs_.size() + saved_outputs_.size(); ++i) {
    const Tensor& t =
        i < saved_inputs_.size() ? saved_inputs_[i] : saved_outputs_[i - saved_inputs_.size()];
    if (t.defined() && t.version() != saved_versions_[i])
      return InvalidArgument(
          "[%s] one of the variables needed for gradient computation has been modified by an "
          "inplace operation: [%s], saved as %s %d of %s, is at version %d; expected version %d "
          "instead (it was modified by an in-place operation after it was saved)",
          name(), t.meta_string(), i < saved_inputs_.size() ? "input" : "output",
          int(i < saved_inputs_.size() ? i : i - saved_inputs_.size()), name(), t.version(),
          saved_versions_[i]);
  }
  std::vector<bool> needs(next_edges.size());
  for (size_t i = 0; i < next_edges.size(); ++i) needs[i] = next_edges[i].fn != nullptr;
  TensorList unsaved_inputs, unsaved_outputs;
  if (!op_->save_inputs) unsaved_inputs = Unsaved(name(), "input", input_metas);
  if (!op_->save_outputs) {
    std::vector<TensorMeta> metas;
    for (const Tensor& g : grads)  // a gradient has its output's meta (undefined: zero, unread)
      metas.push_back(g.defined() ? TensorMeta{g.shape(), g.dtype(), g.device()}
                                  : TensorMeta{Shape{0}, DType::kF32, Device::CPU()});
    unsaved_outputs = Unsaved(name(), "output", metas);
  }
  // create_graph: the saved outputs the formula reads are this node's outputs again (they were
  // saved detached, to keep the graph acyclic), so the gradient it builds from them differentiates
  // back through this node to the inputs: d/dx of exp's g * exp(x) has its exp(x) term.
  TensorList attached;
  if (create_graph && GradModeEnabled() && op_->save_outputs) {
    attached.reserve(saved_outputs.size());
    for (size_t i = 0; i < saved_outputs.size(); ++i) {
      Tensor t = saved_outputs[i];
      if (t.defined() && (IsFloating(t.dtype()) || IsComplex(t.dtype()))) {
        t = t.detach();
        AutogradMeta* m = t.mutable_autograd_meta();
        m->requires_grad = true;
        m->grad_fn = shared_from_this();
        m->output_nr = static_cast<int>(i);
      }
      attached.push_back(std::move(t));
    }
  }
  const TensorList& outs = !attached.empty() ? attached : saved_outputs;
  GradContext ctx{op_->save_inputs ? saved_inputs : unsaved_inputs,
                  op_->save_outputs ? outs : unsaved_outputs, grads, attrs_, needs};
  ASSIGN_OR_RETURN(TensorList gin, op_->grad(ctx));
  if (gin.size() != next_edges.size())
    return Internal("[%s] gradient formula returned %d gradients for %d inputs", name(),
                    int(gin.size()), int(next_edges.size()));
  for (size_t i = 0; i < gin.size(); ++i) {
    if (!gin[i].defined() || !needs[i]) {
      gin[i] = Tensor();
      continue;
    }
    ASSIGN_OR_RETURN(gin[i], ReduceToMeta(gin[i], input_metas[i]));
  }
  return gin;
}

StatusOr<Tensor> AccumulateGrad::RunTensorHooks(Tensor g) const {
  auto impl = variable_.lock();
  if (!impl || !g.defined() || !impl->autograd) return g;
  const AutogradMeta& meta = *impl->autograd;
  for (size_t i = 0; i < meta.hooks.size(); ++i) {
    TensorHook h = meta.hooks[i];  // a copy: the hook may register another
    if (!h) continue;
    ASSIGN_OR_RETURN(Tensor r, h(g));
    if (r.defined()) g = r;
  }
  return g;
}

StatusOr<TensorList> AccumulateGrad::Apply(TensorList grads, bool create_graph) {
  auto impl = variable_.lock();
  if (!impl || !grads[0].defined()) return TensorList();
  Tensor var(impl);
  ASSIGN_OR_RETURN(Tensor g, RunTensorHooks(grads[0]));
  if (!create_graph) g = g.detach();
  // .grad is kept contiguous: optimizers and accumulation then run on flat fast paths.
  if (!g.is_contiguous() && !g.is_lazy()) {
    ASSIGN_OR_RETURN(g, functional::Contiguous(g));
  }
  Tensor old = var.grad();
  if (old.defined()) {
    ASSIGN_OR_RETURN(g, functional::Add(old, g));
  }
  var.set_grad(g);
  if (auto* meta = var.autograd_meta()) {
    for (size_t i = 0; i < meta->post_accumulate_hooks.size(); ++i) {
      PostAccumulateGradHook h = meta->post_accumulate_hooks[i];
      if (h) RETURN_IF_ERROR(h(var));
    }
  }
  return TensorList();
}

Edge GradientEdge(const Tensor& t) {
  if (!t.requires_grad()) return Edge{};  // first: a stale view regenerates its grad_fn
  AutogradMeta* meta = t.autograd_meta();
  if (!meta || !meta->requires_grad) return Edge{};
  if (meta->grad_fn) return Edge{meta->grad_fn, meta->output_nr};
  // A view made in no_grad mode of a tensor that requires grad: no accumulator (torch gives a
  // view none), so its gradient reaches neither it nor its base. (A leaf rebound onto a view of
  // a buffer that does not require grad, share_memory_'s, keeps its accumulator.)
  if (t.impl()->view_base && t.impl()->view_creation == ViewCreation::kNoGrad &&
      Tensor(t.impl()->view_base).requires_grad())
    return Edge{};
  auto acc = meta->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    meta->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

namespace {
// torch's CopySlices: the gradient of a base after one of its views was changed in place by the
// op whose node is next_edges[1].fn. The base's old value gets the gradient outside the view
// (zero inside: those elements were overwritten), the in-place op's output the view of the
// gradient.
class CopySlices : public Node {
 public:
  CopySlices(Shape base_shape, Shape shape, DimVector strides, int64_t offset)
      : base_shape_(std::move(base_shape)),
        shape_(std::move(shape)),
        strides_(std::move(strides)),
        offset_(offset) {}
  StatusOr<TensorList> Apply(TensorList grads, bool) override {
    TensorList r(2);
    if (grads.empty() || !grads[0].defined()) return r;
    ASSIGN_OR_RETURN(Tensor g, functional::Contiguous(grads[0]));
    ASSIGN_OR_RETURN(Tensor gv, functional::AsStrided(g, shape_, strides_, offset_));
    if (next_edges[0].fn) {  // g - scatter(g's view): exactly zero inside the view
      ASSIGN_OR_RETURN(Tensor inside,
                       functional::AsStridedScatter(gv, base_shape_, strides_, offset_));
      ASSIGN_OR_RETURN(r[0], functional::Sub(g, inside));
    }
    if (next_edges[1].fn) {
      ASSIGN_OR_RETURN(r[1], functional::Contiguous(gv));
    }
    return r;
  }
  std::string name() const override { return "CopySlices"; }

 private:
  Shape base_shape_, shape_;
  DimVector strides_;
  int64_t offset_;
};

// The view's place in its base's storage, for as_strided (offset relative to the base's).
struct ViewGeometry {
  Tensor base;
  int64_t offset;
};
StatusOr<ViewGeometry> GeometryOf(const char* op, const Tensor& view) {
  Tensor base(view.impl()->view_base);
  if (!base.is_contiguous() || base.dtype() != view.dtype())
    return Unimplemented(
        "[%s] in-place modification of a view that requires grad (%s, of a base %s that is not "
        "contiguous or has another dtype) is not supported; use an out-of-place op",
        op, view.meta_string(), base.meta_string());
  for (size_t d = 0; d < view.strides().size(); ++d)
    if (view.strides()[d] == 0 && view.dim(d) > 1)
      return InvalidArgument(
          "[%s] unsupported operation: more than one element of the written-to tensor %s refers "
          "to a single memory location. Please clone() the tensor before performing the "
          "operation.",
          op, view.meta_string());
  return ViewGeometry{base, view.offset() - base.offset()};
}

// A view whose base changed in place since its grad_fn was recorded: its history is an
// as_strided view of the base's current one (Tensor::RefreshView).
bool RefreshViewHistory(const Tensor& view) {
  TensorImpl* v = view.impl();
  if (v->view_creation == ViewCreation::kNoGrad) return true;  // no history of its own
  if (!GradModeEnabled()) return false;  // the next access in grad mode regenerates it
  Tensor base(v->view_base);
  if (!base.requires_grad() || !base.is_contiguous() || base.dtype() != view.dtype()) return true;
  StatusOr<Tensor> fresh =
      functional::AsStrided(base, view.shape(), view.strides(), view.offset() - base.offset());
  if (!fresh.ok() || !fresh->grad_fn()) return true;
  Tensor self = view;  // the same TensorImpl
  AutogradMeta* m = self.mutable_autograd_meta();
  m->requires_grad = true;
  m->grad_fn = fresh->grad_fn();
  m->output_nr = 0;
  return true;
}
const bool g_view_refresh_installed = (SetViewRefresh(&RefreshViewHistory), true);
}  // namespace

Status CheckViewInplace(const char* op, const Tensor& view) {
  const TensorImpl* v = view.impl();
  if (!v->view_base) return Status();
  if (v->view_creation == ViewCreation::kMultiOutput)
    return Unimplemented(
        "[%s] Output %d of %s is a view and is being modified inplace. This view is the output of "
        "a function that returns multiple views. Such functions do not allow the output views to "
        "be modified inplace. You should replace the inplace operation by an out-of-place one.",
        op, v->view_output_nr, v->view_multi_fn ? v->view_multi_fn : "a multi-output view op");
  if (v->view_creation == ViewCreation::kNoGrad)
    return Unimplemented(
        "[%s] A view was created in no_grad mode and is being modified inplace with grad mode "
        "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked).",
        op);
  Tensor base(v->view_base);
  if (view.requires_grad() && base.requires_grad() && base.is_leaf())
    return Unimplemented(
        "[%s] a view of a leaf Variable that requires grad is being used in an in-place "
        "operation.",
        op);
  return GeometryOf(op, view).status();
}

Status RebaseHistory(const Tensor& view, const std::shared_ptr<Node>& node) {
  ASSIGN_OR_RETURN(ViewGeometry geo, GeometryOf("inplace", view));
  auto copy =
      std::make_shared<CopySlices>(geo.base.shape(), view.shape(), view.strides(), geo.offset);
  // The base's edge is read before its grad_fn changes (a stale base view is no concern: the
  // base is a root, never a view).
  copy->next_edges = {GradientEdge(geo.base), Edge{node, 0}};
  copy->num_outputs = 1;
  copy->output_hooks.resize(1);
  static std::atomic<uint64_t> sequence{uint64_t{1} << 62};  // after every op node of its time
  copy->sequence_nr = sequence.fetch_add(1);
  SetHistory({geo.base}, copy);
  // The view's own history: as_strided of the rebased base (torch's AsStridedBackward0).
  view.impl()->view_version = view.version();
  ASSIGN_OR_RETURN(Tensor fresh,
                   functional::AsStrided(geo.base, view.shape(), view.strides(), geo.offset));
  Tensor self = view;  // the same TensorImpl
  AutogradMeta* m = self.mutable_autograd_meta();
  m->requires_grad = true;
  m->grad_fn = fresh.grad_fn();
  m->output_nr = 0;
  return Status();
}

void SetHistory(TensorSpan outputs, const std::shared_ptr<Node>& node) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor t = outputs[i];
    if (!IsFloating(t.dtype()) && !IsComplex(t.dtype())) continue;
    AutogradMeta* m = t.mutable_autograd_meta();
    m->requires_grad = true;
    m->grad_fn = node;
    m->output_nr = static_cast<int>(i);
  }
}

StatusOr<int> RegisterHook(Tensor& t, TensorHook hook) {
  if (!t.requires_grad())
    return InvalidArgument(
        "[register_hook] cannot register a hook on a tensor that doesn't require grad (%s)",
        t.meta_string());
  std::vector<TensorHook>& hooks =
      t.is_leaf() ? t.mutable_autograd_meta()->hooks
                  : t.autograd_meta()->grad_fn->output_hooks[t.autograd_meta()->output_nr];
  hooks.push_back(std::move(hook));
  return static_cast<int>(hooks.size()) - 1;
}

StatusOr<int> RegisterPostAccumulateGradHook(Tensor& t, PostAccumulateGradHook hook) {
  if (!t.requires_grad())
    return absl::AbortedError(absl::StrFormat(  // RuntimeError, as torch
        "[register_post_accumulate_grad_hook] cannot register a hook on a tensor that doesn't "
        "require gradient (%s)",
        t.meta_string()));
  if (!t.is_leaf())
    return absl::AbortedError(absl::StrFormat(
        "[register_post_accumulate_grad_hook] post accumulate grad hooks cannot be registered "
        "on non-leaf tensors (%s)",
        t.meta_string()));
  auto& hooks = t.mutable_autograd_meta()->post_accumulate_hooks;
  hooks.push_back(std::move(hook));
  return static_cast<int>(hooks.size()) - 1;
}

Status RetainGrad(Tensor& t) {
  if (!t.requires_grad())
    return InvalidArgument("[retain_grad] can't retain_grad on a tensor that doesn't require grad");
  if (t.is_leaf() || t.autograd_meta()->retains_grad) return Status();
  t.autograd_meta()->retains_grad = true;
  auto& node = t.autograd_meta()->grad_fn;
  node->retained.resize(node->num_outputs);
  node->retained[t.autograd_meta()->output_nr] = t.impl_ptr();
  return Status();
}

namespace {

struct CaptureKey {
  Node* node;
  int slot;
  bool operator==(const CaptureKey& o) const { return node == o.node && slot == o.slot; }
  template <typename H>
  friend H AbslHashValue(H h, const CaptureKey& k) {
    return H::combine(std::move(h), k.node, k.slot);
  }
};

std::atomic<int64_t> g_graph_task_id{0};
struct GraphTask {
  int64_t id;
  // The nodes this run reaches and either runs or captures a gradient at (torch's
  // exec_info_[fn].should_execute()).
  const absl::flat_hash_map<Node*, std::shared_ptr<Node>>* nodes;
};
thread_local GraphTask* t_graph_task = nullptr;

// The replacements a node hook returned, checked against what it was given.
Status ReplaceGrads(const Node& n, const char* kind, std::optional<TensorList> r,
                    TensorList* grads) {
  if (!r) return Status();
  if (r->size() != grads->size())
    return InvalidArgument("[%s] a %s returned %d gradients, expected %d", n.name(), kind,
                           int(r->size()), int(grads->size()));
  *grads = std::move(*r);
  return Status();
}

// What a run computes. Whole (no captures, no targets): every node reachable from the roots runs
// and leaves accumulate into .grad (loss.backward()). Otherwise it is pruned as torch's engine
// does: only the nodes on a path to a capture or a target run (and only they free their saved
// tensors); gradients reaching a captured (node, slot) are returned there (autograd.grad, and
// backward(inputs=) for non-leaf inputs); the leaf accumulators in `targets` accumulate
// (backward(inputs=) for leaf inputs), no other does.
struct RunTargets {
  absl::flat_hash_map<CaptureKey, Tensor>* captures = nullptr;
  absl::flat_hash_set<Node*> targets;
  bool whole() const { return captures == nullptr && targets.empty(); }
};

// The nodes a pruned run must execute: those with a path (through next_edges) to a target or a
// captured node. Post-order over the reachable graph, iteratively (chains can be long).
absl::flat_hash_set<Node*> NodesToExecute(const std::vector<Edge>& root_edges,
                                          const RunTargets& t) {
  absl::flat_hash_set<Node*> captured;
  if (t.captures)
    for (auto& kv : *t.captures) captured.insert(kv.first.node);
  absl::flat_hash_set<Node*> exec;
  absl::flat_hash_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack;  // node, next edge to visit
  for (const Edge& e : root_edges) {
    if (!e.fn || !visited.insert(e.fn.get()).second) continue;
    stack.emplace_back(e.fn.get(), 0);
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->next_edges.size()) {
        Node* c = n->next_edges[i++].fn.get();
        if (c && visited.insert(c).second) stack.emplace_back(c, 0);
        continue;
      }
      bool needed = t.targets.contains(n);
      for (const Edge& e : n->next_edges) {
        Node* c = e.fn.get();
        if (c && (exec.contains(c) || captured.contains(c))) needed = true;
      }
      if (needed) exec.insert(n);
      stack.pop_back();
    }
  }
  return exec;
}

// Runs the graph from `roots` with `grad_roots` (see RunTargets).
Status RunBackward(const TensorList& roots, TensorList grad_roots, bool retain_graph,
                   bool create_graph, const RunTargets& targets) {
  AutocastSuspend no_autocast;  // gradient formulas run in the forward's dtypes
  // torch raises RuntimeError for each of these (AbortedError maps to it).
  if (grad_roots.size() != roots.size())
    return absl::AbortedError(absl::StrFormat(
        "[backward] Mismatch in number of gradients: got %d gradients for %d outputs",
        int(grad_roots.size()), int(roots.size())));
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    if (!r.requires_grad())
      return absl::AbortedError(absl::StrFormat(
          "[backward] element %d of tensors does not require grad and does not have a grad_fn",
          int(i)));
    if (!grad_roots[i].defined()) {
      if (r.numel() != 1)
        return absl::AbortedError(absl::StrFormat(
            "[backward] grad can be implicitly created only for scalar outputs, got %s",
            r.meta_string()));
      NoGradGuard g;
      ASSIGN_OR_RETURN(grad_roots[i], functional::OnesLike(r));
    } else if (grad_roots[i].shape() != r.shape()) {
      return absl::AbortedError(absl::StrFormat(
          "[backward] Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a "
          "shape of %s",
          int(i), grad_roots[i].meta_string(), int(i), r.meta_string()));
    }
    root_edges.push_back(GradientEdge(r));
  }
  const bool whole = targets.whole();
  absl::flat_hash_set<Node*> exec;
  if (!whole) exec = NodesToExecute(root_edges, targets);
  auto runs = [&](Node* n) { return whole || exec.contains(n); };
  // The task's nodes (those run, and those a gradient is captured at) and, for each, how many
  // gradients it still waits for: one per edge from a node that runs.
  absl::flat_hash_set<Node*> captured_nodes;
  if (targets.captures)
    for (auto& kv : *targets.captures) captured_nodes.insert(kv.first.node);
  absl::flat_hash_map<Node*, int> deps;
  absl::flat_hash_map<Node*, std::shared_ptr<Node>> keep;
  std::vector<Node*> stack;
  auto wanted = [&](Node* n) { return runs(n) || captured_nodes.contains(n); };
  for (auto& e : root_edges) {
    if (e.fn && wanted(e.fn.get()) && keep.emplace(e.fn.get(), e.fn).second)
      stack.push_back(e.fn.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (!runs(n)) continue;  // a captured node that does not run passes nothing on
    for (auto& e : n->next_edges) {
      if (!e.fn || !wanted(e.fn.get())) continue;
      deps[e.fn.get()]++;
      if (keep.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
    }
  }
  AutoGradMode mode(create_graph);
  GraphTask task{g_graph_task_id.fetch_add(1) + 1, &keep};
  GraphTask* outer_task = t_graph_task;  // a hook may run a backward of its own
  t_graph_task = &task;
  struct Restore {
    GraphTask* outer;
    ~Restore() { t_graph_task = outer; }
  } restore{outer_task};
  absl::flat_hash_map<Node*, TensorList> buffers;
  auto add_to = [&](Node* n, int slot, const Tensor& g) -> Status {
    if (!keep.contains(n)) return Status();  // pruned: nothing there needs it
    TensorList& buf = buffers[n];
    if (buf.empty()) buf.resize(n->num_outputs);
    ASSIGN_OR_RETURN(buf[slot], Accumulate(buf[slot], g));
    return Status();
  };
  for (size_t i = 0; i < roots.size(); ++i)
    if (root_edges[i].fn)
      RETURN_IF_ERROR(add_to(root_edges[i].fn.get(), root_edges[i].input_nr, grad_roots[i]));
  auto later_first = [](Node* a, Node* b) { return a->sequence_nr < b->sequence_nr; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  for (auto& kv : keep)
    if (deps[kv.first] == 0) ready.push(kv.first);
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    const bool run = runs(n);
    TensorList grads = std::move(buffers[n]);
    buffers.erase(n);
    if (grads.empty()) grads.resize(n->num_outputs);
    // The tensor hooks (and retain_grad) of n's outputs run whether n runs or only has a
    // gradient captured (torch's call_tensor_pre_hooks); its node pre-hooks only if it runs.
    for (size_t s = 0; s < n->output_hooks.size() && s < grads.size(); ++s) {
      for (size_t k = 0; k < n->output_hooks[s].size(); ++k) {
        TensorHook h = n->output_hooks[s][k];  // a copy: the hook may register another
        if (!h || !grads[s].defined()) continue;
        ASSIGN_OR_RETURN(Tensor r, h(grads[s]));
        if (r.defined()) grads[s] = r;
      }
    }
    for (size_t k = 0; run && k < n->pre_hooks.size(); ++k) {
      NodePreHook h = n->pre_hooks[k];
      if (!h) continue;
      ASSIGN_OR_RETURN(auto r, h(grads));
      RETURN_IF_ERROR(ReplaceGrads(*n, "pre-hook", std::move(r), &grads));
    }
    for (size_t s = 0; s < n->retained.size() && s < grads.size(); ++s) {
      auto impl = n->retained[s].lock();
      if (!impl || !grads[s].defined()) continue;
      Tensor self(impl);
      Tensor g = create_graph ? grads[s] : grads[s].detach();
      if (self.grad().defined()) {
        ASSIGN_OR_RETURN(g, functional::Add(self.grad(), g));
      }
      self.set_grad(g);
    }
    TensorList out;
    bool is_acc = dynamic_cast<AccumulateGrad*>(n) != nullptr;
    if (targets.captures) {
      for (size_t s = 0; s < grads.size(); ++s) {
        auto it = targets.captures->find(CaptureKey{n, static_cast<int>(s)});
        if (it == targets.captures->end()) continue;
        if (is_acc) {  // an input leaf's hooks see its gradient in grad() too, as torch
          ASSIGN_OR_RETURN(grads[s], static_cast<AccumulateGrad*>(n)->RunTensorHooks(grads[s]));
        }
        it->second = grads[s];
      }
    }
    if (!run) continue;  // pruned: n's saved tensors stay for a later backward
    TensorList grad_outputs;
    if (!n->post_hooks.empty()) grad_outputs = grads;
    ASSIGN_OR_RETURN(out, n->Apply(std::move(grads), create_graph));
    for (size_t k = 0; k < n->post_hooks.size(); ++k) {
      NodePostHook h = n->post_hooks[k];
      if (!h) continue;
      ASSIGN_OR_RETURN(auto r, h(out, grad_outputs));
      RETURN_IF_ERROR(ReplaceGrads(*n, "hook", std::move(r), &out));
    }
    if (!retain_graph) n->ReleaseVariables();
    if (AnomalyModeEnabled() && AnomalyCheckNan()) RETURN_IF_ERROR(CheckNoNan(*n, out));
    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.fn || !keep.contains(e.fn.get())) continue;
      if (i < out.size() && out[i].defined())
        RETURN_IF_ERROR(add_to(e.fn.get(), e.input_nr, out[i]));
      if (--deps[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }
  return Status();
}

}  // namespace

int64_t CurrentGraphTaskId() {
  return t_graph_task ? t_graph_task->id : -1;
}
bool WillEngineExecuteNode(const Node* node) {
  return t_graph_task && t_graph_task->nodes->contains(const_cast<Node*>(node));
}

namespace {
// The (node, slot) each of autograd.grad's / backward(inputs=)'s inputs receives its gradient
// at; fails as torch for an input that does not require grad.
StatusOr<std::vector<Edge>> InputEdges(const char* api, const TensorList& inputs) {
  std::vector<Edge> edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad())
      return absl::AbortedError(absl::StrFormat(
          "[%s] One of the differentiated Tensors does not require grad (input %d%s)", api, int(i),
          inputs[i].defined() ? ", " + inputs[i].meta_string() : std::string()));
    edges.push_back(GradientEdge(inputs[i]));
  }
  return edges;
}
}  // namespace

Status Backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
                bool create_graph, const TensorList& inputs) {
  TensorList g = grad_roots;
  g.resize(roots.size());
  if (inputs.empty())
    return RunBackward(roots, g, retain_graph || create_graph, create_graph, RunTargets{});
  // backward(inputs=): leaves accumulate through their AccumulateGrad (hooks, post-accumulate
  // hooks), non-leaf inputs' gradients are captured and accumulated into their .grad here.
  ASSIGN_OR_RETURN(std::vector<Edge> edges, InputEdges("backward", inputs));
  absl::flat_hash_map<CaptureKey, Tensor> captures;
  RunTargets targets;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!edges[i].fn) continue;
    if (inputs[i].is_leaf())
      targets.targets.insert(edges[i].fn.get());
    else
      captures[CaptureKey{edges[i].fn.get(), edges[i].input_nr}] = Tensor();
  }
  if (!captures.empty()) targets.captures = &captures;
  if (targets.whole()) return Status();  // no input is reachable from anything
  RETURN_IF_ERROR(RunBackward(roots, g, retain_graph || create_graph, create_graph, targets));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!edges[i].fn || inputs[i].is_leaf()) continue;
    auto it = captures.find(CaptureKey{edges[i].fn.get(), edges[i].input_nr});
    if (it == captures.end() || !it->second.defined()) continue;
    Tensor self = inputs[i];
    Tensor grad = create_graph ? it->second : it->second.detach();
    if (self.grad().defined()) {
      ASSIGN_OR_RETURN(grad, functional::Add(self.grad(), grad));
    }
    self.set_grad(grad);
    it->second = Tensor();  // a non-leaf input listed twice accumulates once
  }
  return Status();
}

StatusOr<TensorList> Grad(const TensorList& outputs, const TensorList& inputs,
                          const TensorList& grad_outputs, bool retain_graph, bool create_graph,
                          bool allow_unused) {
  ASSIGN_OR_RETURN(std::vector<Edge> edges, InputEdges("grad", inputs));
  absl::flat_hash_map<CaptureKey, Tensor> captures;
  for (const Edge& e : edges)  // e.fn keeps an accumulator made here alive through the run
    if (e.fn) captures[CaptureKey{e.fn.get(), e.input_nr}] = Tensor();
  TensorList g = grad_outputs;
  g.resize(outputs.size());
  RunTargets targets;
  targets.captures = &captures;
  RETURN_IF_ERROR(RunBackward(outputs, g, retain_graph || create_graph, create_graph, targets));
  TensorList result;
  for (size_t i = 0; i < edges.size(); ++i) {
    Tensor t;
    if (edges[i].fn) t = captures[CaptureKey{edges[i].fn.get(), edges[i].input_nr}];
    if (!t.defined() && !allow_unused)
      return absl::AbortedError(absl::StrFormat(
          "[grad] One of the differentiated Tensors appears to not have been used in the graph "
          "(input %d, %s). Set allow_unused=True if this is the desired behavior.",
          int(i), inputs[i].meta_string()));
    result.push_back(t);
  }
  return result;
}

}  // namespace oneflow_like
