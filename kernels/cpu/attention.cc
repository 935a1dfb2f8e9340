// CPU kernels of the fused scaled-dot-product attention (oneflow_like/opdefs/nn_misc.def:
// _scaled_dot_product_flash_attention and its backward op), FlashAttention-2's algorithm: the
// [L, S] scores are never materialised.
//   forward: per (batch*head, tile of kBr query rows), key blocks of kBc: S = scale * Q K^T
//     (+ mask, causal), online softmax (running max m, sum l, output rescaled by exp(m - m')),
//     O += dropout(P) V; out = O / l, lse = m + log l.
//   backward: D = rowsum(dO * O); pass 1 per (batch*head, query tile): P = exp(S - lse),
//     dP = dropout(dO V^T), dS = P (dP - D), dQ += scale dS K; pass 2 per (batch*kv-head, key
//     block), over the query tiles of every head of its group: dV += dropout(P)^T dO,
//     dK += scale dS^T Q. Two passes so that every output element has one writer (no atomics).
// Accumulation in f32 (f64 for f64 inputs); f16/bf16 operands are converted to f32 once. Tile
// products through OpenBLAS (one thread per call: the tiles run on the intra-op pool).
// Fully masked rows: output 0, lse -inf, no gradient (PyTorch >= 2.5's SDPA).
// Dropout: element (row, i, j) is kept where dropout's counter-based draw keep(seed,
// (row * L + i) * S + j) says so (rng_simd.h), the mask the composite's dropout of the [.., L, S]
// probabilities draws for the same seed; the backward passes regenerate it.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/bf16_simd.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/rng_simd.h"
#include "kernels/cpu/vec_exp.h"
#include "oneflow_like/base/blas_threads.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace kernels {
namespace {

constexpr int64_t kBr = 64;  // query rows per tile
constexpr int64_t kBc = 64;  // keys per block

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The problem: q [BH, L, E], k [BH / group, S, E], v [BH / group, S, Ev] (batch dims flattened),
// the attributes, and the mask's element offsets (0 strides where it broadcasts).
template <typename T, typename A>
struct Problem {
  int64_t BH = 0, L = 0, S = 0, E = 0, Ev = 0, group = 1;
  A scale = 1;
  bool causal = false;
  double p = 0;
  A keep_scale = 1;
  uint64_t seed = 0, thr = 0;
  const T* fmask = nullptr;       // additive mask in q's dtype
  const bool* bmask = nullptr;    // bool mask (true: attend)
  std::vector<int64_t> mask_row;  // per batch*head: the offset of its [L, S] slice
  int64_t ms_l = 0, ms_s = 0;
};

template <typename T, typename A>
Problem<T, A> MakeProblem(KernelContext& ctx, int q_input, int mask_input) {
  const TensorView &q = ctx.input(q_input), &k = ctx.input(q_input + 1),
                   &v = ctx.input(q_input + 2);
  const opdefs::FlashAttnAttrs a = opdefs::ReadAttrs<opdefs::FlashAttnAttrs>(ctx.attrs());
  Problem<T, A> pr;
  const int64_t nd = q.shape.ndim();
  pr.L = q.shape[nd - 2];
  pr.E = q.shape[nd - 1];
  pr.S = k.shape[nd - 2];
  pr.Ev = v.shape[nd - 1];
  pr.BH = q.numel() / (pr.L * pr.E);
  pr.group = pr.BH / (k.numel() / (pr.S * pr.E));
  pr.scale = static_cast<A>(a.scale);
  pr.causal = a.is_causal;
  pr.p = a.dropout_p;
  pr.keep_scale = a.dropout_p < 1.0 ? static_cast<A>(1.0 / (1.0 - a.dropout_p)) : A(0);
  pr.seed = static_cast<uint64_t>(a.seed);
  pr.thr = UniformThreshold(a.dropout_p);
  if (ctx.num_inputs() > mask_input) {
    const TensorView& m = ctx.input(mask_input);  // contiguous, q's rank
    DimVector st = ContiguousStrides(m.shape);
    for (int64_t d = 0; d < nd; ++d)
      if (m.shape[d] == 1) st[d] = 0;
    pr.ms_l = st[nd - 2];
    pr.ms_s = st[nd - 1];
    pr.mask_row.resize(pr.BH);
    for (int64_t bh = 0; bh < pr.BH; ++bh) {
      int64_t rest = bh, off = 0;
      for (int64_t d = nd - 3; d >= 0; --d) {
        off += (rest % q.shape[d]) * st[d];
        rest /= q.shape[d];
      }
      pr.mask_row[bh] = off;
    }
    if (m.dtype == DType::kBool)
      pr.bmask = m.ptr<const bool>();
    else
      pr.fmask = m.ptr<const T>();
  }
  return pr;
}

// s[br, bc] = scale * Q[i0:i0+br] K[j0:j0+bc]^T with the mask and the causal rule applied (-inf
// where masked out).
template <typename T, typename A>
void Scores(const Problem<T, A>& pr, const A* q, const A* k, int64_t bh, int64_t i0, int64_t br,
            int64_t j0, int64_t bc, A* s) {
  const A* qb = q + (bh * pr.L + i0) * pr.E;
  const A* kb = k + ((bh / pr.group) * pr.S + j0) * pr.E;
  Gemm(false, true, br, bc, pr.E, pr.scale, qb, pr.E, kb, pr.E, A(0), s, bc);
  const A ninf = -std::numeric_limits<A>::infinity();
  for (int64_t r = 0; r < br; ++r) {
    A* row = s + r * bc;
    const int64_t gi = i0 + r;
    if (pr.causal)
      for (int64_t c = std::max<int64_t>(0, gi + 1 - j0); c < bc; ++c) row[c] = ninf;
    if (pr.bmask) {
      const bool* m = pr.bmask + pr.mask_row[bh] + gi * pr.ms_l + j0 * pr.ms_s;
      for (int64_t c = 0; c < bc; ++c)
        if (!m[c * pr.ms_s]) row[c] = ninf;
    } else if (pr.fmask) {
      const T* m = pr.fmask + pr.mask_row[bh] + gi * pr.ms_l + j0 * pr.ms_s;
      for (int64_t c = 0; c < bc; ++c) {
        if constexpr (std::is_floating_point_v<T>)
          row[c] += static_cast<A>(m[c * pr.ms_s]);
        else  // f16/bf16 through float
          row[c] += static_cast<A>(static_cast<float>(m[c * pr.ms_s]));
      }
    }
  }
}

// row[c] = exp(row[c] - shift) for c < n (f32 eight at a time with AVX2: Exp8's ~1e-7 relative
// error, and -inf gives ~1e-38 rather than 0, as in the softmax kernel); returns their sum.
template <typename A>
A ExpShift(A* row, int64_t n, A shift) {
  A sum = 0;
  int64_t c = 0;
#ifdef __AVX2__
  if constexpr (std::is_same_v<A, float>) {
    const __m256 sh = _mm256_set1_ps(shift);
    __m256 acc = _mm256_setzero_ps();
    for (; c + 8 <= n; c += 8) {
      __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(row + c), sh));
      _mm256_storeu_ps(row + c, e);
      acc = _mm256_add_ps(acc, e);
    }
    sum = HSum(acc);
  }
