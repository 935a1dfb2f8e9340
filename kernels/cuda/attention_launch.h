// Host-side declarations of the fused attention's device code (kernels/cuda/attention.cu), called
// by kernels/cuda/attention.cc. Kept out of launch.h so that a change here rebuilds two files.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace oneflow_like {
namespace cuda {

// Most batch dims of a mask the kernels index (the rest of the op's rank: [L, S]).
constexpr int kAttnMaxBatchDims = 8;
// The largest head dims (E and Ev) the kernels hold per lane: 8 registers of 32 lanes.
constexpr int64_t kAttnMaxHeadDim = 256;

// The problem (batch dims flattened: q [BH, L, E], k [BH / group, S, E], v [BH / group, S, Ev])
// and the mask, read in place with 0 strides where it broadcasts.
struct AttnParams {
  int64_t BH = 0, L = 0, S = 0, E = 0, Ev = 0, group = 1;
  double scale = 1.0;
  bool causal = false;
  double dropout_p = 0.0;
  uint64_t seed = 0;
  const void* mask = nullptr;  // bool, or the operands' dtype (additive)
  bool mask_is_bool = false;
  int nbatch = 0;                         // the op's batch dims
  int64_t batch[kAttnMaxBatchDims] = {};  // their sizes
  int64_t mask_stride[kAttnMaxBatchDims] = {};
  int64_t mask_stride_l = 0, mask_stride_s = 0;
};

// The grid's y dimension is BH (forward, dQ) and BH / group (dK, dV): at most 65535.
constexpr int64_t kAttnMaxBatchHeads = 65535;
// The most dynamic shared memory one of the kernels of the forward (backward = false) or the
// backward asks for, in bytes; above 48 KiB the launch opts in, above the device's
// cudaDevAttrMaxSharedMemoryPerBlockOptin it cannot run (attention.cc refuses it first).
size_t FlashAttentionSmemBytes(ScalarType t, const AttnParams& p, bool backward);

// out [BH, L, Ev], lse [BH, L] (f32; f64 for f64 operands). The ScalarType is q's.
cudaError_t LaunchFlashAttention(ScalarType t, const AttnParams& p, const void* q, const void* k,
                                 const void* v, void* out, void* lse, cudaStream_t stream);
// dq, dk, dv from dout, q, k, v, out, lse; `d` is scratch of BH * L accumulator elements (f32;
// f64 for f64 operands).
cudaError_t LaunchFlashAttentionBackward(ScalarType t, const AttnParams& p, const void* dout,
                                         const void* q, const void* k, const void* v,
                                         const void* out, const void* lse, void* d, void* dq,
                                         void* dk, void* dv, cudaStream_t stream);

}  // namespace cuda
}  // namespace oneflow_like
