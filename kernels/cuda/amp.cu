// Device code of the fused GradScaler ops (kernels/cuda/amp_launch.h).
#include <cstdint>

#include "kernels/cuda/amp_launch.h"
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
struct AmpMath {  // f16 / bf16: through float
  using C = float;
  __device__ static C Load(T v) { return AsFloat(v); }
  __device__ static T Store(C v) { return FromFloat<T>(v); }
};
template <>
struct AmpMath<float> {
  using C = float;
  __device__ static C Load(float v) { return v; }
  __device__ static float Store(C v) { return v; }
};
template <>
struct AmpMath<double> {
  using C = double;
  __device__ static C Load(double v) { return v; }
  __device__ static double Store(C v) { return v; }
};

template <typename T>
__global__ void AmpUnscaleKernel(T* data, int64_t n, const float* inv_scale, float* found_inf) {
  using M = AmpMath<T>;
  const float inv = *inv_scale;
  bool bad = false;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x) {
    typename M::C v = M::Load(data[i]);
    bad |= !isfinite(v);
    if (inv != 1.0f) data[i] = M::Store(v * static_cast<typename M::C>(inv));
  }
  if (bad) *found_inf = 1.0f;  // every writer stores the same value
}

__global__ void AmpUpdateScaleKernel(float* scale, int32_t* tracker, const float* found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *scale = static_cast<float>(*scale * backoff_factor);
    *tracker = 0;
    return;
  }
  const int64_t clean = static_cast<int64_t>(*tracker) + 1;
  if (clean == growth_interval) {
    const float grown = static_cast<float>(*scale * growth_factor);
    if (isfinite(grown)) *scale = grown;
    *tracker = 0;
  } else {
    *tracker = static_cast<int32_t>(clean);
  }
}

template <typename T>
cudaError_t Unscale(void* data, int64_t n, const float* inv, float* found, cudaStream_t s) {
  AmpUnscaleKernel<T><<<GridFor(n), kThreads, 0, s>>>(static_cast<T*>(data), n, inv, found);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchAmpUnscale(ScalarType t, void* data, int64_t n, const float* inv_scale,
                             float* found_inf, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  switch (t) {
    case ScalarType::kF16: return Unscale<Half>(data, n, inv_scale, found_inf, s);
    case ScalarType::kBF16: return Unscale<BFloat16>(data, n, inv_scale, found_inf, s);
    case ScalarType::kF32: return Unscale<float>(data, n, inv_scale, found_inf, s);
    case ScalarType::kF64: return Unscale<double>(data, n, inv_scale, found_inf, s);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchAmpUpdateScale(float* scale, int32_t* growth_tracker, const float* found_inf,
                                 double growth_factor, double backoff_factor,
                                 int64_t growth_interval, cudaStream_t s) {
  AmpUpdateScaleKernel<<<1, 1, 0, s>>>(scale, growth_tracker, found_inf, growth_factor,
                                       backoff_factor, growth_interval);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
