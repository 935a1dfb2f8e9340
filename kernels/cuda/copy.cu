// Device code of the copy family: one cast kernel per output dtype; the input dtype is a
// uniform runtime switch inside it (10 instantiations rather than 100, same conversions).
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename TO>
__device__ __forceinline__ TO LoadConvert(const void* base, int64_t off, ScalarType from) {
  switch (from) {
    case ScalarType::kBool: return Convert<TO>(static_cast<const bool*>(base)[off]);
    case ScalarType::kU8: return Convert<TO>(static_cast<const uint8_t*>(base)[off]);
    case ScalarType::kI8: return Convert<TO>(static_cast<const int8_t*>(base)[off]);
    case ScalarType::kI32: return Convert<TO>(static_cast<const int32_t*>(base)[off]);
    case ScalarType::kI64: return Convert<TO>(static_cast<const int64_t*>(base)[off]);
    case ScalarType::kF16: return Convert<TO>(static_cast<const Half*>(base)[off]);
    case ScalarType::kBF16: return Convert<TO>(static_cast<const BFloat16*>(base)[off]);
    case ScalarType::kF32: return Convert<TO>(static_cast<const float*>(base)[off]);
    case ScalarType::kF64: return Convert<TO>(static_cast<const double*>(base)[off]);
    case ScalarType::kI16: return Convert<TO>(static_cast<const int16_t*>(base)[off]);
    default: break;  // complex and the limited dtypes: refused by the dispatcher on CUDA
  }
  return TO{};
}

template <typename TO>
__global__ void CastKernel(TO* out, const void* in, ScalarType from, int64_t n, bool contiguous,
                           OffsetCalc<2> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (contiguous) {
      out[i] = LoadConvert<TO>(in, i, from);
    } else {
      int64_t off[2];
      calc.Get(i, off);
      out[off[0]] = LoadConvert<TO>(in, off[1], from);
    }
  }
}

}  // namespace

cudaError_t LaunchCast(ScalarType to, ScalarType from, const LoopShape& loop, const Operand& out,
                       const Operand& in, cudaStream_t stream) {
  if (loop.numel == 0) return cudaSuccess;
  bool contiguous = out.contiguous && in.contiguous;
  size_t elem_size = 0;
  OFL_CU_SWITCH_ALL(to, elem_size = sizeof(scalar_t));
  if (to == from && contiguous)
    return cudaMemcpyAsync(out.data, in.data, loop.numel * elem_size, cudaMemcpyDeviceToDevice,
                           stream);
  const Operand* ops[2] = {&out, &in};
  OffsetCalc<2> calc = MakeOffsetCalc<2>(loop, ops);
  OFL_CU_SWITCH_ALL(
      to, (CastKernel<scalar_t><<<GridFor(loop.numel), kThreads, 0, stream>>>(
              static_cast<scalar_t*>(out.data), in.data, from, loop.numel, contiguous, calc)));
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
