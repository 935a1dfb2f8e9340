// CPU kernels of the recurrent family (oneflow_like/ops/rnn.h), f32/f64, contiguous, parallel
// over batch rows:
// - the fused cells: one pass over the hidden units of each batch row computing the gate
//   activations and the state update (and, backward, every gate's gradient from the recomputed
//   activations);
// - the whole-sequence ops rnn_seq / rnn_seq_grad: a multi-layer, optionally bidirectional
//   RNN_TANH / RNN_RELU / LSTM (with proj_size) / GRU over a padded [T, B, I] or packed [N, I]
//   time-major input, in C++: per layer and direction one GEMM for every step's input
//   projection, then per step the recurrent GEMM and the gate activations (vectorised,
//   simd_math.h); backward is backpropagation through time over the per-step values a
//   recomputed forward saved, with the weight gradients as one GEMM each over all steps. Rows:
//   step t covers rows [off[t], off[t] + bs[t]) of x, y and every per-step buffer (padded:
//   bs[t] = B). A packed batch shrinks over time (the longest sequences first), so rows >= bs[t]
//   of the running state keep the value their sequence finished with, as nn/modules/rnn.py's
//   step loop does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/blas_gemm.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/rng.h"
#include "kernels/cpu/simd_math.h"
#include "kernels/rnn_seq_net.h"

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

// ---- the whole-sequence ops ------------------------------------------------------------------

// The per-step products are small (batch rows x gates): cpu::Sgemm's shape rule picks oneDNN or
// BLAS.
constexpr cpu::GemmImpl kImpl = cpu::GemmImpl::kAuto;

// The gate activations of one row, vectorised (simd_math.h). LSTM: a = (sigmoid i, sigmoid f,
// tanh g, sigmoid o) of pre [4H]. GRU: a = (r, z, n) from x W_ih^T + b_ih and h W_hh^T + b_hh.
template <typename T>
void LstmActs(const T* pre, int64_t H, T* a) {
  std::memcpy(a, pre, 4 * H * sizeof(T));
  SigmoidInPlace(a, 2 * H);
  TanhInPlace(a + 2 * H, H);
  SigmoidInPlace(a + 3 * H, H);
}
template <typename T>
void GruActs(const T* x, const T* q, int64_t H, T* a) {
  for (int64_t j = 0; j < 2 * H; ++j) a[j] = x[j] + q[j];
  SigmoidInPlace(a, 2 * H);
  for (int64_t j = 0; j < H; ++j) a[2 * H + j] = x[2 * H + j] + a[j] * q[2 * H + j];
  TanhInPlace(a + 2 * H, H);
}

using Net = RnnSeqNet;
using Mode = RnnMode;

// The weights of (layer, dir) among the inputs (after x and the states).
template <typename T>
struct Weights {
  const T *w_ih = nullptr, *w_hh = nullptr, *b_ih = nullptr, *b_hh = nullptr, *w_hr = nullptr;
  int first = 0;  // index of w_ih among the inputs (the gradients keep the same order)
};
template <typename T>
Weights<T> WeightsOf(KernelContext& ctx, const Net& n, int64_t l, int64_t d) {
  Weights<T> w;
  w.first = static_cast<int>(1 + n.nstate() + (l * n.D + d) * n.per);
  int k = w.first;
  w.w_ih = ctx.input(k++).ptr<const T>();
  w.w_hh = ctx.input(k++).ptr<const T>();
  if (n.bias) {
    w.b_ih = ctx.input(k++).ptr<const T>();
    w.b_hh = ctx.input(k++).ptr<const T>();
  }
  if (n.proj) w.w_hr = ctx.input(k++).ptr<const T>();
  return w;
}

// c[m, n] = a[m, k] b[n, k]^T (+ bias row when given, else + beta * c).
template <typename T>
Status LinearRows(int64_t m, int64_t nn, int64_t k, const T* a, int64_t lda, const T* b,
                  const T* bias, T* c, int64_t ldc) {
  if (m == 0 || nn == 0) return Status();
  T beta = T(0);
  if (bias) {
    for (int64_t i = 0; i < m; ++i) std::memcpy(c + i * ldc, bias, nn * sizeof(T));
    beta = T(1);
  }
  if (k == 0) {
    if (!bias)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + nn, T(0));
    return Status();
  }
  RETURN_IF_ERROR(Gemm(false, true, m, nn, k, T(1), a, lda, b, k, beta, c, ldc, kImpl));
  return Status();
}

