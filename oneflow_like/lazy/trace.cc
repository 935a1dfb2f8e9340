#include "oneflow_like/lazy/trace.h"

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/ternary.h"

namespace oneflow_like {
namespace lazy {
namespace {

thread_local std::shared_ptr<Trace> t_active;

StatusOr<TensorList> DispatchToActiveTrace(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                                           const std::vector<TensorMeta>& metas,
                                           const Tensor* inplace_out) {
  std::shared_ptr<Trace> trace = t_active;
  if (!trace) {
    for (auto& t : inputs) {
      if (t.is_lazy())
        return InvalidArgument(
            "[%s] a lazy tensor from an nn.Graph trace was used outside of it (%s)", op.name,
            t.meta_string());
    }
    return Internal("[%s] lazy dispatch without an active trace", op.name);
  }
  return trace->Record(op, inputs, attrs, metas, inplace_out);
}

}  // namespace

std::shared_ptr<Trace> ActiveTrace() {
  return t_active;
}

TraceScope::TraceScope(std::shared_ptr<Trace> trace) : prev_(t_active) {
  SetLazyDispatch(&DispatchToActiveTrace);
  t_active = std::move(trace);
  SetTracingActive(t_active != nullptr);
}

TraceScope::~TraceScope() {
  t_active = prev_;
  SetTracingActive(t_active != nullptr);
}

Tensor Trace::MakeLazy(int64_t value) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorMeta& m = values_[value].meta;
  impl->shape = m.shape;
  impl->strides = ContiguousStrides(m.shape);
  impl->dtype = m.dtype;
  impl->device = m.device;
  impl->lazy_id = value;
  impl->lazy_ctx = shared_from_this();
  return Tensor(std::move(impl));
}

Tensor Trace::AddInput(const Tensor& example) {
  int64_t v = NewValue(TracedValue{TracedValue::kInput,
                                   TensorMeta{example.shape(), example.dtype(), example.device()},
                                   num_inputs_++});
  return MakeLazy(v);
}

int64_t Trace::ValueOf(const Tensor& t) {
  if (t.is_lazy()) return t.impl()->lazy_id;
  auto it = capture_value_.find(t.impl());
  if (it != capture_value_.end()) return it->second;
  int64_t idx = static_cast<int64_t>(captured_.size());
  captured_.push_back(t);
  int64_t v = NewValue(
      TracedValue{TracedValue::kCaptured, TensorMeta{t.shape(), t.dtype(), t.device()}, idx});
  capture_value_[t.impl()] = v;
  capture_index_[t.impl()] = idx;
  return v;
}

bool Trace::TrackView(const OpDef& op, const AttrMap& attrs, const Tensor& in, const Tensor& view) {
  // `in` laid out in its root: a tracked view's place, else its own layout when that is its
  // storage's (contiguous from offset 0: every lazy value, most captured tensors).
  auto impl = std::make_shared<TensorImpl>(*in.impl());
  Tensor root = in;
  bool known = true;
  if (auto it = views_.find(in.impl()); it != views_.end()) {
    root = it->second.root;
    impl->strides = it->second.strides, impl->offset = it->second.offset;
  } else if (auto u = untracked_.find(in.impl()); u != untracked_.end()) {
    root = u->second.root, known = false;
  } else {
    known = in.is_contiguous() && in.offset() == 0;
  }
  Shape shape;
  DimVector strides;
  int64_t offset = 0;
  known = known && op.view(Tensor(impl), attrs, &shape, &strides, &offset).ok();
  if (!known) {
    untracked_[view.impl()] = ViewOf{view, root, {}, {}, 0, RootValue(root)};
    return false;
  }
  views_[view.impl()] = ViewOf{view, root, shape, strides, offset, RootValue(root)};
  // The lazy view carries its layout in the root, as an eager view does, so that
  // is_contiguous() means what it means in eager mode (Contiguous copies exactly when eager
  // would, and a reshape of a contiguous view is a view again).
  view.impl()->strides = strides, view.impl()->offset = offset;
  return true;
}

Status Trace::RefreshView(const OpDef& op, const Tensor& t) {
  if (auto u = untracked_.find(t.impl());
      u != untracked_.end() && u->second.derived_from != RootValue(u->second.root))
    return Unimplemented(
        "[%s] a view of a non-contiguous captured tensor is read after the tensor was written in "
        "place; nn.Graph cannot re-read it (take the view after the write, or make the tensor "
        "contiguous)",
        op.name);
  auto it = views_.find(t.impl());
  if (it == views_.end() || it->second.derived_from == RootValue(it->second.root)) return Status();
  ViewOf v = it->second;  // the map may rehash while the refresh records ops
  in_view_bookkeeping_ = true;
  StatusOr<Tensor> r = functional::AsStrided(v.root, v.shape, v.strides, v.offset);
  in_view_bookkeeping_ = false;
  if (!r.ok()) return r.status();
  t.impl()->lazy_id = r->impl()->lazy_id;
  views_[t.impl()].derived_from = RootValue(v.root);
  return Status();
}

Status Trace::WriteBack(const OpDef& op, const Tensor& t) {
  if (untracked_.count(t.impl()))
    return Unimplemented(
        "[%s] in-place write to a view whose place in its base is unknown (a view of a "
        "non-contiguous captured tensor) is not supported in nn.Graph; write to a contiguous "
        "tensor",
        op.name);
  auto it = views_.find(t.impl());
  if (it == views_.end()) return Status();
  ViewOf v = it->second;
  if (GradModeEnabled() && (v.root.requires_grad() || t.requires_grad()))
    return Unimplemented(
        "[%s] in-place modification of a view that requires grad is not supported; use an "
        "out-of-place op",
        op.name);
  in_view_bookkeeping_ = true;
  auto write = [&]() -> StatusOr<int64_t> {
    // root' = where(written, as_strided_scatter(view), root): exact, whatever the values.
    const Shape& rs = v.root.shape();
    ASSIGN_OR_RETURN(Tensor scattered, functional::AsStridedScatter(t, rs, v.strides, v.offset));
    ASSIGN_OR_RETURN(Tensor ones, functional::Ones(t.shape(), DType::kBool, t.device()));
    ASSIGN_OR_RETURN(Tensor mask, functional::AsStridedScatter(ones, rs, v.strides, v.offset));
    ASSIGN_OR_RETURN(Tensor merged, functional::Where(mask, scattered, v.root));
    return merged.impl()->lazy_id;
  };
  StatusOr<int64_t> merged = write();
  in_view_bookkeeping_ = false;
  if (!merged.ok()) return merged.status();
  if (v.root.is_lazy()) {
    v.root.impl()->lazy_id = *merged;
  } else {
    capture_value_[v.root.impl()] = *merged;
  }
  views_[t.impl()].derived_from = *merged;
  return Status();
}

StatusOr<TensorList> Trace::Record(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                                   const std::vector<TensorMeta>& metas,
                                   const Tensor* inplace_out) {
  if (inplace_out && inplace_out->is_lazy() && inplace_out->impl()->lazy_ctx.get() != this)
    return InvalidArgument("[%s] in-place target belongs to another trace", op.name);
  TracedOp rec{&op, attrs, {}, {}};
  rec.inplace = inplace_out != nullptr;
  rec.differentiable = op.grad != nullptr && GradModeEnabled();
  bool any_requires_grad = false;
  for (auto& t : inputs) {
    any_requires_grad = any_requires_grad || t.requires_grad();
    rec.input_requires_grad.push_back(t.requires_grad());
    if (t.is_lazy() && t.impl()->lazy_ctx.get() != this)
      return InvalidArgument("[%s] a lazy tensor from another nn.Graph trace was used here (%s)",
                             op.name, t.meta_string());
    if (!in_view_bookkeeping_) RETURN_IF_ERROR(RefreshView(op, t));
    rec.inputs.push_back(ValueOf(t));
  }
  rec.differentiable = rec.differentiable && any_requires_grad;
  int64_t op_index = static_cast<int64_t>(ops_.size());
  TensorList outs;
  for (auto& m : metas) {
    int64_t v = NewValue(TracedValue{TracedValue::kOpResult, m, op_index});
    rec.outputs.push_back(v);
    outs.push_back(MakeLazy(v));
  }
  ops_.push_back(std::move(rec));
  if (op.view && !inputs.empty() && outs.size() == 1) TrackView(op, attrs, inputs[0], outs[0]);
  if (inplace_out) {
    int64_t v = ops_.back().outputs[0];
    if (inplace_out->is_lazy()) {
      inplace_out->impl()->lazy_id = v;  // every handle of this lazy tensor now sees the new value
    } else {
      ValueOf(*inplace_out);  // make sure it is captured, then rebind its current value
      capture_value_[inplace_out->impl()] = v;
    }
    if (!in_view_bookkeeping_) RETURN_IF_ERROR(WriteBack(op, *inplace_out));
  }
  return outs;
}

void Trace::SetOutputs(const TensorList& outputs) {
  output_values_.clear();
  for (auto& t : outputs) output_values_.push_back(ValueOf(t));
}

std::vector<std::pair<int64_t, int64_t>> Trace::Assignments() const {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (auto& [impl, idx] : capture_index_) {
    int64_t current = capture_value_.at(impl);
    if (values_[current].kind != TracedValue::kCaptured || values_[current].index != idx)
      r.emplace_back(idx, current);
  }
  std::sort(r.begin(), r.end());
  return r;
}

std::string Trace::ToString() const {
  std::string s;
  for (size_t i = 0; i < ops_.size(); ++i) {
    absl::StrAppend(&s, "  ");
    for (int64_t o : ops_[i].outputs) absl::StrAppend(&s, "%", o, " ");
    absl::StrAppend(&s, "= ", ops_[i].op->name, "(");
    for (size_t k = 0; k < ops_[i].inputs.size(); ++k)
      absl::StrAppend(&s, k ? ", " : "", "%", ops_[i].inputs[k]);
    absl::StrAppend(&s, ") {", ops_[i].attrs.ToString(), "}\n");
  }
  return s;
}

}  // namespace lazy
}  // namespace oneflow_like
