// Device code of the creation family: full / fill_ into a possibly strided output.
#include <cmath>
#include <cstring>

#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
__global__ void FillKernel(T* out, T value, int64_t n, bool contiguous, OffsetCalc<1> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (contiguous) {
      out[i] = value;
    } else {
      int64_t off[1];
      calc.Get(i, off);
      out[off[0]] = value;
    }
  }
}

// The CPU's FromDouble: 16-bit floats through float, bool as != 0, else static_cast.
template <typename T>
T HostFromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else
    return static_cast<T>(v);
}
uint16_t HalfBits(float f) {
  __half h = __float2half_rn(f);  // host-callable, round to nearest even like base's float16
  return __half_as_ushort(h);
}
uint16_t BFloat16Bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace

cudaError_t LaunchFill(ScalarType t, double value, const LoopShape& loop, const Operand& out,
                       cudaStream_t stream) {
  if (loop.numel == 0) return cudaSuccess;
  const Operand* ops[1] = {&out};
  OffsetCalc<1> calc = MakeOffsetCalc<1>(loop, ops);
  unsigned grid = GridFor(loop.numel);
  switch (t) {
    case ScalarType::kF16:
      FillKernel<Half><<<grid, kThreads, 0, stream>>>(static_cast<Half*>(out.data),
                                                      Half{HalfBits(static_cast<float>(value))},
                                                      loop.numel, out.contiguous, calc);
      break;
    case ScalarType::kBF16:
      FillKernel<BFloat16><<<grid, kThreads, 0, stream>>>(
          static_cast<BFloat16*>(out.data), BFloat16{BFloat16Bits(static_cast<float>(value))},
          loop.numel, out.contiguous, calc);
      break;
    default:
      OFL_CU_SWITCH_ALL(
          t, if constexpr (!IsHalfLike<scalar_t>::value) {
            scalar_t v = HostFromDouble<scalar_t>(value);
            if (out.contiguous && value == 0.0 && !std::signbit(value))
              return cudaMemsetAsync(out.data, 0, loop.numel * sizeof(scalar_t), stream);
            FillKernel<scalar_t><<<grid, kThreads, 0, stream>>>(static_cast<scalar_t*>(out.data), v,
                                                                loop.numel, out.contiguous, calc);
          });
  }
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
