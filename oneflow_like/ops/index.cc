// Index family schemas, gradient formulas and functional entries.
#include "oneflow_like/ops/index.h"

#include <algorithm>
#include <string>
#include <vector>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {
namespace F = functional;

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

// In-place index ops record no autograd history; refuse where history would be lost.
Status CheckNoGrad(const char* op, const Tensor& target, const Tensor& src = Tensor()) {
  if (GradModeEnabled() && (target.requires_grad() || (src.defined() && src.requires_grad())))
    return InvalidArgument(
        "[%s] in-place indexing of a tensor that requires grad is not supported; use the "
        "out-of-place op or wrap it in no_grad()",
        op);
  return Status();
}

// ---- index_select(x, index; dim) / index_add(x, index, src; dim) ----
const OpDef kIndexSelect = OpSpec("index_select", [](const TensorList& in, const AttrMap& a,
                                                     std::vector<TensorMeta>* out) {
                             Shape s = in[0].shape();
                             if (in[1].ndim() > 1)
                               return InvalidArgument(
                                   "[index_select] index must be 0-d or 1-d, got %s",
                                   in[1].meta_string());
                             if (s.ndim() > 0) s[a.Int("dim")] = in[1].numel();
                             out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
                             return Status();
                           }).Grad([](const GradContext& c) -> StatusOr<TensorList> {
  ASSIGN_OR_RETURN(Tensor z, F::ZerosLike(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor g, F::IndexAdd(z, c.attrs.Int("dim"), c.inputs[1], c.grad_outputs[0]));
  return TensorList{g, Tensor()};
});

const OpDef kIndexAdd =
    OpSpec("index_add", [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      int64_t d = a.Int("dim");
      Shape want = in[0].shape();
      if (want.ndim() > 0) want[d] = in[1].numel();
      if (in[2].shape() != want || in[2].dtype() != in[0].dtype())
        return InvalidArgument("[index_add] source %s does not match %s for index %s along dim %d",
                               in[2].meta_string(), in[0].meta_string(), in[1].meta_string(), d);
      return ops::InferSameAsInput(in, a, out);
    }).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(Tensor gs,
                       F::IndexSelect(c.grad_outputs[0], c.attrs.Int("dim"), c.inputs[1]));
      return TensorList{c.grad_outputs[0], Tensor(), gs};
    });

// ---- gather / scatter: index has x's ndim; `src` (when a tensor) is at least index's size ----
Status CheckGatherShapes(const char* op, const Shape& x, DType dt, const Tensor& index, int64_t dim,
                         const Tensor* src) {
  std::string xs = ShapeString(dt, x);
  if (index.ndim() != x.ndim())
    return InvalidArgument("[%s] index %s must have as many dims as input %s", op,
                           index.meta_string(), xs);
  if (src && (src->ndim() != x.ndim() || src->dtype() != dt))
    return InvalidArgument("[%s] source %s must match input %s in dims and dtype", op,
                           src->meta_string(), xs);
  for (int64_t i = 0; i < x.ndim(); ++i) {
    bool ok = (i == dim || index.dim(i) <= x[i]) && (!src || index.dim(i) <= src->dim(i));
    if (!ok)
      return InvalidArgument("[%s] index %s is larger than input %s%s%s outside dim %d", op,
                             index.meta_string(), xs, src ? " or source " : "",
                             src ? src->meta_string() : "", dim);
  }
  return Status();
}

