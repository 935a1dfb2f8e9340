// The interface between kernels/cuda/amp.cc (checks, registration) and amp.cu (device code) for
// the fused GradScaler ops (oneflow_like/opdefs/amp.def). Plain C++ (see launch.h). The scale
// values stay on the device: inv_scale and found_inf are read there, never copied to the host.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace oneflow_like {
namespace cuda {

// data[0, n) (dtype t: f16, bf16, f32, f64; contiguous) *= *inv_scale in place (f16/bf16
// through float, f64 in double), and *found_inf = 1 when an element was inf/nan (tested before
// scaling, as the CPU). One launch per grad.
cudaError_t LaunchAmpUnscale(ScalarType t, void* data, int64_t n, const float* inv_scale,
                             float* found_inf, cudaStream_t s);
// torch._amp_update_scale_ on one thread: the CPU kernel's rule (kernels/cpu/amp.cc).
cudaError_t LaunchAmpUpdateScale(float* scale, int32_t* growth_tracker, const float* found_inf,
                                 double growth_factor, double backoff_factor,
                                 int64_t growth_interval, cudaStream_t s);

}  // namespace cuda
}  // namespace oneflow_like
