// Device code of the unary elementwise family: the table's ops (oneflow_like/opdefs/unary.def,
// the very functors kernels/cpu runs) and the scalar variants of kernels/cpu/binary.cc; results
// match the CPU up to the last-ulp differences of the device math library.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

// The unary table (oneflow_like/opdefs/unary.def): one functor per dtype whose switch calls the
// op's formula on ScalarMath<T>, instantiated only for ops whose dtype set holds T (each dtype is
// compiled once, not once per op). With `scalar_op` set (>= 0, a UnaryOp) it runs the binary
// family's scalar variants x op s0 (and logical_not in place) instead, in the same loops.
using opdefs::UnaryId;
template <typename T>
struct UnaryTableF {
  UnaryId op;
  int scalar_op;
  T s0;
  opdefs::UnaryAttrsAll a;
  __device__ T Scalar(T x) const {
    switch (static_cast<UnaryOp>(scalar_op)) {
      case UnaryOp::add_scalar: return T(x + s0);
      case UnaryOp::mul_scalar: return T(x * s0);
      case UnaryOp::rsub_scalar: return T(s0 - x);
      case UnaryOp::rdiv_scalar: return T(s0 / x);
      case UnaryOp::logical_not: return static_cast<T>(x == T(0));
    }
    return x;
  }
  __device__ T operator()(T x) const {
    if (scalar_op >= 0) return Scalar(x);
    opdefs::ScalarMath<T> m;
    switch (op) {
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, ...)                     \
  case UnaryId::name:                                         \
    if constexpr (opdefs::InTypes<opdefs::Types::types, T>()) \
      return opdefs::Name##Fn{}(m, x, a.name);                \
    break;
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
      default: break;
    }
    return x;
  }
};
template <typename TI>
struct UnaryBoolF {
  UnaryBoolOp op;
  TI s;
  __device__ bool operator()(TI x) const {
    switch (op) {
      case UnaryBoolOp::eq_scalar: return x == s;
      case UnaryBoolOp::ne_scalar: return x != s;
      case UnaryBoolOp::lt_scalar: return x < s;
      case UnaryBoolOp::le_scalar: return x <= s;
      case UnaryBoolOp::gt_scalar: return x > s;
      case UnaryBoolOp::ge_scalar: return x >= s;
      case UnaryBoolOp::logical_not: return x == TI(0);
    }
    return false;
  }
};

template <typename T>
UnaryTableF<T> MakeScalar(UnaryOp op, double s) {
  if constexpr (std::is_same_v<T, bool>)
    return UnaryTableF<T>{UnaryId{}, static_cast<int>(op), s != 0, {}};
  else
    return UnaryTableF<T>{UnaryId{}, static_cast<int>(op), static_cast<T>(s), {}};
}

}  // namespace

bool UnaryTableSupported(UnaryId op, ScalarType t) {
  switch (op) {
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, ...)                               \
  case UnaryId::name:                                                   \
    return InSet(opdefs::Types::types == opdefs::Types::Float     ? F   \
                 : opdefs::Types::types == opdefs::Types::Numeric ? N   \
                                                                  : IB, \
                 t);
#define OFL_UNARY_GRAD OFL_UNARY
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
  }
  return false;
}

cudaError_t LaunchUnaryTable(UnaryId op, ScalarType t, const opdefs::UnaryAttrsAll& a,
                             const LoopShape& loop, const Operand& out, const Operand& in,
                             cudaStream_t stream) {
  if (!UnaryTableSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(
      t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(
             loop, out, in, UnaryTableF<scalar_t>{op, -1, scalar_t(), a}, stream)));
  return e;
}

bool UnarySupported(UnaryOp op, ScalarType t) {
  switch (op) {
#define OFL_CASE(o, set) \
  case UnaryOp::o: return InSet(set, t);
    OFL_CUDA_UNARY_OPS(OFL_CASE)
#undef OFL_CASE
  }
  return false;
}

bool UnaryBoolSupported(UnaryBoolOp op, ScalarType t) {
  switch (op) {
#define OFL_CASE(o, set) \
  case UnaryBoolOp::o: return InSet(set, t);
    OFL_CUDA_UNARY_BOOL_OPS(OFL_CASE)
#undef OFL_CASE
  }
  return false;
}

cudaError_t LaunchUnary(UnaryOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                        const Operand& out, const Operand& in, cudaStream_t stream) {
  if (!UnarySupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, e = (LaunchUnaryLoop<scalar_t, scalar_t>(
                                    loop, out, in, MakeScalar<scalar_t>(op, p.p0), stream)));
  return e;
}

cudaError_t LaunchUnaryBool(UnaryBoolOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                            const Operand& out, const Operand& in, cudaStream_t stream) {
  if (!UnaryBoolSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, {
    UnaryBoolF<scalar_t> f{op, static_cast<scalar_t>(p.p0)};
    e = (LaunchUnaryLoop<bool, scalar_t>(loop, out, in, f, stream));
  });
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
