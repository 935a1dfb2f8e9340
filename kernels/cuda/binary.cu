// Device code of the binary elementwise family: add (with alpha), mul, div, relu_grad.
// Dtype sets match kernels/cpu: add/mul on u8, i8, i32, i64, f32, f64; div and relu_grad on f32/f64.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

// Same expression as the CPU: alpha == 1 is special-cased so integer adds never multiply.
template <typename T> struct AddF {
  T alpha;
  __device__ T operator()(T x, T y) const { return alpha == T(1) ? T(x + y) : T(x + alpha * y); }
};
template <typename T> struct MulF { __device__ T operator()(T x, T y) const { return T(x * y); } };
template <typename T> struct DivF { __device__ T operator()(T x, T y) const { return T(x / y); } };
template <typename T> struct ReluGradF {
  __device__ T operator()(T g, T y) const { return y > T(0) ? g : T(0); }
};

bool IsFloat(ScalarType t) { return t == ScalarType::kF32 || t == ScalarType::kF64; }

}  // namespace

bool BinarySupported(BinaryOp op, ScalarType t) {
  if (op == BinaryOp::kDiv || op == BinaryOp::kReluGrad) return IsFloat(t);
  return t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI32 || t == ScalarType::kI64 || IsFloat(t);
}

cudaError_t LaunchBinary(BinaryOp op, ScalarType t, double alpha, const LoopShape& loop, const Operand& out,
                         const Operand& a, const Operand& b, cudaStream_t stream) {
  if (!BinarySupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  switch (op) {
    case BinaryOp::kAdd:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchBinaryLoop<scalar_t>(loop, out, a, b,
                                                               AddF<scalar_t>{static_cast<scalar_t>(alpha)}, stream)));
      break;
    case BinaryOp::kMul:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchBinaryLoop<scalar_t>(loop, out, a, b, MulF<scalar_t>{}, stream)));
      break;
    case BinaryOp::kDiv:
      OFL_CU_SWITCH_FLOAT(t, e = (LaunchBinaryLoop<scalar_t>(loop, out, a, b, DivF<scalar_t>{}, stream)));
      break;
    case BinaryOp::kReluGrad:
      OFL_CU_SWITCH_FLOAT(t, e = (LaunchBinaryLoop<scalar_t>(loop, out, a, b, ReluGradF<scalar_t>{}, stream)));
      break;
  }
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
