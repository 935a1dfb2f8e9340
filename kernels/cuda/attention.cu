// Device code of the fused scaled-dot-product attention (the algorithm of
// kernels/cpu/attention.cc, FlashAttention-2's): f32 accumulation (f64 for f64), f16/bf16/f32/f64
// operands, the [L, S] scores never written to memory.
//   forward: one block per (batch*head, tile of kRows query rows); 4 warps, each owning
//     kRows / 4 rows. K/V blocks of 32 keys are staged in shared memory; lane j scores key j of
//     the block, the warp reduces the row max and sum (online softmax), and lane l accumulates
//     output dims l, l + 32, ... from the probabilities broadcast by shuffles.
//   backward: D = rowsum(dO * O) (a warp per row); dQ per query tile as the forward (P from the
//     saved lse, dP = dO V^T); dK, dV per block of 32 keys, each warp owning keys, over the query
//     blocks of every head of the key's group (so every output element has one writer).
// Dropout: RngUniform(seed, (row * L + i) * S + j) >= p keeps (kernels/cuda/rng.h, the CPU's draw
// and the composite dropout's); fully masked rows give 0 and lse -inf.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/attention_launch.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/rng.h"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kRows = 16;  // query rows per forward / dQ block (kRows / kWarps per warp)
constexpr int kKeys = 32;  // keys per staged block (one per lane)
constexpr int kPerLane = static_cast<int>(kAttnMaxHeadDim / 32);
constexpr unsigned kFull = 0xffffffffu;

template <typename T, typename A>
__device__ __forceinline__ A Ld(const T* p, int64_t i) {
  return static_cast<A>(AsFloat(p[i]));
}
template <>
__device__ __forceinline__ double Ld<double, double>(const double* p, int64_t i) {
  return p[i];
}
template <typename T, typename A>
__device__ __forceinline__ void St(T* p, int64_t i, A v) {
  if constexpr (std::is_same_v<T, A>)
    p[i] = v;
  else if constexpr (IsHalfLike<T>::value)
    p[i] = FromFloat<T>(static_cast<float>(v));
  else
    p[i] = static_cast<T>(v);
}

