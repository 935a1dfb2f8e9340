// Device code of the unary elementwise family, scalar variants included (x op python-scalar).
// Dtype sets match kernels/cpu: neg/relu and the scalar ops on u8, i8, i32, i64, f32, f64;
// exp and rdiv_scalar on f32/f64 (the schemas promote integers to float first).
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T> struct NegF { __device__ T operator()(T x) const { return T(-x); } };
template <typename T> struct ReluF { __device__ T operator()(T x) const { return x > T(0) ? x : T(0); } };
template <typename T> struct ExpF {
  __device__ T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) return expf(x);
    else return exp(x);
  }
};
template <typename T> struct AddScalarF { T s; __device__ T operator()(T x) const { return T(x + s); } };
template <typename T> struct MulScalarF { T s; __device__ T operator()(T x) const { return T(x * s); } };
template <typename T> struct RSubScalarF { T s; __device__ T operator()(T x) const { return T(s - x); } };
template <typename T> struct RDivScalarF { T s; __device__ T operator()(T x) const { return T(s / x); } };

bool IsFloat(ScalarType t) { return t == ScalarType::kF32 || t == ScalarType::kF64; }
bool IsNumeric(ScalarType t) {
  return t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI32 || t == ScalarType::kI64 || IsFloat(t);
}

}  // namespace

bool UnarySupported(UnaryOp op, ScalarType t) {
  return (op == UnaryOp::kExp || op == UnaryOp::kRDivScalar) ? IsFloat(t) : IsNumeric(t);
}

cudaError_t LaunchUnary(UnaryOp op, ScalarType t, double scalar, const LoopShape& loop, const Operand& out,
                        const Operand& in, cudaStream_t stream) {
  if (!UnarySupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  switch (op) {
    case UnaryOp::kNeg:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(loop, out, in, NegF<scalar_t>{}, stream)));
      break;
    case UnaryOp::kRelu:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(loop, out, in, ReluF<scalar_t>{}, stream)));
      break;
    case UnaryOp::kExp:
      OFL_CU_SWITCH_FLOAT(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(loop, out, in, ExpF<scalar_t>{}, stream)));
      break;
    case UnaryOp::kAddScalar:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(
                                   loop, out, in, AddScalarF<scalar_t>{static_cast<scalar_t>(scalar)}, stream)));
      break;
    case UnaryOp::kMulScalar:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(
                                   loop, out, in, MulScalarF<scalar_t>{static_cast<scalar_t>(scalar)}, stream)));
      break;
    case UnaryOp::kRSubScalar:
      OFL_CU_SWITCH_NUMERIC(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(
                                   loop, out, in, RSubScalarF<scalar_t>{static_cast<scalar_t>(scalar)}, stream)));
      break;
    case UnaryOp::kRDivScalar:
      OFL_CU_SWITCH_FLOAT(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(
                                 loop, out, in, RDivScalarF<scalar_t>{static_cast<scalar_t>(scalar)}, stream)));
      break;
  }
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
