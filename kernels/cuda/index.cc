// CUDA kernels of the shape and index families (same op names, attrs and dtypes as
// kernels/cpu/shape.cc and index.cc). Index tensors are contiguous int64. Indices are checked
// on the device before anything is written; the first bad one becomes the CPU's OutOfRange
// error after the stream is done, and the output is left untouched. The kernels read the
// attribute structs of oneflow_like/opdefs/shape.def and index.def (an in-place op's kernel the
// out-of-place struct).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/index.h"
#include "oneflow_like/opdefs/shape.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;
using opdefs::IndexDimAttrs;
using opdefs::IndexPutAttrs;
using opdefs::MaskedFillAttrs;
using opdefs::OneHotAttrs;
using opdefs::ReadAttrs;
using opdefs::ScatterAttrs;

// Device-side index checks for up to kMaxDims index tensors; Finish() reads them back.
class IndexCheck {
 public:
  struct Item {
    const int64_t* idx;
    int64_t n, dim, size;
    bool wrap;
  };
  Status Start(KernelContext& ctx, const char* op, std::vector<Item> items) {
    op_ = op;
    items_ = std::move(items);
    if (items_.empty()) return Status();
    ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(items_.size() * sizeof(unsigned long long)));
    flags_ = static_cast<unsigned long long*>(p);
    cudaStream_t s = StreamOf(ctx);
    RETURN_IF_ERROR(
        Launched(op, cudaMemsetAsync(flags_, 0xff, items_.size() * sizeof(unsigned long long), s)));
    for (size_t j = 0; j < items_.size(); ++j) {
      const Item& it = items_[j];
      RETURN_IF_ERROR(Launched(
          op, LaunchCheckIndices(it.idx, it.n, it.wrap ? -it.size : 0, it.size, flags_ + j, s)));
    }
    return Status();
  }
  IndexFlags flags() const { return IndexFlags{flags_, static_cast<int>(items_.size())}; }
  // After the op's launches: waits for the stream, then reports the first bad index.
  Status Finish(KernelContext& ctx) {
    if (items_.empty()) return Status();
    auto* s = static_cast<CudaStream*>(ctx.stream());
    std::vector<unsigned long long> host(items_.size());
    RETURN_IF_ERROR(
        Launched(op_, cudaMemcpyAsync(host.data(), flags_, host.size() * sizeof(unsigned long long),
                                      cudaMemcpyDeviceToHost, s->get())));
    RETURN_IF_ERROR(s->Synchronize());
    for (size_t j = 0; j < items_.size(); ++j) {
      if (host[j] == kNoBadIndex) continue;
      int64_t v = 0;
      RETURN_IF_ERROR(Launched(
          op_, cudaMemcpy(&v, items_[j].idx + host[j], sizeof(v), cudaMemcpyDeviceToHost)));
      return OutOfRange("[%s] index %d out of range for dim %d of size %d", op_, v, items_[j].dim,
                        items_[j].size);
    }
    return Status();
  }

 private:
  const char* op_ = "";
  std::vector<Item> items_;
  unsigned long long* flags_ = nullptr;
};

// out (any strides) = in (any strides), same dtype: the cast kernel with equal types.
Status CopyStrided(const char* op, cudaStream_t s, const TensorView& out, const TensorView& in) {
  if (out.numel() == 0) return Status();
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(op, out.shape, {&out, &in}, &loop, ops));
  return Launched(
      op, LaunchCast(ToScalarType(out.dtype), ToScalarType(in.dtype), loop, ops[0], ops[1], s));
}

TensorView Narrowed(const TensorView& v, int64_t dim, int64_t start, int64_t n) {
  TensorView r = v;
  r.shape[dim] = n;
  r.data = static_cast<char*>(v.data) + start * v.strides[dim] * DTypeSize(v.dtype);
  return r;
}

int64_t Prod(const Shape& s, int64_t b, int64_t e) {
  int64_t n = 1;
  for (int64_t i = b; i < e; ++i) n *= s[i];
  return n;
}

Status TooManyDims(const char* op, const Shape& s) {
  return Unimplemented("[%s] CUDA kernel supports up to %d dims, got %s", op, kMaxDims,
                       s.ToString());
}