#endif
  for (; c < n; ++c) {
    row[c] = std::exp(row[c] - shift);
    sum += row[c];
  }
  return sum;
}

// Multiplies p[br, bc] by the dropout's keep mask and 1 / (1 - p).
template <typename T, typename A>
void Dropout(const Problem<T, A>& pr, int64_t bh, int64_t i0, int64_t br, int64_t j0, int64_t bc,
             A* p, uint32_t* keep) {
  for (int64_t r = 0; r < br; ++r) {
    const uint64_t base = static_cast<uint64_t>((bh * pr.L + i0 + r) * pr.S + j0);
    RngAtLeastMask(pr.seed, base, bc, pr.thr, keep);
    A* row = p + r * bc;
    for (int64_t c = 0; c < bc; ++c) row[c] = keep[c] ? row[c] * pr.keep_scale : A(0);
  }
}

// The keys a query tile [i0, i0 + br) can see: all, or (causal) those j < i0 + br.
template <typename T, typename A>
int64_t KeyEnd(const Problem<T, A>& pr, int64_t i0, int64_t br) {
  return pr.causal ? std::min(pr.S, i0 + br) : pr.S;
}

// Runs fn(task) for tasks [0, n) on the intra-op pool, one task per chunk at least.
template <typename F>
void ForTasks(int64_t n, F&& fn) {
  ParallelFor(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) fn(t);
      },
      1);
}

