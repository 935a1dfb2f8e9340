// Shape family: the OpDefs of oneflow_like/opdefs/shape.def (generated below from the table's out,
// view, grad, save, layout and lowp columns, with their Run<Name> entries), their view functions
// and gradient formulas, and the functional entries. Kernels: kernels/cpu/shape.cc, the shape part
// of kernels/cuda/index.cc.
#include "oneflow_like/ops/shape_ops.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <numeric>
#include <type_traits>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/shape.h"

namespace oneflow_like {
namespace {

using opdefs::AsStridedAttrs;
using opdefs::AsStridedScatterAttrs;
using opdefs::CatAttrs;
using opdefs::FlipAttrs;
using opdefs::PadAttrs;
using opdefs::PermuteAttrs;
using opdefs::SelectAttrs;
using opdefs::ShapeAttrs;
using opdefs::SliceAttrs;
using opdefs::SqueezeAttrs;
using opdefs::TrilAttrs;
using opdefs::UnsqueezeAttrs;

std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}
Shape ShapeOf(const std::vector<int64_t>& v) {
  return Shape(DimVector(v.begin(), v.end()));
}
DimVector ToDims(const std::vector<int64_t>& v) {
  return DimVector(v.begin(), v.end());
}
std::vector<int64_t> IntsOf(const DimVector& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

// ---- the table's view column: a view op's place in x's storage --------------------------------

// reshape(x; shape): x is contiguous (the functional entry ensures it).
Status View_reshape(const Tensor& x, const ShapeAttrs& a, Shape* shape, DimVector* strides,
                    int64_t* offset) {
  *shape = ShapeOf(a.shape);
  *strides = ContiguousStrides(*shape);
  *offset = x.offset();
  return Status();
}

// expand(x; shape): stride 0 along the broadcast dims.
Status View_expand(const Tensor& x, const ShapeAttrs& a, Shape* shape, DimVector* strides,
                   int64_t* offset) {
  *shape = ShapeOf(a.shape);
  int64_t n = shape->ndim(), lead = n - x.ndim();
  strides->assign(n, 0);
  for (int64_t i = 0; i < x.ndim(); ++i)
    (*strides)[i + lead] = (x.dim(i) == 1 && (*shape)[i + lead] != 1) ? 0 : x.strides()[i];
  *offset = x.offset();
  return Status();
}

Status View_permute(const Tensor& x, const PermuteAttrs& a, Shape* shape, DimVector* strides,
                    int64_t* offset) {
  DimVector s, st;
  for (int64_t d : a.perm) {
    s.push_back(x.dim(d));
    st.push_back(x.strides()[d]);
  }
  *shape = Shape(s);
  *strides = st;
  *offset = x.offset();
  return Status();
}

// squeeze(x; dims): removes the listed size-1 dims.
Status View_squeeze(const Tensor& x, const SqueezeAttrs& a, Shape* shape, DimVector* strides,
                    int64_t* offset) {
  DimVector s, st;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (std::find(a.dims.begin(), a.dims.end(), i) != a.dims.end()) continue;
    s.push_back(x.dim(i));
    st.push_back(x.strides()[i]);
  }
  *shape = Shape(s);
  *strides = st;
  *offset = x.offset();
  return Status();
}

// unsqueeze(x; dim): inserts a size-1 dim at `dim` in [0, ndim].
Status View_unsqueeze(const Tensor& x, const UnsqueezeAttrs& a, Shape* shape, DimVector* strides,
                      int64_t* offset) {
  int64_t d = a.dim;
  DimVector s = x.shape().dims(), st = x.strides();
  int64_t inner = d < x.ndim() ? st[d] * s[d] : 1;
  s.insert(s.begin() + d, 1);
  st.insert(st.begin() + d, inner);
  *shape = Shape(s);
  *strides = st;
  *offset = x.offset();
  return Status();
}

// slice(x; dim, start, length, step): normalised by the functional entry.
Status View_slice(const Tensor& x, const SliceAttrs& a, Shape* shape, DimVector* strides,
                  int64_t* offset) {
  int64_t d = a.dim;
  *shape = x.shape();
  (*shape)[d] = a.length;
  *strides = x.strides();
  (*strides)[d] *= a.step;
  *offset = x.offset() + a.start * x.strides()[d];
  return Status();
}

// select(x; dim, index): index normalised to [0, size).
Status View_select(const Tensor& x, const SelectAttrs& a, Shape* shape, DimVector* strides,
                   int64_t* offset) {
  int64_t d = a.dim;
  DimVector s = x.shape().dims(), st = x.strides();
  *offset = x.offset() + a.index * st[d];
  s.erase(s.begin() + d);
  st.erase(st.begin() + d);
  *shape = Shape(s);
  *strides = st;
  return Status();
}

// as_strided(x; shape, strides, offset): x contiguous; offset relative to x's.
Status View_as_strided(const Tensor& x, const AsStridedAttrs& a, Shape* shape, DimVector* strides,
                       int64_t* offset) {
  *shape = ShapeOf(a.shape);
  *strides = ToDims(a.strides);
  *offset = x.offset() + a.offset;
  return Status();
}

constexpr std::nullptr_t View_none = nullptr;  // not a view op

// The OpDef's ViewFn: the typed view V over the attributes read from the call's AttrMap (none for
// the ops that are not views).
template <typename A, auto V>
Status ViewOf(const Tensor& x, const AttrMap& m, Shape* shape, DimVector* strides,
              int64_t* offset) {
  return V(x, opdefs::ReadAttrs<A>(m), shape, strides, offset);
}
template <typename A, auto V>
constexpr ViewFn ViewFnOf() {
  if constexpr (std::is_null_pointer_v<decltype(V)>)
    return nullptr;
  else
    return &ViewOf<A, V>;
}

// ---- the table's out column: one output in x's dtype, on x's device ---------------------------

TensorMeta Like(const Tensor& x, Shape shape) {
  return TensorMeta{std::move(shape), x.dtype(), x.device()};
}

// The shape attribute, whose numel must be x's (reshape).
template <typename A, typename V>
Status Out_numel(const char* op, TensorSpan in, const A& a, V, std::vector<TensorMeta>* out) {
  Shape s = ShapeOf(a.shape);
  if (s.numel() != in[0].numel())
    return InvalidArgument("[%s] shape %s is invalid for input %s", op, s.ToString(),
                           in[0].meta_string());
  out->push_back(Like(in[0], s));
  return Status();
}

// The shape attribute, to which x must broadcast (expand).
template <typename A, typename V>
Status Out_broadcast(const char* op, TensorSpan in, const A& a, V, std::vector<TensorMeta>* out) {
  Shape s = ShapeOf(a.shape);
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes(op, in[0].shape(), s));
  if (b != s)
    return InvalidArgument("[%s] cannot expand %s to %s", op, in[0].meta_string(), s.ToString());
  out->push_back(Like(in[0], s));
  return Status();
}

