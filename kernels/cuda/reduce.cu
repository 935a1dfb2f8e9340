// Device code of the reduction family: a deterministic sum (then, below, every other reduction).
// Each output element is reduced by one block (or by one thread when the reduced extent is tiny);
// when there are few outputs and much to reduce, the reduced range is split over several blocks
// that write partials, and a second kernel adds the partials in a fixed order. No atomics: same
// input, same bits.
#include <limits>

#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr int kReduceThreads = 256;
constexpr int64_t kThreadPerOutputMax = 32;  // reduced extents up to this: one thread per output
constexpr int64_t kMinChunk = 16384;         // elements per block before splitting pays off

template <typename TI>
struct AccOf {
  using type = int64_t;
};
template <>
struct AccOf<float> {
  using type = double;
};
template <>
struct AccOf<double> {
  using type = double;
};

__device__ __forceinline__ int64_t KeepOffset(const ReduceShape& r, int64_t o) {
  int64_t off = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= r.keep_ndim) continue;
    off += (o % r.keep_sizes[d]) * r.keep_strides[d];
    o /= r.keep_sizes[d];
  }
  return off;
}
__device__ __forceinline__ int64_t RedOffset(const ReduceShape& r, int64_t i) {
  int64_t off = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= r.red_ndim) continue;
    off += (i % r.red_sizes[d]) * r.red_strides[d];
    i /= r.red_sizes[d];
  }
  return off;
}

template <typename Acc>
__device__ __forceinline__ Acc BlockSum(Acc v) {
  __shared__ Acc warp_sums[kReduceThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? warp_sums[lane] : Acc(0);
  if (warp == 0) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  __syncthreads();  // warp_sums may be reused by the next output of this block
  return v;         // valid in thread 0
}

// out[o * splits + s] = sum of chunk s of output o's reduced range.
template <typename TI, typename TO>
__global__ void BlockReduceKernel(const TI* x, TO* out, ReduceShape r, int64_t chunk, int splits) {
  using Acc = typename AccOf<TI>::type;
  int s = blockIdx.y;
  int64_t begin = s * chunk, end = begin + chunk < r.red_numel ? begin + chunk : r.red_numel;
  for (int64_t o = blockIdx.x; o < r.out_numel; o += gridDim.x) {
    int64_t base = KeepOffset(r, o);
    Acc acc = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      acc += static_cast<Acc>(x[base + RedOffset(r, i)]);
    acc = BlockSum(acc);
    if (threadIdx.x == 0) out[o * splits + s] = static_cast<TO>(acc);
  }
}

template <typename TI, typename TO>
__global__ void ThreadReduceKernel(const TI* x, TO* out, ReduceShape r) {
  using Acc = typename AccOf<TI>::type;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < r.out_numel;
       o += int64_t(gridDim.x) * blockDim.x) {
    int64_t base = KeepOffset(r, o);
    Acc acc = 0;
    for (int64_t i = 0; i < r.red_numel; ++i) acc += static_cast<Acc>(x[base + RedOffset(r, i)]);
    out[o] = static_cast<TO>(acc);
  }
}

// out[o] = sum over s of partial[o * splits + s], in order.
template <typename Acc, typename TO>
__global__ void FinishKernel(const Acc* partial, TO* out, int64_t out_numel, int splits) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < out_numel;
       o += int64_t(gridDim.x) * blockDim.x) {
    Acc acc = 0;
    for (int s = 0; s < splits; ++s) acc += partial[o * splits + s];
    out[o] = static_cast<TO>(acc);
  }
}

int SmCount(int device) {
  int n = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    n = 80;
  }
  return n;
}