// What the backward reads of one (layer, dir), saved by a training forward. Rows as x's.
template <typename T>
struct Saved {
  std::vector<T> pre;    // [N, G]: LSTM gates / RNN pre-activations x W_ih^T + b + h W_hh^T + b;
                         // GRU: x W_ih^T + b_ih
  std::vector<T> gh;     // [N, G]: GRU's h W_hh^T + b_hh
  std::vector<T> hprev;  // [N, Hr]: the state each row's step read
  std::vector<T> cprev;  // [N, H]: LSTM
  std::vector<T> cnew;   // [N, H]: LSTM
  std::vector<T> hfull;  // [N, H]: LSTM with proj_size, before the projection
  std::vector<T> hout;   // [N, Hr]: the step's output (RNN: for the activation's derivative)
};

// One direction of one layer: x [N, in] -> y's columns [d * Hr, (d + 1) * Hr) of [N, D * Hr];
// the state starts at h0 / c0 and ends in hT / cT. With `sv`, saves what the backward reads.
template <typename T>
Status RunDir(const Net& n, const Weights<T>& w, int64_t d, const T* x, int64_t in, T* y,
              const T* h0, const T* c0, T* hT, T* cT, Saved<T>* sv) {
  const int64_t G = n.G(), H = n.H, Hr = n.Hr, B = n.B, N = n.N, ldy = n.D * Hr;
  const bool lstm = n.mode == Mode::kLstm, gru = n.mode == Mode::kGru;
  std::vector<T> local_pre;
  std::vector<T>& pre = sv ? sv->pre : local_pre;
  pre.resize(N * G);
  // every step's input projection
  RETURN_IF_ERROR(LinearRows(N, G, in, x, in, w.w_ih, w.b_ih, pre.data(), G));
  std::vector<T> h(h0, h0 + B * Hr), c, gh(B * G), hf, act(B * G);
  if (lstm) c.assign(c0, c0 + B * H);
  if (n.proj) hf.resize(B * H);
  if (sv) {
    sv->hprev.resize(N * Hr);
    sv->hout.resize(N * Hr);
    if (lstm) sv->cprev.resize(N * H), sv->cnew.resize(N * H);
    if (gru) sv->gh.resize(N * G);
    if (n.proj) sv->hfull.resize(N * H);
  }
  for (int64_t s = 0; s < n.T; ++s) {
    const int64_t t = d ? n.T - 1 - s : s, bs = n.bs[t], off = n.off[t];
    if (sv) {
      std::memcpy(&sv->hprev[off * Hr], h.data(), bs * Hr * sizeof(T));
      if (lstm) std::memcpy(&sv->cprev[off * H], c.data(), bs * H * sizeof(T));
    }
    RETURN_IF_ERROR(LinearRows(bs, G, Hr, h.data(), Hr, w.w_hh, w.b_hh, gh.data(), G));
    T* pr = &pre[off * G];
    ForRows(bs, G, [&](int64_t b) {
      T* p = pr + b * G;
      const T* q = &gh[b * G];
      T* a = &act[b * G];
      if (lstm) {
        for (int64_t j = 0; j < G; ++j) p[j] += q[j];
        T* hrow = n.proj ? &hf[b * H] : &h[b * Hr];
        T* cr = &c[b * H];
        LstmActs(p, H, a);
        for (int64_t j = 0; j < H; ++j) cr[j] = a[H + j] * cr[j] + a[j] * a[2 * H + j];
        std::memcpy(hrow, cr, H * sizeof(T));
        TanhInPlace(hrow, H);
        for (int64_t j = 0; j < H; ++j) hrow[j] *= a[3 * H + j];
      } else if (gru) {
        T* hrow = &h[b * Hr];
        GruActs(p, q, H, a);
        for (int64_t j = 0; j < H; ++j)
          hrow[j] = a[2 * H + j] + a[H + j] * (hrow[j] - a[2 * H + j]);
      } else {
        T* hrow = &h[b * Hr];
        for (int64_t j = 0; j < H; ++j) hrow[j] = p[j] += q[j];
        if (n.mode == Mode::kTanh) {
          TanhInPlace(hrow, H);
        } else {
          for (int64_t j = 0; j < H; ++j) hrow[j] = hrow[j] > T(0) ? hrow[j] : T(0);
        }
      }
    });
    if (n.proj) {
      if (sv) std::memcpy(&sv->hfull[off * H], hf.data(), bs * H * sizeof(T));
      RETURN_IF_ERROR(LinearRows(bs, Hr, H, hf.data(), H, w.w_hr, static_cast<const T*>(nullptr),
                                 h.data(), Hr));
    }
    for (int64_t b = 0; b < bs; ++b)
      std::memcpy(y + (off + b) * ldy + d * Hr, &h[b * Hr], Hr * sizeof(T));
    if (sv) {
      std::memcpy(&sv->hout[off * Hr], h.data(), bs * Hr * sizeof(T));
      if (lstm) std::memcpy(&sv->cnew[off * H], c.data(), bs * H * sizeof(T));
      if (gru) std::memcpy(&sv->gh[off * G], gh.data(), bs * G * sizeof(T));
    }
  }
  std::memcpy(hT, h.data(), B * Hr * sizeof(T));
  if (lstm) std::memcpy(cT, c.data(), B * H * sizeof(T));
  return Status();
}

