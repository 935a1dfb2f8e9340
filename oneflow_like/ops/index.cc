// Index family: the OpDefs of oneflow_like/opdefs/index.def (generated below from the table's
// check, out, grad, save and layout columns, with their Run<Name> entries), their gradient
// formulas and the functional entries. Kernels: kernels/cpu/index.cc, kernels/cuda/index.*.
#include "oneflow_like/ops/index.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/index.h"

namespace oneflow_like {
namespace {
namespace F = functional;

using opdefs::IndexDimAttrs;
using opdefs::IndexPutAttrs;
using opdefs::IndexPutInplaceAttrs;
using opdefs::MaskedFillAttrs;
using opdefs::MaskedFillInplaceAttrs;
using opdefs::OneHotAttrs;
using opdefs::ScatterAttrs;
using opdefs::ScatterInplaceAttrs;

std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}
Shape ShapeOf(const std::vector<int64_t>& v) {
  return Shape(DimVector(v.begin(), v.end()));
}

Status CheckIndexDtype(const char* op, const Tensor& index) {
  if (index.dtype() != DType::kI64 && index.dtype() != DType::kI32)
    return TypeError("[%s] index must be an int64 or int32 tensor, got %s", op,
                     index.meta_string());
  return Status();
}

StatusOr<Tensor> AsIndex(const char* op, const Tensor& index) {
  RETURN_IF_ERROR(CheckIndexDtype(op, index));
  return F::Cast(index.detach(), DType::kI64);
}

// In-place index ops whose kernel writes only the indexed elements: their op has no gradient, and
// a trace sees only its inputs (not x's elements it keeps). With grad (x or the source requires
// it, as torch: a target that did not require grad starts requiring it) or in a trace, the
// out-of-place op computes the result and copy_ writes it into x; copy_ records the gradient and,
// for a view, rebases its base's history.
bool ViaOutOfPlace(const Tensor& x, const Tensor& src = Tensor()) {
  return TracingActive() || x.is_lazy() ||
         (GradModeEnabled() && (x.requires_grad() || (src.defined() && src.requires_grad())));
}
// x's value for that out-of-place op: with grad a recorded clone, so the op's saved input is not
// the tensor copy_ then overwrites (which would fail its backward's version check).
StatusOr<Tensor> OldValue(const Tensor& x) {
  if (TracingActive() || x.is_lazy() || !GradModeEnabled()) return x;
  return functional::Clone(x);
}

// ---- the table's check and out columns ---------------------------------------------------------

// Shape of x[:d0] + B + x[d0+k:]: the k index tensors (one shape B) index dims [d0, d0 + k).
Shape IndexResultShape(const Shape& x, int64_t d0, int64_t k, const Shape& b) {
  DimVector s(x.dims().begin(), x.dims().begin() + d0);
  s.insert(s.end(), b.dims().begin(), b.dims().end());
  s.insert(s.end(), x.dims().begin() + d0 + k, x.dims().end());
  return Shape(s);
}

// What an index op's schema checks: x (input 0, or an in-place op's target as its shape and dtype
// attributes describe it) and the operands after it.
struct Subject {
  const char* op;  // the name errors give
  Shape shape;
  DType dtype;
  Device device;  // the first input's: the output's device
  absl::Span<const Tensor> rest;
  std::string meta() const { return ShapeString(dtype, shape); }
};

template <bool kTarget, typename A>
Subject MakeSubject(const char* op, TensorSpan in, const A& a) {
  if constexpr (kTarget)
    return Subject{op, ShapeOf(a.shape), a.dtype, in[0].device(), absl::MakeConstSpan(in)};
  else
    return Subject{op, in[0].shape(), in[0].dtype(), in[0].device(),
                   absl::MakeConstSpan(in).subspan(1)};
}

// The op named in errors: scatter with reduce "add" reports itself as scatter_add(_).
template <typename A>
const char* ErrorName(const char* name, const A&) {
  return name;
}
const char* ErrorName(const char*, const ScatterAttrs& a) {
  return a.reduce == "add" ? "scatter_add" : "scatter";
}
const char* ErrorName(const char*, const ScatterInplaceAttrs& a) {
  return a.reduce == "add" ? "scatter_add_" : "scatter_";
}

template <typename A>
Status Check_none(const Subject&, const A&) {
  return Status();
}

// index_select(x, index): index is 0-d or 1-d.
template <typename A>
Status Check_select(const Subject& s, const A&) {
  if (s.rest[0].ndim() > 1)
    return InvalidArgument("[%s] index must be 0-d or 1-d, got %s", s.op, s.rest[0].meta_string());
  return Status();
}

// index_add(x, index, source): source is x with dim resized to index's numel, in x's dtype.
template <typename A>
Status Check_source(const Subject& s, const A& a) {
  const Tensor &index = s.rest[0], &src = s.rest[1];
  Shape want = s.shape;
  if (want.ndim() > 0) want[a.dim] = index.numel();
  if (src.shape() != want || src.dtype() != s.dtype)
    return InvalidArgument("[%s] source %s does not match %s for index %s along dim %d", s.op,
                           src.meta_string(), s.meta(), index.meta_string(), a.dim);
  return Status();
}

// gather / scatter (x, index [, src]): index has x's ndim; `src` (when a tensor) is at least
// index's size.
template <typename A>
Status Check_gather(const Subject& s, const A& a) {
  const Tensor& index = s.rest[0];
  const Tensor* src = s.rest.size() > 1 ? &s.rest[1] : nullptr;
  const Shape& x = s.shape;
  std::string xs = s.meta();
  int64_t dim = a.dim;
  if (index.ndim() != x.ndim())
    return InvalidArgument("[%s] index %s must have as many dims as input %s", s.op,
                           index.meta_string(), xs);
  if (src && (src->ndim() != x.ndim() || src->dtype() != s.dtype))
    return InvalidArgument("[%s] source %s must match input %s in dims and dtype", s.op,
                           src->meta_string(), xs);
  for (int64_t i = 0; i < x.ndim(); ++i) {
    bool ok = (i == dim || index.dim(i) <= x[i]) && (!src || index.dim(i) <= src->dim(i));
    if (!ok)
      return InvalidArgument("[%s] index %s is larger than input %s%s%s outside dim %d", s.op,
                             index.meta_string(), xs, src ? " or source " : "",
                             src ? src->meta_string() : "", dim);
  }
  return Status();
}

// masked_fill (x, mask): a bool mask broadcastable to x.
template <typename A>
Status Check_mask(const Subject& s, const A&) {
  const Tensor& mask = s.rest[0];
  if (mask.dtype() != DType::kBool)
    return TypeError("[%s] mask must be a bool tensor, got %s", s.op, mask.meta_string());
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes(s.op, s.shape, mask.shape()));
  if (b != s.shape)
    return InvalidArgument("[%s] mask %s is not broadcastable to %s", s.op, mask.meta_string(),
                           s.meta());
  return Status();
}

