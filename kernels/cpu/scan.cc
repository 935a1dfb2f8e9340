// CPU kernels of the scan and ordering family (ops/scan.cc). Inputs are contiguous; a tensor is
// seen as outer x n x inner around `dim`, and every op works on the n-long lines.
//   scans (cumsum, cumprod): row by row over inner slabs (vectorisable), accumulating floats in
//     double and integers in int64, parallel over outer x inner blocks;
//   orderings (sort, topk, cummax/cummin, logcumsumexp and the gradients): one line at a time,
//     parallel over lines.
// NaN orders above every number (PyTorch): last in an ascending sort, first in a descending one.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/cpu/loops.h"
#include "kernels/scan_lines.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/scan.h"

namespace oneflow_like {
namespace kernels {
namespace {

using opdefs::ReadAttrs;
using opdefs::ScanDimAttrs;

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  // The first element of line l and the stride between its elements.
  int64_t base(int64_t l) const { return (l / inner) * n * inner + l % inner; }
};

Lines AroundDim(const Shape& s, int64_t dim) {
  Lines r;
  if (s.ndim() == 0) return r;
  r.n = s[dim];
  for (int64_t i = 0; i < dim; ++i) r.outer *= s[i];
  for (int64_t i = dim + 1; i < s.ndim(); ++i) r.inner *= s[i];
  return r;
}

template <typename T>
bool IsNanV(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

// a before b in ascending order (NaN largest).
template <typename T>
bool Less(T a, T b) {
  return !IsNanV(a) && (IsNanV(b) || a < b);
}

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

int64_t Grain(int64_t per_line) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_line, 1));
}

// cumsum / cumprod: out[a, j, b] = x[a, j, b] (op) out[a, j -/+ 1, b].
template <typename T, bool kProd>
void Scan(const T* x, T* out, const Lines& L, bool reverse) {
  constexpr int64_t kSlab = 256;
  int64_t slabs = (L.inner + kSlab - 1) / kSlab;
  ParallelFor(
      L.outer * slabs,
      [&](int64_t begin, int64_t end) {
        Acc<T> acc[kSlab];
        for (int64_t t = begin; t < end; ++t) {
          int64_t a = t / slabs, b0 = (t % slabs) * kSlab, w = std::min(kSlab, L.inner - b0);
          std::fill(acc, acc + w, Acc<T>(kProd ? 1 : 0));
          for (int64_t s = 0; s < L.n; ++s) {
            int64_t j = reverse ? L.n - 1 - s : s;
            int64_t off = (a * L.n + j) * L.inner + b0;
            for (int64_t b = 0; b < w; ++b) {
              if constexpr (kProd)
                acc[b] *= static_cast<Acc<T>>(x[off + b]);
              else
                acc[b] += static_cast<Acc<T>>(x[off + b]);
              out[off + b] = static_cast<T>(acc[b]);
            }
          }
        }
      },
      Grain(L.n * kSlab));
}

// Runs fn(line_index, base, stride) for every line, in parallel.
template <typename Fn>
void ForEachLine(const Lines& L, Fn&& fn) {
  ParallelFor(
      L.count(),
      [&](int64_t begin, int64_t end) {
        for (int64_t l = begin; l < end; ++l) fn(L.base(l), L.inner);
      },
      Grain(L.n));
}

Status Unsupported(KernelContext& ctx, DType dt) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(dt));
}

// cumsum (CumsumAttrs: dim, reverse) and cumprod (ScanDimAttrs: dim).
template <bool kProd>
Status ScanKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  const auto a =
      ReadAttrs<std::conditional_t<kProd, ScanDimAttrs, opdefs::CumsumAttrs>>(ctx.attrs());
  Lines L = AroundDim(x.shape, a.dim);
  bool reverse = false, done = false;
  if constexpr (!kProd) reverse = a.reverse;
  OFL_SWITCH_NUMERIC(x.dtype, {
    Scan<scalar_t, kProd>(x.ptr<const scalar_t>(), out.ptr<scalar_t>(), L, reverse);
    done = true;
  });
  return done ? Status() : Unsupported(ctx, x.dtype);
}