// How many blocks share one output's reduced range (1 = no split).
int Splits(const ReduceShape& r, int device) {
  if (r.red_numel <= kThreadPerOutputMax || r.out_numel == 0) return 1;
  int64_t want_blocks = 4 * int64_t(SmCount(device));
  if (r.out_numel >= want_blocks) return 1;
  int64_t by_blocks = (want_blocks + r.out_numel - 1) / r.out_numel;
  int64_t by_work = (r.red_numel + kMinChunk - 1) / kMinChunk;
  int64_t s = by_blocks < by_work ? by_blocks : by_work;
  if (s > 1024) s = 1024;
  return static_cast<int>(s < 1 ? 1 : s);
}

template <typename TI, typename TO>
cudaError_t Sum(const ReduceShape& r, const TI* x, TO* out, void* scratch, int device,
                cudaStream_t stream) {
  using Acc = typename AccOf<TI>::type;
  if (r.out_numel == 0) return cudaSuccess;
  if (r.red_numel <= kThreadPerOutputMax) {
    ThreadReduceKernel<TI, TO><<<GridFor(r.out_numel), kThreads, 0, stream>>>(x, out, r);
    return cudaGetLastError();
  }
  int splits = Splits(r, device);
  unsigned grid_x = static_cast<unsigned>(r.out_numel < (1 << 20) ? r.out_numel : (1 << 20));
  if (splits == 1) {
    BlockReduceKernel<TI, TO>
        <<<dim3(grid_x, 1), kReduceThreads, 0, stream>>>(x, out, r, r.red_numel, 1);
    return cudaGetLastError();
  }
  int64_t chunk = (r.red_numel + splits - 1) / splits;
  Acc* partial = static_cast<Acc*>(scratch);
  BlockReduceKernel<TI, Acc>
      <<<dim3(grid_x, splits), kReduceThreads, 0, stream>>>(x, partial, r, chunk, splits);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  FinishKernel<Acc, TO>
      <<<GridFor(r.out_numel), kThreads, 0, stream>>>(partial, out, r.out_numel, splits);
  return cudaGetLastError();
}

}  // namespace

bool SumSupported(ScalarType in) {
  return in != ScalarType::kF16 && in != ScalarType::kBF16;
}

size_t SumScratchBytes(const ReduceShape& r, int device) {
  int splits = Splits(r, device);
  return splits == 1 ? 0 : static_cast<size_t>(r.out_numel) * splits * 8;  // Acc is 8 bytes
}

cudaError_t LaunchSum(ScalarType in, const ReduceShape& r, const void* x, void* out, void* scratch,
                      int device, cudaStream_t stream) {
  switch (in) {
    case ScalarType::kF32:
      return Sum(r, static_cast<const float*>(x), static_cast<float*>(out), scratch, device,
                 stream);
    case ScalarType::kF64:
      return Sum(r, static_cast<const double*>(x), static_cast<double*>(out), scratch, device,
                 stream);
    case ScalarType::kBool:
      return Sum(r, static_cast<const bool*>(x), static_cast<int64_t*>(out), scratch, device,
                 stream);
    case ScalarType::kU8:
      return Sum(r, static_cast<const uint8_t*>(x), static_cast<int64_t*>(out), scratch, device,
                 stream);
    case ScalarType::kI8:
      return Sum(r, static_cast<const int8_t*>(x), static_cast<int64_t*>(out), scratch, device,
                 stream);
    case ScalarType::kI16:
      return Sum(r, static_cast<const int16_t*>(x), static_cast<int64_t*>(out), scratch, device,
                 stream);
    case ScalarType::kI32:
      return Sum(r, static_cast<const int32_t*>(x), static_cast<int64_t*>(out), scratch, device,
                 stream);
    case ScalarType::kI64:
      return Sum(r, static_cast<const int64_t*>(x), static_cast<int64_t*>(out), scratch, device,
                 stream);
    default: return cudaErrorInvalidValue;
  }
}

