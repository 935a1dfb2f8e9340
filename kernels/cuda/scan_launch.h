// The interface between kernels/cuda/scan.cc (attributes, checks, registration) and scan.cu
// (device code) for the scan and ordering family: cumsum, cumprod, logcumsumexp, cummax/cummin,
// sort, topk, nanmedian_dim and the scans' gradients. Plain C++ (see launch.h). Every op works
// on the n-long lines of a contiguous tensor seen as outer x n x inner around its dim.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/launch.h"

namespace oneflow_like {
namespace cuda {

struct ScanLines {
  int64_t outer = 1, n = 1, inner = 1;
  constexpr int64_t count() const { return outer * inner; }
};

// Dtype sets, as the CPU's: numeric (u8 i8 i32 i64 f32 f64), float (f32 f64), numeric + bool.
bool ScanNumeric(ScalarType t);
bool ScanFloat(ScalarType t);
bool ScanNumericBool(ScalarType t);

// cumsum / cumprod (accumulating floats in double and integers in int64, as the CPU).
cudaError_t LaunchCumScan(ScalarType t, bool prod, bool reverse, const ScanLines& L, const void* x,
                          void* out, cudaStream_t s);
cudaError_t LaunchLogCumSumExp(ScalarType t, const ScanLines& L, const void* x, void* out,
                               cudaStream_t s);
// (x, out, g) -> dx of cumprod / logcumsumexp.
cudaError_t LaunchScanGrad(ScalarType t, bool logcumsumexp, const ScanLines& L, const void* x,
                           const void* out, const void* g, void* dx, cudaStream_t s);
cudaError_t LaunchCumExtreme(ScalarType t, bool max, const ScanLines& L, const void* x, void* out,
                             int64_t* idx, cudaStream_t s);

// sort / topk / nanmedian_dim order each line with a stable segmented sort (CUB) of 64-bit keys
// (NaN above every number, -0 == +0, ties by position), so they need `OrderTempBytes` of scratch.
size_t OrderTempBytes(const ScanLines& L);
// The first k of each line in ascending (descending) order -> values [outer, k, inner] and
// their positions.
cudaError_t LaunchOrder(ScalarType t, bool descending, const ScanLines& L, int64_t k, const void* x,
                        void* out, int64_t* idx, void* temp, size_t temp_bytes, cudaStream_t s);
// The lower median of each line's non-NaN values and its position (a line of NaNs: position 0).
cudaError_t LaunchNanMedian(ScalarType t, const ScanLines& L, const void* x, void* out,
                            int64_t* idx, void* temp, size_t temp_bytes, cudaStream_t s);

}  // namespace cuda
}  // namespace oneflow_like
