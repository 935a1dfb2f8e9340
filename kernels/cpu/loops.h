// Loop helpers for CPU kernels: broadcast views, row-wise strided iteration over N operands
// with dimension collapsing, and parallel flat loops on the intra-op pool.
#pragma once
#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/kernel.h"
#include "kernels/layout.h"  // BroadcastTo
#include "oneflow_like/base/thread_pool.h"

namespace oneflow_like {
namespace kernels {

// Dtype switches beyond base/dtype.h's: numeric + bool (comparisons, where) and integer + bool
// (bitwise ops).
#define OFL_SWITCH_NUMERIC_BOOL(dtype, ...)         \
  switch (dtype) {                                  \
    OFL_DTYPE_CASE(kBool, bool, __VA_ARGS__)        \
    default: OFL_SWITCH_NUMERIC(dtype, __VA_ARGS__) \
  }
#define OFL_SWITCH_INTEGRAL_BOOL(dtype, ...)   \
  switch (dtype) {                             \
    OFL_DTYPE_CASE(kBool, bool, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)  \
    OFL_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kI16, int16_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kI32, int32_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kI64, int64_t, __VA_ARGS__) \
    default: break;                            \
  }
// Same-size element moves (copies of any dtype, the limited ones included): `scalar_t` is an
// unsigned integer of the element's size.
#define OFL_SWITCH_SIZE(bytes, ...)                \
  switch (bytes) {                                 \
    case 1: {                                      \
      using scalar_t = uint8_t;                    \
      __VA_ARGS__;                                 \
      break;                                       \
    }                                              \
    case 2: {                                      \
      using scalar_t = uint16_t;                   \
      __VA_ARGS__;                                 \
      break;                                       \
    }                                              \
    case 4: {                                      \
      using scalar_t = uint32_t;                   \
      __VA_ARGS__;                                 \
      break;                                       \
    }                                              \
    case 8: {                                      \
      using scalar_t = uint64_t;                   \
      __VA_ARGS__;                                 \
      break;                                       \
    }                                              \
    case 16: {                                     \
      using scalar_t = ::oneflow_like::complex128; \
      __VA_ARGS__;                                 \
      break;                                       \
    }                                              \
    default: break;                                \
  }

constexpr int64_t kParallelGrain = 1 << 15;  // elements per task for memory-bound loops

// Runs fn(begin, end) over [0, n), in parallel when n is large.
template <typename F>
inline void ParallelFor(int64_t n, F&& fn, int64_t grain = kParallelGrain) {
  if (n <= grain) {
    fn(int64_t(0), n);
    return;
  }
  IntraOpPool()->ParallelFor(n, grain, [&](int64_t b, int64_t e) { fn(b, e); });
}

// Iterates `shape` row by row (innermost dim, after collapsing dims that are contiguous for
// every operand): row(ptrs, strides_in_elements_of_inner_dim, n). `ptrs` are byte pointers.
template <size_t N, typename Row>
void ForEachRow(const Shape& shape, const std::array<const DimVector*, N>& strides,
                const std::array<char*, N>& base, const std::array<int64_t, N>& elem_size,
                Row&& row) {
  // Collapse adjacent dims i, i+1 when, for every operand, stride[i] == stride[i+1] * size[i+1].
  DimVector sizes;
  std::array<DimVector, N> st;
  for (int64_t d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !sizes.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = st[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      sizes.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) st[k].back() = (*strides[k])[d];
    } else {
      sizes.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) st[k].push_back((*strides[k])[d]);
    }
  }
  if (shape.numel() == 0) return;
  if (sizes.empty()) {
    sizes.push_back(1);
    for (size_t k = 0; k < N; ++k) st[k].push_back(1);
  }
  int64_t nd = sizes.size(), inner = sizes[nd - 1], rows = shape.numel() / inner;
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = st[k][nd - 1];
  auto run_rows = [&](int64_t r0, int64_t r1) {
    DimVector idx(nd > 1 ? nd - 1 : 1, 0);
    int64_t rem = r0;  // unravel r0 over the outer dims
    for (int64_t d = nd - 2; d >= 0; --d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      std::array<char*, N> p;
      for (size_t k = 0; k < N; ++k) {
        int64_t off = 0;
        for (int64_t d = 0; d < nd - 1; ++d) off += idx[d] * st[k][d];
        p[k] = base[k] + off * elem_size[k];
      }
      row(p, inner_stride, inner);
      for (int64_t d = nd - 2; d >= 0; --d) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
  };
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1));
  if (rows > grain)
    IntraOpPool()->ParallelFor(rows, grain, run_rows);
  else
    run_rows(0, rows);
}