// ==== the other reductions: one engine (block per output, or thread per output for short
// reductions), reducers mirroring kernels/cpu/reduce.cc; merges run in a fixed tree order. ====
namespace {

struct RIndexer {
  int keep_ndim, red_ndim;
  int64_t keep_sizes[kMaxDims], keep_strides[kMaxDims], red_sizes[kMaxDims], red_strides[kMaxDims];
  __device__ __forceinline__ int64_t Keep(int64_t o) const {
    int64_t off = 0;
    for (int d = keep_ndim - 1; d >= 0; --d) {
      off += (o % keep_sizes[d]) * keep_strides[d];
      o /= keep_sizes[d];
    }
    return off;
  }
  __device__ __forceinline__ int64_t Red(int64_t i) const {
    int64_t off = 0;
    for (int d = red_ndim - 1; d >= 0; --d) {
      off += (i % red_sizes[d]) * red_strides[d];
      i /= red_sizes[d];
    }
    return off;
  }
};
RIndexer MakeRIndexer(const ReduceShape& r) {
  RIndexer ix{};
  ix.keep_ndim = r.keep_ndim;
  ix.red_ndim = r.red_ndim;
  for (int d = 0; d < kMaxDims; ++d) {
    ix.keep_sizes[d] = r.keep_sizes[d] ? r.keep_sizes[d] : 1;
    ix.keep_strides[d] = r.keep_strides[d];
    ix.red_sizes[d] = r.red_sizes[d] ? r.red_sizes[d] : 1;
    ix.red_strides[d] = r.red_strides[d];
  }
  return ix;
}

template <typename T>
__device__ __forceinline__ T LowestOf() {
  if constexpr (std::is_same_v<T, bool>)
    return false;
  else if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}
template <typename T>
__device__ __forceinline__ T HighestOf() {
  if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

template <typename T>
struct ProdR {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double,
                                 uint64_t>;  // integers wrap like the CPU's int64
  using O = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  O* out;
  __device__ Acc Init() const { return 1; }
  __device__ void Fold(Acc& a, T v, int64_t) const {
    a *= static_cast<Acc>(
        static_cast<std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>(v));
  }
  __device__ void Merge(Acc& a, const Acc& b) const { a *= b; }
  __device__ void Write(int64_t o, Acc a) const { out[o] = static_cast<O>(a); }
};

template <bool kMax, typename T>
struct ExtremeR {
  using Acc = T;
  T* out;
  __device__ T Init() const { return kMax ? LowestOf<T>() : HighestOf<T>(); }
  __device__ void Fold(T& a, T v, int64_t) const {
    if (kMax ? (v > a || IsNanV(v)) : (v < a || IsNanV(v))) a = IsNanV(a) ? a : v;
  }
  __device__ void Merge(T& a, const T& b) const { Fold(a, b, 0); }
  __device__ void Write(int64_t o, T a) const { out[o] = a; }
};

// First index of the extreme (of the first NaN): equal values merge to the smaller index, so
// the tree gives the CPU's answer whatever the split.
template <bool kMax, typename T>
struct ArgR {
  struct Acc {
    T v;
    int64_t i;
  };
  T* values;
  int64_t* indices;
  __device__ static bool Better(T v, T best) {
    if (IsNanV(best)) return false;
    return IsNanV(v) || (kMax ? v > best : v < best);
  }
  __device__ Acc Init() const { return {kMax ? LowestOf<T>() : HighestOf<T>(), 0}; }
  __device__ void Fold(Acc& a, T v, int64_t i) const {
    if (Better(v, a.v)) a = {v, i};
  }
  __device__ void Merge(Acc& a, const Acc& b) const {
    bool same = (IsNanV(a.v) && IsNanV(b.v)) || (!Better(b.v, a.v) && !Better(a.v, b.v));
    if (Better(b.v, a.v) || (same && b.i < a.i)) a = b;
  }
  __device__ void Write(int64_t o, const Acc& a) const {
    if (values) values[o] = a.v;
    indices[o] = a.i;
  }
};

template <typename T>
struct VarR {
  struct Acc {
    double n, mean, m2;
  };
  T* out;
  double correction;
  bool take_sqrt;
  __device__ Acc Init() const { return {0, 0, 0}; }
  __device__ void Fold(Acc& a, T v, int64_t) const {
    a.n += 1;
    double d = v - a.mean;
    a.mean += d / a.n;
    a.m2 += d * (v - a.mean);
  }
  __device__ void Merge(Acc& a, const Acc& b) const {
    if (b.n == 0) return;
    if (a.n == 0) {
      a = b;
      return;
    }
    double n = a.n + b.n, d = b.mean - a.mean;
    a.m2 += b.m2 + d * d * a.n * b.n / n;
    a.mean += d * b.n / n;
    a.n = n;
  }
  __device__ void Write(int64_t o, const Acc& a) const {
    double denom = a.n - correction;
    double v = denom > 0 ? fmax(a.m2, 0.0) / denom : __longlong_as_double(0x7ff8000000000000LL);
    out[o] = static_cast<T>(take_sqrt ? sqrt(v) : v);
  }
};

template <typename T>
struct NormR {
  using Acc = double;
  T* out;
  double p;
  __device__ Acc Init() const { return p == -INFINITY ? INFINITY : 0.0; }
  __device__ static bool Nan(double v) { return v != v; }
  __device__ void Fold(Acc& a, T v, int64_t) const {
    double x = fabs(static_cast<double>(v));
    if (p == 2)
      a += x * x;
    else if (p == 1)
      a += x;
    else if (p == INFINITY)
      a = (x > a || Nan(x)) && !Nan(a) ? x : a;
    else if (p == -INFINITY)
      a = (x < a || Nan(x)) && !Nan(a) ? x : a;
    else if (p == 0)
      a += x != 0;
    else
      a += pow(x, p);
  }
  __device__ void Merge(Acc& a, const Acc& b) const {
    if (p == INFINITY)
      a = (b > a || Nan(b)) && !Nan(a) ? b : a;
    else if (p == -INFINITY)
      a = (b < a || Nan(b)) && !Nan(a) ? b : a;
    else
      a += b;
  }
  __device__ void Write(int64_t o, Acc a) const {
    double r = a;
    if (p == 2)
      r = sqrt(a);
    else if (p != 1 && p != 0 && !isinf(p))
      r = pow(a, 1.0 / p);
    out[o] = static_cast<T>(r);
  }
};

template <typename T>
struct LseR {
  struct Acc {
    double m, s;
  };
  T* out;
  __device__ Acc Init() const { return {-INFINITY, 0}; }
  __device__ void Add(Acc& a, double m, double s) const {
    if (m != m || a.m != a.m) {
      a.m = __longlong_as_double(0x7ff8000000000000LL);
      return;
    }
    if (m == -INFINITY) return;
    if (m == a.m) {
      a.s += s;
      return;
    }
    if (m > a.m) {
      a.s = a.s * exp(a.m - m) + s;
      a.m = m;
    } else
      a.s += s * exp(m - a.m);
  }
  __device__ void Fold(Acc& a, T v, int64_t) const { Add(a, static_cast<double>(v), 1.0); }
  __device__ void Merge(Acc& a, const Acc& b) const { Add(a, b.m, b.s); }
  __device__ void Write(int64_t o, const Acc& a) const {
    double r = a.m != a.m ? a.m : isinf(a.m) ? a.m : a.m + log(a.s);
    out[o] = static_cast<T>(r);
  }
};

template <typename T, typename R>
__global__ void BlockReduceKernel(const T* x, RIndexer ix, int64_t out_numel, int64_t red_numel,
                                  R r) {
  using Acc = decltype(r.Init());
  extern __shared__ double smem_raw[];
  Acc* sh = reinterpret_cast<Acc*>(smem_raw);
  for (int64_t o = blockIdx.x; o < out_numel; o += gridDim.x) {
    int64_t base = ix.Keep(o);
    Acc a = r.Init();
    for (int64_t i = threadIdx.x; i < red_numel; i += blockDim.x) r.Fold(a, x[base + ix.Red(i)], i);
    sh[threadIdx.x] = a;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) r.Merge(sh[threadIdx.x], sh[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) r.Write(o, sh[0]);
    __syncthreads();
  }
}

template <typename T, typename R>
__global__ void ThreadReduceKernel(const T* x, RIndexer ix, int64_t out_numel, int64_t red_numel,
                                   R r) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < out_numel;
       o += int64_t(gridDim.x) * blockDim.x) {
    int64_t base = ix.Keep(o);
    auto a = r.Init();
    for (int64_t i = 0; i < red_numel; ++i) r.Fold(a, x[base + ix.Red(i)], i);
    r.Write(o, a);
  }
}

