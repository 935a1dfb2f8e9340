// Convolution family: schemas, gradient formulas and functional entries.
// Attrs of every conv op: stride, padding, dilation (2 each), groups; the grad-input op also
// carries "input_shape" and the grad-weight op "weight_shape".
#include "oneflow_like/ops/conv.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {

int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

Status InferConv(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const Tensor &x = in[0], &w = in[1];
  const auto &st = a.Ints("stride"), &pd = a.Ints("padding"), &dl = a.Ints("dilation");
  int64_t g = a.Int("groups", 1);
  if (x.ndim() != 4 || w.ndim() != 4)
    return InvalidArgument(
        "[conv2d] expected input [N,C,H,W] and weight [K,C/groups,R,S], got %s and %s",
        x.meta_string(), w.meta_string());
  if (x.dtype() != w.dtype())
    return TypeError("[conv2d] input %s and weight %s have different dtypes", x.meta_string(),
                     w.meta_string());
  if (g < 1 || x.dim(1) % g != 0 || w.dim(0) % g != 0 || w.dim(1) * g != x.dim(1))
    return InvalidArgument(
        "[conv2d] input %s, weight %s and groups=%d do not agree (weight dim 1 * groups must "
        "equal input channels; both channel counts divisible by groups)",
        x.meta_string(), w.meta_string(), g);
  for (int i = 0; i < 2; ++i)
    if (st[i] < 1 || pd[i] < 0 || dl[i] < 1)
      return InvalidArgument("[conv2d] stride and dilation must be >= 1 and padding >= 0");
  if (in.size() > 2 &&
      (in[2].ndim() != 1 || in[2].dim(0) != w.dim(0) || in[2].dtype() != x.dtype()))
    return InvalidArgument("[conv2d] expected bias [%d] of %s's dtype, got %s", w.dim(0),
                           x.meta_string(), in[2].meta_string());
  int64_t oh = OutSize(x.dim(2), w.dim(2), st[0], pd[0], dl[0]),
          ow = OutSize(x.dim(3), w.dim(3), st[1], pd[1], dl[1]);
  if (oh < 1 || ow < 1)
    return InvalidArgument("[conv2d] input %s is too small for weight %s (output would be %dx%d)",
                           x.meta_string(), w.meta_string(), oh, ow);
  out->push_back(TensorMeta{Shape{x.dim(0), w.dim(0), oh, ow}, x.dtype(), x.device()});
  return Status();
}

// conv2d_grad_input(dy, w) -> dx;  conv2d_grad_weight(dy, x) -> dw.
const OpDef kConvGradInput =
    OpSpec("conv2d_grad_input",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             out->push_back(TensorMeta{Shape(absl::MakeConstSpan(a.Ints("input_shape"))),
                                       in[0].dtype(), in[0].device()});
             return Status();
           })
        .SaveInputs(false)
        .SaveOutputs(false);
const OpDef kConvGradWeight =
    OpSpec("conv2d_grad_weight",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             out->push_back(TensorMeta{Shape(absl::MakeConstSpan(a.Ints("weight_shape"))),
                                       in[0].dtype(), in[0].device()});
             return Status();
           })
        .SaveInputs(false)
        .SaveOutputs(false);

const OpDef kConv2d =
    OpSpec("conv2d", InferConv)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          const Tensor& dy = c.grad_outputs[0];
          TensorList r(c.inputs.size());
          AttrMap a = c.attrs;
          if (c.needs_input_grad[0]) {
            a.Set("input_shape", std::vector<int64_t>(c.inputs[0].shape().dims().begin(),
                                                      c.inputs[0].shape().dims().end()));
            ASSIGN_OR_RETURN(r[0], Dispatch1(kConvGradInput, {dy, c.inputs[1]}, a));
          }
          if (c.needs_input_grad[1]) {
            a.Set("weight_shape", std::vector<int64_t>(c.inputs[1].shape().dims().begin(),
                                                       c.inputs[1].shape().dims().end()));
            ASSIGN_OR_RETURN(r[1], Dispatch1(kConvGradWeight, {dy, c.inputs[0]}, a));
          }
          if (c.inputs.size() > 2 && c.needs_input_grad[2]) {
            ASSIGN_OR_RETURN(r[2], functional::Sum(dy, {0, 2, 3}));
          }
          return r;
        })
        .SaveOutputs(false);

StatusOr<std::vector<int64_t>> Expand2(const char* op, const char* what,
                                       const std::vector<int64_t>& v, int n) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (static_cast<int>(v.size()) == n) return v;
  return InvalidArgument("[%s] %s must have 1 or %d values, got %d", op, what, n, int(v.size()));
}

StatusOr<Tensor> RunConv(const Tensor& x, const Tensor& w, const Tensor& bias,
                         std::vector<int64_t> st, std::vector<int64_t> pd, std::vector<int64_t> dl,
                         int64_t groups) {
  RETURN_IF_ERROR(CheckFloating("conv2d", x));
  TensorList ins{x, w};
  if (bias.defined()) ins.push_back(bias);
  return Dispatch1(kConv2d, ins,
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