const OpDef kGather = OpSpec("gather", [](const TensorList& in, const AttrMap& a,
                                          std::vector<TensorMeta>* out) {
                        RETURN_IF_ERROR(CheckGatherShapes("gather", in[0].shape(), in[0].dtype(),
                                                          in[1], a.Int("dim"), nullptr));
                        out->push_back(TensorMeta{in[1].shape(), in[0].dtype(), in[0].device()});
                        return Status();
                      }).Grad([](const GradContext& c) -> StatusOr<TensorList> {
  ASSIGN_OR_RETURN(Tensor z, F::ZerosLike(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor g, F::ScatterAdd(z, c.attrs.Int("dim"), c.inputs[1], c.grad_outputs[0]));
  return TensorList{g, Tensor()};
});

// scatter(x, index[, src]; dim, reduce ("none" | "add"), value when there is no src).
Status InferScatter(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const char* op = a.Str("reduce") == "add" ? "scatter_add" : "scatter";
  RETURN_IF_ERROR(CheckGatherShapes(op, in[0].shape(), in[0].dtype(), in[1], a.Int("dim"),
                                    in.size() > 2 ? &in[2] : nullptr));
  return ops::InferSameAsInput(in, a, out);
}

const OpDef kScatter =
    OpSpec("scatter", InferScatter).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      int64_t d = c.attrs.Int("dim");
      const Tensor& g = c.grad_outputs[0];
      TensorList r{g, Tensor()};
      if (c.attrs.Str("reduce") != "add") {
        ASSIGN_OR_RETURN(r[0], F::ScatterValue(g, d, c.inputs[1], 0.0));
      }
      if (c.inputs.size() > 2) {
        ASSIGN_OR_RETURN(Tensor gs, F::Gather(g, d, c.inputs[1]));
        // src may be larger than index: its other elements get zero gradient.
        if (gs.shape() != c.inputs[2].shape()) {
          Shape s = c.inputs[2].shape();
          ASSIGN_OR_RETURN(gs, F::AsStridedScatter(gs, s, ContiguousStrides(s), 0));
        }
        r.push_back(gs);
      }
      return r;
    });
// In place: inputs {index[, src]}; the target is the output.
const OpDef kScatterInplace =
    OpSpec("scatter_", [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      const char* op = a.Str("reduce") == "add" ? "scatter_add_" : "scatter_";
      Shape x = ShapeOf(a.Ints("shape"));
      RETURN_IF_ERROR(CheckGatherShapes(op, x, a.Dtype("dtype"), in[0], a.Int("dim"),
                                        in.size() > 1 ? &in[1] : nullptr));
      out->push_back(TensorMeta{x, a.Dtype("dtype"), in[0].device()});
      return Status();
    }).StridedInputs();

// ---- masked_fill(x, mask; value) ----
Status InferMaskedFill(const char* op, const Shape& x, DType dt, const Tensor& mask, Device dev,
                       std::vector<TensorMeta>* out) {
  if (mask.dtype() != DType::kBool)
    return TypeError("[%s] mask must be a bool tensor, got %s", op, mask.meta_string());
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes(op, x, mask.shape()));
  if (b != x)
    return InvalidArgument("[%s] mask %s is not broadcastable to %s", op, mask.meta_string(),
                           ShapeString(dt, x));
  out->push_back(TensorMeta{x, dt, dev});
  return Status();
}

const OpDef kMaskedFill =
    OpSpec("masked_fill",
           [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
             return InferMaskedFill("masked_fill", in[0].shape(), in[0].dtype(), in[1],
                                    in[0].device(), out);
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, F::MaskedFill(c.grad_outputs[0], c.inputs[1], 0.0));
          return TensorList{g, Tensor()};
        })
        .StridedInputs();
const OpDef kMaskedFillInplace =
    OpSpec("masked_fill_", [](const TensorList& in, const AttrMap& a,
                              std::vector<TensorMeta>* out) {
      return InferMaskedFill("masked_fill_", ShapeOf(a.Ints("shape")), a.Dtype("dtype"), in[0],
                             in[0].device(), out);
    }).StridedInputs();

// ---- one_hot(index; num_classes) ----
const OpDef kOneHot =
    OpSpec("one_hot", [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      Shape s = in[0].shape();
      s.mutable_dims().push_back(a.Int("num_classes"));
      out->push_back(TensorMeta{s, DType::kI64, in[0].device()});
      return Status();
    });

// ---- index(x, idx...; dim): the k index tensors (int64, one shape B) index dims [dim, dim+k) ----
Shape IndexResultShape(const Shape& x, int64_t d0, int64_t k, const Shape& b) {
  DimVector s(x.dims().begin(), x.dims().begin() + d0);
  s.insert(s.end(), b.dims().begin(), b.dims().end());
  s.insert(s.end(), x.dims().begin() + d0 + k, x.dims().end());
  return Shape(s);
}

StatusOr<Tensor> IndexRaw(const Tensor& x, const TensorList& idx, int64_t d0);
StatusOr<Tensor> IndexPutRaw(const Tensor& x, const TensorList& idx, int64_t d0,
                             const Tensor& values, bool acc);