// An operand as A: the tensor's own data when it is already A, else a converted copy.
template <typename T, typename A>
StatusOr<const A*> AsAcc(KernelContext& ctx, const TensorView& t) {
  if constexpr (std::is_same_v<T, A>) {
    return t.ptr<const A>();
  } else {
    ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp(t.numel() * sizeof(A)));
    A* out = static_cast<A*>(buf);
    const T* in = t.ptr<const T>();
    ParallelFor(t.numel(), [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, bfloat16> && std::is_same_v<A, float>)
        Bf16ToFloat(in + b, out + b, e - b);
      else
        for (int64_t i = b; i < e; ++i) out[i] = static_cast<A>(static_cast<float>(in[i]));
    });
    return out;
  }
}
// An output written as A: the output itself, or a buffer Store converts back.
template <typename T, typename A>
StatusOr<A*> AccOut(KernelContext& ctx, const TensorView& t) {
  if constexpr (std::is_same_v<T, A>) {
    return t.ptr<A>();
  } else {
    ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp(t.numel() * sizeof(A)));
    return static_cast<A*>(buf);
  }
}
template <typename T, typename A>
void Store(const A* acc, const TensorView& t) {
  if constexpr (!std::is_same_v<T, A>) {
    T* out = t.ptr<T>();
    ParallelFor(t.numel(), [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, bfloat16> && std::is_same_v<A, float>)
        FloatToBf16(acc + b, out + b, e - b);
      else
        for (int64_t i = b; i < e; ++i) out[i] = T(static_cast<float>(acc[i]));
    });
  }
}

// forward (q, k, v [, mask]) -> (out, lse).
template <typename T, typename A>
Status Forward(KernelContext& ctx) {
  InitBlasThreads();
  const Problem<T, A> pr = MakeProblem<T, A>(ctx, 0, 3);
  ASSIGN_OR_RETURN(const A* q, (AsAcc<T, A>(ctx, ctx.input(0))));
  ASSIGN_OR_RETURN(const A* k, (AsAcc<T, A>(ctx, ctx.input(1))));
  ASSIGN_OR_RETURN(const A* v, (AsAcc<T, A>(ctx, ctx.input(2))));
  ASSIGN_OR_RETURN(A * out, (AccOut<T, A>(ctx, ctx.output(0))));
  A* lse = ctx.output(1).ptr<A>();
  const int64_t tiles = (pr.L + kBr - 1) / kBr;
  ForTasks(pr.BH * tiles, [&](int64_t task) {
    const int64_t bh = task / tiles, i0 = (task % tiles) * kBr, br = std::min(kBr, pr.L - i0);
    std::vector<A> s(kBr * kBc), o(kBr * pr.Ev, A(0)), m(kBr, -std::numeric_limits<A>::infinity()),
        l(kBr, A(0));
    std::vector<uint32_t> keep(kBc);
    const A* vb = v + (bh / pr.group) * pr.S * pr.Ev;
    const int64_t jend = KeyEnd(pr, i0, br);
    for (int64_t j0 = 0; j0 < jend; j0 += kBc) {
      const int64_t bc = std::min(kBc, jend - j0);
      Scores(pr, q, k, bh, i0, br, j0, bc, s.data());
      for (int64_t r = 0; r < br; ++r) {
        A* row = s.data() + r * bc;
        A mx = m[r];
        for (int64_t c = 0; c < bc; ++c) mx = std::max(mx, row[c]);
        if (mx == -std::numeric_limits<A>::infinity()) {  // nothing visible yet
          std::fill(row, row + bc, A(0));
          continue;
        }
        const A alpha = std::exp(m[r] - mx);  // 0 for the first visible block
        l[r] = l[r] * alpha + ExpShift(row, bc, mx);
        m[r] = mx;
        if (alpha != A(1)) {
          A* orow = o.data() + r * pr.Ev;
          for (int64_t e = 0; e < pr.Ev; ++e) orow[e] *= alpha;
        }
      }
      if (pr.p > 0) Dropout(pr, bh, i0, br, j0, bc, s.data(), keep.data());
      Gemm(false, false, br, pr.Ev, bc, A(1), s.data(), bc, vb + j0 * pr.Ev, pr.Ev, A(1), o.data(),
           pr.Ev);
    }
    for (int64_t r = 0; r < br; ++r) {
      A* dst = out + (bh * pr.L + i0 + r) * pr.Ev;
      const A inv = l[r] > 0 ? A(1) / l[r] : A(0);  // fully masked: 0
      for (int64_t e = 0; e < pr.Ev; ++e) dst[e] = o[r * pr.Ev + e] * inv;
      lse[bh * pr.L + i0 + r] =
          l[r] > 0 ? m[r] + std::log(l[r]) : -std::numeric_limits<A>::infinity();
    }
  });
  Store<T, A>(out, ctx.output(0));
  return Status();
}

