// CPU kernels of the index family (oneflow_like/opdefs/index.def; they read its attribute
// structs, an in-place op's kernel the out-of-place struct). Index tensors are contiguous int64.
// Every kernel checks its indices before writing anything, so a failed instruction leaves its
// output untouched.
#include <cstring>

#include "kernels/cpu/strided.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/index.h"

namespace oneflow_like {
namespace kernels {
namespace {

using opdefs::IndexDimAttrs;
using opdefs::IndexPutAttrs;
using opdefs::MaskedFillAttrs;
using opdefs::OneHotAttrs;
using opdefs::ReadAttrs;
using opdefs::ScatterAttrs;

// Indices in [0, size), or [-size, size) when negatives wrap.
Status CheckIndices(const char* op, const int64_t* idx, int64_t n, int64_t dim, int64_t size,
                    bool wrap) {
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] >= size || idx[i] < (wrap ? -size : 0))
      return OutOfRange("[%s] index %d out of range for dim %d of size %d", op, idx[i], dim, size);
  return Status();
}

int64_t Prod(const Shape& s, int64_t b, int64_t e) {
  int64_t n = 1;
  for (int64_t i = b; i < e; ++i) n *= s[i];
  return n;
}

// Calls fn(n, coords) for n in [begin, end) over `shape` in row-major order.
template <typename F>
void ForCoords(const Shape& shape, int64_t begin, int64_t end, F&& fn) {
  int64_t nd = shape.ndim();
  DimVector c(nd, 0);
  for (int64_t d = nd - 1, r = begin; d >= 0; --d) {
    c[d] = r % shape[d];
    r /= shape[d];
  }
  for (int64_t n = begin; n < end; ++n) {
    fn(n, c);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++c[d] < shape[d]) break;
      c[d] = 0;
    }
  }
}

Status IndexSelectKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const TensorView& out = ctx.output(0);
  const int64_t* idx = ctx.input(1).ptr<const int64_t>();
  int64_t d = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim, m = ctx.input(1).numel();
  int64_t n = x.shape.ndim() ? x.shape[d] : 1;
  RETURN_IF_ERROR(CheckIndices("index_select", idx, m, d, n, false));
  int64_t outer = Prod(x.shape, 0, d),
          inner = x.shape.ndim() ? Prod(x.shape, d + 1, x.shape.ndim()) : 1;
  size_t row = static_cast<size_t>(inner * DTypeSize(x.dtype));
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out.data);
  ParallelFor(
      outer * m,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t o = r / m, j = r % m;
          std::memcpy(dst + r * row, src + (o * n + idx[j]) * row, row);
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1)));
  return Status();
}

Status IndexAddKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const TensorView& src = ctx.input(2);
  const TensorView& out = ctx.output(0);
  const int64_t* idx = ctx.input(1).ptr<const int64_t>();
  int64_t d = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim, m = ctx.input(1).numel();
  int64_t n = x.shape.ndim() ? x.shape[d] : 1;
  RETURN_IF_ERROR(CheckIndices("index_add", idx, m, d, n, false));
  CopyStrided(out, x);
  int64_t outer = Prod(x.shape, 0, d),
          inner = x.shape.ndim() ? Prod(x.shape, d + 1, x.shape.ndim()) : 1;
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    const scalar_t* s = src.ptr<const scalar_t>();
    // Different outer rows never collide, so they run in parallel.
    ParallelFor(
        outer,
        [&](int64_t b, int64_t e) {
          for (int64_t oi = b; oi < e; ++oi)
            for (int64_t j = 0; j < m; ++j) {
              scalar_t* dst = o + (oi * n + idx[j]) * inner;
              const scalar_t* from = s + (oi * m + j) * inner;
              for (int64_t i = 0; i < inner; ++i) dst[i] = AddValues(dst[i], from[i]);
            }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner * m, 1)));
  });
  return Status();
}

Status GatherKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const TensorView& index = ctx.input(1);
  const TensorView& out = ctx.output(0);
  const int64_t* idx = index.ptr<const int64_t>();
  int64_t d = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim;
  int64_t size = x.shape.ndim() ? x.shape[d] : 1;
  RETURN_IF_ERROR(CheckIndices("gather", idx, index.numel(), d, size, false));
  DimVector xs = ContiguousStrides(x.shape);
  int64_t es = DTypeSize(x.dtype);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out.data);
  ParallelFor(index.numel(), [&](int64_t b, int64_t e) {
    ForCoords(index.shape, b, e, [&](int64_t n, const DimVector& c) {
      int64_t off = 0;
      for (int64_t k = 0; k < index.shape.ndim(); ++k) off += (k == d ? idx[n] : c[k]) * xs[k];
      std::memcpy(dst + n * es, src + off * es, es);
    });
  });
  return Status();
}

