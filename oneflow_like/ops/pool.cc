// Pooling family: schemas, gradient formulas and functional entries. The *2d ops see 4-d NCHW
// inputs, the *3d ops 5-d NCDHW (unbatched inputs are unsqueezed by the functional entries).
// Attrs: kernel, stride, padding, dilation (one per spatial dim), ceil_mode, count_include_pad,
// divisor_override; adaptive: output_size (one per spatial dim).
#include "oneflow_like/ops/pool.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {

int64_t PoolOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t num = in + 2 * p - d * (k - 1) - 1;
  if (num < 0) return 0;  // the padded input is smaller than the (dilated) window
  int64_t out = (ceil ? (num + s - 1) / s : num / s) + 1;
  // The last window must start inside the input or the left padding (PyTorch's rule).
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

Status InferPool(const char* op, const TensorList& in, const AttrMap& a,
                 std::vector<TensorMeta>* out, bool with_indices) {
  const Tensor& x = in[0];
  const auto &k = a.Ints("kernel"), &s = a.Ints("stride"), &p = a.Ints("padding"),
             &d = a.Ints("dilation");
  const int nd = static_cast<int>(k.size());  // spatial dims: 2 or 3
  if (x.ndim() != nd + 2 || s.size() != k.size() || p.size() != k.size() || d.size() != k.size())
    return InvalidArgument(
        "[%s] expected a %d-d input and %d kernel/stride/padding/dilation values, "
        "got %s",
        op, nd + 2, nd, x.meta_string());
  std::vector<int64_t> os{x.dim(0), x.dim(1)};
  for (int i = 0; i < nd; ++i) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1 || p[i] < 0)
      return InvalidArgument("[%s] kernel_size, stride and dilation must be >= 1 and padding >= 0",
                             op);
    if (p[i] * 2 > k[i])
      return InvalidArgument("[%s] padding %d should be at most half of kernel size %d", op, p[i],
                             k[i]);
  }
  for (int i = 0; i < nd; ++i) {
    os.push_back(PoolOut(x.dim(2 + i), k[i], s[i], p[i], d[i], a.Bool("ceil_mode")));
    if (os.back() < 1)
      return InvalidArgument("[%s] input %s is too small for kernel size %d in dim %d (output %d)",
                             op, x.meta_string(), k[i], 2 + i, os.back());
  }
  Shape ys(absl::MakeConstSpan(os));
  out->push_back(TensorMeta{ys, x.dtype(), x.device()});
  if (with_indices) out->push_back(TensorMeta{ys, DType::kI64, x.device()});
  return Status();
}

// Grad ops: output has the forward input's shape (attr "input_shape").
Status InferToInput(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  out->push_back(
      TensorMeta{Shape(absl::MakeConstSpan(a.Ints("input_shape"))), in[0].dtype(), in[0].device()});
  return Status();
}

AttrMap WithInputShape(const AttrMap& a, const Tensor& x) {
  AttrMap r = a;
  r.Set("input_shape", std::vector<int64_t>(x.shape().dims().begin(), x.shape().dims().end()));
  return r;
}

// max_poolNd_grad(dy, indices) -> dx;  avg_poolNd_grad(dy) -> dx;
// adaptive_avg_poolNd_grad(dy) -> dx.
const OpDef kMaxPoolGrad =
    OpSpec("max_pool2d_grad", InferToInput).SaveInputs(false).SaveOutputs(false);
const OpDef kAvgPoolGrad =
    OpSpec("avg_pool2d_grad", InferToInput).SaveInputs(false).SaveOutputs(false);
const OpDef kAdaptiveGrad =
    OpSpec("adaptive_avg_pool2d_grad", InferToInput).SaveInputs(false).SaveOutputs(false);
const OpDef kMaxPool3dGrad =
    OpSpec("max_pool3d_grad", InferToInput).SaveInputs(false).SaveOutputs(false);
const OpDef kAvgPool3dGrad =
    OpSpec("avg_pool3d_grad", InferToInput).SaveInputs(false).SaveOutputs(false);
