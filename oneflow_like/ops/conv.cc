// Convolution family: schemas, gradient formulas and functional entries.
// Attrs of every conv op: stride, padding, dilation (2 or 3 each: conv2d / conv3d), groups; the
// grad-input op also carries "input_shape" and the grad-weight op "weight_shape".
#include "oneflow_like/ops/conv.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {

int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

// conv2d and conv3d share everything but the rank: x [N, C, *sp], w [K, C/groups, *ksp].
template <int kNd>
Status InferConv(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const char* op = kNd == 2 ? "conv2d" : "conv3d";
  const Tensor &x = in[0], &w = in[1];
  const auto &st = a.Ints("stride"), &pd = a.Ints("padding"), &dl = a.Ints("dilation");
  int64_t g = a.Int("groups", 1);
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

Status InferFromAttr(const char* attr, const TensorList& in, const AttrMap& a,
                     std::vector<TensorMeta>* out) {
  out->push_back(
      TensorMeta{Shape(absl::MakeConstSpan(a.Ints(attr))), in[0].dtype(), in[0].device()});
  return Status();
}
Status InferGradInput(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferFromAttr("input_shape", in, a, out);
}
Status InferGradWeight(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferFromAttr("weight_shape", in, a, out);
}

// convNd_grad_input(dy, w) -> dx;  convNd_grad_weight(dy, x) -> dw.
const OpDef kConvGradInput =
    OpSpec("conv2d_grad_input", InferGradInput).SaveInputs(false).SaveOutputs(false);
const OpDef kConvGradWeight =
    OpSpec("conv2d_grad_weight", InferGradWeight).SaveInputs(false).SaveOutputs(false);
const OpDef kConv3dGradInput =
    OpSpec("conv3d_grad_input", InferGradInput).SaveInputs(false).SaveOutputs(false);
const OpDef kConv3dGradWeight =
    OpSpec("conv3d_grad_weight", InferGradWeight).SaveInputs(false).SaveOutputs(false);

std::vector<int64_t> DimsOf(const Tensor& t) {
  return std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end());
}

template <int kNd>
StatusOr<TensorList> ConvGrad(const GradContext& c) {
  const OpDef& gi = kNd == 2 ? kConvGradInput : kConv3dGradInput;
  const OpDef& gw = kNd == 2 ? kConvGradWeight : kConv3dGradWeight;
  const Tensor& dy = c.grad_outputs[0];
  TensorList r(c.inputs.size());
  AttrMap a = c.attrs;
  if (c.needs_input_grad[0]) {
    a.Set("input_shape", DimsOf(c.inputs[0]));
    ASSIGN_OR_RETURN(r[0], Dispatch1(gi, {dy, c.inputs[1]}, a));
  }
  if (c.needs_input_grad[1]) {
    a.Set("weight_shape", DimsOf(c.inputs[1]));
    ASSIGN_OR_RETURN(r[1], Dispatch1(gw, {dy, c.inputs[0]}, a));
  }
  if (c.inputs.size() > 2 && c.needs_input_grad[2]) {
    std::vector<int64_t> dims{0};
    for (int i = 0; i < kNd; ++i) dims.push_back(2 + i);
    ASSIGN_OR_RETURN(r[2], functional::Sum(dy, dims));
  }
  return r;
}

const OpDef kConv2d = OpSpec("conv2d", InferConv<2>).Grad(ConvGrad<2>).SaveOutputs(false);
const OpDef kConv3d = OpSpec("conv3d", InferConv<3>).Grad(ConvGrad<3>).SaveOutputs(false);

StatusOr<std::vector<int64_t>> Expand2(const char* op, const char* what,
                                       const std::vector<int64_t>& v, int n) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (static_cast<int>(v.size()) == n) return v;
  return InvalidArgument("[%s] %s must have 1 or %d values, got %d", op, what, n, int(v.size()));
}

StatusOr<Tensor> RunConv(const Tensor& x, const Tensor& w, const Tensor& bias,
                         std::vector<int64_t> st, std::vector<int64_t> pd, std::vector<int64_t> dl,
                         int64_t groups, const OpDef& op = kConv2d) {
  RETURN_IF_ERROR(CheckFloating(op.name, x));
  TensorList ins{x, w};
  if (bias.defined()) ins.push_back(bias);
  return Dispatch1(op, ins,
                   {{"stride", st}, {"padding", pd}, {"dilation", dl}, {"groups", groups}});
}

}  // namespace

namespace functional {

StatusOr<Tensor> Conv2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt) {
  ASSIGN_OR_RETURN(auto st, Expand2("conv2d", "stride", opt.stride, 2));
  ASSIGN_OR_RETURN(auto pd, Expand2("conv2d", "padding", opt.padding, 2));
  ASSIGN_OR_RETURN(auto dl, Expand2("conv2d", "dilation", opt.dilation, 2));
  return RunConv(x, w, bias, st, pd, dl, opt.groups);
}

StatusOr<Tensor> Conv3d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt) {
  ASSIGN_OR_RETURN(auto st, Expand2("conv3d", "stride", opt.stride, 3));
  ASSIGN_OR_RETURN(auto pd, Expand2("conv3d", "padding", opt.padding, 3));
  ASSIGN_OR_RETURN(auto dl, Expand2("conv3d", "dilation", opt.dilation, 3));
  return RunConv(x, w, bias, st, pd, dl, opt.groups, kConv3d);
}

StatusOr<Tensor> Conv1d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt) {
  if (x.ndim() != 3 || w.ndim() != 3)
    return InvalidArgument(
        "[conv1d] expected input [N,C,L] and weight [K,C/groups,S], got %s and %s", x.meta_string(),
        w.meta_string());
  ASSIGN_OR_RETURN(auto st, Expand2("conv1d", "stride", opt.stride, 1));
  ASSIGN_OR_RETURN(auto pd, Expand2("conv1d", "padding", opt.padding, 1));
  ASSIGN_OR_RETURN(auto dl, Expand2("conv1d", "dilation", opt.dilation, 1));
  ASSIGN_OR_RETURN(Tensor x4, Reshape(x, Shape{x.dim(0), x.dim(1), 1, x.dim(2)}));
  ASSIGN_OR_RETURN(Tensor w4, Reshape(w, Shape{w.dim(0), w.dim(1), 1, w.dim(2)}));
  ASSIGN_OR_RETURN(Tensor y, RunConv(x4, w4, bias, {1, st[0]}, {0, pd[0]}, {1, dl[0]}, opt.groups));
  return Reshape(y, Shape{y.dim(0), y.dim(1), y.dim(3)});
}

}  // namespace functional
}  // namespace oneflow_like
