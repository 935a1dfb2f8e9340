// Pooling family: the OpDefs of oneflow_like/opdefs/pool.def and their functional entries
// (generated below), the gradient formulas, and the 1-d entries (the 2-d ops over a height-1
// image). The *2d ops see 4-d NCHW inputs, the *3d ops 5-d NCDHW (unbatched inputs are unsqueezed
// by the functional entries). Kernels: kernels/cpu/pool.cc, kernels/cuda/pool.*.
#include "oneflow_like/ops/pool.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/pool.h"

namespace oneflow_like {
namespace {

using opdefs::AdaptivePoolAttrs;
using opdefs::Ints;
using opdefs::PoolAttrs;

int64_t PoolOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t num = in + 2 * p - d * (k - 1) - 1;
  if (num < 0) return 0;  // the padded input is smaller than the (dilated) window
  int64_t out = (ceil ? (num + s - 1) / s : num / s) + 1;
  // The last window must start inside the input or the left padding (PyTorch's rule).
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

// ---- the table's kind column: the forward ops' outputs ------------------------------------------

// max / avg: y [N, C, *windows] in x's dtype (max: and its int64 indices).
Status InferWindows(const char* op, int nd, bool with_indices, TensorSpan in, const AttrMap& m,
                    std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  const PoolAttrs a = opdefs::ReadAttrs<PoolAttrs>(m);
  const Ints &k = a.kernel, &s = a.stride, &p = a.padding, &d = a.dilation;
  const size_t n = nd;
  if (x.ndim() != nd + 2 || k.size() != n || s.size() != n || p.size() != n || d.size() != n)
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
    os.push_back(PoolOut(x.dim(2 + i), k[i], s[i], p[i], d[i], a.ceil_mode));
    if (os.back() < 1)
      return InvalidArgument("[%s] input %s is too small for kernel size %d in dim %d (output %d)",
                             op, x.meta_string(), k[i], 2 + i, os.back());
  }
  Shape ys(absl::MakeConstSpan(os));
  out->push_back(TensorMeta{ys, x.dtype(), x.device()});
  if (with_indices) out->push_back(TensorMeta{ys, DType::kI64, x.device()});
  return Status();
}
Status Infer_max(const char* op, int nd, TensorSpan in, const AttrMap& m,
                 std::vector<TensorMeta>* out) {
  return InferWindows(op, nd, true, in, m, out);
}
Status Infer_avg(const char* op, int nd, TensorSpan in, const AttrMap& m,
                 std::vector<TensorMeta>* out) {
  return InferWindows(op, nd, false, in, m, out);
}
// adaptive: y [N, C, *output_size] in x's dtype.
Status Infer_adaptive(const char*, int, TensorSpan in, const AttrMap& m,
                      std::vector<TensorMeta>* out) {
  std::vector<int64_t> os{in[0].dim(0), in[0].dim(1)};
  for (int64_t v : opdefs::ReadAttrs<AdaptivePoolAttrs>(m).output_size) os.push_back(v);
  out->push_back(TensorMeta{Shape(absl::MakeConstSpan(os)), in[0].dtype(), in[0].device()});
  return Status();
}

// The backward ops: dx in dy's dtype and the forward input's shape (attribute input_shape).
template <typename Attrs>
Status InferToInput(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const Ints dims = opdefs::ReadAttrs<Attrs>(m).input_shape;
  out->push_back(TensorMeta{Shape(absl::MakeConstSpan(dims)), in[0].dtype(), in[0].device()});
  return Status();
}

// max_poolNd_grad(dy, indices) -> dx;  avg_poolNd_grad(dy) -> dx;
// adaptive_avg_poolNd_grad(dy) -> dx.
// clang-format off
#define OFL_ATTRS(...)
#define OFL_POOL(...)
#define OFL_POOL_API(...)
#define OFL_POOL_GRAD(name, Name, nd, Attrs) StatusOr<TensorList> Name##Double(const GradContext& c);
#undef OFL_POOL
#define OFL_POOL(name, Name, ...) extern const OpDef k##Name;
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL_GRAD
#undef OFL_POOL
#define OFL_POOL(...)
#define OFL_POOL_GRAD(name, Name, nd, Attrs)                                    \
  const OpDef k##Name = OpSpec(#name, InferToInput<opdefs::Attrs>)              \
                            .Grad(&Name##Double)                                \
                            .SaveOutputs(false);
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL_GRAD

// Double backward: the backward ops are linear in dy (and have no other differentiable input),
// so their gradient is their adjoint applied to the incoming gradient gg (x's shape):
// max_pool_grad scatters dy to the argmax, its adjoint gathers gg there; avg pooling's backward
// op is the adjoint of the pooling itself.
StatusOr<TensorList> MaxPoolGradDouble(const GradContext& c) {
  const Tensor &gg = c.grad_outputs[0], &idx = c.inputs[1];
  const Shape& is = idx.shape();
  const int64_t planes = gg.dim(0) * gg.dim(1);
  if (planes == 0) return TensorList{Tensor(), Tensor()};
  DimVector flat_g{gg.dim(0), gg.dim(1), gg.numel() / planes};
  DimVector flat_i{is[0], is[1], idx.numel() / planes};
  ASSIGN_OR_RETURN(Tensor g, functional::Reshape(gg, Shape(flat_g)));
  ASSIGN_OR_RETURN(Tensor i, functional::Reshape(idx, Shape(flat_i)));
  ASSIGN_OR_RETURN(Tensor r, functional::Gather(g, 2, i));
  ASSIGN_OR_RETURN(r, functional::Reshape(r, is));
  return TensorList{r, Tensor()};
}
template <const OpDef& Forward, typename ForwardAttrs>
StatusOr<TensorList> AvgPoolGradDouble(const GradContext& c) {
  const AttrMap a = opdefs::ToAttrMap(opdefs::ReadAttrs<ForwardAttrs>(c.attrs));
  ASSIGN_OR_RETURN(Tensor r, Dispatch1(Forward, {c.grad_outputs[0]}, a));
  return TensorList{r};
}
StatusOr<TensorList> MaxPool2dGradDouble(const GradContext& c) {
  return MaxPoolGradDouble(c);
}
StatusOr<TensorList> MaxPool3dGradDouble(const GradContext& c) {
  return MaxPoolGradDouble(c);
}
StatusOr<TensorList> AvgPool2dGradDouble(const GradContext& c) {
  return AvgPoolGradDouble<kAvgPool2d, opdefs::PoolAttrs>(c);
}
StatusOr<TensorList> AvgPool3dGradDouble(const GradContext& c) {
  return AvgPoolGradDouble<kAvgPool3d, opdefs::PoolAttrs>(c);
}
StatusOr<TensorList> AdaptiveAvgPool2dGradDouble(const GradContext& c) {
  return AvgPoolGradDouble<kAdaptiveAvgPool2d, opdefs::AdaptivePoolAttrs>(c);
}
StatusOr<TensorList> AdaptiveAvgPool3dGradDouble(const GradContext& c) {
  return AvgPoolGradDouble<kAdaptiveAvgPool3d, opdefs::AdaptivePoolAttrs>(c);
}
#undef OFL_POOL
// clang-format on

// ---- gradient formulas (the table's grad column) ------------------------------------------------

// A backward op's attributes: its forward op's (read as the backward op's struct) plus the
// forward input's shape.
template <typename GradAttrs>
AttrMap GradAttrMap(const GradContext& c) {
  GradAttrs g = opdefs::ReadAttrs<GradAttrs>(c.attrs);
  const Shape& x = c.inputs[0].shape();
  g.input_shape = Ints(x.dims().begin(), x.dims().end());
  return opdefs::ToAttrMap(g);
}

template <int kNd>
StatusOr<TensorList> MaxPoolGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNd == 2 ? kMaxPool2dGrad : kMaxPool3dGrad,
                                       {c.grad_outputs[0], c.outputs[1]},
                                       GradAttrMap<opdefs::PoolGradAttrs>(c)));
  return TensorList{g};
}
template <int kNd>
StatusOr<TensorList> AvgPoolGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNd == 2 ? kAvgPool2dGrad : kAvgPool3dGrad,
                                       {c.grad_outputs[0]}, GradAttrMap<opdefs::PoolGradAttrs>(c)));
  return TensorList{g};
}
template <int kNd>
StatusOr<TensorList> AdaptiveGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g,
                   Dispatch1(kNd == 2 ? kAdaptiveAvgPool2dGrad : kAdaptiveAvgPool3dGrad,
                             {c.grad_outputs[0]}, GradAttrMap<opdefs::AdaptivePoolGradAttrs>(c)));
  return TensorList{g};
}

