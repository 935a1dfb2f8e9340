// Convolution family: the OpDefs of oneflow_like/opdefs/conv.def (generated below), the gradient
// formula and the functional entries. Kernels: kernels/cpu/conv.cc, kernels/cuda/conv.cc.
#include "oneflow_like/ops/conv.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/conv.h"

namespace oneflow_like {
namespace {

using opdefs::ConvAttrs;
using opdefs::Ints;

int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

// conv2d and conv3d share everything but the rank: x [N, C, *sp], w [K, C/groups, *ksp].
template <int kNd>
Status InferConv(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const char* op = kNd == 2 ? "conv2d" : "conv3d";
  const Tensor &x = in[0], &w = in[1];
  const ConvAttrs attrs = opdefs::ReadAttrs<ConvAttrs>(a);
  const auto &st = attrs.stride, &pd = attrs.padding, &dl = attrs.dilation;
  const int64_t g = attrs.groups;
  if (x.ndim() != kNd + 2 || w.ndim() != kNd + 2)
    return InvalidArgument("[%s] expected input [N,C,%s] and weight [K,C/groups,%s], got %s and %s",
                           op, kNd == 2 ? "H,W" : "D,H,W", kNd == 2 ? "R,S" : "T,R,S",
                           x.meta_string(), w.meta_string());
  if (x.dtype() != w.dtype())
    return TypeError("[%s] input %s and weight %s have different dtypes", op, x.meta_string(),
                     w.meta_string());
  if (g < 1 || x.dim(1) % g != 0 || w.dim(0) % g != 0 || w.dim(1) * g != x.dim(1))
    return InvalidArgument(
        "[%s] input %s, weight %s and groups=%d do not agree (weight dim 1 * groups must "
        "equal input channels; both channel counts divisible by groups)",
        op, x.meta_string(), w.meta_string(), g);
  if (st.size() != kNd || pd.size() != kNd || dl.size() != kNd)
    return InvalidArgument("[%s] expected %d strides, paddings and dilations", op, kNd);
  for (int i = 0; i < kNd; ++i)
    if (st[i] < 1 || pd[i] < 0 || dl[i] < 1)
      return InvalidArgument("[%s] stride and dilation must be >= 1 and padding >= 0", op);
  if (in.size() > 2 &&
      (in[2].ndim() != 1 || in[2].dim(0) != w.dim(0) || in[2].dtype() != x.dtype()))
    return InvalidArgument("[%s] expected bias [%d] of %s's dtype, got %s", op, w.dim(0),
                           x.meta_string(), in[2].meta_string());
  std::vector<int64_t> ys{x.dim(0), w.dim(0)};
  for (int i = 0; i < kNd; ++i) {
    ys.push_back(OutSize(x.dim(2 + i), w.dim(2 + i), st[i], pd[i], dl[i]));
    if (ys.back() < 1)
      return InvalidArgument("[%s] input %s is too small for weight %s (output size %d in dim %d)",
                             op, x.meta_string(), w.meta_string(), ys.back(), 2 + i);
  }
  out->push_back(TensorMeta{Shape(absl::MakeConstSpan(ys)), x.dtype(), x.device()});
  return Status();
}

// A backward op's output: x's dtype, the shape in its `shape` attribute.
template <typename Attrs, Ints Attrs::*shape>
Status InferFromAttr(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  Ints dims = opdefs::ReadAttrs<Attrs>(a).*shape;
  out->push_back(TensorMeta{Shape(absl::MakeConstSpan(dims)), in[0].dtype(), in[0].device()});
  return Status();
}

// The conv.def `lowp` column: the device types whose kernels take f16/bf16.
#define OFL_CONV_LOWP_cuda static_cast<uint8_t>(1u << static_cast<int>(DeviceType::kCUDA))
// clang-format off
#define OFL_ATTRS(...)
#define OFL_CONV(...)
#define OFL_CONV_API(...)
#define OFL_CONV_GRAD(name, Name, Attrs, shape, lowp) \
  extern const OpDef k##Name;                       \
  StatusOr<TensorList> Name##Double(const GradContext& c);
#define OFL_CONV(name, Name, ...) extern const OpDef k##Name;
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV_GRAD
#undef OFL_CONV
#define OFL_CONV(...)
// The backward ops' own gradients (double backward) read both inputs: saved only when a backward
// with create_graph=True records them.
#define OFL_CONV_GRAD(name, Name, Attrs, shape, lowp)                                        \
  const OpDef k##Name = OpSpec(#name, InferFromAttr<opdefs::Attrs, &opdefs::Attrs::shape>) \
                            .Grad(&Name##Double)                                           \
                            .SaveOutputs(false)                                            \
                            .LowPrecision(OFL_CONV_LOWP_##lowp);
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV_GRAD
// clang-format on

std::vector<int64_t> DimsOf(const Tensor& t) {
  return std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end());
}

// A backward op's attributes: its forward op's, plus its output shape (set by the caller).
template <typename GradAttrs>
GradAttrs WithConvAttrs(const ConvAttrs& a) {
  GradAttrs g;
  g.stride = a.stride;
  g.padding = a.padding;
  g.dilation = a.dilation;
  g.groups = a.groups;
  return g;
}

// The table's grad column: dx and dw by the backward ops, the bias gradient by a sum.
template <int kNd>
StatusOr<TensorList> ConvGrad(const GradContext& c) {
  const OpDef& gi = kNd == 2 ? kConv2dGradInput : kConv3dGradInput;
  const OpDef& gw = kNd == 2 ? kConv2dGradWeight : kConv3dGradWeight;
  const Tensor& dy = c.grad_outputs[0];
  const ConvAttrs a = opdefs::ReadAttrs<ConvAttrs>(c.attrs);
  TensorList r(c.inputs.size());
  if (c.needs_input_grad[0]) {
    auto ga = WithConvAttrs<opdefs::ConvGradInputAttrs>(a);
    ga.input_shape = DimsOf(c.inputs[0]);
    ASSIGN_OR_RETURN(r[0], Dispatch1(gi, {dy, c.inputs[1]}, opdefs::ToAttrMap(ga)));
  }
  if (c.needs_input_grad[1]) {
    auto ga = WithConvAttrs<opdefs::ConvGradWeightAttrs>(a);
    ga.weight_shape = DimsOf(c.inputs[1]);
    ASSIGN_OR_RETURN(r[1], Dispatch1(gw, {dy, c.inputs[0]}, opdefs::ToAttrMap(ga)));
  }
  if (c.inputs.size() > 2 && c.needs_input_grad[2]) {
    std::vector<int64_t> dims{0};
    for (int i = 0; i < kNd; ++i) dims.push_back(2 + i);
    ASSIGN_OR_RETURN(r[2], functional::Sum(dy, dims));
  }
  return r;
}

// Double backward. Both backward ops are bilinear: dx = conv_grad_input(dy, w) is the adjoint
// of x -> conv(x, w), dw = conv_grad_weight(dy, x) the adjoint of w -> conv(x, w), so with gg
// the incoming gradient (x's shape, resp. w's):
//   conv_grad_input:  d/d dy = conv(gg, w),  d/dw = conv_grad_weight(dy, gg)
//   conv_grad_weight: d/d dy = conv(x, gg),  d/dx = conv_grad_input(dy, gg)
template <typename GradAttrs>
AttrMap ForwardAttrs(const GradContext& c) {
  const GradAttrs g = opdefs::ReadAttrs<GradAttrs>(c.attrs);
  ConvAttrs a;
  a.stride = g.stride;
  a.padding = g.padding;
  a.dilation = g.dilation;
  a.groups = g.groups;
  return opdefs::ToAttrMap(a);
}
template <int kNd>
StatusOr<TensorList> ConvGradInputDouble(const GradContext& c) {
  const Tensor &gg = c.grad_outputs[0], &dy = c.inputs[0], &w = c.inputs[1];
  TensorList r(2);
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(r[0], Dispatch1(kNd == 2 ? kConv2d : kConv3d, {gg, w},
                                     ForwardAttrs<opdefs::ConvGradInputAttrs>(c)));
  }
  if (c.needs_input_grad[1]) {
    auto ga = WithConvAttrs<opdefs::ConvGradWeightAttrs>(
        opdefs::ReadAttrs<ConvAttrs>(ForwardAttrs<opdefs::ConvGradInputAttrs>(c)));
    ga.weight_shape = DimsOf(w);
    ASSIGN_OR_RETURN(r[1], Dispatch1(kNd == 2 ? kConv2dGradWeight : kConv3dGradWeight, {dy, gg},
                                     opdefs::ToAttrMap(ga)));
  }
  return r;
}
template <int kNd>
StatusOr<TensorList> ConvGradWeightDouble(const GradContext& c) {
  const Tensor &gg = c.grad_outputs[0], &dy = c.inputs[0], &x = c.inputs[1];
  TensorList r(2);
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(r[0], Dispatch1(kNd == 2 ? kConv2d : kConv3d, {x, gg},
                                     ForwardAttrs<opdefs::ConvGradWeightAttrs>(c)));
  }
  if (c.needs_input_grad[1]) {
    auto ga = WithConvAttrs<opdefs::ConvGradInputAttrs>(
        opdefs::ReadAttrs<ConvAttrs>(ForwardAttrs<opdefs::ConvGradWeightAttrs>(c)));
    ga.input_shape = DimsOf(x);
    ASSIGN_OR_RETURN(r[1], Dispatch1(kNd == 2 ? kConv2dGradInput : kConv3dGradInput, {dy, gg},
                                     opdefs::ToAttrMap(ga)));
  }
  return r;
}
StatusOr<TensorList> Conv2dGradInputDouble(const GradContext& c) {
  return ConvGradInputDouble<2>(c);
}
StatusOr<TensorList> Conv3dGradInputDouble(const GradContext& c) {
  return ConvGradInputDouble<3>(c);
}
StatusOr<TensorList> Conv2dGradWeightDouble(const GradContext& c) {
  return ConvGradWeightDouble<2>(c);
}
StatusOr<TensorList> Conv3dGradWeightDouble(const GradContext& c) {
  return ConvGradWeightDouble<3>(c);
}

StatusOr<std::vector<int64_t>> Expand2(const char* op, const char* what,
                                       const std::vector<int64_t>& v, int n) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (static_cast<int>(v.size()) == n) return v;
  return InvalidArgument("[%s] %s must have 1 or %d values, got %d", op, what, n, int(v.size()));
}
// The functional entries' attributes: stride, padding and dilation with one value per spatial dim.
StatusOr<ConvAttrs> AttrsOf(const char* op, const functional::ConvOptions& o, int nd) {
  ConvAttrs a;
  ASSIGN_OR_RETURN(a.stride, Expand2(op, "stride", o.stride, nd));
  ASSIGN_OR_RETURN(a.padding, Expand2(op, "padding", o.padding, nd));
  ASSIGN_OR_RETURN(a.dilation, Expand2(op, "dilation", o.dilation, nd));
  a.groups = o.groups;
  return a;
}

