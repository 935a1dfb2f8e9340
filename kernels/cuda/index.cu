// Device code of the shape and index families (kernels/cpu/shape.cc, index.cc): index checks,
// gathers moved by element size, and scatters/accumulations that keep the CPU's order wherever
// two writes can meet (serial along the colliding dimension), so results are deterministic.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

#define OFL_GRID_LOOP(i, n)                                                 \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

__device__ __forceinline__ bool AnySet(const IndexFlags& f) {
  for (int j = 0; j < f.n; ++j)
    if (f.flags[j] != kNoBadIndex) return true;
  return false;
}

__global__ void CheckIndicesKernel(const int64_t* idx, int64_t n, int64_t lo, int64_t hi,
                                   unsigned long long* flag) {
  OFL_GRID_LOOP(i, n) {
    if (idx[i] < lo || idx[i] >= hi) atomicMin(flag, static_cast<unsigned long long>(i));
  }
}

template <typename T>
__global__ void AccumulateKernel(T* out, const T* in, int64_t n, OffsetCalc<2> calc) {
  OFL_GRID_LOOP(i, n) {
    int64_t off[2];
    calc.Get(i, off);
    out[off[0]] = AddValues(out[off[0]], in[off[1]]);
  }
}

template <typename T>
__global__ void TrilKernel(const T* x, T* o, int64_t total, int64_t rows, int64_t cols, int64_t k,
                           bool upper) {
  OFL_GRID_LOOP(t, total) {
    int64_t j = t % cols, i = (t / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    o[t] = keep ? x[t] : T(0);
  }
}

template <typename T>
__global__ void IndexSelectKernel(const T* x, T* o, int64_t outer, int64_t n, int64_t inner,
                                  const int64_t* idx, int64_t m, IndexFlags f) {
  if (AnySet(f)) return;
  OFL_GRID_LOOP(t, outer * m * inner) {
    int64_t i = t % inner, j = (t / inner) % m, oi = t / (inner * m);
    o[t] = x[(oi * n + idx[j]) * inner + i];
  }
}

template <typename T>
__global__ void IndexAddKernel(const T* s, T* o, int64_t outer, int64_t n, int64_t inner,
                               const int64_t* idx, int64_t m, IndexFlags f) {
  if (AnySet(f)) return;
  OFL_GRID_LOOP(t, outer * inner) {  // one thread per destination column: j runs in order
    int64_t oi = t / inner, i = t % inner;
    for (int64_t j = 0; j < m; ++j) {
      T& d = o[(oi * n + idx[j]) * inner + i];
      d = AddValues(d, s[(oi * m + j) * inner + i]);
    }
  }
}

struct Strides8 {
  int64_t v[kMaxDims];
};

template <typename T>
__global__ void GatherKernel(const T* x, T* o, Dims shape, Strides8 xs8, int dim,
                             const int64_t* idx, int64_t n, IndexFlags f) {
  if (AnySet(f)) return;
  const int64_t* xs = xs8.v;
  OFL_GRID_LOOP(t, n) {
    int64_t r = t, off = 0;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      int64_t c = r % shape.sizes[d];
      r /= shape.sizes[d];
      off += (d == dim ? idx[t] : c) * xs[d];
    }
    o[t] = x[off];
  }
}

template <typename T>
__global__ void ScatterKernel(T* o, const T* src, Dims shape, Strides8 os, Strides8 ss, int dim,
                              const int64_t* idx, double value_d, bool add, IndexFlags f) {
  if (AnySet(f)) return;
  const T value = FromDouble<T>(value_d);
  int64_t along = shape.ndim ? shape.sizes[dim] : 1, total = 1;
  for (int d = 0; d < shape.ndim; ++d) total *= shape.sizes[d];
  int64_t lines = along ? total / along : 0;
  // Index element (c with c[dim] = 0) of line l; index is contiguous.
  int64_t idx_stride = 1;
  for (int d = shape.ndim - 1; d > dim; --d) idx_stride *= shape.sizes[d];
  OFL_GRID_LOOP(l, lines) {
    int64_t r = l, base_o = 0, base_s = 0, base_i = 0, mul = 1;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      if (d == dim) {
        mul *= shape.sizes[d];
        continue;
      }
      int64_t c = r % shape.sizes[d];
      r /= shape.sizes[d];
      base_o += c * os.v[d];
      base_s += c * ss.v[d];
      base_i += c * mul;
      mul *= shape.sizes[d];
    }
    for (int64_t c = 0; c < along; ++c) {
      int64_t ii = base_i + c * idx_stride;
      T val = src ? src[base_s + c * (shape.ndim ? ss.v[dim] : 0)] : value;
      T& d = o[base_o + idx[ii] * (shape.ndim ? os.v[dim] : 0)];
      d = add ? AddValues(d, val) : val;
    }
  }
}