// index (x, idx...): the k index tensors (int64, one shape) index dims [dim, dim + k).
template <typename A>
Status Check_index(const Subject& s, const A& a) {
  int64_t k = static_cast<int64_t>(s.rest.size()), d0 = a.dim;
  if (d0 + k > s.shape.ndim())
    return OutOfRange("[%s] too many indices for tensor %s: %d", s.op, s.meta(), int(d0 + k));
  return Status();
}

// index_put (x, values, idx...): values broadcast to the index result's shape.
template <typename A>
Status Check_put(const Subject& s, const A& a) {
  int64_t k = static_cast<int64_t>(s.rest.size()) - 1, d0 = a.dim;
  if (d0 + k > s.shape.ndim())
    return OutOfRange("[%s] too many indices for tensor %s", s.op, s.meta());
  Shape r = IndexResultShape(s.shape, d0, k, k > 0 ? s.rest[1].shape() : Shape{});
  StatusOr<Shape> b = BroadcastShapes(s.op, s.rest[0].shape(), r);
  if (!b.ok() || *b != r)
    return InvalidArgument(
        "[%s] shape mismatch: value tensor %s cannot be broadcast to indexing result of shape %s",
        s.op, s.rest[0].meta_string(), r.ToString());
  return Status();
}
// The same with values in x's dtype (the out-of-place index_put).
template <typename A>
Status Check_put_dtype(const Subject& s, const A& a) {
  if (s.rest[0].dtype() != s.dtype)
    return TypeError("[%s] values %s must have the dtype of %s", s.op, s.rest[0].meta_string(),
                     s.meta());
  return Check_put(s, a);
}

