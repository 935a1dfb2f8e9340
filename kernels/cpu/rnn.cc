// CPU kernels of the fused recurrent cells (oneflow_like/ops/rnn.h): one pass over the hidden
// units of each batch row computing the gate activations and the state update (and, backward,
// every gate's gradient from the recomputed activations). f32/f64, contiguous; parallel over rows.
#include <cmath>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

template <typename T>
inline T Sigmoid(T v) {
  return T(1) / (T(1) + std::exp(-v));
}

#define OFL_RNN_FLOAT(ctx, dtype, ...)                                                         \
  bool done = false;                                                                           \
  OFL_SWITCH_FLOAT(dtype, {                                                                    \
    __VA_ARGS__;                                                                               \
    done = true;                                                                               \
  });                                                                                          \
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(dtype)); \
  return Status();

// Rows of `width` elements each, spread over the intra-op threads.
template <typename F>
void ForRows(int64_t rows, int64_t width, F&& f) {
  ParallelFor(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) f(r);
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(8 * width, 1)));
}

// lstm_cell_fused(gates [B, 4H], c [B, H]) -> (h', c').
Status LstmCellKernel(KernelContext& ctx) {
  const TensorView &gates = ctx.input(0), &c = ctx.input(1);
  const int64_t B = c.shape[0], H = c.shape[1];
  OFL_RNN_FLOAT(ctx, c.dtype, {
    using T = scalar_t;
    const T *g = gates.ptr<const T>(), *cs = c.ptr<const T>();
    T *h1 = ctx.output(0).ptr<T>(), *c1 = ctx.output(1).ptr<T>();
    ForRows(B, 4 * H, [&](int64_t b) {
      const T* gr = g + b * 4 * H;
      for (int64_t j = 0; j < H; ++j) {
        T i = Sigmoid(gr[j]), f = Sigmoid(gr[H + j]), gg = std::tanh(gr[2 * H + j]),
          o = Sigmoid(gr[3 * H + j]);
        T cn = f * cs[b * H + j] + i * gg;
        c1[b * H + j] = cn;
        h1[b * H + j] = o * std::tanh(cn);
      }
    });
  });
}

// lstm_cell_fused_grad(dh', dc', gates, c, c') -> (dgates, dc).
Status LstmCellGradKernel(KernelContext& ctx) {
  const TensorView& c = ctx.input(3);
  const int64_t B = c.shape[0], H = c.shape[1];
  OFL_RNN_FLOAT(ctx, c.dtype, {
    using T = scalar_t;
    const T *dh = ctx.input(0).ptr<const T>(), *dc1 = ctx.input(1).ptr<const T>(),
            *g = ctx.input(2).ptr<const T>(), *cs = c.ptr<const T>(),
            *c1 = ctx.input(4).ptr<const T>();
    T *dg = ctx.output(0).ptr<T>(), *dc = ctx.output(1).ptr<T>();
    ForRows(B, 4 * H, [&](int64_t b) {
      const T* gr = g + b * 4 * H;
      T* dgr = dg + b * 4 * H;
      for (int64_t j = 0; j < H; ++j) {
        const int64_t k = b * H + j;
        T i = Sigmoid(gr[j]), f = Sigmoid(gr[H + j]), gg = std::tanh(gr[2 * H + j]),
          o = Sigmoid(gr[3 * H + j]), tc = std::tanh(c1[k]);
        T dct = dc1[k] + dh[k] * o * (T(1) - tc * tc);
        dgr[j] = dct * gg * i * (T(1) - i);
        dgr[H + j] = dct * cs[k] * f * (T(1) - f);
        dgr[2 * H + j] = dct * i * (T(1) - gg * gg);
        dgr[3 * H + j] = dh[k] * tc * o * (T(1) - o);
        dc[k] = dct * f;
      }
    });
  });
}

// gru_cell_fused(xw [B, 3H], gh [B, 3H], h [B, H]) -> h'.
Status GruCellKernel(KernelContext& ctx) {
  const TensorView& h = ctx.input(2);
  const int64_t B = h.shape[0], H = h.shape[1];
  OFL_RNN_FLOAT(ctx, h.dtype, {
    using T = scalar_t;
    const T *xw = ctx.input(0).ptr<const T>(), *gh = ctx.input(1).ptr<const T>(),
            *hs = h.ptr<const T>();
    T* h1 = ctx.output(0).ptr<T>();
    ForRows(B, 3 * H, [&](int64_t b) {
      const T *x = xw + b * 3 * H, *hh = gh + b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        T r = Sigmoid(x[j] + hh[j]), z = Sigmoid(x[H + j] + hh[H + j]),
          n = std::tanh(x[2 * H + j] + r * hh[2 * H + j]);
        h1[b * H + j] = n + z * (hs[b * H + j] - n);
      }
    });
  });
}

// gru_cell_fused_grad(dh', xw, gh, h) -> (dxw, dgh, dh).
Status GruCellGradKernel(KernelContext& ctx) {
  const TensorView& h = ctx.input(3);
  const int64_t B = h.shape[0], H = h.shape[1];
  OFL_RNN_FLOAT(ctx, h.dtype, {
    using T = scalar_t;
    const T *dh1 = ctx.input(0).ptr<const T>(), *xw = ctx.input(1).ptr<const T>(),
            *gh = ctx.input(2).ptr<const T>(), *hs = h.ptr<const T>();
    T *dxw = ctx.output(0).ptr<T>(), *dgh = ctx.output(1).ptr<T>(), *dh = ctx.output(2).ptr<T>();
    ForRows(B, 3 * H, [&](int64_t b) {
      const T *x = xw + b * 3 * H, *hh = gh + b * 3 * H;
      T *dx = dxw + b * 3 * H, *dg = dgh + b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        const int64_t k = b * H + j;
        T r = Sigmoid(x[j] + hh[j]), z = Sigmoid(x[H + j] + hh[H + j]),
          n = std::tanh(x[2 * H + j] + r * hh[2 * H + j]);
        T d = dh1[k];
        T dn = d * (T(1) - z) * (T(1) - n * n);  // through n's tanh
        T dz = d * (hs[k] - n) * z * (T(1) - z);
        T dr = dn * hh[2 * H + j] * r * (T(1) - r);
        dx[j] = dg[j] = dr;
        dx[H + j] = dg[H + j] = dz;
        dx[2 * H + j] = dn;
        dg[2 * H + j] = dn * r;
        dh[k] = d * z;
      }
    });
  });
}

}  // namespace

OFL_REGISTER_KERNEL(lstm_cell_fused, kCPU, LstmCellKernel);
OFL_REGISTER_KERNEL(lstm_cell_fused_grad, kCPU, LstmCellGradKernel);
OFL_REGISTER_KERNEL(gru_cell_fused, kCPU, GruCellKernel);
OFL_REGISTER_KERNEL(gru_cell_fused_grad, kCPU, GruCellGradKernel);

}  // namespace kernels
}  // namespace oneflow_like