// p[br, bc] = exp(s - lse_row) in place (0 where s or the row's lse is -inf).
template <typename A>
void ProbsFromLse(const A* lse, int64_t br, int64_t bc, A* s) {
  for (int64_t r = 0; r < br; ++r) {
    A* row = s + r * bc;
    const A ls = lse[r];
    if (ls == -std::numeric_limits<A>::infinity()) {
      std::fill(row, row + bc, A(0));
      continue;
    }
    ExpShift(row, bc, ls);
  }
}

// ds = p * (dp - D_row) in place in dp.
template <typename A>
void ScoreGrad(const A* p, const A* D, int64_t br, int64_t bc, A* dp) {
  for (int64_t r = 0; r < br; ++r)
    for (int64_t c = 0; c < bc; ++c) dp[r * bc + c] = p[r * bc + c] * (dp[r * bc + c] - D[r]);
}

// backward (dout, q, k, v, out, lse [, mask]) -> (dq, dk, dv).
template <typename T, typename A>
Status Backward(KernelContext& ctx) {
  InitBlasThreads();
  const Problem<T, A> pr = MakeProblem<T, A>(ctx, 1, 6);
  ASSIGN_OR_RETURN(const A* dout, (AsAcc<T, A>(ctx, ctx.input(0))));
  ASSIGN_OR_RETURN(const A* q, (AsAcc<T, A>(ctx, ctx.input(1))));
  ASSIGN_OR_RETURN(const A* k, (AsAcc<T, A>(ctx, ctx.input(2))));
  ASSIGN_OR_RETURN(const A* v, (AsAcc<T, A>(ctx, ctx.input(3))));
  ASSIGN_OR_RETURN(const A* out, (AsAcc<T, A>(ctx, ctx.input(4))));
  const A* lse = ctx.input(5).ptr<const A>();
  ASSIGN_OR_RETURN(A * dq, (AccOut<T, A>(ctx, ctx.output(0))));
  ASSIGN_OR_RETURN(A * dk, (AccOut<T, A>(ctx, ctx.output(1))));
  ASSIGN_OR_RETURN(A * dv, (AccOut<T, A>(ctx, ctx.output(2))));
  // D = rowsum(dO * O).
  const int64_t rows = pr.BH * pr.L;
  ASSIGN_OR_RETURN(void* dbuf, ctx.AllocateTemp(rows * sizeof(A)));
  A* D = static_cast<A*>(dbuf);
  ParallelFor(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          A acc = 0;
          for (int64_t j = 0; j < pr.Ev; ++j) acc += dout[r * pr.Ev + j] * out[r * pr.Ev + j];
          D[r] = acc;
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(pr.Ev, 1)));
  // Pass 1: dQ per query tile.
  const int64_t tiles = (pr.L + kBr - 1) / kBr;
  ForTasks(pr.BH * tiles, [&](int64_t task) {
    const int64_t bh = task / tiles, i0 = (task % tiles) * kBr, br = std::min(kBr, pr.L - i0);
    std::vector<A> p(kBr * kBc), dp(kBr * kBc), acc(kBr * pr.E, A(0));
    std::vector<uint32_t> keep(kBc);
    const int64_t row0 = bh * pr.L + i0;
    const A* kb = k + (bh / pr.group) * pr.S * pr.E;
    const A* vb = v + (bh / pr.group) * pr.S * pr.Ev;
    const int64_t jend = KeyEnd(pr, i0, br);
    for (int64_t j0 = 0; j0 < jend; j0 += kBc) {
      const int64_t bc = std::min(kBc, jend - j0);
      Scores(pr, q, k, bh, i0, br, j0, bc, p.data());
      ProbsFromLse(lse + row0, br, bc, p.data());
      Gemm(false, true, br, bc, pr.Ev, A(1), dout + row0 * pr.Ev, pr.Ev, vb + j0 * pr.Ev, pr.Ev,
           A(0), dp.data(), bc);
      if (pr.p > 0) Dropout(pr, bh, i0, br, j0, bc, dp.data(), keep.data());
      ScoreGrad(p.data(), D + row0, br, bc, dp.data());
      Gemm(false, false, br, pr.E, bc, pr.scale, dp.data(), bc, kb + j0 * pr.E, pr.E, A(1),
           acc.data(), pr.E);
    }
    std::copy(acc.begin(), acc.begin() + br * pr.E, dq + row0 * pr.E);
  });
  // Pass 2: dK, dV per key block of each kv head, over its group's query heads.
  const int64_t blocks = (pr.S + kBc - 1) / kBc, BHk = pr.BH / pr.group;
  ForTasks(BHk * blocks, [&](int64_t task) {
    const int64_t bhk = task / blocks, j0 = (task % blocks) * kBc, bc = std::min(kBc, pr.S - j0);
    std::vector<A> p(kBr * kBc), pd(kBr * kBc), dp(kBr * kBc), gk(kBc * pr.E, A(0)),
        gv(kBc * pr.Ev, A(0));
    std::vector<uint32_t> keep(kBc);
    const A* vb = v + (bhk * pr.S + j0) * pr.Ev;
    // Causal: the rows i < j0 see none of these keys.
    const int64_t first = pr.causal ? (j0 / kBr) * kBr : 0;
    for (int64_t h = 0; h < pr.group; ++h) {
      const int64_t bh = bhk * pr.group + h;
      for (int64_t i0 = first; i0 < pr.L; i0 += kBr) {
        const int64_t br = std::min(kBr, pr.L - i0), row0 = bh * pr.L + i0;
        Scores(pr, q, k, bh, i0, br, j0, bc, p.data());
        ProbsFromLse(lse + row0, br, bc, p.data());
        const A* pv = p.data();
        if (pr.p > 0) {
          std::copy(p.begin(), p.begin() + br * bc, pd.begin());
          Dropout(pr, bh, i0, br, j0, bc, pd.data(), keep.data());
          pv = pd.data();
        }
        Gemm(true, false, bc, pr.Ev, br, A(1), pv, bc, dout + row0 * pr.Ev, pr.Ev, A(1), gv.data(),
             pr.Ev);
        Gemm(false, true, br, bc, pr.Ev, A(1), dout + row0 * pr.Ev, pr.Ev, vb, pr.Ev, A(0),
             dp.data(), bc);
        if (pr.p > 0) Dropout(pr, bh, i0, br, j0, bc, dp.data(), keep.data());
        ScoreGrad(p.data(), D + row0, br, bc, dp.data());
        Gemm(true, false, bc, pr.E, br, pr.scale, dp.data(), bc, q + row0 * pr.E, pr.E, A(1),
             gk.data(), pr.E);
      }
    }
    std::copy(gk.begin(), gk.begin() + bc * pr.E, dk + (bhk * pr.S + j0) * pr.E);
    std::copy(gv.begin(), gv.begin() + bc * pr.Ev, dv + (bhk * pr.S + j0) * pr.Ev);
  });
  Store<T, A>(dq, ctx.output(0));
  Store<T, A>(dk, ctx.output(1));
  Store<T, A>(dv, ctx.output(2));
  return Status();
}