// The view's shape. Views carry the input's shape as attr "in_shape", so backward needs no saved
// tensor.
template <typename A, typename V>
Status Out_view(const char*, TensorSpan in, const A& a, V view, std::vector<TensorMeta>* out) {
  Shape s;
  DimVector st;
  int64_t off = 0;
  RETURN_IF_ERROR(view(in[0], a, &s, &st, &off));
  out->push_back(Like(in[0], s));
  return Status();
}

// as_strided_scatter(src; in_shape, shape, strides, offset) = zeros(in_shape) with src added into
// the view (overlapping view elements accumulate, as a gradient must).
template <typename A, typename V>
Status Out_scatter(const char* op, TensorSpan in, const A& a, V, std::vector<TensorMeta>* out) {
  if (ShapeOf(a.shape) != in[0].shape())
    return InvalidArgument("[%s] source %s does not match the view shape %s", op,
                           in[0].meta_string(), ShapeOf(a.shape).ToString());
  out->push_back(Like(in[0], ShapeOf(a.in_shape)));
  return Status();
}

// cat(xs...; dim): inputs share dtype and all sizes but `dim`'s.
template <typename A, typename V>
Status Out_cat(const char* op, TensorSpan in, const A& a, V, std::vector<TensorMeta>* out) {
  int64_t d = a.dim;
  Shape s = in[0].shape();
  s[d] = 0;
  for (auto& t : in) {
    bool ok = t.ndim() == s.ndim() && t.dtype() == in[0].dtype();
    for (int64_t i = 0; ok && i < t.ndim(); ++i) ok = i == d || t.dim(i) == s[i];
    if (!ok)
      return InvalidArgument("[%s] tensors must match except in dim %d: got %s and %s", op, d,
                             in[0].meta_string(), t.meta_string());
    s[d] += t.dim(d);
  }
  out->push_back(Like(in[0], s));
  return Status();
}