// scatter / scatter_ (reduce "none" or "add"): out-of-place inputs {x, index[, src]}, in place
// {index[, src]} with the (strided) target as output.
Status ScatterKernel(KernelContext& ctx) {
  bool inplace = std::string(ctx.op()).back() == '_';
  int first = inplace ? 0 : 1;
  const TensorView& out = ctx.output(0);
  const TensorView& index = ctx.input(first);
  bool has_src = ctx.num_inputs() > first + 1;
  const int64_t* idx = index.ptr<const int64_t>();
  const ScatterAttrs a = ReadAttrs<ScatterAttrs>(ctx.attrs());
  int64_t d = a.dim;
  bool add = a.reduce == "add";
  int64_t size = out.shape.ndim() ? out.shape[d] : 1;
  RETURN_IF_ERROR(
      CheckIndices(add ? "scatter_add" : "scatter", idx, index.numel(), d, size, false));
  if (!inplace) CopyStrided(out, ctx.input(0));
  double value = a.value;
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    const scalar_t* s = has_src ? ctx.input(first + 1).ptr<const scalar_t>() : nullptr;
    DimVector ss = has_src ? ContiguousStrides(ctx.input(first + 1).shape) : DimVector();
    scalar_t v = FromDouble<scalar_t>(value);
    ForCoords(index.shape, 0, index.numel(), [&](int64_t n, const DimVector& c) {
      int64_t off = 0, soff = 0;
      for (int64_t k = 0; k < index.shape.ndim(); ++k) {
        off += (k == d ? idx[n] : c[k]) * out.strides[k];
        if (has_src) soff += c[k] * ss[k];
      }
      scalar_t val = has_src ? s[soff] : v;
      o[off] = add ? AddValues(o[off], val) : val;
    });
  });
  return Status();
}

// masked_fill: inputs {x, mask} -> contiguous out; masked_fill_: input {mask}, strided target.
Status MaskedFillKernel(KernelContext& ctx) {
  bool inplace = ctx.num_inputs() == 1;
  const TensorView& out = ctx.output(0);
  TensorView mask = BroadcastTo(ctx.input(inplace ? 0 : 1), out.shape);
  double value = ReadAttrs<MaskedFillAttrs>(ctx.attrs()).value;
  OFL_SWITCH_ALL(out.dtype, {
    using T = scalar_t;
    T v = FromDouble<T>(value);
    if (inplace) {
      std::array<const DimVector*, 2> st{&out.strides, &mask.strides};
      ForEachRow<2>(out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(mask.data)},
                    {sizeof(T), 1},
                    [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                      T* o = reinterpret_cast<T*>(p[0]);
                      const bool* m = reinterpret_cast<const bool*>(p[1]);
                      for (int64_t i = 0; i < n; ++i)
                        if (m[i * s[1]]) o[i * s[0]] = v;
                    });
    } else {
      TensorView x = BroadcastTo(ctx.input(0), out.shape);
      std::array<const DimVector*, 3> st{&out.strides, &x.strides, &mask.strides};
      ForEachRow<3>(
          out.shape, st,
          {static_cast<char*>(out.data), static_cast<char*>(x.data), static_cast<char*>(mask.data)},
          {sizeof(T), sizeof(T), 1},
          [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
            T* o = reinterpret_cast<T*>(p[0]);
            const T* a = reinterpret_cast<const T*>(p[1]);
            const bool* m = reinterpret_cast<const bool*>(p[2]);
            for (int64_t i = 0; i < n; ++i) o[i * s[0]] = m[i * s[2]] ? v : a[i * s[1]];
          });
    }
  });
  return Status();
}

Status OneHotKernel(KernelContext& ctx) {
  const TensorView& index = ctx.input(0);
  const TensorView& out = ctx.output(0);
  const int64_t* idx = index.ptr<const int64_t>();
  int64_t c = ReadAttrs<OneHotAttrs>(ctx.attrs()).num_classes;
  RETURN_IF_ERROR(CheckIndices("one_hot", idx, index.numel(), index.shape.ndim(), c, false));
  int64_t* o = out.ptr<int64_t>();
  std::memset(o, 0, out.numel() * sizeof(int64_t));
  for (int64_t i = 0; i < index.numel(); ++i) o[i * c + idx[i]] = 1;
  return Status();
}