template <typename A>
TensorMeta Out_x(const Subject& s, const A&) {
  return TensorMeta{s.shape, s.dtype, s.device};
}
template <typename A>
TensorMeta Out_target(const Subject& s, const A& a) {
  return Out_x(s, a);
}
template <typename A>
TensorMeta Out_selected(const Subject& s, const A& a) {
  Shape shape = s.shape;
  if (shape.ndim() > 0) shape[a.dim] = s.rest[0].numel();
  return TensorMeta{shape, s.dtype, s.device};
}
template <typename A>
TensorMeta Out_index_shape(const Subject& s, const A&) {
  return TensorMeta{s.rest[0].shape(), s.dtype, s.device};
}
template <typename A>
TensorMeta Out_one_hot(const Subject& s, const A& a) {
  Shape shape = s.shape;
  shape.mutable_dims().push_back(a.num_classes);
  return TensorMeta{shape, DType::kI64, s.device};
}
template <typename A>
TensorMeta Out_indexed(const Subject& s, const A& a) {
  int64_t k = static_cast<int64_t>(s.rest.size());
  return TensorMeta{IndexResultShape(s.shape, a.dim, k, k > 0 ? s.rest[0].shape() : Shape{}),
                    s.dtype, s.device};
}

// ---- gradient formulas (the table's grad column) ---------------------------------------------

constexpr GradFn NoGrad = nullptr;

StatusOr<Tensor> IndexRaw(const Tensor& x, const TensorList& idx, int64_t d0);
StatusOr<Tensor> IndexPutRaw(const Tensor& x, const TensorList& idx, int64_t d0,
                             const Tensor& values, bool acc);

IndexDimAttrs AtDim(int64_t dim) {
  IndexDimAttrs a;
  a.dim = dim;
  return a;
}
int64_t DimOf(const GradContext& c) {
  return opdefs::ReadAttrs<IndexDimAttrs>(c.attrs).dim;
}

StatusOr<TensorList> IndexSelectGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor z, F::ZerosLike(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor g, F::IndexAdd(z, DimOf(c), c.inputs[1], c.grad_outputs[0]));
  return TensorList{g, Tensor()};
}

StatusOr<TensorList> IndexAddGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor gs, F::IndexSelect(c.grad_outputs[0], DimOf(c), c.inputs[1]));
  return TensorList{c.grad_outputs[0], Tensor(), gs};
}

StatusOr<TensorList> GatherGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor z, F::ZerosLike(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor g, F::ScatterAdd(z, DimOf(c), c.inputs[1], c.grad_outputs[0]));
  return TensorList{g, Tensor()};
}

StatusOr<TensorList> ScatterGrad(const GradContext& c) {
  const ScatterAttrs a = opdefs::ReadAttrs<ScatterAttrs>(c.attrs);
  const Tensor& g = c.grad_outputs[0];
  TensorList r{g, Tensor()};
  if (a.reduce != "add") {
    ASSIGN_OR_RETURN(r[0], F::ScatterValue(g, a.dim, c.inputs[1], 0.0));
  }
  if (c.inputs.size() > 2) {
    ASSIGN_OR_RETURN(Tensor gs, F::Gather(g, a.dim, c.inputs[1]));
    // src may be larger than index: its other elements get zero gradient.
    if (gs.shape() != c.inputs[2].shape()) {
      Shape s = c.inputs[2].shape();
      ASSIGN_OR_RETURN(gs, F::AsStridedScatter(gs, s, ContiguousStrides(s), 0));
    }
    r.push_back(gs);
  }
  return r;
}