template <typename A, typename V>
Status Out_x(const char*, TensorSpan in, const A&, V, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[0], in[0].shape()));
  return Status();
}

// tril/triu(x; diagonal, upper) over the last two dims (errors name triu for upper).
template <typename A, typename V>
Status Out_matrices(const char* op, TensorSpan in, const A& a, V, std::vector<TensorMeta>* out) {
  if (in[0].ndim() < 2)
    return InvalidArgument("[%s] expects a tensor with >= 2 dims, got %s", a.upper ? "triu" : op,
                           in[0].meta_string());
  return Out_x(op, in, a, nullptr, out);
}

// pad(x; pads (before, after per dim, all >= 0), value): constant padding.
template <typename A, typename V>
Status Out_pad(const char*, TensorSpan in, const A& a, V, std::vector<TensorMeta>* out) {
  Shape s = in[0].shape();
  for (int64_t i = 0; i < s.ndim(); ++i) s[i] += a.pads[2 * i] + a.pads[2 * i + 1];
  out->push_back(Like(in[0], s));
  return Status();
}

// ---- gradient formulas (the table's grad column) ---------------------------------------------

template <typename A, typename V>
StatusOr<TensorList> ReshapeToInput(const GradContext& c, const A&, V) {
  ASSIGN_OR_RETURN(Tensor g, functional::Reshape(c.grad_outputs[0], c.inputs[0].shape()));
  return TensorList{g};
}

template <typename A, typename V>
StatusOr<TensorList> SumToInput(const GradContext& c, const A&, V) {
  ASSIGN_OR_RETURN(Tensor g, functional::SumToShape(c.grad_outputs[0], c.inputs[0].shape()));
  return TensorList{g};
}

template <typename A, typename V>
StatusOr<TensorList> PermuteBack(const GradContext& c, const A& a, V) {
  const auto& p = a.perm;
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  ASSIGN_OR_RETURN(Tensor g, functional::Permute(c.grad_outputs[0], inv));
  return TensorList{g};
}

template <typename A, typename V>
StatusOr<TensorList> ReshapeToInShape(const GradContext& c, const A& a, V) {
  ASSIGN_OR_RETURN(Tensor g, functional::Reshape(c.grad_outputs[0], ShapeOf(a.in_shape)));
  return TensorList{g};
}

// The gradient of a view: the upstream gradient written into zeros of the input's shape at the
// place the view takes of a contiguous tensor.
template <typename A, typename V>
StatusOr<TensorList> ScatterView(const GradContext& c, const A& a, V view) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = ShapeOf(a.in_shape);
  impl->strides = ContiguousStrides(impl->shape);
  Shape vs;
  DimVector st;
  int64_t off = 0;
  RETURN_IF_ERROR(view(Tensor(impl), a, &vs, &st, &off));
  ASSIGN_OR_RETURN(Tensor g, functional::AsStridedScatter(c.grad_outputs[0], impl->shape, st, off));
  return TensorList{g};
}

template <typename A, typename V>
StatusOr<TensorList> AsStridedOfGrad(const GradContext& c, const A& a, V) {
  ASSIGN_OR_RETURN(Tensor g, functional::Contiguous(c.grad_outputs[0]));
  ASSIGN_OR_RETURN(g, functional::AsStrided(g, ShapeOf(a.shape), ToDims(a.strides), a.offset));
  return TensorList{g};
}

template <typename A, typename V>
StatusOr<TensorList> SplitBySizes(const GradContext& c, const A& a, V) {
  int64_t start = 0;
  TensorList r;
  for (int64_t n : a.sizes) {
    ASSIGN_OR_RETURN(Tensor g, functional::Narrow(c.grad_outputs[0], a.dim, start, n));
    r.push_back(g);
    start += n;
  }
  return r;
}

template <typename A, typename V>
StatusOr<TensorList> FlipBack(const GradContext& c, const A& a, V) {
  ASSIGN_OR_RETURN(Tensor g, functional::Flip(c.grad_outputs[0], a.dims));
  return TensorList{g};
}

template <typename A, typename V>
StatusOr<TensorList> TrilGrad(const GradContext& c, const A& a, V) {
  ASSIGN_OR_RETURN(Tensor g, a.upper ? functional::Triu(c.grad_outputs[0], a.diagonal)
                                     : functional::Tril(c.grad_outputs[0], a.diagonal));
  return TensorList{g};
}