// index: inputs {x (contiguous), idx_0..idx_{k-1} (one shape B)}; indexes dims [dim, dim + k).
Status IndexKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const TensorView& out = ctx.output(0);
  int64_t k = ctx.num_inputs() - 1, d0 = ReadAttrs<IndexDimAttrs>(ctx.attrs()).dim;
  int64_t nb = k > 0 ? ctx.input(1).numel() : 1;
  for (int64_t j = 0; j < k; ++j)
    RETURN_IF_ERROR(CheckIndices("index", ctx.input(1 + j).ptr<const int64_t>(), nb, d0 + j,
                                 x.shape[d0 + j], true));
  DimVector xs = ContiguousStrides(x.shape);
  int64_t outer = Prod(x.shape, 0, d0), inner = Prod(x.shape, d0 + k, x.shape.ndim());
  int64_t span = Prod(x.shape, d0, x.shape.ndim());
  size_t row = static_cast<size_t>(inner * DTypeSize(x.dtype));
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out.data);
  ParallelFor(
      outer * nb,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t o = r / nb, bi = r % nb, off = o * span;
          for (int64_t j = 0; j < k; ++j) {
            int64_t i = ctx.input(1 + j).ptr<const int64_t>()[bi];
            off += (i < 0 ? i + x.shape[d0 + j] : i) * xs[d0 + j];
          }
          std::memcpy(dst + r * row, src + off * DTypeSize(x.dtype), row);
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1)));
  return Status();
}

// index_put: inputs {x, values, idx...} (out of place) or {values, idx...} (in place, strided
// target).
Status IndexPutKernel(KernelContext& ctx) {
  bool inplace = std::string(ctx.op()).back() == '_';
  int vi = inplace ? 0 : 1;
  const TensorView& out = ctx.output(0);
  const IndexPutAttrs a = ReadAttrs<IndexPutAttrs>(ctx.attrs());
  int64_t k = ctx.num_inputs() - vi - 1, d0 = a.dim;
  bool acc = a.accumulate;
  const char* op = inplace ? "index_put_" : "index_put";
  Shape b = k > 0 ? ctx.input(vi + 1).shape : Shape{};
  int64_t nb = b.numel();
  std::vector<const int64_t*> idx;
  for (int64_t j = 0; j < k; ++j) {
    idx.push_back(ctx.input(vi + 1 + j).ptr<const int64_t>());
    RETURN_IF_ERROR(CheckIndices(op, idx.back(), nb, d0 + j, out.shape[d0 + j], true));
  }
  if (!inplace) CopyStrided(out, ctx.input(0));
  // Iterate the indexing result's shape R = out[:d0] + B + out[d0+k:].
  DimVector rd(out.shape.dims().begin(), out.shape.dims().begin() + d0);
  rd.insert(rd.end(), b.dims().begin(), b.dims().end());
  rd.insert(rd.end(), out.shape.dims().begin() + d0 + k, out.shape.dims().end());
  Shape r(rd);
  TensorView values = BroadcastTo(ctx.input(vi), r);
  int64_t bnd = b.ndim();
  DimVector bst = ContiguousStrides(b);
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    const scalar_t* v = values.ptr<const scalar_t>();
    ForCoords(r, 0, r.numel(), [&](int64_t, const DimVector& c) {
      int64_t off = 0, voff = 0, blin = 0;
      for (int64_t dd = 0; dd < r.ndim(); ++dd) voff += c[dd] * values.strides[dd];
      for (int64_t dd = 0; dd < d0; ++dd) off += c[dd] * out.strides[dd];
      for (int64_t dd = 0; dd < bnd; ++dd) blin += c[d0 + dd] * bst[dd];
      for (int64_t j = 0; j < k; ++j) {
        int64_t i = idx[j][blin];
        off += (i < 0 ? i + out.shape[d0 + j] : i) * out.strides[d0 + j];
      }
      for (int64_t t = d0 + k; t < out.shape.ndim(); ++t) off += c[t - k + bnd] * out.strides[t];
      o[off] = acc ? AddValues(o[off], v[voff]) : v[voff];
    });
  });
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(index_select, kCPU, IndexSelectKernel);
OFL_REGISTER_KERNEL(index_add, kCPU, IndexAddKernel);
OFL_REGISTER_KERNEL(gather, kCPU, GatherKernel);
OFL_REGISTER_KERNEL(scatter, kCPU, ScatterKernel);
OFL_REGISTER_KERNEL(scatter_, kCPU, ScatterKernel);
OFL_REGISTER_KERNEL(masked_fill, kCPU, MaskedFillKernel);
OFL_REGISTER_KERNEL(masked_fill_, kCPU, MaskedFillKernel);
OFL_REGISTER_KERNEL(one_hot, kCPU, OneHotKernel);
OFL_REGISTER_KERNEL(index, kCPU, IndexKernel);
OFL_REGISTER_KERNEL(index_put, kCPU, IndexPutKernel);
OFL_REGISTER_KERNEL(index_put_, kCPU, IndexPutKernel);

}  // namespace kernels
}  // namespace oneflow_like