const OpDef kAdaptive3dGrad =
    OpSpec("adaptive_avg_pool3d_grad", InferToInput).SaveInputs(false).SaveOutputs(false);

template <int kNd>
Status InferMaxPool(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferPool(kNd == 2 ? "max_pool2d" : "max_pool3d", in, a, out, true);
}
template <int kNd>
Status InferAvgPool(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferPool(kNd == 2 ? "avg_pool2d" : "avg_pool3d", in, a, out, false);
}
Status InferAdaptive(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  std::vector<int64_t> os{in[0].dim(0), in[0].dim(1)};
  for (int64_t v : a.Ints("output_size")) os.push_back(v);
  out->push_back(TensorMeta{Shape(absl::MakeConstSpan(os)), in[0].dtype(), in[0].device()});
  return Status();
}

template <int kNd>
StatusOr<TensorList> MaxPoolGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(
      Tensor g, Dispatch1(kNd == 2 ? kMaxPoolGrad : kMaxPool3dGrad,
                          {c.grad_outputs[0], c.outputs[1]}, WithInputShape(c.attrs, c.inputs[0])));
  return TensorList{g};
}
template <int kNd>
StatusOr<TensorList> AvgPoolGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNd == 2 ? kAvgPoolGrad : kAvgPool3dGrad,
                                       {c.grad_outputs[0]}, WithInputShape(c.attrs, c.inputs[0])));
  return TensorList{g};
}
template <int kNd>
StatusOr<TensorList> AdaptiveGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNd == 2 ? kAdaptiveGrad : kAdaptive3dGrad,
                                       {c.grad_outputs[0]}, WithInputShape(c.attrs, c.inputs[0])));
  return TensorList{g};
}

const OpDef kMaxPool = OpSpec("max_pool2d", InferMaxPool<2>).Grad(MaxPoolGrad<2>);
const OpDef kAvgPool =
    OpSpec("avg_pool2d", InferAvgPool<2>).Grad(AvgPoolGrad<2>).SaveOutputs(false);
const OpDef kAdaptive =
    OpSpec("adaptive_avg_pool2d", InferAdaptive).Grad(AdaptiveGrad<2>).SaveOutputs(false);
const OpDef kMaxPool3d = OpSpec("max_pool3d", InferMaxPool<3>).Grad(MaxPoolGrad<3>);
const OpDef kAvgPool3d =
    OpSpec("avg_pool3d", InferAvgPool<3>).Grad(AvgPoolGrad<3>).SaveOutputs(false);
const OpDef kAdaptive3d =
    OpSpec("adaptive_avg_pool3d", InferAdaptive).Grad(AdaptiveGrad<3>).SaveOutputs(false);

StatusOr<std::vector<int64_t>> PerDim(const char* op, const char* what,
                                      const std::vector<int64_t>& v, int n) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (static_cast<int>(v.size()) == n) return v;
  return InvalidArgument("[%s] %s must have 1 or %d values, got %d", op, what, n, int(v.size()));
}

// Checks rank (3 or 4) and dtype; returns the 4-d view.
StatusOr<Tensor> As4d(const char* op, const Tensor& x) {
  RETURN_IF_ERROR(CheckFloating(op, x));
  if (x.ndim() == 4) return x;
  if (x.ndim() == 3) return functional::Reshape(x, Shape{1, x.dim(0), x.dim(1), x.dim(2)});
  return InvalidArgument("[%s] expected a 3-d (C,H,W) or 4-d (N,C,H,W) input, got %s", op,
                         x.meta_string());
}
StatusOr<Tensor> Back(const Tensor& y, const Tensor& x) {
  if (x.ndim() == 4) return y;
  return functional::Reshape(y, Shape{y.dim(1), y.dim(2), y.dim(3)});
}