// Inverted dropout in place over layer l's output [N, D * Hr] (the same mask for a seed).
template <typename T>
void DropoutRows(const Net& n, int64_t l, T* v, int64_t count) {
  const uint64_t seed = n.seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(l + 1);
  const T scale = n.dropout >= 1 ? T(0) : T(1.0 / (1.0 - n.dropout));
  ParallelFor(count, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      v[i] = RngUniform(seed, static_cast<uint64_t>(i)) >= n.dropout ? v[i] * scale : T(0);
  });
}

// The whole forward. `layers_in` (optional) keeps the input (after dropout) of each layer above
// the first (layer 0 reads x in place) and `saved` (optional, L * D entries) what each
// direction's backward reads.
template <typename T>
Status Forward(KernelContext& ctx, const Net& n, T* y, T* hy, T* cy,
               std::vector<std::vector<T>>* layers_in, std::vector<Saved<T>>* saved) {
  const T* x = ctx.input(0).ptr<const T>();
  const T* hx = ctx.input(1).ptr<const T>();
  const T* cx = n.mode == Mode::kLstm ? ctx.input(2).ptr<const T>() : nullptr;
  const int64_t ldy = n.D * n.Hr;
  const T* in = x;  // layer 0 reads x in place
  std::vector<T> cur, out;
  for (int64_t l = 0; l < n.L; ++l) {
    T* yl = l + 1 == n.L ? y : (out.assign(n.N * ldy, T(0)), out.data());
    for (int64_t d = 0; d < n.D; ++d) {
      const int64_t k = l * n.D + d;
      RETURN_IF_ERROR(RunDir(n, WeightsOf<T>(ctx, n, l, d), d, in, n.in_size(l), yl,
                             hx + k * n.B * n.Hr, cx ? cx + k * n.B * n.H : nullptr,
                             hy + k * n.B * n.Hr, cy ? cy + k * n.B * n.H : nullptr,
                             saved ? &(*saved)[k] : nullptr));
    }
    if (layers_in && l > 0) (*layers_in)[l] = std::move(cur);
    if (l + 1 < n.L) {
      if (n.drops(l)) DropoutRows(n, l, out.data(), n.N * ldy);
      cur = std::move(out);
      in = cur.data();
    }
  }
  return Status();
}

// Runs the body (a statement list returning Status) for f32 / f64.
#define OFL_RNN_SEQ_FLOAT(ctx, dtype, ...)                                 \
  OFL_SWITCH_FLOAT(dtype, { return [&]() -> Status { __VA_ARGS__; }(); }); \
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(dtype));

// rnn_seq(x, hx, [cx,] weights...) -> (y, hy, [cy]).
Status RnnSeqKernel(KernelContext& ctx) {
  const Net n = RnnSeqNetOf(ctx);
  OFL_RNN_SEQ_FLOAT(ctx, ctx.input(0).dtype, {
    using T = scalar_t;
    return Forward<T>(ctx, n, ctx.output(0).ptr<T>(), ctx.output(1).ptr<T>(),
                      n.mode == Mode::kLstm ? ctx.output(2).ptr<T>() : nullptr, nullptr, nullptr);
  });
}