const OpDef kIndex =
    OpSpec("index", [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      int64_t k = static_cast<int64_t>(in.size()) - 1, d0 = a.Int("dim");
      if (d0 + k > in[0].ndim())
        return OutOfRange("[index] too many indices for tensor %s: %d", in[0].meta_string(),
                          int(d0 + k));
      out->push_back(TensorMeta{
          IndexResultShape(in[0].shape(), d0, k, in.size() > 1 ? in[1].shape() : Shape{}),
          in[0].dtype(), in[0].device()});
      return Status();
    }).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(Tensor z, F::ZerosLike(c.inputs[0]));
      TensorList idx(c.inputs.begin() + 1, c.inputs.end());
      ASSIGN_OR_RETURN(Tensor g, IndexPutRaw(z, idx, c.attrs.Int("dim"), c.grad_outputs[0], true));
      TensorList r(c.inputs.size());
      r[0] = g;
      return r;
    });

// index_put(x, values, idx...; dim, accumulate): values broadcast to the index result's shape.
Status InferIndexPut(const char* op, const Shape& x, DType dt, const TensorList& vi, Device dev,
                     const AttrMap& a, std::vector<TensorMeta>* out) {
  int64_t k = static_cast<int64_t>(vi.size()) - 1, d0 = a.Int("dim");
  if (d0 + k > x.ndim())
    return OutOfRange("[%s] too many indices for tensor %s", op, ShapeString(dt, x));
  Shape r = IndexResultShape(x, d0, k, k > 0 ? vi[1].shape() : Shape{});
  StatusOr<Shape> b = BroadcastShapes(op, vi[0].shape(), r);
  if (!b.ok() || *b != r)
    return InvalidArgument(
        "[%s] shape mismatch: value tensor %s cannot be broadcast to indexing result of shape %s",
        op, vi[0].meta_string(), r.ToString());
  out->push_back(TensorMeta{x, dt, dev});
  return Status();
}

const OpDef kIndexPut =
    OpSpec("index_put",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             if (in[1].dtype() != in[0].dtype())
               return TypeError("[index_put] values %s must have the dtype of %s",
                                in[1].meta_string(), in[0].meta_string());
             return InferIndexPut("index_put", in[0].shape(), in[0].dtype(),
                                  TensorList(in.begin() + 1, in.end()), in[0].device(), a, out);
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          TensorList idx(c.inputs.begin() + 2, c.inputs.end());
          int64_t d0 = c.attrs.Int("dim");
          const Tensor& g = c.grad_outputs[0];
          TensorList r(c.inputs.size());
          r[0] = g;
          if (!c.attrs.Bool("accumulate")) {
            ASSIGN_OR_RETURN(Tensor zero, F::Zeros(Shape{}, g.dtype(), g.device()));
            ASSIGN_OR_RETURN(r[0], IndexPutRaw(g, idx, d0, zero, false));
          }
          ASSIGN_OR_RETURN(r[1], IndexRaw(g, idx, d0));
          return r;
        })
        .StridedInputs();
// In place: inputs {values, idx...}; the target is the output.
const OpDef kIndexPutInplace =
    OpSpec("index_put_", [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      return InferIndexPut("index_put_", ShapeOf(a.Ints("shape")), a.Dtype("dtype"), in,
                           in[0].device(), a, out);
    }).StridedInputs();

StatusOr<Tensor> IndexRaw(const Tensor& x, const TensorList& idx, int64_t d0) {
  TensorList in{x};
  in.insert(in.end(), idx.begin(), idx.end());
  return Dispatch1(kIndex, in, {{"dim", d0}});
}

StatusOr<Tensor> IndexPutRaw(const Tensor& x, const TensorList& idx, int64_t d0,
                             const Tensor& values, bool acc) {
  ASSIGN_OR_RETURN(Tensor v, F::Cast(values, x.dtype()));
  TensorList in{x, v};
  in.insert(in.end(), idx.begin(), idx.end());
  return Dispatch1(kIndexPut, in, {{"dim", d0}, {"accumulate", acc}});
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
  ASSIGN_OR_RETURN(int64_t d, WrapDim("index_select", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex("index_select", index));
  if (i.ndim() == 0) {
    ASSIGN_OR_RETURN(i, Reshape(i, Shape{1}));
  }
  return Dispatch1(kIndexSelect, {x, i}, {{"dim", d}});
}

StatusOr<Tensor> IndexAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("index_add", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex("index_add", index));
  ASSIGN_OR_RETURN(Tensor s, Cast(src, x.dtype()));
  return Dispatch1(kIndexAdd, {x, i, s}, {{"dim", d}});
}