StatusOr<TensorList> MaskedFillGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, F::MaskedFill(c.grad_outputs[0], c.inputs[1], 0.0));
  return TensorList{g, Tensor()};
}

StatusOr<TensorList> IndexGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor z, F::ZerosLike(c.inputs[0]));
  TensorList idx(c.inputs.begin() + 1, c.inputs.end());
  ASSIGN_OR_RETURN(Tensor g, IndexPutRaw(z, idx, DimOf(c), c.grad_outputs[0], true));
  TensorList r(c.inputs.size());
  r[0] = g;
  return r;
}

StatusOr<TensorList> IndexPutGrad(const GradContext& c) {
  const IndexPutAttrs a = opdefs::ReadAttrs<IndexPutAttrs>(c.attrs);
  TensorList idx(c.inputs.begin() + 2, c.inputs.end());
  const Tensor& g = c.grad_outputs[0];
  TensorList r(c.inputs.size());
  r[0] = g;
  if (!a.accumulate) {
    ASSIGN_OR_RETURN(Tensor zero, F::Zeros(Shape{}, g.dtype(), g.device()));
    ASSIGN_OR_RETURN(r[0], IndexPutRaw(g, idx, a.dim, zero, false));
  }
  ASSIGN_OR_RETURN(r[1], IndexRaw(g, idx, a.dim));
  return r;
}

// ---- the OpDefs and Run<Name> (generated from index.def) --------------------------------------

#define OFL_INDEX_SAVE_IN_inputs true
#define OFL_INDEX_SAVE_OUT_inputs false
#define OFL_INDEX_SAVE_IN_none false
#define OFL_INDEX_SAVE_OUT_none false
#define OFL_INDEX_STRIDED_strided true
#define OFL_INDEX_STRIDED_contiguous false
// The out column: `target` ops run in place into a target that is not among their inputs.
#define OFL_INDEX_INPLACE_x false
#define OFL_INDEX_INPLACE_selected false
#define OFL_INDEX_INPLACE_index_shape false
#define OFL_INDEX_INPLACE_one_hot false
#define OFL_INDEX_INPLACE_indexed false
#define OFL_INDEX_INPLACE_target true
// Run<Name>(inputs, attrs) -> the output.
#define OFL_INDEX_RUN_OUT_OF_PLACE(Name, Attrs) OFL_DEFINE_RUN1(Name, Attrs)
// Run<Name>(inputs, attrs, target): writes target in place; fills in its shape and dtype.
#define OFL_INDEX_RUN_IN_PLACE(Name, Attrs)                                       \
  Status Run##Name(TensorSpan in, opdefs::Attrs a, const Tensor& target) {        \
    a.shape = Dims(target.shape());                                               \
    a.dtype = target.dtype();                                                     \
    return DispatchInplace(k##Name, in, opdefs::ToAttrMap(std::move(a)), target); \
  }