__global__ void OneHotKernel(const int64_t* idx, int64_t n, int64_t c, int64_t* o, IndexFlags f) {
  if (AnySet(f)) return;
  OFL_GRID_LOOP(i, n) {
    o[i * c + idx[i]] = 1;
  }
}

template <typename T>
__global__ void IndexKernel(const T* x, T* o, int64_t outer, int64_t span, int64_t inner,
                            int64_t nb, MultiIndex mi, IndexFlags f) {
  if (AnySet(f)) return;
  OFL_GRID_LOOP(t, outer * nb * inner) {
    int64_t i = t % inner, bi = (t / inner) % nb, oi = t / (inner * nb), off = oi * span;
    for (int j = 0; j < mi.k; ++j) {
      int64_t v = mi.idx[j][bi];
      off += (v < 0 ? v + mi.sizes[j] : v) * mi.strides[j];
    }
    o[t] = x[off + i];
  }
}

template <typename T>
__global__ void IndexPutKernel(const PutGeom g, MultiIndex mi, const T* v, bool acc, T* o,
                               IndexFlags f) {
  if (AnySet(f)) return;
  int64_t npre = 1, npost = 1, nb = 1;
  for (int d = 0; d < g.pre.ndim; ++d) npre *= g.pre.sizes[d];
  for (int d = 0; d < g.post.ndim; ++d) npost *= g.post.sizes[d];
  for (int d = 0; d < g.b.ndim; ++d) nb *= g.b.sizes[d];
  OFL_GRID_LOOP(t, npre * npost) {  // one thread per (prefix, suffix): B runs in order
    int64_t r = t % npost, q = t / npost, off = 0, voff = 0;
    for (int d = g.post.ndim - 1; d >= 0; --d) {
      int64_t c = r % g.post.sizes[d];
      r /= g.post.sizes[d];
      off += c * g.post_strides[d];
      voff += c * g.value_strides[g.pre.ndim + g.b.ndim + d];
    }
    for (int d = g.pre.ndim - 1; d >= 0; --d) {
      int64_t c = q % g.pre.sizes[d];
      q /= g.pre.sizes[d];
      off += c * g.pre_strides[d];
      voff += c * g.value_strides[d];
    }
    for (int64_t b = 0; b < nb; ++b) {
      int64_t rb = b, vb = 0;
      for (int d = g.b.ndim - 1; d >= 0; --d) {
        vb += (rb % g.b.sizes[d]) * g.value_strides[g.pre.ndim + d];
        rb /= g.b.sizes[d];
      }
      int64_t ob = 0;
      for (int j = 0; j < mi.k; ++j) {
        int64_t iv = mi.idx[j][b];
        ob += (iv < 0 ? iv + mi.sizes[j] : iv) * mi.strides[j];
      }
      T& d = o[off + ob];
      d = acc ? AddValues(d, v[voff + vb]) : v[voff + vb];
    }
  }
}

}  // namespace

cudaError_t LaunchCheckIndices(const int64_t* idx, int64_t n, int64_t lo, int64_t hi,
                               unsigned long long* flag, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  CheckIndicesKernel<<<GridFor(n), kThreads, 0, s>>>(idx, n, lo, hi, flag);
  return cudaGetLastError();
}

namespace {
__global__ void FetchFlaggedKernel(const int64_t* values, const unsigned long long* flag,
                                   long long* value) {
  const unsigned long long f = *flag;
  *value = f == kNoBadIndex ? 0 : values[f];
}
}  // namespace

cudaError_t LaunchFetchFlagged(const int64_t* values, const unsigned long long* flag,
                               long long* value, cudaStream_t s) {
  FetchFlaggedKernel<<<1, 1, 0, s>>>(values, flag, value);
  return cudaGetLastError();
}

cudaError_t LaunchAccumulate(ScalarType t, bool serial, const LoopShape& loop, const Operand& out,
                             const Operand& in, cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  const Operand* ops[2] = {&out, &in};
  OFL_CU_SWITCH_ALL(t, {
    AccumulateKernel<scalar_t><<<serial ? 1 : GridFor(loop.numel), serial ? 1 : kThreads, 0, s>>>(
        static_cast<scalar_t*>(out.data), static_cast<const scalar_t*>(in.data), loop.numel,
        MakeOffsetCalc<2>(loop, ops));
  });
  return cudaGetLastError();
}

cudaError_t LaunchTril(int eb, int64_t mats, int64_t rows, int64_t cols, int64_t k, bool upper,
                       const void* x, void* out, cudaStream_t s) {
  int64_t total = mats * rows * cols;
  if (total == 0) return cudaSuccess;
  OFL_CU_SWITCH_SIZE(eb, TrilKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(
                             static_cast<const scalar_t*>(x), static_cast<scalar_t*>(out), total,
                             rows, cols, k, upper));
  return cudaGetLastError();
}