// The dtype switch: f32, f64 natively; f16/bf16 through f32.
template <template <typename, typename> class Fn>
Status ByDtype(KernelContext& ctx, DType t) {
  switch (t) {
    case DType::kF32: return Fn<float, float>::Run(ctx);
    case DType::kF64: return Fn<double, double>::Run(ctx);
    case DType::kBF16: return Fn<bfloat16, float>::Run(ctx);
    case DType::kF16: return Fn<float16, float>::Run(ctx);
    default: return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
  }
}
template <typename T, typename A>
struct ForwardFn {
  static Status Run(KernelContext& ctx) { return Forward<T, A>(ctx); }
};
template <typename T, typename A>
struct BackwardFn {
  static Status Run(KernelContext& ctx) { return Backward<T, A>(ctx); }
};

Status FlashAttentionKernel(KernelContext& ctx) {
  return ByDtype<ForwardFn>(ctx, ctx.input(0).dtype);
}
Status FlashAttentionBackwardKernel(KernelContext& ctx) {
  return ByDtype<BackwardFn>(ctx, ctx.input(1).dtype);
}

}  // namespace

OFL_REGISTER_KERNEL(_scaled_dot_product_flash_attention, kCPU, FlashAttentionKernel);
OFL_REGISTER_KERNEL(_scaled_dot_product_flash_attention_backward, kCPU,
                    FlashAttentionBackwardKernel);

}  // namespace kernels
}  // namespace oneflow_like
