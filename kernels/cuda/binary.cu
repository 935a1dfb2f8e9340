// Device code of the binary elementwise family: the table's ops (oneflow_like/opdefs/binary.def,
// the very functors kernels/cpu runs, tensor-tensor and scalar variants), reduce_eq_mask of
// reduce.cc, and the unary table's gradients (unary.def's *_grad,
// binary loops on the CPU too). Integer division by zero sets the kernel's error flag (the host
// reports it; nothing faults).
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {
using opdefs::BinaryId;
using opdefs::InTypes;
using opdefs::Types;

// The binary table: one functor per input dtype (and output kind: the inputs' dtype or bool)
// whose switch calls the op's formula on ScalarMath<T>, instantiated only for ops whose dtype set
// holds T. Scalar variants run in unary loops with the scalar converted once on the host.
template <typename T, bool kBoolOut>
struct BinaryTableF {
  using TO = std::conditional_t<kBoolOut, bool, T>;
  BinaryId op;
  opdefs::BinaryAttrsAll a;
  int* flag;
  // Same-dtype outputs only: mode 1 runs the unary table's backward op `grad_op` (unary.def's
  // *_grad(dy, s)), mode 2 the listed op `listed` (launch.h), in the same loops.
  int mode = 0;
  opdefs::UnaryId grad_op = {};
  opdefs::UnaryAttrsAll ga = {};
  BinaryOp listed = {};
  double d0 = 0;
  __device__ T Grad(T dy, T s) const {
    if constexpr (!std::is_same_v<T, bool>) {
      opdefs::ScalarMath<T> m;
      switch (grad_op) {
#define OFL_ATTRS(...)
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(name, Name, types, ...)                \
  case opdefs::UnaryId::name:                                 \
    if constexpr (opdefs::InTypes<opdefs::Types::types, T>()) \
      return opdefs::Name##Fn{}(m, dy, s, ga.name);           \
    break;
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
        default: break;
      }
    }
    return dy;
  }
  __device__ T Listed(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      switch (listed) {
        case BinaryOp::reduce_eq_mask: {
          if (d0 == 0) return T((x == y || (IsNanV(x) && IsNanV(y))) ? 1 : 0);
          T a = x < 0 ? -x : x;
          return T((a == y || (IsNanV(a) && IsNanV(y))) ? (x < 0 ? -1 : 1) : 0);
        }
      }
    }
    return x;
  }
  __device__ TO operator()(T x, T y) const {
    if constexpr (!kBoolOut) {
      if (mode == 1) return Grad(x, y);
      if (mode == 2) return Listed(x, y);
    }
    opdefs::ScalarMath<T> m;
    m.zero_flag = flag;
    switch (op) {
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, ...)                                              \
  case BinaryId::name:                                                                  \
    if constexpr (opdefs::Name##Fn::kBoolOut == kBoolOut && InTypes<Types::types, T>()) \
      return opdefs::Name##Fn{}(m, x, y, a.name);                                       \
    break;
#define OFL_BINARY_SCALAR(...)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
      default: break;
    }
    return TO();
  }
};

// The hot arithmetic ops on f32/f64 in their own kernels. Through the table's functor (a switch
// over every op, or even the one op's functor with its alpha test per element) a large
// contiguous add ran at 2.5 TB/s on the H200; this plain form at 4.3 TB/s (a microbenchmark of
// the same loops side by side, session 11; one float4 per thread, the loop here, did 4.33). The
// formulas are the table's for these cases: add/sub with alpha 1 (other alphas keep the table
// path), mul, div.
template <typename T, int kOp>
struct HotBinaryF {
  __device__ T operator()(T x, T y) const {
    if constexpr (kOp == 0) return x + y;
    if constexpr (kOp == 1) return x - y;
    if constexpr (kOp == 2) return x * y;
    if constexpr (kOp == 3) return x / y;
  }
};