template <typename A>
__device__ __forceinline__ A WarpMax(A v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(kFull, v, o));
  return v;
}
template <typename A>
__device__ __forceinline__ A WarpSum(A v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

template <typename A>
__device__ __forceinline__ A NegInf() {
  return -static_cast<A>(INFINITY);
}

// The offset of batch*head `bh`'s [L, S] slice in the mask.
__device__ __forceinline__ int64_t MaskRow(const AttnParams& p, int64_t bh) {
  int64_t off = 0;
  for (int d = p.nbatch - 1; d >= 0; --d) {
    off += (bh % p.batch[d]) * p.mask_stride[d];
    bh /= p.batch[d];
  }
  return off;
}

// The scaled score of (row gi, key gj) from a dot product, with the causal rule and the mask.
template <typename T, typename A>
__device__ __forceinline__ A Masked(const AttnParams& p, int64_t mrow, int64_t gi, int64_t gj,
                                    A dot) {
  A s = dot * static_cast<A>(p.scale);
  if (p.causal && gj > gi) return NegInf<A>();
  if (p.mask) {
    const int64_t o = mrow + gi * p.mask_stride_l + gj * p.mask_stride_s;
    if (p.mask_is_bool) {
      if (!static_cast<const bool*>(p.mask)[o]) return NegInf<A>();
    } else {
      s += Ld<T, A>(static_cast<const T*>(p.mask), o);
    }
  }
  return s;
}

// Whether dropout keeps element (bh, gi, gj), and the kept value's scale.
__device__ __forceinline__ bool Keep(const AttnParams& p, int64_t bh, int64_t gi, int64_t gj) {
  return RngUniform(p.seed, static_cast<uint64_t>((bh * p.L + gi) * p.S + gj)) >= p.dropout_p;
}

template <typename A>
__device__ __forceinline__ A KeepScale(const AttnParams& p) {
  return p.dropout_p < 1.0 ? static_cast<A>(1.0 / (1.0 - p.dropout_p)) : A(0);
}

// Stages rows [j0, j0 + n) of a [rows, width] operand as A into smem (row pitch `pitch`).
template <typename T, typename A>
__device__ void Stage(const T* src, int64_t j0, int64_t n, int64_t width, A* dst, int64_t pitch) {
  for (int64_t i = threadIdx.x; i < n * width; i += blockDim.x) {
    const int64_t r = i / width, c = i % width;
    dst[r * pitch + c] = Ld<T, A>(src, (j0 + r) * width + c);
  }
}

template <typename T, typename A>
__global__ void ForwardKernel(AttnParams p, const T* q, const T* k, const T* v, T* out, A* lse) {
  extern __shared__ unsigned char smem_raw[];
  A* qs = reinterpret_cast<A*>(smem_raw);  // [kRows][E]
  A* ks = qs + kRows * p.E;                // [kKeys][E + 1]
  A* vs = ks + kKeys * (p.E + 1);          // [kKeys][Ev]
  const int64_t bh = blockIdx.y, i0 = int64_t(blockIdx.x) * kRows;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t kvh = bh / p.group, mrow = p.mask ? MaskRow(p, bh) : 0;
  const int64_t br = min(int64_t(kRows), p.L - i0);
  Stage<T, A>(q + bh * p.L * p.E, i0, br, p.E, qs, p.E);
  constexpr int kMine = kRows / kWarps;
  A m[kMine], l[kMine], acc[kMine][kPerLane];
#pragma unroll
  for (int r = 0; r < kMine; ++r) {
    m[r] = NegInf<A>();
    l[r] = A(0);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) acc[r][t] = A(0);
  }
  const int64_t jend = p.causal ? min(p.S, i0 + br) : p.S;
  const A ks_scale = KeepScale<A>(p);
  for (int64_t j0 = 0; j0 < jend; j0 += kKeys) {
    const int64_t bc = min(int64_t(kKeys), jend - j0);
    __syncthreads();
    Stage<T, A>(k + kvh * p.S * p.E, j0, bc, p.E, ks, p.E + 1);
    Stage<T, A>(v + kvh * p.S * p.Ev, j0, bc, p.Ev, vs, p.Ev);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kMine; ++r) {
      const int64_t li = warp * kMine + r, gi = i0 + li;
      if (li >= br) break;  // warp-uniform
      A s = NegInf<A>();
      if (lane < bc) {
        A dot = 0;
        for (int64_t e = 0; e < p.E; ++e) dot += qs[li * p.E + e] * ks[lane * (p.E + 1) + e];
        s = Masked<T, A>(p, mrow, gi, j0 + lane, dot);
      }
      const A mx = max(m[r], WarpMax(s));
      if (mx == NegInf<A>()) continue;  // nothing visible yet
      const A alpha = exp(m[r] - mx);
      A pr = s == NegInf<A>() ? A(0) : exp(s - mx);
      l[r] = l[r] * alpha + WarpSum(pr);
      m[r] = mx;
      if (p.dropout_p > 0 && lane < bc) pr = Keep(p, bh, gi, j0 + lane) ? pr * ks_scale : A(0);
#pragma unroll
      for (int t = 0; t < kPerLane; ++t) acc[r][t] *= alpha;
      for (int j = 0; j < bc; ++j) {
        const A pj = __shfl_sync(kFull, pr, j);
#pragma unroll
        for (int t = 0; t < kPerLane; ++t) {
          const int64_t d = lane + 32 * t;
          if (d < p.Ev) acc[r][t] += pj * vs[j * p.Ev + d];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kMine; ++r) {
    const int64_t li = warp * kMine + r, gi = i0 + li;
    if (li >= br) break;
    const A inv = l[r] > A(0) ? A(1) / l[r] : A(0);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t d = lane + 32 * t;
      if (d < p.Ev) St<T, A>(out, (bh * p.L + gi) * p.Ev + d, acc[r][t] * inv);
    }
    if (lane == 0) lse[bh * p.L + gi] = l[r] > A(0) ? m[r] + log(l[r]) : NegInf<A>();
  }
}

// D[row] = sum(dO[row] * O[row]), a warp per row.
template <typename T, typename A>
__global__ void RowDotKernel(int64_t rows, int64_t width, const T* a, const T* b, A* d) {
  const int lane = threadIdx.x % 32;
  for (int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows;
       r += int64_t(gridDim.x) * blockDim.x / 32) {
    A acc = 0;
    for (int64_t j = lane; j < width; j += 32)
      acc += Ld<T, A>(a, r * width + j) * Ld<T, A>(b, r * width + j);
    acc = WarpSum(acc);
    if (lane == 0) d[r] = acc;
  }
}

// dQ per (batch*head, query tile): the forward's layout, dq dims per lane.
template <typename T, typename A>
__global__ void GradQKernel(AttnParams p, const T* dout, const T* q, const T* k, const T* v,
                            const A* lse, const A* D, T* dq) {
  extern __shared__ unsigned char smem_raw[];
  A* qs = reinterpret_cast<A*>(smem_raw);  // [kRows][E]
  A* dos = qs + kRows * p.E;               // [kRows][Ev]
  A* ks = dos + kRows * p.Ev;              // [kKeys][E + 1]
  A* vs = ks + kKeys * (p.E + 1);          // [kKeys][Ev + 1]
  const int64_t bh = blockIdx.y, i0 = int64_t(blockIdx.x) * kRows;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t kvh = bh / p.group, mrow = p.mask ? MaskRow(p, bh) : 0;
  const int64_t br = min(int64_t(kRows), p.L - i0);
  Stage<T, A>(q + bh * p.L * p.E, i0, br, p.E, qs, p.E);
  Stage<T, A>(dout + bh * p.L * p.Ev, i0, br, p.Ev, dos, p.Ev);
  constexpr int kMine = kRows / kWarps;
  A acc[kMine][kPerLane];
#pragma unroll
  for (int r = 0; r < kMine; ++r)
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) acc[r][t] = A(0);
  const int64_t jend = p.causal ? min(p.S, i0 + br) : p.S;
  const A ks_scale = KeepScale<A>(p), scale = static_cast<A>(p.scale);
  for (int64_t j0 = 0; j0 < jend; j0 += kKeys) {
    const int64_t bc = min(int64_t(kKeys), jend - j0);
    __syncthreads();
    Stage<T, A>(k + kvh * p.S * p.E, j0, bc, p.E, ks, p.E + 1);
    Stage<T, A>(v + kvh * p.S * p.Ev, j0, bc, p.Ev, vs, p.Ev + 1);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kMine; ++r) {
      const int64_t li = warp * kMine + r, gi = i0 + li;
      if (li >= br) break;
      const A ls = lse[bh * p.L + gi];
      A ds = 0;
      if (lane < bc && ls != NegInf<A>()) {
        A dot = 0, dp = 0;
        for (int64_t e = 0; e < p.E; ++e) dot += qs[li * p.E + e] * ks[lane * (p.E + 1) + e];
        for (int64_t e = 0; e < p.Ev; ++e) dp += dos[li * p.Ev + e] * vs[lane * (p.Ev + 1) + e];
        const A s = Masked<T, A>(p, mrow, gi, j0 + lane, dot);
        const A pr = s == NegInf<A>() ? A(0) : exp(s - ls);
        if (p.dropout_p > 0) dp = Keep(p, bh, gi, j0 + lane) ? dp * ks_scale : A(0);
        ds = pr * (dp - D[bh * p.L + gi]);
      }
      for (int j = 0; j < bc; ++j) {
        const A dj = __shfl_sync(kFull, ds, j);
#pragma unroll
        for (int t = 0; t < kPerLane; ++t) {
          const int64_t e = lane + 32 * t;
          if (e < p.E) acc[r][t] += dj * ks[j * (p.E + 1) + e];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kMine; ++r) {
    const int64_t li = warp * kMine + r, gi = i0 + li;
    if (li >= br) break;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t e = lane + 32 * t;
      if (e < p.E) St<T, A>(dq, (bh * p.L + gi) * p.E + e, acc[r][t] * scale);
    }
  }
}

// dK, dV per (batch*kv-head, block of kKeys keys): warp w owns keys w, w + 4, ...; lane i scores
// query i of each staged block of 32 query rows.
constexpr int kKvWarps = 8;
constexpr int kMineKeys = kKeys / kKvWarps;

template <typename T, typename A>
__global__ void GradKVKernel(AttnParams p, const T* dout, const T* q, const T* k, const T* v,
                             const A* lse, const A* D, T* dk, T* dv) {
  extern __shared__ unsigned char smem_raw[];
  A* kc = reinterpret_cast<A*>(smem_raw);  // [kKeys][E]
  A* vc = kc + kKeys * p.E;                // [kKeys][Ev]
  A* qb = vc + kKeys * p.Ev;               // [32][E + 1]
  A* dob = qb + 32 * (p.E + 1);            // [32][Ev + 1]
  const int64_t bhk = blockIdx.y, j0 = int64_t(blockIdx.x) * kKeys;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t bc = min(int64_t(kKeys), p.S - j0);
  Stage<T, A>(k + bhk * p.S * p.E, j0, bc, p.E, kc, p.E);
  Stage<T, A>(v + bhk * p.S * p.Ev, j0, bc, p.Ev, vc, p.Ev);
  A gk[kMineKeys][kPerLane], gv[kMineKeys][kPerLane];
#pragma unroll
  for (int c = 0; c < kMineKeys; ++c)
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) gk[c][t] = gv[c][t] = A(0);
  const A ks_scale = KeepScale<A>(p), scale = static_cast<A>(p.scale);
  const int64_t first = p.causal ? (j0 / 32) * 32 : 0;  // rows i < j0 see none of these keys
  for (int64_t h = 0; h < p.group; ++h) {
    const int64_t bh = bhk * p.group + h, mrow = p.mask ? MaskRow(p, bh) : 0;
    for (int64_t i0 = first; i0 < p.L; i0 += 32) {
      const int64_t br = min(int64_t(32), p.L - i0);
      __syncthreads();
      Stage<T, A>(q + bh * p.L * p.E, i0, br, p.E, qb, p.E + 1);
      Stage<T, A>(dout + bh * p.L * p.Ev, i0, br, p.Ev, dob, p.Ev + 1);
      __syncthreads();
      const int64_t gi = i0 + lane;
      const A ls = lane < br ? lse[bh * p.L + gi] : NegInf<A>();
      const A Di = lane < br ? D[bh * p.L + gi] : A(0);
#pragma unroll
      for (int c = 0; c < kMineKeys; ++c) {
        const int64_t lc = warp + kKvWarps * c, gj = j0 + lc;
        if (lc >= bc) break;  // warp-uniform
        A pd = 0, ds = 0;
        if (lane < br && ls != NegInf<A>()) {
          A dot = 0, dp = 0;
          for (int64_t e = 0; e < p.E; ++e) dot += qb[lane * (p.E + 1) + e] * kc[lc * p.E + e];
          for (int64_t e = 0; e < p.Ev; ++e) dp += dob[lane * (p.Ev + 1) + e] * vc[lc * p.Ev + e];
          const A s = Masked<T, A>(p, mrow, gi, gj, dot);
          const A pr = s == NegInf<A>() ? A(0) : exp(s - ls);
          pd = pr;
          if (p.dropout_p > 0) {
            const bool kept = Keep(p, bh, gi, gj);
            pd = kept ? pr * ks_scale : A(0);
            dp = kept ? dp * ks_scale : A(0);
          }
          ds = pr * (dp - Di);
        }
        for (int i = 0; i < br; ++i) {
          const A pi = __shfl_sync(kFull, pd, i), di = __shfl_sync(kFull, ds, i);
#pragma unroll
          for (int t = 0; t < kPerLane; ++t) {
            const int64_t e = lane + 32 * t;
            if (e < p.Ev) gv[c][t] += pi * dob[i * (p.Ev + 1) + e];
            if (e < p.E) gk[c][t] += di * qb[i * (p.E + 1) + e];
          }
        }
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kMineKeys; ++c) {
    const int64_t lc = warp + kKvWarps * c, gj = j0 + lc;
    if (lc >= bc) break;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t e = lane + 32 * t;
      if (e < p.E) St<T, A>(dk, (bhk * p.S + gj) * p.E + e, gk[c][t] * scale);
      if (e < p.Ev) St<T, A>(dv, (bhk * p.S + gj) * p.Ev + e, gv[c][t]);
    }
  }
}

// Launches `kernel` with `smem` bytes of dynamic shared memory, raising the kernel's limit above
// the default 48 KiB where needed (cudaErrorInvalidValue where the device has less).
template <typename K, typename... Args>
cudaError_t LaunchWithSmem(K kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s,
                           Args... args) {
  if (smem > 48 * 1024) {
    cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kernel<<<grid, block, smem, s>>>(args...);
  return cudaGetLastError();
}

size_t SmemForward(size_t a, const AttnParams& p) {
  return a * (kRows * p.E + kKeys * (p.E + 1) + kKeys * p.Ev);
}
size_t SmemGradQ(size_t a, const AttnParams& p) {
  return a * (kRows * p.E + kRows * p.Ev + kKeys * (p.E + 1) + kKeys * (p.Ev + 1));
}
size_t SmemGradKV(size_t a, const AttnParams& p) {
  return a * (kKeys * p.E + kKeys * p.Ev + 32 * (p.E + 1) + 32 * (p.Ev + 1));
}

template <typename T, typename A>
cudaError_t Forward(const AttnParams& p, const void* q, const void* k, const void* v, void* out,
                    void* lse, cudaStream_t s) {
  if (p.L == 0 || p.BH == 0) return cudaSuccess;  // no rows: a zero grid is a launch error
  const size_t smem = SmemForward(sizeof(A), p);
  dim3 grid(unsigned((p.L + kRows - 1) / kRows), unsigned(p.BH));
  return LaunchWithSmem(ForwardKernel<T, A>, grid, dim3(32 * kWarps), smem, s, p,
                        static_cast<const T*>(q), static_cast<const T*>(k),
                        static_cast<const T*>(v), static_cast<T*>(out), static_cast<A*>(lse));
}

template <typename T, typename A>
cudaError_t Backward(const AttnParams& p, const void* dout, const void* q, const void* k,
                     const void* v, const void* out, const void* lse, void* d, void* dq, void* dk,
                     void* dv, cudaStream_t s) {
  const T *dO = static_cast<const T*>(dout), *Q = static_cast<const T*>(q),
          *K = static_cast<const T*>(k), *V = static_cast<const T*>(v);
  const A* LSE = static_cast<const A*>(lse);
  A* D = static_cast<A*>(d);
  const int64_t rows = p.BH * p.L;
  cudaError_t e = cudaSuccess;
  if (rows > 0) {  // L == 0 leaves no dq and no D, but dk / dv (S > 0) are still written: 0
    RowDotKernel<T, A>
        <<<GridFor(rows * 32), kThreads, 0, s>>>(rows, p.Ev, dO, static_cast<const T*>(out), D);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    dim3 grid_q(unsigned((p.L + kRows - 1) / kRows), unsigned(p.BH));
    e = LaunchWithSmem(GradQKernel<T, A>, grid_q, dim3(32 * kWarps), SmemGradQ(sizeof(A), p), s, p,
                       dO, Q, K, V, LSE, static_cast<const A*>(D), static_cast<T*>(dq));
    if (e != cudaSuccess) return e;
  }
  if (p.S == 0 || p.BH == 0) return cudaSuccess;
  const size_t smem_kv = SmemGradKV(sizeof(A), p);
  dim3 grid_kv(unsigned((p.S + kKeys - 1) / kKeys), unsigned(p.BH / p.group));
  return LaunchWithSmem(GradKVKernel<T, A>, grid_kv, dim3(32 * kKvWarps), smem_kv, s, p, dO, Q, K,
                        V, LSE, static_cast<const A*>(D), static_cast<T*>(dk), static_cast<T*>(dv));
}

}  // namespace

size_t FlashAttentionSmemBytes(ScalarType t, const AttnParams& p, bool backward) {
  const size_t a = t == ScalarType::kF64 ? sizeof(double) : sizeof(float);
  return backward ? std::max(SmemGradQ(a, p), SmemGradKV(a, p)) : SmemForward(a, p);
}

#define OFL_ATTN_SWITCH(t, CALL)                          \
  switch (t) {                                            \
    case ScalarType::kF32: return CALL(float, float);     \
    case ScalarType::kF64: return CALL(double, double);   \
    case ScalarType::kF16: return CALL(Half, float);      \
    case ScalarType::kBF16: return CALL(BFloat16, float); \
    default: return cudaErrorInvalidValue;                \
  }

cudaError_t LaunchFlashAttention(ScalarType t, const AttnParams& p, const void* q, const void* k,
                                 const void* v, void* out, void* lse, cudaStream_t stream){
#define OFL_ATTN_FWD(T, A) Forward<T, A>(p, q, k, v, out, lse, stream)
    OFL_ATTN_SWITCH(t, OFL_ATTN_FWD)
#undef OFL_ATTN_FWD
}

cudaError_t
    LaunchFlashAttentionBackward(ScalarType t, const AttnParams& p, const void* dout, const void* q,
                                 const void* k, const void* v, const void* out, const void* lse,
                                 void* d, void* dq, void* dk, void* dv, cudaStream_t stream) {
#define OFL_ATTN_BWD(T, A) Backward<T, A>(p, dout, q, k, v, out, lse, d, dq, dk, dv, stream)
  OFL_ATTN_SWITCH(t, OFL_ATTN_BWD)
#undef OFL_ATTN_BWD
}
#undef OFL_ATTN_SWITCH

}  // namespace cuda
}  // namespace oneflow_like