#define OFL_POOL_SAVE_IN_indices true
#define OFL_POOL_SAVE_OUT_indices true
#define OFL_POOL_SAVE_IN_inputs true
#define OFL_POOL_SAVE_OUT_inputs false
// Outputs the formula never reads (OpSpec::UnreadOutputs): max pools' y (output 0).
#define OFL_POOL_UNREAD_indices 1u
#define OFL_POOL_UNREAD_inputs 0u
// clang-format off
#define OFL_POOL_GRAD(...)
#define OFL_POOL(name, Name, nd, Attrs, kind, grad, save)                                    \
  Status Infer##Name(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* metas) { \
    return Infer_##kind(#name, nd, in, m, metas);                                            \
  }                                                                                          \
  const OpDef k##Name = OpSpec(#name, Infer##Name)                                           \
                            .Grad(grad)                                                      \
                            .SaveInputs(OFL_POOL_SAVE_IN_##save)                             \
                            .SaveOutputs(OFL_POOL_SAVE_OUT_##save)                           \
                            .UnreadOutputs(OFL_POOL_UNREAD_##save);
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL
// clang-format on

// ---- the functional entries' steps --------------------------------------------------------------

StatusOr<std::vector<int64_t>> PerDim(const char* op, const char* what,
                                      const std::vector<int64_t>& v, int n) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (static_cast<int>(v.size()) == n) return v;
  return InvalidArgument("[%s] %s must have 1 or %d values, got %d", op, what, n, int(v.size()));
}

// Checks dtype and rank (nd + 1 or nd + 2); returns the batched (nd + 2)-d view.
StatusOr<Tensor> Batched(const char* op, const Tensor& x, int nd) {
  RETURN_IF_ERROR(CheckFloating(op, x));
  if (x.ndim() == nd + 2) return x;
  if (x.ndim() == nd + 1) {
    std::vector<int64_t> dims{1};
    dims.insert(dims.end(), x.shape().dims().begin(), x.shape().dims().end());
    return functional::Reshape(x, Shape(absl::MakeConstSpan(dims)));
  }
  if (nd == 2)
    return InvalidArgument("[%s] expected a 3-d (C,H,W) or 4-d (N,C,H,W) input, got %s", op,
                           x.meta_string());
  return InvalidArgument("[%s] expected a 4-d (C,D,H,W) or 5-d (N,C,D,H,W) input, got %s", op,
                         x.meta_string());
}
// y back to x's rank (drops the batch dim Batched added).
StatusOr<Tensor> Unbatched(const Tensor& y, const Tensor& x) {
  if (x.ndim() == y.ndim()) return y;
  std::vector<int64_t> dims(y.shape().dims().begin() + 1, y.shape().dims().end());
  return functional::Reshape(y, Shape(absl::MakeConstSpan(dims)));
}

// The window attributes of a functional call: one value per spatial dim; no stride is the kernel.
StatusOr<PoolAttrs> WindowAttrs(const char* op, const functional::Pool2dOptions& o, int nd) {
  PoolAttrs a;
  ASSIGN_OR_RETURN(a.kernel, PerDim(op, "kernel_size", o.kernel_size, nd));
  if (o.stride.empty()) {
    a.stride = a.kernel;
  } else {
    ASSIGN_OR_RETURN(a.stride, PerDim(op, "stride", o.stride, nd));
  }
  ASSIGN_OR_RETURN(a.padding, PerDim(op, "padding", o.padding, nd));
  ASSIGN_OR_RETURN(a.dilation, PerDim(op, "dilation", o.dilation, nd));
  a.ceil_mode = o.ceil_mode;
  a.count_include_pad = o.count_include_pad;
  a.divisor_override = o.divisor_override;
  return a;
}

// The kinds' functional entries: x unbatched or batched, outputs of x's rank.
StatusOr<std::pair<Tensor, Tensor>> MaxEntry(const OpDef& op, int nd, const Tensor& x,
                                             const functional::Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(Tensor xb, Batched(op.name, x, nd));
  ASSIGN_OR_RETURN(PoolAttrs a, WindowAttrs(op.name, opt, nd));
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(op, {xb}, opdefs::ToAttrMap(a)));
  ASSIGN_OR_RETURN(Tensor y, Unbatched(outs[0], x));
  ASSIGN_OR_RETURN(Tensor i, Unbatched(outs[1].detach(), x));
  return std::make_pair(y, i);
}
StatusOr<Tensor> AvgEntry(const OpDef& op, int nd, const Tensor& x,
                          const functional::Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(Tensor xb, Batched(op.name, x, nd));
  ASSIGN_OR_RETURN(PoolAttrs a, WindowAttrs(op.name, opt, nd));
  a.dilation = Ints(nd, 1);
  ASSIGN_OR_RETURN(Tensor y, Dispatch1(op, {xb}, opdefs::ToAttrMap(a)));
  return Unbatched(y, x);
}
StatusOr<Tensor> AdaptiveEntry(const OpDef& op, int nd, const Tensor& x,
                               const std::vector<int64_t>& output_size) {
  ASSIGN_OR_RETURN(Tensor xb, Batched(op.name, x, nd));
  AdaptivePoolAttrs a;
  ASSIGN_OR_RETURN(a.output_size, PerDim(op.name, "output_size", output_size, nd));
  bool positive = true;
  for (int i = 0; i < nd; ++i) {
    int64_t& v = a.output_size[i];
    if (v < 0) v = xb.dim(2 + i);  // -1 (None in Python) keeps the input size
    positive = positive && v >= 1;
  }
  if (!positive)
    return InvalidArgument("[%s] output_size must be positive, got %s", op.name,
                           Shape(absl::MakeConstSpan(a.output_size)).ToString());
  ASSIGN_OR_RETURN(Tensor y, Dispatch1(op, {xb}, opdefs::ToAttrMap(a)));
  return Unbatched(y, x);
}

}  // namespace