template <typename T, typename R>
cudaError_t RunReduce(const ReduceShape& rs, const void* x, R r, cudaStream_t s) {
  if (rs.out_numel == 0) return cudaSuccess;
  using Acc = decltype(r.Init());
  RIndexer ix = MakeRIndexer(rs);
  const T* in = static_cast<const T*>(x);
  if (rs.red_numel <= 64) {
    ThreadReduceKernel<T, R>
        <<<GridFor(rs.out_numel), kThreads, 0, s>>>(in, ix, rs.out_numel, rs.red_numel, r);
  } else {
    unsigned blocks = static_cast<unsigned>(rs.out_numel < (1 << 16) ? rs.out_numel : (1 << 16));
    BlockReduceKernel<T, R>
        <<<blocks, kThreads, kThreads * sizeof(Acc), s>>>(in, ix, rs.out_numel, rs.red_numel, r);
  }
  return cudaGetLastError();
}

bool IsFloatT(ScalarType t) {
  return t == ScalarType::kF32 || t == ScalarType::kF64;
}
bool IsNumericT(ScalarType t) {
  return IsFloatT(t) || t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI16 ||
         t == ScalarType::kI32 || t == ScalarType::kI64;
}

}  // namespace

bool ReduceSupported(ReduceOp op, ScalarType t) {
  switch (op) {
    case ReduceOp::kProd: return IsNumericT(t);
    case ReduceOp::kAmax:
    case ReduceOp::kAmin:
    case ReduceOp::kArgmax:
    case ReduceOp::kArgmin: return IsNumericT(t) || t == ScalarType::kBool;
    default: return IsFloatT(t);
  }
}