// Backpropagation through one direction of one layer. dy: the layer output's gradient
// [N, D * Hr]; adds x's gradient into dx [N, in]; writes the weights' gradients and dh0 / dc0.
template <typename T>
Status BackDir(KernelContext& ctx, const Net& n, const Weights<T>& w, int64_t d, const T* x,
               int64_t in, const T* dy, T* dx, const Saved<T>& sv, const T* dhT, const T* dcT,
               T* dh0, T* dc0) {
  const int64_t G = n.G(), H = n.H, Hr = n.Hr, B = n.B, N = n.N, ldy = n.D * Hr;
  const bool lstm = n.mode == Mode::kLstm, gru = n.mode == Mode::kGru;
  std::vector<T> dh(dhT, dhT + B * Hr), dc, dxw(N * G), dgh, dhp, dhf, dhcur(B * Hr);
  std::vector<T> act(B * G), tmp(B * H);  // per row: the gate activations, tanh(c') / z dh'
  if (lstm) dc.assign(dcT, dcT + B * H);
  if (gru) dgh.resize(N * G);
  if (n.proj) dhp.resize(N * Hr), dhf.resize(B * H);
  std::vector<T>& dgh_all = gru ? dgh : dxw;  // the recurrent GEMM's output gradient
  for (int64_t s = n.T - 1; s >= 0; --s) {
    const int64_t t = d ? n.T - 1 - s : s, bs = n.bs[t], off = n.off[t];
    for (int64_t b = 0; b < bs; ++b) {
      const T* g = dy + (off + b) * ldy + d * Hr;
      for (int64_t j = 0; j < Hr; ++j) dhcur[b * Hr + j] = g[j] + dh[b * Hr + j];
    }
    const T* dho = dhcur.data();  // gradient of the cell's output (before the projection)
    if (n.proj) {
      std::memcpy(&dhp[off * Hr], dhcur.data(), bs * Hr * sizeof(T));
      RETURN_IF_ERROR(Gemm(false, false, bs, H, Hr, T(1), dhcur.data(), Hr, w.w_hr, H, T(0),
                           dhf.data(), H, kImpl));
      dho = dhf.data();
    }
    ForRows(bs, G, [&](int64_t b) {
      const int64_t r = off + b;
      const T* p = &sv.pre[r * G];
      T* dp = &dxw[r * G];
      const T* gi = dho + b * H;
      T* a = &act[b * G];
      if (lstm) {
        LstmActs(p, H, a);
        T* tc = &tmp[b * H];
        std::memcpy(tc, &sv.cnew[r * H], H * sizeof(T));
        TanhInPlace(tc, H);
        const T* cp = &sv.cprev[r * H];
        T* dcr = &dc[b * H];
        for (int64_t j = 0; j < H; ++j) {
          const T i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], t = tc[j];
          const T dct = dcr[j] + gi[j] * o * (T(1) - t * t);
          dp[j] = dct * g * i * (T(1) - i);
          dp[H + j] = dct * cp[j] * f * (T(1) - f);
          dp[2 * H + j] = dct * i * (T(1) - g * g);
          dp[3 * H + j] = gi[j] * t * o * (T(1) - o);
          dcr[j] = dct * f;
        }
      } else if (gru) {
        const T* q = &sv.gh[r * G];
        T* dq = &dgh[r * G];
        GruActs(p, q, H, a);
        const T* hp = &sv.hprev[r * Hr];
        T* dz_h = &tmp[b * H];  // z: the direct path of h into h'
        for (int64_t j = 0; j < H; ++j) {
          const T rr = a[j], z = a[H + j], nn = a[2 * H + j], dd = gi[j];
          const T dn = dd * (T(1) - z) * (T(1) - nn * nn);
          const T dz = dd * (hp[j] - nn) * z * (T(1) - z);
          const T dr = dn * q[2 * H + j] * rr * (T(1) - rr);
          dp[j] = dq[j] = dr;
          dp[H + j] = dq[H + j] = dz;
          dp[2 * H + j] = dn;
          dq[2 * H + j] = dn * rr;
          dz_h[j] = dd * z;
        }
      } else {
        const T* v = &sv.hout[r * Hr];
        for (int64_t j = 0; j < H; ++j)
          dp[j] =
              gi[j] * (n.mode == Mode::kTanh ? T(1) - v[j] * v[j] : (v[j] > T(0) ? T(1) : T(0)));
      }
    });
    // The state's gradient for the earlier step: through the recurrent GEMM (GRU: plus z's path).
    std::vector<T> dprev(bs * Hr);
    RETURN_IF_ERROR(Gemm(false, false, bs, Hr, G, T(1), &dgh_all[off * G], G, w.w_hh, Hr, T(0),
                         dprev.data(), Hr, kImpl));
    if (gru)
      for (int64_t k = 0; k < bs * H; ++k) dprev[k] += tmp[k];
    std::memcpy(dh.data(), dprev.data(), bs * Hr * sizeof(T));
  }
  std::memcpy(dh0, dh.data(), B * Hr * sizeof(T));
  if (lstm) std::memcpy(dc0, dc.data(), B * H * sizeof(T));
  // The weights' gradients: one GEMM each over every step.
  int k = w.first;
  T* dw_ih = ctx.output(k++).ptr<T>();
  T* dw_hh = ctx.output(k++).ptr<T>();
  RETURN_IF_ERROR(Gemm(true, false, G, in, N, T(1), dxw.data(), G, x, in, T(0), dw_ih, in, kImpl));
  RETURN_IF_ERROR(Gemm(true, false, G, Hr, N, T(1), dgh_all.data(), G, sv.hprev.data(), Hr, T(0),
                       dw_hh, Hr, kImpl));
  if (n.bias) {
    T* db_ih = ctx.output(k++).ptr<T>();
    T* db_hh = ctx.output(k++).ptr<T>();
    std::fill(db_ih, db_ih + G, T(0));
    std::fill(db_hh, db_hh + G, T(0));
    for (int64_t r = 0; r < N; ++r)
      for (int64_t j = 0; j < G; ++j) db_ih[j] += dxw[r * G + j], db_hh[j] += dgh_all[r * G + j];
  }
  if (n.proj) {
    T* dw_hr = ctx.output(k++).ptr<T>();
    RETURN_IF_ERROR(Gemm(true, false, Hr, H, N, T(1), dhp.data(), Hr, sv.hfull.data(), H, T(0),
                         dw_hr, H, kImpl));
  }
  RETURN_IF_ERROR(
      Gemm(false, false, N, in, G, T(1), dxw.data(), G, w.w_ih, in, T(1), dx, in, kImpl));
  return Status();
}