namespace functional {

// clang-format off
#define OFL_POOL_ENTRY_max(Name, nd)                                                          \
  StatusOr<std::pair<Tensor, Tensor>> Name##WithIndices(const Tensor& x,                      \
                                                        const Pool2dOptions& opt) {           \
    return MaxEntry(k##Name, nd, x, opt);                                                     \
  }
#define OFL_POOL_ENTRY_avg(Name, nd)                                                          \
  StatusOr<Tensor> Name(const Tensor& x, const Pool2dOptions& opt) {                          \
    return AvgEntry(k##Name, nd, x, opt);                                                     \
  }
#define OFL_POOL_ENTRY_adaptive(Name, nd)                                                     \
  StatusOr<Tensor> Name(const Tensor& x, const std::vector<int64_t>& output_size) {           \
    return AdaptiveEntry(k##Name, nd, x, output_size);                                        \
  }
#define OFL_POOL(name, Name, nd, Attrs, kind, grad, save) OFL_POOL_ENTRY_##kind(Name, nd)
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL
#undef OFL_POOL_GRAD
#undef OFL_POOL_API
#undef OFL_ATTRS
#undef OFL_POOL_ENTRY_max
#undef OFL_POOL_ENTRY_avg
#undef OFL_POOL_ENTRY_adaptive
// clang-format on

StatusOr<Tensor> MaxPool2d(const Tensor& x, const Pool2dOptions& opt) {
  ASSIGN_OR_RETURN(auto yi, MaxPool2dWithIndices(x, opt));
  return yi.first;
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

}  // namespace functional
}  // namespace oneflow_like