// The line recurrences are kernels/scan_lines.h's (shared with the CUDA kernels).
Status LogCumSumExpKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  Lines L = AroundDim(x.shape, ReadAttrs<ScanDimAttrs>(ctx.attrs()).dim);
  bool done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    const scalar_t* xv = x.ptr<const scalar_t>();
    scalar_t* o = out.ptr<scalar_t>();
    ForEachLine(L,
                [&](int64_t base, int64_t st) { scan_lines::LogCumSumExp(xv, o, base, st, L.n); });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, x.dtype);
}

// The gradient kernels (x, out, g; dim) -> dx of the scans: line(x, out, g, dx, base, stride, n)
// for every line, in floating point.
template <typename LineFn>
Status ScanGradKernel(KernelContext& ctx, LineFn line) {
  const TensorView &x = ctx.input(0), &o = ctx.input(1), &g = ctx.input(2), &dx = ctx.output(0);
  Lines L = AroundDim(x.shape, ReadAttrs<ScanDimAttrs>(ctx.attrs()).dim);
  bool done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    const scalar_t *xv = x.ptr<const scalar_t>(), *ov = o.ptr<const scalar_t>(),
                   *gv = g.ptr<const scalar_t>();
    scalar_t* d = dx.ptr<scalar_t>();
    ForEachLine(L, [&](int64_t base, int64_t st) { line(xv, ov, gv, d, base, st, L.n); });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, x.dtype);
}

Status CumprodGradKernel(KernelContext& ctx) {
  return ScanGradKernel(
      ctx, [](const auto* xv, const auto* ov, const auto* gv, auto* d, int64_t base, int64_t st,
              int64_t n) { scan_lines::CumprodGrad(xv, ov, gv, d, base, st, n); });
}

Status LogCumSumExpGradKernel(KernelContext& ctx) {
  return ScanGradKernel(
      ctx, [](const auto* xv, const auto* ov, const auto* gv, auto* d, int64_t base, int64_t st,
              int64_t n) { scan_lines::LogCumSumExpGrad(xv, ov, gv, d, base, st, n); });
}

// Running max (min): the index is the last of equal values; a NaN sticks (PyTorch's cummax).
template <bool kMax>
Status CumExtremeKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  Lines L = AroundDim(x.shape, ReadAttrs<ScanDimAttrs>(ctx.attrs()).dim);
  int64_t* iv = ctx.output(1).ptr<int64_t>();
  bool done = false;
  OFL_SWITCH_NUMERIC_BOOL(x.dtype, {
    const scalar_t* xv = x.ptr<const scalar_t>();
    scalar_t* o = ctx.output(0).ptr<scalar_t>();
    ForEachLine(L, [&](int64_t base, int64_t st) {
      scan_lines::CumExtreme<kMax>(xv, o, iv, base, st, L.n);
    });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, x.dtype);
}