StatusOr<AttrMap> PoolAttrs(const char* op, const functional::Pool2dOptions& o, int nd = 2) {
  ASSIGN_OR_RETURN(auto k, PerDim(op, "kernel_size", o.kernel_size, nd));
  ASSIGN_OR_RETURN(auto s, o.stride.empty() ? StatusOr<std::vector<int64_t>>(k)
                                            : PerDim(op, "stride", o.stride, nd));
  ASSIGN_OR_RETURN(auto p, PerDim(op, "padding", o.padding, nd));
  ASSIGN_OR_RETURN(auto d, PerDim(op, "dilation", o.dilation, nd));
  return AttrMap{{"kernel", k},
                 {"stride", s},
                 {"padding", p},
                 {"dilation", d},
                 {"ceil_mode", o.ceil_mode},
                 {"count_include_pad", o.count_include_pad},
                 {"divisor_override", o.divisor_override}};
}

// Checks rank (4 or 5) and dtype; returns the 5-d view.
StatusOr<Tensor> As5d(const char* op, const Tensor& x) {
  RETURN_IF_ERROR(CheckFloating(op, x));
  if (x.ndim() == 5) return x;
  if (x.ndim() == 4)
    return functional::Reshape(x, Shape{1, x.dim(0), x.dim(1), x.dim(2), x.dim(3)});
  return InvalidArgument("[%s] expected a 4-d (C,D,H,W) or 5-d (N,C,D,H,W) input, got %s", op,
                         x.meta_string());
}
StatusOr<Tensor> Back3d(const Tensor& y, const Tensor& x) {
  if (x.ndim() == 5) return y;
  return functional::Reshape(y, Shape{y.dim(1), y.dim(2), y.dim(3), y.dim(4)});
}

}  // namespace

namespace functional {

StatusOr<std::pair<Tensor, Tensor>> MaxPool3dWithIndices(const Tensor& x,
                                                         const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(Tensor x5, As5d("max_pool3d", x));
  ASSIGN_OR_RETURN(AttrMap a, PoolAttrs("max_pool3d", opt, 3));
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(kMaxPool3d, {x5}, a));
  ASSIGN_OR_RETURN(Tensor y, Back3d(outs[0], x));
  ASSIGN_OR_RETURN(Tensor i, Back3d(outs[1].detach(), x));
  return std::make_pair(y, i);
}

StatusOr<Tensor> AvgPool3d(const Tensor& x, const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(Tensor x5, As5d("avg_pool3d", x));
  ASSIGN_OR_RETURN(AttrMap a, PoolAttrs("avg_pool3d", opt, 3));
  a.Set("dilation", std::vector<int64_t>{1, 1, 1});
  ASSIGN_OR_RETURN(Tensor y, Dispatch1(kAvgPool3d, {x5}, a));
  return Back3d(y, x);
}

StatusOr<Tensor> AdaptiveAvgPool3d(const Tensor& x, const std::vector<int64_t>& output_size) {
  ASSIGN_OR_RETURN(Tensor x5, As5d("adaptive_avg_pool3d", x));
  ASSIGN_OR_RETURN(auto os, PerDim("adaptive_avg_pool3d", "output_size", output_size, 3));
  for (int i = 0; i < 3; ++i) {
    if (os[i] < 0) os[i] = x5.dim(2 + i);  // -1 (None in Python) keeps the input size
    if (os[i] < 1)
      return InvalidArgument("[adaptive_avg_pool3d] output_size must be positive, got [%d,%d,%d]",
                             os[0], os[1], os[2]);
  }
  ASSIGN_OR_RETURN(Tensor y, Dispatch1(kAdaptive3d, {x5}, {{"output_size", os}}));
  return Back3d(y, x);
}

StatusOr<std::pair<Tensor, Tensor>> MaxPool2dWithIndices(const Tensor& x,
                                                         const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(Tensor x4, As4d("max_pool2d", x));
  ASSIGN_OR_RETURN(AttrMap a, PoolAttrs("max_pool2d", opt));
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(kMaxPool, {x4}, a));
  ASSIGN_OR_RETURN(Tensor y, Back(outs[0], x));
  ASSIGN_OR_RETURN(Tensor i, Back(outs[1].detach(), x));
  return std::make_pair(y, i);
}