cudaError_t LaunchReduce(ReduceOp op, ScalarType t, const ReduceShape& r, double param,
                         const void* x, void* values, int64_t* indices, cudaStream_t s) {
  if (!ReduceSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, {
    using T = scalar_t;
    switch (op) {
      case ReduceOp::kAmax:
        e = RunReduce<T>(r, x, ExtremeR<true, T>{static_cast<T*>(values)}, s);
        break;
      case ReduceOp::kAmin:
        e = RunReduce<T>(r, x, ExtremeR<false, T>{static_cast<T*>(values)}, s);
        break;
      case ReduceOp::kArgmax:
        e = RunReduce<T>(r, x, ArgR<true, T>{static_cast<T*>(values), indices}, s);
        break;
      case ReduceOp::kArgmin:
        e = RunReduce<T>(r, x, ArgR<false, T>{static_cast<T*>(values), indices}, s);
        break;
      default: break;
    }
    if constexpr (!std::is_same_v<T, bool>) {
      if (op == ReduceOp::kProd)
        e = RunReduce<T>(r, x, ProdR<T>{static_cast<typename ProdR<T>::O*>(values)}, s);
    }
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
        case ReduceOp::kVar:
          e = RunReduce<T>(r, x, VarR<T>{static_cast<T*>(values), param, false}, s);
          break;
        case ReduceOp::kStd:
          e = RunReduce<T>(r, x, VarR<T>{static_cast<T*>(values), param, true}, s);
          break;
        case ReduceOp::kNorm:
          e = RunReduce<T>(r, x, NormR<T>{static_cast<T*>(values), param}, s);
          break;
        case ReduceOp::kLogSumExp:
          e = RunReduce<T>(r, x, LseR<T>{static_cast<T*>(values)}, s);
          break;
        default: break;
      }
    }
  });
  return e;
}