// pad's gradient: the interior of the upstream gradient (a view of it, then copied).
template <typename A, typename V>
StatusOr<TensorList> CropPads(const GradContext& c, const A& a, V) {
  Shape in = ShapeOf(a.in_shape);
  ASSIGN_OR_RETURN(Tensor g, functional::Contiguous(c.grad_outputs[0]));
  DimVector st = ContiguousStrides(g.shape());
  int64_t off = 0;
  for (int64_t i = 0; i < in.ndim(); ++i) off += a.pads[2 * i] * st[i];
  ASSIGN_OR_RETURN(g, functional::AsStrided(g, in, st, off));
  return TensorList{g};
}

// ---- the OpDefs and Run<Name> (generated from shape.def) --------------------------------------

#define OFL_SHAPE_SAVE_IN_inputs true
#define OFL_SHAPE_SAVE_IN_none false
#define OFL_SHAPE_STRIDED_strided true
#define OFL_SHAPE_STRIDED_contiguous false
#define OFL_SHAPE_LOWP_cpu kLowPrecisionCPU
#define OFL_SHAPE_LOWP_none 0
// clang-format off
#define OFL_ATTRS(...)
#define OFL_SHAPE_API(...)
#define OFL_SHAPE(name, Name, Attrs, out, view, grad, save, layout, lowp)                          \
  Status Infer##Name(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* metas) {     \
    return Out_##out(#name, in, opdefs::ReadAttrs<opdefs::Attrs>(m), View_##view, metas);          \
  }                                                                                                \
  StatusOr<TensorList> Grad##Name(const GradContext& c) {                                          \
    return grad(c, opdefs::ReadAttrs<opdefs::Attrs>(c.attrs), View_##view);                        \
  }                                                                                                \
  const OpDef k##Name = OpSpec(#name, Infer##Name)                                                 \
                            .Grad(Grad##Name)                                                      \
                            .View(ViewFnOf<opdefs::Attrs, View_##view>())                          \
                            .StridedInputs(OFL_SHAPE_STRIDED_##layout)                             \
                            .SaveInputs(OFL_SHAPE_SAVE_IN_##save)                                  \
                            .SaveOutputs(false)                                                    \
                            .LowPrecision(OFL_SHAPE_LOWP_##lowp);                                  \
  OFL_DEFINE_RUN1(Name, Attrs)
#include "oneflow_like/opdefs/shape.def"
#undef OFL_SHAPE
#undef OFL_SHAPE_API
#undef OFL_ATTRS
// clang-format on

}  // namespace

namespace functional {

StatusOr<Tensor> Reshape(const Tensor& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  ASSIGN_OR_RETURN(Tensor c, Contiguous(x));
  ShapeAttrs a;
  a.shape = Dims(shape);
  return RunReshape({c}, a);
}

StatusOr<Tensor> ReshapeInfer(const Tensor& x, const std::vector<int64_t>& shape) {
  DimVector s(shape.begin(), shape.end());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0)
        return InvalidArgument("[reshape] only one dimension can be -1, got %s",
                               Shape(s).ToString());
      infer = static_cast<int64_t>(i);
    } else if (s[i] < 0) {
      return InvalidArgument("[reshape] invalid dimension %d in %s", s[i], Shape(s).ToString());
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      return InvalidArgument("[reshape] shape %s is invalid for input %s", Shape(s).ToString(),
                             x.meta_string());
    s[infer] = x.numel() / known;
  }
  return Reshape(x, Shape(s));
}

StatusOr<Tensor> Expand(const Tensor& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  ShapeAttrs a;
  a.shape = Dims(shape);
  return RunExpand({x}, a);
}

StatusOr<Tensor> Permute(const Tensor& x, const std::vector<int64_t>& perm) {
  if (static_cast<int64_t>(perm.size()) != x.ndim())
    return InvalidArgument("[permute] got %d dims in perm for input %s", int(perm.size()),
                           x.meta_string());
  PermuteAttrs a;
  std::vector<bool> seen(perm.size());
  for (int64_t d : perm) {
    ASSIGN_OR_RETURN(int64_t w, WrapDim("permute", d, x.ndim()));
    if (seen[w]) return InvalidArgument("[permute] repeated dim %d in perm", d);
    seen[w] = true;
    a.perm.push_back(w);
  }
  return RunPermute({x}, a);
}

StatusOr<Tensor> Transpose(const Tensor& x, int64_t d0, int64_t d1) {
  ASSIGN_OR_RETURN(int64_t a, WrapDim("transpose", d0, x.ndim()));
  ASSIGN_OR_RETURN(int64_t b, WrapDim("transpose", d1, x.ndim()));
  std::vector<int64_t> p(x.ndim());
  std::iota(p.begin(), p.end(), 0);
  if (x.ndim() > 0) std::swap(p[a], p[b]);
  return Permute(x, p);
}

StatusOr<Tensor> Squeeze(const Tensor& x, std::vector<int64_t> dims) {
  SqueezeAttrs a;
  if (dims.empty()) {
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (x.dim(i) == 1) a.dims.push_back(i);
  } else {
    for (int64_t d : dims) {
      ASSIGN_OR_RETURN(int64_t w, WrapDim("squeeze", d, x.ndim()));
      if (x.ndim() > 0 && x.dim(w) == 1) a.dims.push_back(w);
    }
  }
  if (a.dims.empty()) return x;
  a.in_shape = Dims(x.shape());
  return RunSqueeze({x}, a);
}

StatusOr<Tensor> Unsqueeze(const Tensor& x, int64_t dim) {
  UnsqueezeAttrs a;
  ASSIGN_OR_RETURN(a.dim, WrapDim("unsqueeze", dim, x.ndim() + 1));
  a.in_shape = Dims(x.shape());
  return RunUnsqueeze({x}, a);
}

StatusOr<Tensor> Flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.ndim() == 0) return Reshape(x, Shape{1});
  ASSIGN_OR_RETURN(int64_t s, WrapDim("flatten", start_dim, x.ndim()));
  ASSIGN_OR_RETURN(int64_t e, WrapDim("flatten", end_dim, x.ndim()));
  if (s > e)
    return InvalidArgument("[flatten] start_dim %d comes after end_dim %d for %s", start_dim,
                           end_dim, x.meta_string());
  DimVector d;
  for (int64_t i = 0; i < s; ++i) d.push_back(x.dim(i));
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= x.dim(i);
  d.push_back(n);
  for (int64_t i = e + 1; i < x.ndim(); ++i) d.push_back(x.dim(i));
  return Reshape(x, Shape(d));
}

StatusOr<Tensor> Slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (x.ndim() == 0) return InvalidArgument("[slice] cannot slice a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("slice", dim, x.ndim()));
  if (step <= 0) return InvalidArgument("[slice] step must be greater than zero, got %d", step);
  int64_t n = x.dim(d);
  auto clamp = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t(0)), n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  int64_t length = (end - start + step - 1) / step;
  if (start == 0 && length == n && step == 1) return x;
  SliceAttrs a;
  a.dim = d;
  a.start = start;
  a.length = length;
  a.step = step;
  a.in_shape = Dims(x.shape());
  return RunSlice({x}, a);
}