#define OFL_INDEX_RUN_x(Name, Attrs) OFL_INDEX_RUN_OUT_OF_PLACE(Name, Attrs)
#define OFL_INDEX_RUN_selected(Name, Attrs) OFL_INDEX_RUN_OUT_OF_PLACE(Name, Attrs)
#define OFL_INDEX_RUN_index_shape(Name, Attrs) OFL_INDEX_RUN_OUT_OF_PLACE(Name, Attrs)
#define OFL_INDEX_RUN_one_hot(Name, Attrs) OFL_INDEX_RUN_OUT_OF_PLACE(Name, Attrs)
#define OFL_INDEX_RUN_indexed(Name, Attrs) OFL_INDEX_RUN_OUT_OF_PLACE(Name, Attrs)
#define OFL_INDEX_RUN_target(Name, Attrs) OFL_INDEX_RUN_IN_PLACE(Name, Attrs)
// clang-format off
#define OFL_ATTRS(...)
#define OFL_INDEX_API(...)
#define OFL_INDEX(name, Name, Attrs, check, out, grad, save, layout)                           \
  Status Infer##Name(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* metas) { \
    const opdefs::Attrs a = opdefs::ReadAttrs<opdefs::Attrs>(m);                                \
    const Subject s = MakeSubject<OFL_INDEX_INPLACE_##out>(ErrorName(#name, a), in, a);         \
    RETURN_IF_ERROR(Check_##check(s, a));                                                       \
    metas->push_back(Out_##out(s, a));                                                          \
    return Status();                                                                            \
  }                                                                                             \
  const OpDef k##Name = OpSpec(#name, Infer##Name)                                              \
                            .Grad(grad)                                                         \
                            .StridedInputs(OFL_INDEX_STRIDED_##layout)                          \
                            .SaveInputs(OFL_INDEX_SAVE_IN_##save)                               \
                            .SaveOutputs(OFL_INDEX_SAVE_OUT_##save);                            \
  OFL_INDEX_RUN_##out(Name, Attrs)
#include "oneflow_like/opdefs/index.def"
#undef OFL_INDEX
#undef OFL_INDEX_API
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> IndexRaw(const Tensor& x, const TensorList& idx, int64_t d0) {
  TensorList in{x};
  in.insert(in.end(), idx.begin(), idx.end());
  return RunIndex(in, AtDim(d0));
}

StatusOr<Tensor> IndexPutRaw(const Tensor& x, const TensorList& idx, int64_t d0,
                             const Tensor& values, bool acc) {
  ASSIGN_OR_RETURN(Tensor v, F::Cast(values, x.dtype()));
  TensorList in{x, v};
  in.insert(in.end(), idx.begin(), idx.end());
  IndexPutAttrs a;
  a.dim = d0;
  a.accumulate = acc;
  return RunIndexPut(in, a);
}

// Normalised advanced index: x permuted so the indexed dims are [d0, d0 + idx.size()), idx
// int64, broadcast to one shape and contiguous; `perm` is empty when no permute was needed.
struct PreparedIndex {
  Tensor x;
  TensorList idx;
  int64_t d0 = 0;
  std::vector<int64_t> perm;
};

StatusOr<PreparedIndex> PrepareIndex(const char* op, const Tensor& x, const TensorList& indices) {
  // Expand bool masks into their nonzero coordinates, one int64 tensor per covered dim.
  TensorList per_dim;
  for (const Tensor& t : indices) {
    if (!t.defined()) {
      per_dim.push_back(Tensor());
      continue;
    }
    if (t.dtype() == DType::kBool || t.dtype() == DType::kU8) {
      int64_t base = static_cast<int64_t>(per_dim.size());
      if (base + t.ndim() > x.ndim())
        return OutOfRange("[%s] too many indices for tensor %s", op, x.meta_string());
      for (int64_t i = 0; i < t.ndim(); ++i)
        if (t.dim(i) != x.dim(base + i))
          return OutOfRange(
              "[%s] the shape of the mask %s at index %d does not match the shape of the indexed "
              "tensor %s",
              op, t.meta_string(), int(i), x.meta_string());
      ASSIGN_OR_RETURN(Tensor nz, F::Nonzero(t));
      if (t.ndim() == 0) {  // x[True] adds a dim of 1, x[False] of 0
        ASSIGN_OR_RETURN(Tensor u, F::Unsqueeze(x, static_cast<int64_t>(per_dim.size())));
        TensorList rest(indices.begin() + (&t - indices.data()) + 1, indices.end());
        TensorList pre(per_dim);
        ASSIGN_OR_RETURN(Tensor z, F::Zeros(Shape{nz.dim(0)}, DType::kI64, x.device()));
        pre.push_back(z);
        pre.insert(pre.end(), rest.begin(), rest.end());
        return PrepareIndex(op, u, pre);
      }
      for (int64_t i = 0; i < t.ndim(); ++i) {
        ASSIGN_OR_RETURN(Tensor col, F::Select(nz, 1, i));
        per_dim.push_back(col);
      }
      continue;
    }
    ASSIGN_OR_RETURN(Tensor c, AsIndex(op, t));
    per_dim.push_back(c);
  }
  if (static_cast<int64_t>(per_dim.size()) > x.ndim())
    return OutOfRange("[%s] too many indices for tensor %s: %d", op, x.meta_string(),
                      int(per_dim.size()));
  std::vector<int64_t> pos;
  Shape b;
  for (size_t i = 0; i < per_dim.size(); ++i) {
    if (!per_dim[i].defined()) continue;
    if (pos.empty())
      b = per_dim[i].shape();
    else {
      ASSIGN_OR_RETURN(b, BroadcastShapes(op, b, per_dim[i].shape()));
    }
    pos.push_back(static_cast<int64_t>(i));
  }
  PreparedIndex p;
  p.x = x;
  for (int64_t i : pos) {
    ASSIGN_OR_RETURN(Tensor e, F::Expand(per_dim[i], b));
    ASSIGN_OR_RETURN(e, F::Contiguous(e));
    p.idx.push_back(e);
  }
  if (pos.empty()) return p;
  bool adjacent = pos.back() - pos.front() + 1 == static_cast<int64_t>(pos.size());
  if (adjacent) {
    p.d0 = pos.front();
  } else {
    p.perm = pos;
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (std::find(pos.begin(), pos.end(), i) == pos.end()) p.perm.push_back(i);
    ASSIGN_OR_RETURN(p.x, F::Permute(x, p.perm));
  }
  return p;
}

StatusOr<Tensor> PrepareValues(const Tensor& values, const Tensor& x) {
  if (values.device() != x.device()) return F::To(values, x.device());
  return F::Cast(values, x.dtype());
}

}  // namespace

namespace functional {

StatusOr<Tensor> IndexSelect(const Tensor& x, int64_t dim, const Tensor& index) {
  if (IsComplex(x.dtype())) return ComplexIndexSelect(x, dim, index);
  ASSIGN_OR_RETURN(int64_t d, WrapDim("index_select", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex("index_select", index));
  if (i.ndim() == 0) {
    ASSIGN_OR_RETURN(i, Reshape(i, Shape{1}));
  }
  return RunIndexSelect({x, i}, AtDim(d));
}

StatusOr<Tensor> IndexAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("index_add", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex("index_add", index));
  ASSIGN_OR_RETURN(Tensor s, Cast(src, x.dtype()));
  return RunIndexAdd({x, i, s}, AtDim(d));
}

StatusOr<Tensor> Gather(const Tensor& x, int64_t dim, const Tensor& index) {
  if (IsComplex(x.dtype())) return ComplexGather(x, dim, index);
  ASSIGN_OR_RETURN(int64_t d, WrapDim("gather", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex("gather", index));
  return RunGather({x, i}, AtDim(d));
}

namespace {
StatusOr<Tensor> ScatterImpl(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                             const Tensor* src, double value, bool add) {
  if (IsComplex(x.dtype()) || (src != nullptr && IsComplex(src->dtype()))) {
    return ComplexScatter(op, x, dim, index, src, value, add, false);
  }
  ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex(op, index));
  TensorList in{x, i};
  if (src) {
    ASSIGN_OR_RETURN(Tensor s, Cast(*src, x.dtype()));
    in.push_back(s);
  }
  ScatterAttrs a;
  a.dim = d;
  a.reduce = add ? "add" : "none";
  a.value = value;
  return RunScatter(in, a);
}
Status ScatterInplaceImpl(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                          const Tensor* src, double value, bool add) {
  if (IsComplex(x.dtype()) || (src != nullptr && IsComplex(src->dtype()))) {
    return ComplexScatter(op, x, dim, index, src, value, add, true).status();
  }
  if (ViaOutOfPlace(x, src ? *src : Tensor())) {
    ASSIGN_OR_RETURN(Tensor old, OldValue(x));
    ASSIGN_OR_RETURN(Tensor r, ScatterImpl(op, old, dim, index, src, value, add));
    return CopyInto(x, r);
  }
  ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex(op, index));
  ASSIGN_OR_RETURN(i, Contiguous(i));
  TensorList in{i};
  if (src) {
    ASSIGN_OR_RETURN(Tensor s, Cast(*src, x.dtype()));
    ASSIGN_OR_RETURN(s, Contiguous(s));
    in.push_back(s);
  }
  ScatterInplaceAttrs a;
  a.dim = d;
  a.reduce = add ? "add" : "none";
  a.value = value;
  return RunScatterInplace(in, std::move(a), x);
}
}  // namespace

StatusOr<Tensor> Scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return ScatterImpl("scatter", x, dim, index, &src, 0.0, false);
}
StatusOr<Tensor> ScatterValue(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  return ScatterImpl("scatter", x, dim, index, nullptr, value, false);
}
StatusOr<Tensor> ScatterAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return ScatterImpl("scatter_add", x, dim, index, &src, 0.0, true);
}
Status Scatter_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return ScatterInplaceImpl("scatter_", x, dim, index, &src, 0.0, false);
}
Status ScatterValue_(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  return ScatterInplaceImpl("scatter_", x, dim, index, nullptr, value, false);
}
Status ScatterAdd_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return ScatterInplaceImpl("scatter_add_", x, dim, index, &src, 0.0, true);
}