template <typename T>
bool LaunchHotBinary(BinaryId op, const opdefs::BinaryAttrsAll& a, const LoopShape& loop,
                     const Operand& out, const Operand& x, const Operand& y, cudaStream_t stream,
                     cudaError_t* e) {
  switch (op) {
    case BinaryId::add:
      if (a.add.alpha != 1) return false;
      *e = LaunchBinaryLoop<T>(loop, out, x, y, HotBinaryF<T, 0>{}, stream);
      return true;
    case BinaryId::sub:
      if (a.sub.alpha != 1) return false;
      *e = LaunchBinaryLoop<T>(loop, out, x, y, HotBinaryF<T, 1>{}, stream);
      return true;
    case BinaryId::mul:
      *e = LaunchBinaryLoop<T>(loop, out, x, y, HotBinaryF<T, 2>{}, stream);
      return true;
    case BinaryId::div:
      *e = LaunchBinaryLoop<T>(loop, out, x, y, HotBinaryF<T, 3>{}, stream);
      return true;
    default: return false;
  }
}

}  // namespace

bool BinaryTableBoolOut(BinaryId op) {
  switch (op) {
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, ...) \
  case BinaryId::name:              \
    return opdefs::Name##Fn::kBoolOut;
#define OFL_BINARY_SCALAR OFL_BINARY
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
  }
  return false;
}

bool BinarySupported(BinaryOp op, ScalarType t) {
  switch (op) {
#define OFL_CASE(o, set) \
  case BinaryOp::o: return InSet(set, t);
    OFL_CUDA_BINARY_OPS(OFL_CASE)
#undef OFL_CASE
  }
  return false;
}
bool BinaryTableSupported(BinaryId op, ScalarType t) {
  switch (op) {
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, ...)                 \
  case BinaryId::name:                                     \
    return InSet(Types::types == Types::Float         ? F  \
                 : Types::types == Types::Numeric     ? N  \
                 : Types::types == Types::NumericBool ? NB \
                 : Types::types == Types::IntBool     ? IB \
                                                      : B,     \
                 t);
#define OFL_BINARY_SCALAR OFL_BINARY
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
  }
  return false;
}

cudaError_t LaunchBinaryTable(BinaryId op, ScalarType t, const opdefs::BinaryAttrsAll& a,
                              int* zero_flag, const LoopShape& loop, const Operand& out,
                              const Operand& x, const Operand& y, cudaStream_t stream) {
  if (!BinaryTableSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  if (BinaryTableBoolOut(op)) {
    OFL_CU_SWITCH_NUMERIC_BOOL(
        t, e = (LaunchMixedBinary<bool, scalar_t>(
               loop, out, x, y, BinaryTableF<scalar_t, true>{op, a, nullptr}, stream)));
  } else {
    if (t == ScalarType::kF32 && LaunchHotBinary<float>(op, a, loop, out, x, y, stream, &e))
      return e;
    if (t == ScalarType::kF64 && LaunchHotBinary<double>(op, a, loop, out, x, y, stream, &e))
      return e;
    OFL_CU_SWITCH_NUMERIC_BOOL(
        t, e = (LaunchBinaryLoop<scalar_t>(
               loop, out, x, y, BinaryTableF<scalar_t, false>{op, a, zero_flag}, stream)));
  }
  return e;
}

cudaError_t LaunchBinary(BinaryOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                         const Operand& out, const Operand& a, const Operand& b,
                         cudaStream_t stream) {
  if (!BinarySupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_FLOAT(t, {
    BinaryTableF<scalar_t, false> f{BinaryId{}, {}, nullptr, 2};
    f.listed = op;
    f.d0 = p.p0;
    e = LaunchBinaryLoop<scalar_t>(loop, out, a, b, f, stream);
  });
  return e;
}

cudaError_t LaunchUnaryGradTable(opdefs::UnaryId op, ScalarType t, const opdefs::UnaryAttrsAll& a,
                                 const LoopShape& loop, const Operand& out, const Operand& dy,
                                 const Operand& s, cudaStream_t stream) {
  if (!UnaryTableSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC(t, {
    BinaryTableF<scalar_t, false> f{BinaryId{}, {}, nullptr, 1, op, a};
    e = LaunchBinaryLoop<scalar_t>(loop, out, dy, s, f, stream);
  });
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