StatusOr<Tensor> Narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  if (x.ndim() == 0) return InvalidArgument("[narrow] cannot narrow a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("narrow", dim, x.ndim()));
  if (start < 0) start += x.dim(d);
  if (start < 0 || length < 0 || start + length > x.dim(d))
    return OutOfRange("[narrow] start %d, length %d out of range for dim %d of %s", start, length,
                      dim, x.meta_string());
  return Slice(x, d, start, start + length, 1);
}

StatusOr<Tensor> Select(const Tensor& x, int64_t dim, int64_t index) {
  if (x.ndim() == 0) return OutOfRange("[select] cannot index a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("select", dim, x.ndim()));
  int64_t n = x.dim(d);
  if (index < -n || index >= n)
    return OutOfRange("[select] index %d is out of bounds for dim %d with size %d", index, d, n);
  SelectAttrs a;
  a.dim = d;
  a.index = index < 0 ? index + n : index;
  a.in_shape = Dims(x.shape());
  return RunSelect({x}, a);
}

StatusOr<Tensor> AsStrided(const Tensor& x, const Shape& shape, const DimVector& strides,
                           int64_t offset) {
  if (!x.is_contiguous())
    return InvalidArgument("[as_strided] expects a contiguous input, got %s", x.meta_string());
  if (static_cast<int64_t>(strides.size()) != shape.ndim())
    return InvalidArgument("[as_strided] %d strides for shape %s", int(strides.size()),
                           shape.ToString());
  int64_t last = offset;
  for (int64_t i = 0; i < shape.ndim(); ++i) {
    if (strides[i] < 0)
      return InvalidArgument("[as_strided] negative stride in view of %s", x.meta_string());
    if (shape[i] > 0) last += (shape[i] - 1) * strides[i];
  }
  if (offset < 0 || (shape.numel() > 0 && last >= x.numel()))
    return OutOfRange("[as_strided] view %s with strides %s at offset %d exceeds %s",
                      shape.ToString(), Shape(strides).ToString(), offset, x.meta_string());
  AsStridedAttrs a;
  a.shape = Dims(shape);
  a.strides = IntsOf(strides);
  a.offset = offset;
  a.in_shape = Dims(x.shape());
  return RunAsStrided({x}, a);
}

StatusOr<Tensor> AsStridedScatter(const Tensor& src, const Shape& shape, const DimVector& strides,
                                  int64_t offset) {
  if (IsComplex(src.dtype())) return ComplexAsStridedScatter(src, shape, strides, offset);
  AsStridedScatterAttrs a;
  a.in_shape = Dims(shape);
  a.shape = Dims(src.shape());
  a.strides = IntsOf(strides);
  a.offset = offset;
  return RunAsStridedScatter({src}, a);
}

StatusOr<Tensor> Cat(const TensorList& xs, int64_t dim) {
  if (xs.empty()) return InvalidArgument("[cat] expects a non-empty list of tensors");
  for (auto& t : xs)
    if (IsComplex(t.dtype())) return ComplexCat(xs, dim);
  TensorList in;
  DType dt = xs[0].dtype();
  for (auto& t : xs) dt = PromoteTypes(dt, t.dtype());
  for (auto& t : xs) {
    if (t.ndim() == 1 && t.dim(0) == 0 && xs.size() > 1)
      continue;  // legacy: empty 1-d tensors are skipped
    ASSIGN_OR_RETURN(Tensor c, Cast(t, dt));
    in.push_back(c);
  }
  if (in.empty()) in.push_back(xs[0]);
  if (in[0].ndim() == 0)
    return InvalidArgument("[cat] zero-dimensional tensor %s cannot be concatenated",
                           in[0].meta_string());
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cat", dim, in[0].ndim()));
  if (in.size() == 1) return in[0];
  CatAttrs a;
  a.dim = d;
  for (auto& t : in) a.sizes.push_back(t.ndim() > d ? t.dim(d) : 0);
  return RunCat(in, a);
}

StatusOr<Tensor> Stack(const TensorList& xs, int64_t dim) {
  if (xs.empty()) return InvalidArgument("[stack] expects a non-empty list of tensors");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("stack", dim, xs[0].ndim() + 1));
  TensorList u;
  for (auto& t : xs) {
    if (t.shape() != xs[0].shape())
      return InvalidArgument("[stack] expects each tensor to be equal size, got %s and %s",
                             xs[0].meta_string(), t.meta_string());
    ASSIGN_OR_RETURN(Tensor v, Unsqueeze(t, d));
    u.push_back(v);
  }
  if (u.size() == 1) return Contiguous(u[0]);
  return Cat(u, d);
}

