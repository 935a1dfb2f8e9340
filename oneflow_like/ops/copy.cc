// Copy family: the OpDefs of oneflow_like/opdefs/copy.def (generated below from the table's out,
// grad, save, layout and devices columns, with their Run<Name> entries), their gradient formulas
// and the functional entries. Kernels: kernels/cpu/copy.cc, kernels/cuda/copy.*.
#include "oneflow_like/ops/copy.h"

#include <utility>
#include <vector>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/copy.h"

namespace oneflow_like {
namespace {

using opdefs::CastAttrs;
using opdefs::CopyIntoAttrs;
using opdefs::NoAttrs;
using opdefs::ToDeviceAttrs;

// ---- the table's out column ---------------------------------------------------------------------

template <typename A>
Status Infer_x(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  return ops::InferSameAsInput(in, m, out);
}

template <typename A>
Status Infer_cast(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), opdefs::ReadAttrs<A>(m).dtype, in[0].device()});
  return Status();
}

// copy_(src) into a destination of the shape and dtype attributes: src must broadcast to it.
template <typename A>
Status Infer_target(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const A a = opdefs::ReadAttrs<A>(m);
  Shape dst(DimVector(a.shape.begin(), a.shape.end()));
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes("copy_", in[0].shape(), dst));
  if (b != dst)
    return InvalidArgument("[copy_] source %s cannot be broadcast to the destination shape %s",
                           in[0].meta_string(), dst.ToString());
  out->push_back(TensorMeta{dst, a.dtype, in[0].device()});
  return Status();
}

template <typename A>
Status Infer_device(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  ASSIGN_OR_RETURN(Device d, Device::Parse(opdefs::ReadAttrs<A>(m).device));
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), d});
  return Status();
}

// ---- gradient formulas (the table's grad column) ------------------------------------------------

StatusOr<TensorList> ContiguousGrad(const GradContext& c) {
  return TensorList{c.grad_outputs[0]};
}

// Back to the input's dtype; integer and bool inputs get none.
StatusOr<TensorList> CastGrad(const GradContext& c) {
  // complex inputs too: a complex -> real cast passes the real gradient back as g + 0i (torch's)
  const DType in = c.inputs[0].dtype();
  if (!IsFloating(in) && !IsComplex(in)) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor g, functional::Cast(c.grad_outputs[0], in));
  return TensorList{g};
}

// src's gradient: the destination's, in src's dtype.
StatusOr<TensorList> CopyIntoGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, functional::Cast(c.grad_outputs[0], c.inputs[0].dtype()));
  return TensorList{g};
}

StatusOr<TensorList> ToDeviceGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, functional::To(c.grad_outputs[0], c.inputs[0].device()));
  return TensorList{g};
}

// ---- the OpDefs and Run<Name> (generated from copy.def) -----------------------------------------

#define OFL_COPY_SAVE_IN_both true
#define OFL_COPY_SAVE_OUT_both true
#define OFL_COPY_SAVE_IN_none false
#define OFL_COPY_SAVE_OUT_none false
#define OFL_COPY_STRIDED_strided true
#define OFL_COPY_STRIDED_contiguous false
#define OFL_COPY_CROSS_same false
#define OFL_COPY_CROSS_cross true
// Run<Name>(x, attrs) -> the output; a `target` op's Run<Name>(src, attrs, dst) writes dst.
#define OFL_COPY_RUN_ONE(Name, Attrs)                                   \
  StatusOr<Tensor> Run##Name(const Tensor& x, const opdefs::Attrs& a) { \
    return Dispatch1(k##Name, {x}, opdefs::ToAttrMap(a));               \
  }
#define OFL_COPY_RUN_x(Name, Attrs) OFL_COPY_RUN_ONE(Name, Attrs)
#define OFL_COPY_RUN_cast(Name, Attrs) OFL_COPY_RUN_ONE(Name, Attrs)
#define OFL_COPY_RUN_device(Name, Attrs) OFL_COPY_RUN_ONE(Name, Attrs)
#define OFL_COPY_RUN_target(Name, Attrs)                                                  \
  Status Run##Name(const Tensor& src, opdefs::Attrs a, const Tensor& dst) {               \
    a.shape = std::vector<int64_t>(dst.shape().dims().begin(), dst.shape().dims().end()); \
    a.dtype = dst.dtype();                                                                \
    return DispatchInplace(k##Name, {src}, opdefs::ToAttrMap(std::move(a)), dst);         \
  }
// clang-format off
#define OFL_ATTRS(...)
#define OFL_COPY_API(...)
#define OFL_COPY(name, Name, Attrs, out, grad, save, layout, devices)          \
  const OpDef k##Name = OpSpec(#name, Infer_##out<opdefs::Attrs>)              \
                            .Grad(grad)                                        \
                            .StridedInputs(OFL_COPY_STRIDED_##layout)          \
                            .CrossDevice(OFL_COPY_CROSS_##devices)             \
                            .SaveInputs(OFL_COPY_SAVE_IN_##save)               \
                            .SaveOutputs(OFL_COPY_SAVE_OUT_##save)             \
                            .LowPrecision(kLowPrecisionAll);                   \
  OFL_COPY_RUN_##out(Name, Attrs)
#include "oneflow_like/opdefs/copy.def"
#undef OFL_COPY
#undef OFL_COPY_API
#undef OFL_ATTRS
// clang-format on

}  // namespace

namespace functional {

StatusOr<Tensor> Contiguous(const Tensor& x) {
  // Lazy tensors too: a lazy value is laid out contiguously, and a lazy view carries its layout
  // in its root (lazy/trace.h), so this copies exactly when eager mode would.
  if (x.is_contiguous()) return x;
  return RunContiguous(x, NoAttrs{});
}

StatusOr<Tensor> Clone(const Tensor& x) {
  return RunContiguous(x, NoAttrs{});
}

StatusOr<Tensor> Cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  CastAttrs a;
  a.dtype = dtype;
  return RunCast(x, a);
}

Status CopyInto(const Tensor& dst, const Tensor& src) {
  Tensor s = src;
  if (src.device() != dst.device()) {
    ASSIGN_OR_RETURN(s, To(src, dst.device()));
  }
  return RunCopyInto(s, CopyIntoAttrs{}, dst);
}

StatusOr<Tensor> To(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  ToDeviceAttrs a;
  a.device = device.ToString();
  return RunToDevice(x, a);
}

}  // namespace functional
}  // namespace oneflow_like