StatusOr<Tensor> RunConv(const OpDef& op, const Tensor& x, const Tensor& w, const Tensor& bias,
                         const ConvAttrs& a) {
  RETURN_IF_ERROR(CheckFloating(op.name, x));
  TensorList ins{x, w};
  if (bias.defined()) ins.push_back(bias);
  return Dispatch1(op, ins, opdefs::ToAttrMap(a));
}

#define OFL_CONV_SAVE_IN_inputs true
#define OFL_CONV_SAVE_OUT_inputs false
// clang-format off
#define OFL_CONV_GRAD(...)
#define OFL_CONV(name, Name, nd, grad, save, lowp)                                         \
  const OpDef k##Name = OpSpec(#name, InferConv<nd>)                                       \
                            .Grad(grad)                                                    \
                            .SaveInputs(OFL_CONV_SAVE_IN_##save)                           \
                            .SaveOutputs(OFL_CONV_SAVE_OUT_##save)                         \
                            .LowPrecision(OFL_CONV_LOWP_##lowp);                           \
  StatusOr<Tensor> Run##Name(const Tensor& x, const Tensor& w, const Tensor& bias,         \
                             const ConvAttrs& a) {                                         \
    return RunConv(k##Name, x, w, bias, a);                                                \
  }
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV
#undef OFL_CONV_GRAD
#undef OFL_CONV_API
#undef OFL_ATTRS
// clang-format on

}  // namespace

namespace functional {

StatusOr<Tensor> Conv2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt) {
  ASSIGN_OR_RETURN(ConvAttrs a, AttrsOf("conv2d", opt, 2));
  return RunConv2d(x, w, bias, a);
}

StatusOr<Tensor> Conv3d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt) {
  ASSIGN_OR_RETURN(ConvAttrs a, AttrsOf("conv3d", opt, 3));
  return RunConv3d(x, w, bias, a);
}

StatusOr<Tensor> Conv1d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt) {
  if (x.ndim() != 3 || w.ndim() != 3)
    return InvalidArgument(
        "[conv1d] expected input [N,C,L] and weight [K,C/groups,S], got %s and %s", x.meta_string(),
        w.meta_string());
  ASSIGN_OR_RETURN(ConvAttrs a, AttrsOf("conv1d", opt, 1));
  a.stride.insert(a.stride.begin(), 1);  // the height-1 image's dim
  a.padding.insert(a.padding.begin(), 0);
  a.dilation.insert(a.dilation.begin(), 1);
  ASSIGN_OR_RETURN(Tensor x4, Reshape(x, Shape{x.dim(0), x.dim(1), 1, x.dim(2)}));
  ASSIGN_OR_RETURN(Tensor w4, Reshape(w, Shape{w.dim(0), w.dim(1), 1, w.dim(2)}));
  ASSIGN_OR_RETURN(Tensor y, RunConv2d(x4, w4, bias, a));
  return Reshape(y, Shape{y.dim(0), y.dim(1), y.dim(3)});
}

}  // namespace functional
}  // namespace oneflow_like