StatusOr<Tensor> MaskedFill(const Tensor& x, const Tensor& mask, double value) {
  if (IsComplex(x.dtype())) return ComplexMaskedFill(x, mask, value, 0.0);
  MaskedFillAttrs a;
  a.value = value;
  return RunMaskedFill({x, mask.detach()}, a);
}

Status MaskedFill_(const Tensor& x, const Tensor& mask, double value) {
  if (IsComplex(x.dtype())) return ComplexMaskedFill_(x, mask, value, 0.0);
  if (ViaOutOfPlace(x)) {
    ASSIGN_OR_RETURN(Shape b, BroadcastShapes("masked_fill_", x.shape(), mask.shape()));
    if (b != x.shape())
      return InvalidArgument("[masked_fill_] mask %s is not broadcastable to %s",
                             mask.meta_string(), x.meta_string());
    ASSIGN_OR_RETURN(Tensor old, OldValue(x));
    ASSIGN_OR_RETURN(Tensor r, MaskedFill(old, mask, value));
    return CopyInto(x, r);
  }
  MaskedFillInplaceAttrs a;
  a.value = value;
  return RunMaskedFillInplace({mask.detach()}, std::move(a), x);
}

StatusOr<Tensor> MaskedSelect(const Tensor& x, const Tensor& mask) {
  if (mask.dtype() != DType::kBool)
    return TypeError("[masked_select] mask must be a bool tensor, got %s", mask.meta_string());
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes("masked_select", x.shape(), mask.shape()));
  ASSIGN_OR_RETURN(Tensor xb, Expand(x, b));
  ASSIGN_OR_RETURN(Tensor mb, Expand(mask, b));
  return Index(xb, {mb});
}