// out[i] = f(a[i]) for any strides of `a`; `out` is contiguous or strided.
template <typename TO, typename TI, typename F>
void UnaryLoop(const TensorView& out, const TensorView& a, F f) {
  if (out.contiguous() && a.contiguous()) {
    TO* o = out.ptr<TO>();
    const TI* x = a.ptr<const TI>();
    if constexpr (std::is_same_v<TO, TI>) {
      if (o == x) {  // in place: without the alias the compiler's overlap check would fall back to
                     // scalar code
        ParallelFor(out.numel(), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) o[i] = f(o[i]);
        });
        return;
      }
    }
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(x[i]);
    });
    return;
  }
  std::array<const DimVector*, 2> st{&out.strides, &a.strides};
  ForEachRow<2>(out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(a.data)},
                {sizeof(TO), sizeof(TI)},
                [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                  TO* o = reinterpret_cast<TO*>(p[0]);
                  const TI* x = reinterpret_cast<const TI*>(p[1]);
                  for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]]);
                });
}

// out[i] = f(a[i], b[i]) over three contiguous buffers of out's size.
template <typename TO, typename TI, typename F>
void BinaryContiguousLoop(const TensorView& out, const TensorView& a, const TensorView& b, F f) {
  TO* o = out.ptr<TO>();
  const TI* x = a.ptr<const TI>();
  const TI* y = b.ptr<const TI>();
  if constexpr (std::is_same_v<TO, TI>) {
    if (o == x && o != y) {  // in place (a += b): see UnaryLoop
      ParallelFor(out.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) o[i] = f(o[i], y[i]);
      });
      return;
    }
  }
  ParallelFor(out.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) o[i] = f(x[i], y[i]);
  });
}

// out[i] = f(a[i], b[i]) with a and b broadcast to out's shape.
template <typename TO, typename TI, typename F>
void BinaryLoop(const TensorView& out, const TensorView& a0, const TensorView& b0, F f) {
  // Same shapes, all contiguous (the common eager case): no broadcast views to build.
  if (a0.shape == out.shape && b0.shape == out.shape && out.contiguous() && a0.contiguous() &&
      b0.contiguous())
    return BinaryContiguousLoop<TO, TI>(out, a0, b0, f);
  TensorView a = BroadcastTo(a0, out.shape), b = BroadcastTo(b0, out.shape);
  if (out.contiguous() && a.contiguous() && b.contiguous())
    return BinaryContiguousLoop<TO, TI>(out, a, b, f);
  std::array<const DimVector*, 3> st{&out.strides, &a.strides, &b.strides};
  ForEachRow<3>(
      out.shape, st,
      {static_cast<char*>(out.data), static_cast<char*>(a.data), static_cast<char*>(b.data)},
      {sizeof(TO), sizeof(TI), sizeof(TI)},
      [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        TO* o = reinterpret_cast<TO*>(p[0]);
        const TI* x = reinterpret_cast<const TI*>(p[1]);
        const TI* y = reinterpret_cast<const TI*>(p[2]);
        if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
          const TI yv = y[0];
          for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
        } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
          const TI xv = x[0];
          for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]], y[i * s[2]]);
        }
      });
}

// out[i] = f(a[i], b[i], c[i]) with a, b, c broadcast to out's shape (each may have its own type).
template <typename TO, typename TA, typename TB, typename TC, typename F>
void TernaryLoop(const TensorView& out, const TensorView& a0, const TensorView& b0,
                 const TensorView& c0, F f) {
  TensorView a = BroadcastTo(a0, out.shape), b = BroadcastTo(b0, out.shape),
             c = BroadcastTo(c0, out.shape);
  if (out.contiguous() && a.contiguous() && b.contiguous() && c.contiguous()) {
    TO* o = out.ptr<TO>();
    const TA* x = a.ptr<const TA>();
    const TB* y = b.ptr<const TB>();
    const TC* z = c.ptr<const TC>();
    ParallelFor(out.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) o[i] = f(x[i], y[i], z[i]);
    });
    return;
  }
  std::array<const DimVector*, 4> st{&out.strides, &a.strides, &b.strides, &c.strides};
  ForEachRow<4>(out.shape, st,
                {static_cast<char*>(out.data), static_cast<char*>(a.data),
                 static_cast<char*>(b.data), static_cast<char*>(c.data)},
                {sizeof(TO), sizeof(TA), sizeof(TB), sizeof(TC)},
                [&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
                  TO* o = reinterpret_cast<TO*>(p[0]);
                  const TA* x = reinterpret_cast<const TA*>(p[1]);
                  const TB* y = reinterpret_cast<const TB*>(p[2]);
                  const TC* z = reinterpret_cast<const TC*>(p[3]);
                  for (int64_t i = 0; i < n; ++i)
                    o[i * s[0]] = f(x[i * s[1]], y[i * s[2]], z[i * s[3]]);
                });
}

}  // namespace kernels
}  // namespace oneflow_like