cudaError_t LaunchIndexSelect(int eb, int64_t outer, int64_t n, int64_t inner, const int64_t* idx,
                              int64_t m, const void* x, void* out, IndexFlags f, cudaStream_t s) {
  int64_t total = outer * m * inner;
  if (total == 0) return cudaSuccess;
  OFL_CU_SWITCH_SIZE(eb, IndexSelectKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(
                             static_cast<const scalar_t*>(x), static_cast<scalar_t*>(out), outer, n,
                             inner, idx, m, f));
  return cudaGetLastError();
}

cudaError_t LaunchIndexAdd(ScalarType t, int64_t outer, int64_t n, int64_t inner,
                           const int64_t* idx, int64_t m, const void* src, void* out, IndexFlags f,
                           cudaStream_t s) {
  if (outer * inner == 0 || m == 0) return cudaSuccess;
  OFL_CU_SWITCH_ALL(t, IndexAddKernel<scalar_t><<<GridFor(outer * inner), kThreads, 0, s>>>(
                           static_cast<const scalar_t*>(src), static_cast<scalar_t*>(out), outer, n,
                           inner, idx, m, f));
  return cudaGetLastError();
}

cudaError_t LaunchGather(int eb, const Dims& shape, const int64_t* xs, int dim, const int64_t* idx,
                         const void* x, void* out, IndexFlags f, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < shape.ndim; ++d) n *= shape.sizes[d];
  if (n == 0) return cudaSuccess;
  Strides8 xs8{};
  for (int d = 0; d < kMaxDims; ++d) xs8.v[d] = xs[d];
  OFL_CU_SWITCH_SIZE(eb, GatherKernel<scalar_t><<<GridFor(n), kThreads, 0, s>>>(
                             static_cast<const scalar_t*>(x), static_cast<scalar_t*>(out), shape,
                             xs8, dim, idx, n, f));
  return cudaGetLastError();
}

cudaError_t LaunchScatter(ScalarType t, const Dims& shape, const int64_t* os, const int64_t* ss,
                          int dim, const int64_t* idx, const void* src, double value, bool add,
                          void* out, IndexFlags f, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < shape.ndim; ++d) n *= shape.sizes[d];
  if (n == 0) return cudaSuccess;
  Strides8 o8{}, s8{};
  for (int d = 0; d < kMaxDims; ++d) {
    o8.v[d] = os[d];
    s8.v[d] = ss[d];
  }
  // One thread per line along `dim`; the value is converted on the device (the CPU's FromDouble).
  int64_t lines = shape.ndim && shape.sizes[dim] ? n / shape.sizes[dim] : n;
  OFL_CU_SWITCH_ALL(t, {
    ScatterKernel<scalar_t><<<GridFor(lines), kThreads, 0, s>>>(
        static_cast<scalar_t*>(out), static_cast<const scalar_t*>(src), shape, o8, s8, dim, idx,
        value, add, f);
  });
  return cudaGetLastError();
}

cudaError_t LaunchOneHot(const int64_t* idx, int64_t n, int64_t classes, int64_t* out, IndexFlags f,
                         cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(out, 0, n * classes * sizeof(int64_t), s);
  if (e != cudaSuccess || n == 0) return e;
  OneHotKernel<<<GridFor(n), kThreads, 0, s>>>(idx, n, classes, out, f);
  return cudaGetLastError();
}

cudaError_t LaunchIndex(int eb, int64_t outer, int64_t span, int64_t inner, int64_t nb,
                        const MultiIndex& mi, const void* x, void* out, IndexFlags f,
                        cudaStream_t s) {
  int64_t total = outer * nb * inner;
  if (total == 0) return cudaSuccess;
  OFL_CU_SWITCH_SIZE(eb, IndexKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(
                             static_cast<const scalar_t*>(x), static_cast<scalar_t*>(out), outer,
                             span, inner, nb, mi, f));
  return cudaGetLastError();
}

cudaError_t LaunchIndexPut(ScalarType t, const PutGeom& g, const MultiIndex& mi, const void* values,
                           bool accumulate, void* out, IndexFlags f, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < g.pre.ndim; ++d) n *= g.pre.sizes[d];
  for (int d = 0; d < g.post.ndim; ++d) n *= g.post.sizes[d];
  int64_t nb = 1;
  for (int d = 0; d < g.b.ndim; ++d) nb *= g.b.sizes[d];
  if (n == 0 || nb == 0) return cudaSuccess;
  OFL_CU_SWITCH_ALL(t, IndexPutKernel<scalar_t>
                    <<<GridFor(n), kThreads, 0, s>>>(g, mi, static_cast<const scalar_t*>(values),
                                                     accumulate, static_cast<scalar_t*>(out), f));
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