StatusOr<Tensor> Nonzero(const Tensor& x) {
  Tensor c;
  {
    NoGradGuard g;
    ASSIGN_OR_RETURN(c, Cast(x.detach(), DType::kBool));
  }
  std::vector<uint8_t> host(static_cast<size_t>(c.numel()));
  RETURN_IF_ERROR(CopyToHost(c, host.data()));
  int64_t nd = x.ndim();
  std::vector<int64_t> coords;
  DimVector idx(nd, 0);
  for (int64_t n = 0; n < c.numel(); ++n) {
    if (host[n]) coords.insert(coords.end(), idx.begin(), idx.end());
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < x.dim(d)) break;
      idx[d] = 0;
    }
  }
  int64_t count =
      nd == 0 ? (c.numel() == 1 && host[0] ? 1 : 0) : static_cast<int64_t>(coords.size()) / nd;
  return FromHost(coords.data(), Shape{count, nd}, DType::kI64, x.device());
}

StatusOr<Tensor> OneHot(const Tensor& index, int64_t num_classes) {
  ASSIGN_OR_RETURN(Tensor i, AsIndex("one_hot", index));
  if (num_classes < 0) {
    if (i.numel() == 0)
      return InvalidArgument("[one_hot] can not infer the number of classes from an empty tensor");
    std::vector<int64_t> host(static_cast<size_t>(i.numel()));
    RETURN_IF_ERROR(CopyToHost(i, host.data()));
    num_classes = *std::max_element(host.begin(), host.end()) + 1;
  }
  OneHotAttrs a;
  a.num_classes = num_classes;
  return RunOneHot({i}, a);
}