// The outputs of an op returning several views (torch's CreationMeta::MULTI_OUTPUT_NODE): made
// in grad mode, modifying one in place with grad is refused naming `fn` (CheckViewInplace).
static void MarkMultiOutputViews(const Tensor& x, TensorList& views, const char* fn) {
  if (!GradModeEnabled()) return;  // kNoGrad already
  for (size_t i = 0; i < views.size(); ++i) {
    TensorImpl* v = views[i].impl();
    if (v == x.impl() || !v->view_base) continue;
    v->view_creation = ViewCreation::kMultiOutput;
    v->view_multi_fn = fn;
    v->view_output_nr = static_cast<int>(i);
  }
}

StatusOr<TensorList> Split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("split", dim, x.ndim()));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return InvalidArgument("[split] negative split size %d", s);
    total += s;
  }
  if (total != x.dim(d))
    return InvalidArgument("[split] sizes %s sum to %d but dim %d of %s has size %d",
                           Shape(ToDims(sizes)).ToString(), total, d, x.meta_string(), x.dim(d));
  TensorList r;
  int64_t start = 0;
  for (int64_t s : sizes) {
    ASSIGN_OR_RETURN(Tensor t, Narrow(x, d, start, s));
    r.push_back(t);
    start += s;
  }
  MarkMultiOutputViews(x, r, "SplitWithSizesBackward0");
  return r;
}

