// Device code of the reduction family: a deterministic sum. Each output element is reduced by
// one block (or by one thread when the reduced extent is tiny); when there are few outputs and
// much to reduce, the reduced range is split over several blocks that write partials, and a
// second kernel adds the partials in a fixed order. No atomics: same input, same bits.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr int kReduceThreads = 256;
constexpr int64_t kThreadPerOutputMax = 32;  // reduced extents up to this: one thread per output
constexpr int64_t kMinChunk = 16384;         // elements per block before splitting pays off

template <typename TI> struct AccOf { using type = int64_t; };
template <> struct AccOf<float> { using type = double; };
template <> struct AccOf<double> { using type = double; };

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
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) acc += static_cast<Acc>(x[base + RedOffset(r, i)]);
    acc = BlockSum(acc);
    if (threadIdx.x == 0) out[o * splits + s] = static_cast<TO>(acc);
  }
}

template <typename TI, typename TO>
__global__ void ThreadReduceKernel(const TI* x, TO* out, ReduceShape r) {
  using Acc = typename AccOf<TI>::type;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < r.out_numel; o += int64_t(gridDim.x) * blockDim.x) {
    int64_t base = KeepOffset(r, o);
    Acc acc = 0;
    for (int64_t i = 0; i < r.red_numel; ++i) acc += static_cast<Acc>(x[base + RedOffset(r, i)]);
    out[o] = static_cast<TO>(acc);
  }
}

// out[o] = sum over s of partial[o * splits + s], in order.
template <typename Acc, typename TO>
__global__ void FinishKernel(const Acc* partial, TO* out, int64_t out_numel, int splits) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < out_numel; o += int64_t(gridDim.x) * blockDim.x) {
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
cudaError_t Sum(const ReduceShape& r, const TI* x, TO* out, void* scratch, int device, cudaStream_t stream) {
  using Acc = typename AccOf<TI>::type;
  if (r.out_numel == 0) return cudaSuccess;
  if (r.red_numel <= kThreadPerOutputMax) {
    ThreadReduceKernel<TI, TO><<<GridFor(r.out_numel), kThreads, 0, stream>>>(x, out, r);
    return cudaGetLastError();
  }
  int splits = Splits(r, device);
  unsigned grid_x = static_cast<unsigned>(r.out_numel < (1 << 20) ? r.out_numel : (1 << 20));
  if (splits == 1) {
    BlockReduceKernel<TI, TO><<<dim3(grid_x, 1), kReduceThreads, 0, stream>>>(x, out, r, r.red_numel, 1);
    return cudaGetLastError();
  }
  int64_t chunk = (r.red_numel + splits - 1) / splits;
  Acc* partial = static_cast<Acc*>(scratch);
  BlockReduceKernel<TI, Acc><<<dim3(grid_x, splits), kReduceThreads, 0, stream>>>(x, partial, r, chunk, splits);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  FinishKernel<Acc, TO><<<GridFor(r.out_numel), kThreads, 0, stream>>>(partial, out, r.out_numel, splits);
  return cudaGetLastError();
}

}  // namespace

bool SumSupported(ScalarType in) { return in != ScalarType::kF16 && in != ScalarType::kBF16; }

size_t SumScratchBytes(const ReduceShape& r, int device) {
  int splits = Splits(r, device);
  return splits == 1 ? 0 : static_cast<size_t>(r.out_numel) * splits * 8;  // Acc is 8 bytes
}

cudaError_t LaunchSum(ScalarType in, const ReduceShape& r, const void* x, void* out, void* scratch, int device,
                      cudaStream_t stream) {
  switch (in) {
    case ScalarType::kF32: return Sum(r, static_cast<const float*>(x), static_cast<float*>(out), scratch, device, stream);
    case ScalarType::kF64: return Sum(r, static_cast<const double*>(x), static_cast<double*>(out), scratch, device, stream);
    case ScalarType::kBool: return Sum(r, static_cast<const bool*>(x), static_cast<int64_t*>(out), scratch, device, stream);
    case ScalarType::kU8: return Sum(r, static_cast<const uint8_t*>(x), static_cast<int64_t*>(out), scratch, device, stream);
    case ScalarType::kI8: return Sum(r, static_cast<const int8_t*>(x), static_cast<int64_t*>(out), scratch, device, stream);
    case ScalarType::kI32: return Sum(r, static_cast<const int32_t*>(x), static_cast<int64_t*>(out), scratch, device, stream);
    case ScalarType::kI64: return Sum(r, static_cast<const int64_t*>(x), static_cast<int64_t*>(out), scratch, device, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace oneflow_like