StatusOr<Tensor> MaxPool2d(const Tensor& x, const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(auto yi, MaxPool2dWithIndices(x, opt));
  return yi.first;
}

StatusOr<Tensor> AvgPool2d(const Tensor& x, const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(Tensor x4, As4d("avg_pool2d", x));
  ASSIGN_OR_RETURN(AttrMap a, PoolAttrs("avg_pool2d", opt));
  a.Set("dilation", std::vector<int64_t>{1, 1});
  ASSIGN_OR_RETURN(Tensor y, Dispatch1(kAvgPool, {x4}, a));
  return Back(y, x);
}

namespace {
// Options over (1, L) from 1-d ones, and x as [N, C, 1, L].
StatusOr<std::pair<Tensor, Pool2dOptions>> As2d(const char* op, const Tensor& x,
                                                const Pool2dOptions& opt) {
  if (x.ndim() != 2 && x.ndim() != 3)
    return InvalidArgument("[%s] expected a 2-d (C,L) or 3-d (N,C,L) input, got %s", op,
                           x.meta_string());
  auto one = [&](const std::vector<int64_t>& v, const char* what,
                 int64_t pad) -> StatusOr<std::vector<int64_t>> {
    if (v.empty()) return std::vector<int64_t>{};
    if (v.size() != 1)
      return InvalidArgument("[%s] %s must have 1 value, got %d", op, what, int(v.size()));
    return std::vector<int64_t>{pad, v[0]};
  };
  Pool2dOptions o = opt;
  ASSIGN_OR_RETURN(o.kernel_size, one(opt.kernel_size, "kernel_size", 1));
  ASSIGN_OR_RETURN(o.stride, one(opt.stride, "stride", 1));
  ASSIGN_OR_RETURN(o.padding, one(opt.padding, "padding", 0));
  ASSIGN_OR_RETURN(o.dilation, one(opt.dilation, "dilation", 1));
  int64_t n = x.ndim() == 3 ? x.dim(0) : 1;
  ASSIGN_OR_RETURN(Tensor x4, Reshape(x, Shape{n, x.dim(x.ndim() - 2), 1, x.dim(x.ndim() - 1)}));
  return std::make_pair(x4, o);
}
StatusOr<Tensor> Back1d(const Tensor& y, const Tensor& x) {
  if (x.ndim() == 3) return Reshape(y, Shape{y.dim(0), y.dim(1), y.dim(3)});
  return Reshape(y, Shape{y.dim(1), y.dim(3)});
}
}  // namespace

StatusOr<Tensor> MaxPool1d(const Tensor& x, const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(auto xo, As2d("max_pool1d", x, opt));
  ASSIGN_OR_RETURN(Tensor y, MaxPool2d(xo.first, xo.second));
  return Back1d(y, x);
}

StatusOr<Tensor> AvgPool1d(const Tensor& x, const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(auto xo, As2d("avg_pool1d", x, opt));
  ASSIGN_OR_RETURN(Tensor y, AvgPool2d(xo.first, xo.second));
  return Back1d(y, x);
}

StatusOr<Tensor> AdaptiveAvgPool2d(const Tensor& x, const std::vector<int64_t>& output_size) {
  ASSIGN_OR_RETURN(Tensor x4, As4d("adaptive_avg_pool2d", x));
  ASSIGN_OR_RETURN(auto os, PerDim("adaptive_avg_pool2d", "output_size", output_size, 2));
  // -1 (None in Python) keeps the input size.
  for (int i = 0; i < 2; ++i)
    if (os[i] < 0) os[i] = x4.dim(2 + i);
  if (os[0] < 1 || os[1] < 1)
    return InvalidArgument("[adaptive_avg_pool2d] output_size must be positive, got [%d,%d]", os[0],
                           os[1]);
  ASSIGN_OR_RETURN(Tensor y, Dispatch1(kAdaptive, {x4}, {{"output_size", os}}));
  return Back(y, x);
}

}  // namespace functional
}  // namespace oneflow_like