// ---- shape ----

Status Cat(KernelContext& ctx) {
  int64_t dim = ReadAttrs<opdefs::CatAttrs>(ctx.attrs()).dim, start = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorView& in = ctx.input(i);
    RETURN_IF_ERROR(
        CopyStrided("cat", StreamOf(ctx), Narrowed(ctx.output(0), dim, start, in.shape[dim]), in));
    start += in.shape[dim];
  }
  return Status();
}

Status Flip(KernelContext& ctx) {
  TensorView in = ctx.input(0);
  const auto a = ReadAttrs<opdefs::FlipAttrs>(ctx.attrs());
  for (int64_t d : a.dims) {
    if (in.shape[d] == 0) return Status();
    in.data = static_cast<char*>(in.data) + (in.shape[d] - 1) * in.strides[d] * DTypeSize(in.dtype);
    in.strides[d] = -in.strides[d];
  }
  return CopyStrided("flip", StreamOf(ctx), ctx.output(0), in);
}

Status Tril(KernelContext& ctx) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  int64_t nd = in.shape.ndim(), rows = in.shape[nd - 2], cols = in.shape[nd - 1];
  int64_t mats = rows * cols == 0 ? 0 : in.numel() / (rows * cols);
  const auto a = ReadAttrs<opdefs::TrilAttrs>(ctx.attrs());
  return Launched("tril", LaunchTril(DTypeSize(in.dtype), mats, rows, cols, a.diagonal, a.upper,
                                     in.data, out.data, StreamOf(ctx)));
}

Status Pad(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const auto a = ReadAttrs<opdefs::PadAttrs>(ctx.attrs());
  const auto& p = a.pads;
  LoopShape loop;
  Operand op;
  RETURN_IF_ERROR(MakeLoop("pad", out.shape, {&out}, &loop, &op));
  RETURN_IF_ERROR(
      Launched("pad", LaunchFill(ToScalarType(out.dtype), a.value, loop, op, StreamOf(ctx))));
  TensorView interior = out;
  for (int64_t d = 0; d < out.shape.ndim(); ++d)
    interior = Narrowed(interior, d, p[2 * d], ctx.input(0).shape[d]);
  return CopyStrided("pad", StreamOf(ctx), interior, ctx.input(0));
}

// True when no two elements of (shape, strides) share an address.
bool NonOverlapping(const Shape& shape, const DimVector& strides) {
  std::vector<std::pair<int64_t, int64_t>> d;  // (|stride|, size)
  for (int64_t i = 0; i < shape.ndim(); ++i)
    if (shape[i] > 1) d.emplace_back(std::abs(strides[i]), shape[i]);
  std::sort(d.begin(), d.end());
  int64_t extent = 0;  // max offset reached by the smaller dims
  for (auto& [st, n] : d) {
    if (st <= extent) return false;
    extent += st * (n - 1);
  }
  return true;
}

Status AsStridedScatter(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &in = ctx.input(0);
  cudaStream_t s = StreamOf(ctx);
  RETURN_IF_ERROR(Launched("as_strided_scatter",
                           cudaMemsetAsync(out.data, 0, out.numel() * DTypeSize(out.dtype), s)));
  const auto a = ReadAttrs<opdefs::AsStridedScatterAttrs>(ctx.attrs());
  TensorView view;
  view.dtype = out.dtype;
  view.shape = in.shape;
  view.strides.assign(a.strides.begin(), a.strides.end());
  view.data = static_cast<char*>(out.data) + a.offset * DTypeSize(out.dtype);
  if (view.numel() == 0) return Status();
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop("as_strided_scatter", view.shape, {&view, &in}, &loop, ops));
  bool serial =
      !NonOverlapping(view.shape, view.strides);  // overlaps accumulate in the CPU's order
  return Launched("as_strided_scatter",
                  LaunchAccumulate(ToScalarType(out.dtype), serial, loop, ops[0], ops[1], s));
}

// ---- index ----