StatusOr<Tensor> Gather(const Tensor& x, int64_t dim, const Tensor& index) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("gather", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex("gather", index));
  return Dispatch1(kGather, {x, i}, {{"dim", d}});
}

namespace {
StatusOr<Tensor> ScatterImpl(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                             const Tensor* src, double value, bool add) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor i, AsIndex(op, index));
  TensorList in{x, i};
  if (src) {
    ASSIGN_OR_RETURN(Tensor s, Cast(*src, x.dtype()));
    in.push_back(s);
  }
  return Dispatch1(kScatter, in,
                   {{"dim", d}, {"reduce", std::string(add ? "add" : "none")}, {"value", value}});
}
Status ScatterInplaceImpl(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                          const Tensor* src, double value, bool add) {
  RETURN_IF_ERROR(CheckNoGrad(op, x, src ? *src : Tensor()));
  if (TracingActive() || x.is_lazy()) {
    // As masked_fill_: the in-place op's inputs do not include x (its kernel writes only the
    // indexed elements), so a trace records the out-of-place op and a copy into x.
    ASSIGN_OR_RETURN(Tensor r, ScatterImpl(op, x, dim, index, src, value, add));
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
  return DispatchInplace(kScatterInplace, in,
                         {{"dim", d},
                          {"reduce", std::string(add ? "add" : "none")},
                          {"value", value},
                          {"shape", Dims(x.shape())},
                          {"dtype", x.dtype()}},
                         x);
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
  return Dispatch1(kMaskedFill, {x, mask.detach()}, {{"value", value}});
}

Status MaskedFill_(const Tensor& x, const Tensor& mask, double value) {
  RETURN_IF_ERROR(CheckNoGrad("masked_fill_", x));
  if (TracingActive() || x.is_lazy()) {
    // A trace sees only an op's inputs, and masked_fill_ keeps x's unmasked values: record the
    // out-of-place op and a copy into x (an assignment), so the graph reads x's current value.
    ASSIGN_OR_RETURN(Shape b, BroadcastShapes("masked_fill_", x.shape(), mask.shape()));
    if (b != x.shape())
      return InvalidArgument("[masked_fill_] mask %s is not broadcastable to %s",
                             mask.meta_string(), x.meta_string());
    ASSIGN_OR_RETURN(Tensor r, MaskedFill(x, mask, value));
    return CopyInto(x, r);
  }
  return DispatchInplace(kMaskedFillInplace, {mask.detach()},
                         {{"value", value}, {"shape", Dims(x.shape())}, {"dtype", x.dtype()}}, x);
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
  return Dispatch1(kOneHot, {i}, {{"num_classes", num_classes}});
}

StatusOr<Tensor> Index(const Tensor& x, const TensorList& indices) {
  ASSIGN_OR_RETURN(PreparedIndex p, PrepareIndex("index", x, indices));
  if (p.idx.empty()) return x;
  return IndexRaw(p.x, p.idx, p.d0);
}

StatusOr<Tensor> IndexPut(const Tensor& x, const TensorList& indices, const Tensor& values,
                          bool accumulate) {
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
  RETURN_IF_ERROR(CheckNoGrad("index_put_", x, values));
  if (TracingActive() || x.is_lazy()) {
    // As masked_fill_: the in-place op's inputs do not include x (its kernel writes only the
    // indexed elements), so a trace records the out-of-place op and a copy into x.
    ASSIGN_OR_RETURN(Tensor r, IndexPut(x, indices, values, accumulate));
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
  return DispatchInplace(kIndexPutInplace, in,
                         {{"dim", p.d0},
                          {"accumulate", accumulate},
                          {"shape", Dims(p.x.shape())},
                          {"dtype", x.dtype()}},
                         p.x);
}

}  // namespace functional
}  // namespace oneflow_like