// rnn_seq_grad(x, hx, [cx,] weights..., dy, dhy, [dcy]) -> (dx, dhx, [dcx], dweights...).
Status RnnSeqGradKernel(KernelContext& ctx) {
  const Net n = RnnSeqNetOf(ctx);
  const int nfwd = static_cast<int>(1 + n.nstate() + n.L * n.D * n.per);
  OFL_RNN_SEQ_FLOAT(ctx, ctx.input(0).dtype, {
    using T = scalar_t;
    const bool lstm = n.mode == Mode::kLstm;
    const int64_t ldy = n.D * n.Hr;
    // Rerun the training forward, keeping the upper layers' inputs and the per-step values.
    std::vector<T> y(n.N * ldy), hy(n.L * n.D * n.B * n.Hr), cy(lstm ? n.L * n.D * n.B * n.H : 0);
    std::vector<std::vector<T>> layers_in(n.L);
    std::vector<Saved<T>> saved(n.L * n.D);
    RETURN_IF_ERROR(
        Forward<T>(ctx, n, y.data(), hy.data(), lstm ? cy.data() : nullptr, &layers_in, &saved));
    const T* dhy = ctx.input(nfwd + 1).ptr<const T>();
    const T* dcy = lstm ? ctx.input(nfwd + 2).ptr<const T>() : nullptr;
    T* dhx = ctx.output(1).ptr<T>();
    T* dcx = lstm ? ctx.output(2).ptr<T>() : nullptr;
    const T* dx_top = ctx.input(nfwd).ptr<const T>();
    std::vector<T> dcur(dx_top, dx_top + n.N * ldy), dlow;
    for (int64_t l = n.L - 1; l >= 0; --l) {
      const int64_t in = n.in_size(l);
      T* dxl = l == 0 ? ctx.output(0).ptr<T>() : (dlow.assign(n.N * in, T(0)), dlow.data());
      if (l == 0) std::fill(dxl, dxl + n.N * in, T(0));
      for (int64_t d = 0; d < n.D; ++d) {
        const int64_t k = l * n.D + d;
        const T* xl = l == 0 ? ctx.input(0).ptr<const T>() : layers_in[l].data();
        RETURN_IF_ERROR(BackDir(ctx, n, WeightsOf<T>(ctx, n, l, d), d, xl, in, dcur.data(), dxl,
                                saved[k], dhy + k * n.B * n.Hr, dcy ? dcy + k * n.B * n.H : nullptr,
                                dhx + k * n.B * n.Hr, dcx ? dcx + k * n.B * n.H : nullptr));
      }
      if (l > 0) {
        if (n.drops(l - 1)) DropoutRows(n, l - 1, dlow.data(), n.N * in);
        dcur = std::move(dlow);
      }
    }
    return Status();
  });
}

}  // namespace

OFL_REGISTER_KERNEL(lstm_cell_fused, kCPU, LstmCellKernel);
OFL_REGISTER_KERNEL(lstm_cell_fused_grad, kCPU, LstmCellGradKernel);
OFL_REGISTER_KERNEL(gru_cell_fused, kCPU, GruCellKernel);
OFL_REGISTER_KERNEL(gru_cell_fused_grad, kCPU, GruCellGradKernel);
OFL_REGISTER_KERNEL(rnn_seq, kCPU, RnnSeqKernel);
OFL_REGISTER_KERNEL(rnn_seq_grad, kCPU, RnnSeqGradKernel);

}  // namespace kernels
}  // namespace oneflow_like