// An unsigned key whose order is the ascending order of 32-bit-or-smaller values (NaN largest,
// -0 == +0); packed above the position into a uint64, one integer compare orders (value, index).
template <typename T>
uint32_t OrderKey(T v) {
  if constexpr (std::is_same_v<T, float>) {
    if (std::isnan(v)) return 0xFFFFFFFFu;
    uint32_t u;
    float c = v == 0 ? 0.0f : v;
    std::memcpy(&u, &c, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
  } else {
    return static_cast<uint32_t>(v);
  }
}

// One line ordered (ties: lower position first), its first `k` written to (values, indices).
template <typename T>
struct LineOrderer {
  const T* x;
  int64_t n, k;
  bool desc;
  T* ov;
  int64_t* iv;
  std::vector<uint64_t> keys;                // 32-bit types
  std::vector<std::pair<T, int64_t>> pairs;  // wider types

  template <typename It, typename Cmp>
  void Order(It first, It last, Cmp cmp) {
    if (k < n)
      std::partial_sort(first, first + k, last, cmp);
    else
      std::sort(first, last, cmp);
  }

  void Run(int64_t base, int64_t st, int64_t obase, int64_t ost) {
    if constexpr (sizeof(T) <= 4) {
      if (n < (int64_t(1) << 32)) {
        keys.resize(n);
        for (int64_t j = 0; j < n; ++j) {
          uint32_t key = OrderKey(x[base + j * st]);
          keys[j] = (uint64_t(desc ? ~key : key) << 32) | uint64_t(j);
        }
        Order(keys.begin(), keys.end(), std::less<uint64_t>());
        for (int64_t j = 0; j < k; ++j) {
          int64_t i = static_cast<int64_t>(keys[j] & 0xFFFFFFFFu);
          ov[obase + j * ost] = x[base + i * st];
          iv[obase + j * ost] = i;
        }
        return;
      }
    }
    pairs.resize(n);
    for (int64_t j = 0; j < n; ++j) pairs[j] = {x[base + j * st], j};
    bool d = desc;
    Order(pairs.begin(), pairs.end(), [d](const auto& a, const auto& b) {
      bool ab = d ? Less(b.first, a.first) : Less(a.first, b.first);
      bool ba = d ? Less(a.first, b.first) : Less(b.first, a.first);
      return ab || (!ba && a.second < b.second);
    });
    for (int64_t j = 0; j < k; ++j) {
      ov[obase + j * ost] = pairs[j].first;
      iv[obase + j * ost] = pairs[j].second;
    }
  }
};

// sort(x; SortAttrs dim, descending) and topk(x; TopkAttrs dim, k, largest): the same ordering,
// k = n for sort.
Status OrderKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  bool is_sort = std::string_view(ctx.op()) == "sort";
  int64_t dim = 0, k = 0;
  bool desc = false;
  if (is_sort) {
    const opdefs::SortAttrs a = ReadAttrs<opdefs::SortAttrs>(ctx.attrs());
    dim = a.dim;
    desc = a.descending;
  } else {
    const opdefs::TopkAttrs a = ReadAttrs<opdefs::TopkAttrs>(ctx.attrs());
    dim = a.dim;
    desc = a.largest;
    k = a.k;
  }
  Lines L = AroundDim(x.shape, dim);
  if (is_sort) k = L.n;
  if (k == 0 || L.count() == 0) return Status();
  int64_t* iv = ctx.output(1).ptr<int64_t>();
  bool done = false;
  OFL_SWITCH_NUMERIC_BOOL(x.dtype, {
    const scalar_t* xv = x.ptr<const scalar_t>();
    scalar_t* o = ctx.output(0).ptr<scalar_t>();
    ParallelFor(
        L.count(),
        [&](int64_t begin, int64_t end) {
          LineOrderer<scalar_t> lo{xv, L.n, k, desc, o, iv, {}, {}};
          for (int64_t l = begin; l < end; ++l)
            lo.Run(L.base(l), L.inner, (l / L.inner) * k * L.inner + l % L.inner, L.inner);
        },
        Grain(L.n * 8));
    done = true;
  });
  return done ? Status() : Unsupported(ctx, x.dtype);
}

}  // namespace

OFL_REGISTER_KERNEL(cumsum, kCPU, ScanKernel<false>);
OFL_REGISTER_KERNEL(cumprod, kCPU, ScanKernel<true>);
OFL_REGISTER_KERNEL(cumprod_grad, kCPU, CumprodGradKernel);
OFL_REGISTER_KERNEL(logcumsumexp, kCPU, LogCumSumExpKernel);
OFL_REGISTER_KERNEL(logcumsumexp_grad, kCPU, LogCumSumExpGradKernel);
OFL_REGISTER_KERNEL(cummax, kCPU, CumExtremeKernel<true>);
OFL_REGISTER_KERNEL(cummin, kCPU, CumExtremeKernel<false>);
OFL_REGISTER_KERNEL(sort, kCPU, OrderKernel);
OFL_REGISTER_KERNEL(topk, kCPU, OrderKernel);

}  // namespace kernels
}  // namespace oneflow_like