StatusOr<TensorList> SplitEvery(const Tensor& x, int64_t size, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("split", dim, x.ndim()));
  if (size <= 0) return InvalidArgument("[split] split size must be positive, got %d", size);
  std::vector<int64_t> sizes;
  for (int64_t s = 0; s < x.dim(d); s += size) sizes.push_back(std::min(size, x.dim(d) - s));
  if (sizes.empty()) sizes.push_back(0);
  ASSIGN_OR_RETURN(TensorList r, Split(x, sizes, d));
  MarkMultiOutputViews(x, r, "SplitBackward0");
  return r;
}

StatusOr<TensorList> Chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  if (chunks <= 0) return InvalidArgument("[chunk] chunks must be positive, got %d", chunks);
  ASSIGN_OR_RETURN(int64_t d, WrapDim("chunk", dim, x.ndim()));
  int64_t n = x.dim(d);
  return SplitEvery(x, std::max<int64_t>(1, (n + chunks - 1) / chunks), d);
}

StatusOr<TensorList> Unbind(const Tensor& x, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("unbind", dim, x.ndim()));
  TensorList r;
  for (int64_t i = 0; i < x.dim(d); ++i) {
    ASSIGN_OR_RETURN(Tensor t, Select(x, d, i));
    r.push_back(t);
  }
  MarkMultiOutputViews(x, r, "UnbindBackward0");
  return r;
}

StatusOr<Tensor> Repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  int64_t n = static_cast<int64_t>(repeats.size());
  if (n < x.ndim())
    return InvalidArgument(
        "[repeat] %d repeat dims can not be smaller than the number of dims of %s", n,
        x.meta_string());
  // x viewed as (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), then merged.
  DimVector shape, expanded, merged;
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = i < n - x.ndim() ? 1 : x.dim(i - (n - x.ndim()));
    if (repeats[i] < 0) return InvalidArgument("[repeat] negative repeat %d", repeats[i]);
    shape.push_back(1);
    shape.push_back(s);
    expanded.push_back(repeats[i]);
    expanded.push_back(s);
    merged.push_back(repeats[i] * s);
  }
  ASSIGN_OR_RETURN(Tensor v, Reshape(x, Shape(shape)));
  ASSIGN_OR_RETURN(v, Expand(v, Shape(expanded)));
  ASSIGN_OR_RETURN(v, Contiguous(v));
  return Reshape(v, Shape(merged));
}

StatusOr<Tensor> Flip(const Tensor& x, const std::vector<int64_t>& dims) {
  if (IsComplex(x.dtype())) return ComplexFlip(x, dims);
  ASSIGN_OR_RETURN(
      auto d, ops::NormalizeDims("flip", dims.empty() ? std::vector<int64_t>{} : dims, x.ndim()));
  FlipAttrs a;
  if (!dims.empty()) a.dims = std::move(d);
  return RunFlip({x}, a);
}

StatusOr<Tensor> Roll(const Tensor& x, const std::vector<int64_t>& shifts,
                      const std::vector<int64_t>& dims) {
  if (dims.empty()) {  // roll the flattened tensor
    if (shifts.size() != 1)
      return InvalidArgument("[roll] expects one shift without dims, got %d", int(shifts.size()));
    ASSIGN_OR_RETURN(Tensor f, Flatten(x));
    ASSIGN_OR_RETURN(f, Roll(f, shifts, {0}));
    return Reshape(f, x.shape());
  }
  if (shifts.size() != dims.size())
    return InvalidArgument("[roll] %d shifts for %d dims", int(shifts.size()), int(dims.size()));
  Tensor r = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t d, WrapDim("roll", dims[i], x.ndim()));
    int64_t n = x.dim(d);
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    ASSIGN_OR_RETURN(Tensor tail, Narrow(r, d, n - s, s));
    ASSIGN_OR_RETURN(Tensor head, Narrow(r, d, 0, n - s));
    ASSIGN_OR_RETURN(r, Cat({tail, head}, d));
  }
  return r.same(x) ? Clone(x) : StatusOr<Tensor>(r);
}

