// Device code of the unary elementwise family: the table's ops (oneflow_like/opdefs/unary.def,
// the very functors kernels/cpu runs), logical_not and the binary table's scalar variants
// (oneflow_like/opdefs/binary.def), which share these loops; results match the CPU up to the
// last-ulp differences of the device math library.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

// The unary table (oneflow_like/opdefs/unary.def): one functor per dtype whose switch calls the
// op's formula on ScalarMath<T>, instantiated only for ops whose dtype set holds T (each dtype is
// compiled once, not once per op). With `scalar_op` set it runs logical_not in place (0) or the
// binary table's scalar variant `bop` (1: f(x, s0)) instead, in the same loops.
using opdefs::UnaryId;
template <typename T>
struct UnaryTableF {
  UnaryId op;
  int scalar_op;
  T s0;
  opdefs::UnaryAttrsAll a;
  opdefs::BinaryId bop = {};
  __device__ T Scalar(T x) const {
    if (scalar_op == 0) return static_cast<T>(x == T(0));  // logical_not
    opdefs::ScalarMath<T> m;
    switch (bop) {
#define OFL_ATTRS(...)
#define OFL_BINARY(...)
#define OFL_BINARY_SCALAR(name, Name, types, ...)                                            \
  case opdefs::BinaryId::name:                                                               \
    if constexpr (!opdefs::Name##Fn::kBoolOut && opdefs::InTypes<opdefs::Types::types, T>()) \
      return opdefs::Name##Fn{}(m, x, s0, opdefs::ScalarAttrs{});                            \
    break;
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
      default: break;
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
// logical_not (table false) or the binary table's bool scalar variant `bop` (f(x, s)).
template <typename TI>
struct UnaryBoolF {
  UnaryBoolOp op;
  TI s;
  bool table = false;
  opdefs::BinaryId bop = {};
  __device__ bool operator()(TI x) const {
    if (!table) return x == TI(0);  // logical_not
    opdefs::ScalarMath<TI> m;
    switch (bop) {
#define OFL_ATTRS(...)
#define OFL_BINARY(...)
#define OFL_BINARY_SCALAR(name, Name, types, ...)                                            \
  case opdefs::BinaryId::name:                                                               \
    if constexpr (opdefs::Name##Fn::kBoolOut && opdefs::InTypes<opdefs::Types::types, TI>()) \
      return opdefs::Name##Fn{}(m, x, s, opdefs::ScalarAttrs{});                             \
    break;
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
      default: break;
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

bool BinaryTableBoolOut(opdefs::BinaryId op);  // binary.cu

cudaError_t LaunchBinaryScalarTable(opdefs::BinaryId op, ScalarType t, double scalar,
                                    const LoopShape& loop, const Operand& out, const Operand& x,
                                    cudaStream_t stream) {
  if (!BinaryTableSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, {
    const scalar_t s = opdefs::ScalarMath<scalar_t>{}.scalar(scalar);
    if (BinaryTableBoolOut(op)) {
      UnaryBoolF<scalar_t> f{UnaryBoolOp::logical_not, s, true, op};
      e = (LaunchUnaryLoop<bool, scalar_t>(loop, out, x, f, stream));
    } else {
      UnaryTableF<scalar_t> f{UnaryId{}, 1, s, {}, op};
      e = (LaunchUnaryLoop<scalar_t, scalar_t>(loop, out, x, f, stream));
    }
  });
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