Status IndexSelect(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &ix = ctx.input(1), &out = ctx.output(0);
  int64_t d = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim, m = ix.numel(),
          n = x.shape.ndim() ? x.shape[d] : 1;
  IndexCheck chk;
  RETURN_IF_ERROR(chk.Start(ctx, "index_select", {{ix.ptr<const int64_t>(), m, d, n, false}}));
  int64_t outer = Prod(x.shape, 0, d),
          inner = x.shape.ndim() ? Prod(x.shape, d + 1, x.shape.ndim()) : 1;
  RETURN_IF_ERROR(
      Launched("index_select",
               LaunchIndexSelect(DTypeSize(x.dtype), outer, n, inner, ix.ptr<const int64_t>(), m,
                                 x.data, out.data, chk.flags(), StreamOf(ctx))));
  return chk.Finish(ctx);
}

Status IndexAdd(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &ix = ctx.input(1), &src = ctx.input(2), &out = ctx.output(0);
  int64_t d = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim, m = ix.numel(),
          n = x.shape.ndim() ? x.shape[d] : 1;
  IndexCheck chk;
  RETURN_IF_ERROR(chk.Start(ctx, "index_add", {{ix.ptr<const int64_t>(), m, d, n, false}}));
  RETURN_IF_ERROR(chk.Finish(ctx));  // before the copy: a failed op leaves out untouched
  RETURN_IF_ERROR(CopyStrided("index_add", StreamOf(ctx), out, x));
  int64_t outer = Prod(x.shape, 0, d),
          inner = x.shape.ndim() ? Prod(x.shape, d + 1, x.shape.ndim()) : 1;
  return Launched("index_add",
                  LaunchIndexAdd(ToScalarType(out.dtype), outer, n, inner, ix.ptr<const int64_t>(),
                                 m, src.data, out.data, IndexFlags{}, StreamOf(ctx)));
}

Status Gather(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &index = ctx.input(1), &out = ctx.output(0);
  int64_t d = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim, size = x.shape.ndim() ? x.shape[d] : 1;
  if (index.shape.ndim() > kMaxDims) return TooManyDims("gather", index.shape);
  IndexCheck chk;
  RETURN_IF_ERROR(
      chk.Start(ctx, "gather", {{index.ptr<const int64_t>(), index.numel(), d, size, false}}));
  Dims shape;
  shape.ndim = static_cast<int>(index.shape.ndim());
  int64_t xs[kMaxDims] = {};
  DimVector cs = ContiguousStrides(x.shape);
  for (int k = 0; k < shape.ndim; ++k) {
    shape.sizes[k] = index.shape[k];
    xs[k] = cs[k];
  }
  RETURN_IF_ERROR(Launched("gather", LaunchGather(DTypeSize(x.dtype), shape, xs,
                                                  static_cast<int>(d), index.ptr<const int64_t>(),
                                                  x.data, out.data, chk.flags(), StreamOf(ctx))));
  return chk.Finish(ctx);
}

Status Scatter(KernelContext& ctx) {
  bool inplace = std::string(ctx.op()).back() == '_';
  int first = inplace ? 0 : 1;
  const TensorView &out = ctx.output(0), &index = ctx.input(first);
  bool has_src = ctx.num_inputs() > first + 1;
  const ScatterAttrs a = ReadAttrs<ScatterAttrs>(ctx.attrs());
  int64_t d = a.dim;
  bool add = a.reduce == "add";
  int64_t size = out.shape.ndim() ? out.shape[d] : 1;
  if (index.shape.ndim() > kMaxDims) return TooManyDims(ctx.op(), index.shape);
  const char* name = add ? "scatter_add" : "scatter";
  IndexCheck chk;
  RETURN_IF_ERROR(
      chk.Start(ctx, name, {{index.ptr<const int64_t>(), index.numel(), d, size, false}}));
  if (!inplace) {
    RETURN_IF_ERROR(chk.Finish(ctx));  // before the copy: a failed op leaves out untouched
    RETURN_IF_ERROR(CopyStrided(ctx.op(), StreamOf(ctx), out, ctx.input(0)));
  }
  Dims shape;
  shape.ndim = static_cast<int>(index.shape.ndim());
  int64_t os[kMaxDims] = {}, ss[kMaxDims] = {};
  DimVector sst = has_src ? ContiguousStrides(ctx.input(first + 1).shape) : DimVector();
  for (int k = 0; k < shape.ndim; ++k) {
    shape.sizes[k] = index.shape[k];
    os[k] = out.strides[k];
    if (has_src) ss[k] = sst[k];
  }
  RETURN_IF_ERROR(Launched(
      ctx.op(),
      LaunchScatter(ToScalarType(out.dtype), shape, os, ss, static_cast<int>(d),
                    index.ptr<const int64_t>(), has_src ? ctx.input(first + 1).data : nullptr,
                    a.value, add, out.data, chk.flags(), StreamOf(ctx))));
  return chk.Finish(ctx);
}