// ---- helpers of the gradient formulas ----
namespace {
template <typename T>
__global__ void IndexScatterKernel(const T* g, const int64_t* idx, T* out, int64_t outer,
                                   int64_t size, int64_t inner) {
  int64_t n = outer * inner;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n;
       t += int64_t(gridDim.x) * blockDim.x) {
    int64_t a = t / inner, b = t % inner, k = idx[t];
    if (k < 0 || k >= size) continue;
    out[(a * size + k) * inner + b] = g[t];
  }
}
template <typename T>
__global__ void IndexGatherKernel(const T* x, const int64_t* idx, T* out, int64_t outer,
                                  int64_t size, int64_t inner) {
  int64_t n = outer * inner;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n;
       t += int64_t(gridDim.x) * blockDim.x) {
    int64_t a = t / inner, b = t % inner, k = idx[t];
    k = k < 0 ? 0 : (k > size - 1 ? (size - 1 > 0 ? size - 1 : 0) : k);
    out[t] = x[(a * size + k) * inner + b];
  }
}
template <typename T>
__global__ void NormCoefKernel(const T* nrm, const T* g, T* coef, int64_t n, double p) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    coef[i] = nrm[i] == 0 ? T(0) : static_cast<T>(g[i] / pow(static_cast<double>(nrm[i]), p - 1));
}
template <typename T>
struct NormGradF {
  double p;
  __device__ T operator()(T v, T c) const {
    if (p == 2) return c * v;
    T s = v > 0 ? T(1) : (v < 0 ? T(-1) : T(0));
    if (p == 1) return c * s;
    return static_cast<T>(c * s * pow(fabs(static_cast<double>(v)), p - 1));
  }
};
}  // namespace

cudaError_t LaunchReduceIndex(bool scatter, ScalarType t, const void* src, const int64_t* idx,
                              void* out, int64_t outer, int64_t size, int64_t inner,
                              cudaStream_t s) {
  if (!IsFloatT(t)) return cudaErrorInvalidValue;
  int64_t n = outer * inner;
  if (scatter) {
    cudaError_t e =
        cudaMemsetAsync(out, 0, outer * size * inner * (t == ScalarType::kF32 ? 4 : 8), s);
    if (e != cudaSuccess || n == 0) return e;
  } else if (n == 0) {
    return cudaSuccess;
  }
  OFL_CU_SWITCH_FLOAT(t, {
    if (scatter)
      IndexScatterKernel<scalar_t><<<GridFor(n), kThreads, 0, s>>>(
          static_cast<const scalar_t*>(src), idx, static_cast<scalar_t*>(out), outer, size, inner);
    else
      IndexGatherKernel<scalar_t><<<GridFor(n), kThreads, 0, s>>>(
          static_cast<const scalar_t*>(src), idx, static_cast<scalar_t*>(out), outer, size, inner);
  });
  return cudaGetLastError();
}

cudaError_t LaunchNormBackward(ScalarType t, double p, const void* nrm, const void* g, int64_t n,
                               void* coef, const LoopShape& loop, const Operand& out,
                               const Operand& x, const Operand& c, cudaStream_t s) {
  if (!IsFloatT(t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    if (n > 0)
      NormCoefKernel<scalar_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const scalar_t*>(nrm),
                                                               static_cast<const scalar_t*>(g),
                                                               static_cast<scalar_t*>(coef), n, p);
    e = cudaGetLastError();
    if (e == cudaSuccess)
      e = LaunchBinaryLoop<scalar_t>(loop, out, x, c, NormGradF<scalar_t>{p}, s);
  });
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