StatusOr<Tensor> Index(const Tensor& x, const TensorList& indices) {
  if (IsComplex(x.dtype())) return ComplexIndex(x, indices);
  ASSIGN_OR_RETURN(PreparedIndex p, PrepareIndex("index", x, indices));
  if (p.idx.empty()) return x;
  return IndexRaw(p.x, p.idx, p.d0);
}

StatusOr<Tensor> IndexPut(const Tensor& x, const TensorList& indices, const Tensor& values,
                          bool accumulate) {
  if (IsComplex(x.dtype()) || IsComplex(values.dtype()))
    return ComplexIndexPut(x, indices, values, accumulate, false);
  ASSIGN_OR_RETURN(PreparedIndex p, PrepareIndex("index_put", x, indices));
  ASSIGN_OR_RETURN(Tensor v, PrepareValues(values, x));
  if (p.idx.empty()) {
    ASSIGN_OR_RETURN(Tensor e, Expand(v, x.shape()));
    return accumulate ? Add(x, e) : Contiguous(e);
  }
  ASSIGN_OR_RETURN(Tensor r, IndexPutRaw(p.x, p.idx, p.d0, v, accumulate));
  if (p.perm.empty()) return r;
  std::vector<int64_t> inv(p.perm.size());
  for (size_t i = 0; i < p.perm.size(); ++i) inv[p.perm[i]] = static_cast<int64_t>(i);
  return Permute(r, inv);
}

Status IndexPut_(const Tensor& x, const TensorList& indices, const Tensor& values,
                 bool accumulate) {
  if (IsComplex(x.dtype()) || IsComplex(values.dtype()))
    return ComplexIndexPut(x, indices, values, accumulate, true).status();
  if (ViaOutOfPlace(x, values)) {
    ASSIGN_OR_RETURN(Tensor old, OldValue(x));
    ASSIGN_OR_RETURN(Tensor r, IndexPut(old, indices, values, accumulate));
    return CopyInto(x, r);
  }
  ASSIGN_OR_RETURN(PreparedIndex p, PrepareIndex("index_put_", x, indices));
  ASSIGN_OR_RETURN(Tensor v, PrepareValues(values, x));
  ASSIGN_OR_RETURN(v, Contiguous(v));
  if (p.idx.empty()) {
    if (accumulate) return Add_(x, v);
    return CopyInto(x, v);
  }
  TensorList in{v};
  in.insert(in.end(), p.idx.begin(), p.idx.end());
  IndexPutInplaceAttrs a;
  a.dim = p.d0;
  a.accumulate = accumulate;
  return RunIndexPutInplace(in, std::move(a), p.x);
}

}  // namespace functional
}  // namespace oneflow_like