// masked_fill(x, mask) / masked_fill_(mask) = where(mask, value, x) with the value in out's dtype
// (static_cast, as the CPU's masked_fill).
uint64_t ValueBits(DType t, double v) {
  uint64_t bits = 0;
  OFL_SWITCH_ALL(t, {
    scalar_t x;
    if constexpr (std::is_arithmetic_v<scalar_t>)
      x = static_cast<scalar_t>(v);  // bool: v != 0
    else
      x = scalar_t(static_cast<float>(v));
    std::memcpy(&bits, &x, sizeof(x));
  });
  return bits;
}

Status MaskedFill(KernelContext& ctx) {
  bool inplace = ctx.num_inputs() == 1;
  const TensorView& out = ctx.output(0);
  TensorView mask = BroadcastTo(ctx.input(inplace ? 0 : 1), out.shape);
  TensorView x = inplace ? out : BroadcastTo(ctx.input(0), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &mask, &x}, &loop, ops));
  uint64_t value = ValueBits(out.dtype, ReadAttrs<MaskedFillAttrs>(ctx.attrs()).value);
  // The ternary table's where_scalar_input (cond ? s : x); x is passed twice (z is not read).
  return Launched(ctx.op(),
                  LaunchTernaryTable(opdefs::TernaryId::where_scalar_input, ToScalarType(out.dtype),
                                     opdefs::TernaryAttrsAll{}, value, loop, ops[0], ops[1], ops[2],
                                     ops[2], StreamOf(ctx)));
}

Status OneHot(KernelContext& ctx) {
  const TensorView &index = ctx.input(0), &out = ctx.output(0);
  int64_t c = ReadAttrs<OneHotAttrs>(ctx.attrs()).num_classes;
  IndexCheck chk;
  RETURN_IF_ERROR(chk.Start(
      ctx, "one_hot", {{index.ptr<const int64_t>(), index.numel(), index.shape.ndim(), c, false}}));
  RETURN_IF_ERROR(chk.Finish(ctx));  // before the zero fill: a failed op leaves out untouched
  return Launched("one_hot", LaunchOneHot(index.ptr<const int64_t>(), index.numel(), c,
                                          out.ptr<int64_t>(), IndexFlags{}, StreamOf(ctx)));
}

Status Index(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  int64_t k = ctx.num_inputs() - 1, d0 = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim;
  if (k > kMaxDims)
    return Unimplemented("[index] CUDA kernel supports up to %d index tensors", kMaxDims);
  int64_t nb = k > 0 ? ctx.input(1).numel() : 1;
  std::vector<IndexCheck::Item> items;
  MultiIndex mi;
  mi.k = static_cast<int>(k);
  DimVector xs = ContiguousStrides(x.shape);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t* p = ctx.input(1 + j).ptr<const int64_t>();
    items.push_back({p, nb, d0 + j, x.shape[d0 + j], true});
    mi.idx[j] = p;
    mi.sizes[j] = x.shape[d0 + j];
    mi.strides[j] = xs[d0 + j];
  }
  IndexCheck chk;
  RETURN_IF_ERROR(chk.Start(ctx, "index", items));
  int64_t outer = Prod(x.shape, 0, d0), inner = Prod(x.shape, d0 + k, x.shape.ndim()),
          span = Prod(x.shape, d0, x.shape.ndim());
  RETURN_IF_ERROR(Launched("index", LaunchIndex(DTypeSize(x.dtype), outer, span, inner, nb, mi,
                                                x.data, out.data, chk.flags(), StreamOf(ctx))));
  return chk.Finish(ctx);
}