// tril / triu of a complex tensor: of each part (real ops, whose gradients autograd composes).
StatusOr<Tensor> ComplexTriangle(const Tensor& x, int64_t diagonal, bool upper) {
  ASSIGN_OR_RETURN(Tensor re, RealPart(x));
  ASSIGN_OR_RETURN(Tensor im, ImagPart(x));
  ASSIGN_OR_RETURN(re, upper ? Triu(re, diagonal) : Tril(re, diagonal));
  ASSIGN_OR_RETURN(im, upper ? Triu(im, diagonal) : Tril(im, diagonal));
  return ComplexFromParts(re, im);
}
StatusOr<Tensor> Tril(const Tensor& x, int64_t diagonal) {
  if (IsComplex(x.dtype())) return ComplexTriangle(x, diagonal, false);
  TrilAttrs a;
  a.diagonal = diagonal;
  return RunTril({x}, a);
}
StatusOr<Tensor> Triu(const Tensor& x, int64_t diagonal) {
  if (IsComplex(x.dtype())) return ComplexTriangle(x, diagonal, true);
  TrilAttrs a;
  a.diagonal = diagonal;
  a.upper = true;
  return RunTril({x}, a);
}

StatusOr<Tensor> Pad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode,
                     double value) {
  int64_t np = static_cast<int64_t>(pads.size());
  if (np % 2 != 0 || np / 2 > x.ndim())
    return InvalidArgument("[pad] padding of length %d is invalid for input %s", np,
                           x.meta_string());
  // Per-dim (before, after), dims in order.
  std::vector<int64_t> per(2 * x.ndim(), 0);
  for (int64_t i = 0; i < np / 2; ++i) {
    int64_t d = x.ndim() - 1 - i;
    per[2 * d] = pads[2 * i];
    per[2 * d + 1] = pads[2 * i + 1];
  }
  if (mode == "constant") {
    Tensor v = x;  // negative pads crop
    for (int64_t d = 0; d < x.ndim(); ++d) {
      int64_t b = std::min<int64_t>(per[2 * d], 0), a = std::min<int64_t>(per[2 * d + 1], 0);
      if (b < 0 || a < 0) {
        if (v.dim(d) + a + b < 0)
          return InvalidArgument("[pad] padding %d,%d crops dim %d of %s below zero", b, a, d,
                                 x.meta_string());
        ASSIGN_OR_RETURN(v, Narrow(v, d, -b, v.dim(d) + a + b));
      }
      per[2 * d] = std::max<int64_t>(per[2 * d], 0);
      per[2 * d + 1] = std::max<int64_t>(per[2 * d + 1], 0);
    }
    PadAttrs a;
    a.pads = per;
    a.value = value;
    a.in_shape = Dims(v.shape());
    return RunPad({v}, a);
  }
  bool reflect = mode == "reflect";
  if (!reflect && mode != "replicate" && mode != "circular")
    return InvalidArgument("[pad] unknown mode '%s' (constant, reflect, replicate, circular)",
                           mode);
  // Built from views and cat, so gradients come from theirs.
  Tensor r = x;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    int64_t b = per[2 * d], a = per[2 * d + 1], n = x.dim(d);
    if (b == 0 && a == 0) continue;
    if (b < 0 || a < 0)
      return InvalidArgument("[pad] negative padding is only supported in constant mode");
    if ((reflect && (b >= n || a >= n)) || (mode == "circular" && (b > n || a > n)) || n == 0)
      return InvalidArgument("[pad] padding (%d, %d) is too large for dim %d of %s in %s mode", b,
                             a, d, x.meta_string(), mode);
    TensorList parts;
    Tensor before, after;
    if (reflect) {
      ASSIGN_OR_RETURN(before, Narrow(r, d, 1, b));
      ASSIGN_OR_RETURN(before, Flip(before, {d}));
      ASSIGN_OR_RETURN(after, Narrow(r, d, n - 1 - a, a));
      ASSIGN_OR_RETURN(after, Flip(after, {d}));
    } else if (mode == "replicate") {
      Shape sb = r.shape(), sa = r.shape();
      sb[d] = b;
      sa[d] = a;
      ASSIGN_OR_RETURN(before, Narrow(r, d, 0, 1));
      ASSIGN_OR_RETURN(before, Expand(before, sb));
      ASSIGN_OR_RETURN(after, Narrow(r, d, n - 1, 1));
      ASSIGN_OR_RETURN(after, Expand(after, sa));
    } else {
      ASSIGN_OR_RETURN(before, Narrow(r, d, n - b, b));
      ASSIGN_OR_RETURN(after, Narrow(r, d, 0, a));
    }
    ASSIGN_OR_RETURN(r, Cat({before, r, after}, d));
  }
  return r.same(x) ? Clone(x) : StatusOr<Tensor>(r);
}

}  // namespace functional
}  // namespace oneflow_like
