// Device code of the creation and random families (kernels/cpu/creation.cc, random.cc): one
// generator kernel writing f(i) for the i-th element in row-major order (strided outputs
// included), converted as the CPU's FromDouble. Random draws use kernels/cuda/rng.h, the CPU's
// counter-based generator, so the same seed gives the CPU's tensor.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/rng.h"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
struct GenF {
  GenOp op;
  GenParams p;
  __device__ T operator()(int64_t i) const {
    double v = 0;
    switch (op) {
      case GenOp::kArange: v = MulAdd(static_cast<double>(i), p.b, p.a); break;
      case GenOp::kLinspace: {
        double step = p.n > 1 ? (p.b - p.a) / static_cast<double>(p.n - 1) : 0.0;
        v = i < (p.n + 1) / 2 ? MulAdd(static_cast<double>(i), step, p.a)
                              : __dsub_rn(p.b, __dmul_rn(static_cast<double>(p.n - 1 - i), step));
        break;
      }
      case GenOp::kEye: {
        int64_t m = static_cast<int64_t>(p.b);
        v = i / m == i % m ? 1.0 : 0.0;
        break;
      }
      case GenOp::kUniform: v = MulAdd(p.b - p.a, RngUniform(p.seed, i), p.a); break;
      case GenOp::kNormal: v = MulAdd(p.b, RngNormal(p.seed, i), p.a); break;
      case GenOp::kRandint:
        v = static_cast<double>(p.n + static_cast<int64_t>(RngBits(p.seed, i) % p.span));
        break;
      case GenOp::kBernoulli: {
        double pr = p.src_type == ScalarType::kF32
                        ? static_cast<double>(static_cast<const float*>(p.src)[i])
                        : static_cast<const double*>(p.src)[i];
        v = RngUniform(p.seed, i) < pr ? 1.0 : 0.0;
        break;
      }
      case GenOp::kFromI64: v = static_cast<double>(static_cast<const int64_t*>(p.src)[i]); break;
    }
    return FromDouble<T>(v);
  }
};

template <typename T>
__global__ void GenKernel(T* out, int64_t n, bool contig, OffsetCalc<1> calc, GenF<T> f) {
  if (f.p.flag && *f.p.flag != kNoBadIndex) return;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off = i;
    if (!contig) {
      int64_t o[1];
      calc.Get(i, o);
      off = o[0];
    }
    out[off] = f(i);
  }
}

template <typename T>
__global__ void CheckProbKernel(const T* p, int64_t n, unsigned long long* flag) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    if (!(p[i] >= 0 && p[i] <= 1)) atomicMin(flag, static_cast<unsigned long long>(i));
}

}  // namespace

cudaError_t LaunchGenerate(GenOp op, ScalarType t, const GenParams& p, const LoopShape& loop,
                           const Operand& out, cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  const Operand* ops[1] = {&out};
  OFL_CU_SWITCH_ALL(t, GenKernel<scalar_t><<<GridFor(loop.numel), kThreads, 0, s>>>(
                           static_cast<scalar_t*>(out.data), loop.numel, out.contiguous,
                           MakeOffsetCalc<1>(loop, ops), GenF<scalar_t>{op, p}));
  return cudaGetLastError();
}

cudaError_t LaunchCheckProbabilities(ScalarType t, const void* p, int64_t n,
                                     unsigned long long* flag, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, CheckProbKernel<scalar_t>
                      <<<GridFor(n), kThreads, 0, s>>>(static_cast<const scalar_t*>(p), n, flag));
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