Status IndexPut(KernelContext& ctx) {
  bool inplace = std::string(ctx.op()).back() == '_';
  int vi = inplace ? 0 : 1;
  const TensorView& out = ctx.output(0);
  const IndexPutAttrs a = ReadAttrs<IndexPutAttrs>(ctx.attrs());
  int64_t k = ctx.num_inputs() - vi - 1, d0 = a.dim;
  const char* op = inplace ? "index_put_" : "index_put";
  Shape b = k > 0 ? ctx.input(vi + 1).shape : Shape{};
  int64_t post = out.shape.ndim() - d0 - k;
  if (k > kMaxDims || d0 > kMaxDims || post > kMaxDims || b.ndim() > kMaxDims)
    return TooManyDims(op, out.shape);
  std::vector<IndexCheck::Item> items;
  MultiIndex mi;
  mi.k = static_cast<int>(k);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t* p = ctx.input(vi + 1 + j).ptr<const int64_t>();
    items.push_back({p, b.numel(), d0 + j, out.shape[d0 + j], true});
    mi.idx[j] = p;
    mi.sizes[j] = out.shape[d0 + j];
    mi.strides[j] = out.strides[d0 + j];
  }
  IndexCheck chk;
  RETURN_IF_ERROR(chk.Start(ctx, op, items));
  if (!inplace) {
    RETURN_IF_ERROR(chk.Finish(ctx));  // before the copy: a failed op leaves out untouched
    RETURN_IF_ERROR(CopyStrided(op, StreamOf(ctx), out, ctx.input(0)));
  }
  DimVector rd(out.shape.dims().begin(), out.shape.dims().begin() + d0);
  rd.insert(rd.end(), b.dims().begin(), b.dims().end());
  rd.insert(rd.end(), out.shape.dims().begin() + d0 + k, out.shape.dims().end());
  TensorView values = BroadcastTo(ctx.input(vi), Shape(rd));
  PutGeom g;
  g.pre.ndim = static_cast<int>(d0);
  g.post.ndim = static_cast<int>(post);
  g.b.ndim = static_cast<int>(b.ndim());
  for (int64_t i = 0; i < d0; ++i) {
    g.pre.sizes[i] = out.shape[i];
    g.pre_strides[i] = out.strides[i];
  }
  for (int64_t i = 0; i < post; ++i) {
    g.post.sizes[i] = out.shape[d0 + k + i];
    g.post_strides[i] = out.strides[d0 + k + i];
  }
  for (int64_t i = 0; i < b.ndim(); ++i) g.b.sizes[i] = b[i];
  for (size_t i = 0; i < rd.size(); ++i) g.value_strides[i] = values.strides[i];
  RETURN_IF_ERROR(Launched(op, LaunchIndexPut(ToScalarType(out.dtype), g, mi, values.data,
                                              a.accumulate, out.data, chk.flags(), StreamOf(ctx))));
  return chk.Finish(ctx);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(cat, Cat);
OFL_REGISTER_CUDA_KERNEL(flip, Flip);
OFL_REGISTER_CUDA_KERNEL(tril, Tril);
OFL_REGISTER_CUDA_KERNEL(pad, Pad);
OFL_REGISTER_CUDA_KERNEL(as_strided_scatter, AsStridedScatter);
OFL_REGISTER_CUDA_KERNEL(index_select, IndexSelect);
OFL_REGISTER_CUDA_KERNEL(index_add, IndexAdd);
OFL_REGISTER_CUDA_KERNEL(gather, Gather);
OFL_REGISTER_CUDA_KERNEL(scatter, Scatter);
OFL_REGISTER_CUDA_KERNEL(scatter_, Scatter);
OFL_REGISTER_CUDA_KERNEL(masked_fill, MaskedFill);
OFL_REGISTER_CUDA_KERNEL(masked_fill_, MaskedFill);
OFL_REGISTER_CUDA_KERNEL(one_hot, OneHot);
OFL_REGISTER_CUDA_KERNEL(index, Index);
OFL_REGISTER_CUDA_KERNEL(index_put, IndexPut);
OFL_REGISTER_CUDA_KERNEL(index_put_, IndexPut);

}  // namespace cuda
}  // namespace oneflow_like
