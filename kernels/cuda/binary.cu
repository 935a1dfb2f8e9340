// Device code of the binary elementwise family (kernels/cpu/binary.cc, reduce_eq_mask of
// reduce.cc, lerp_scalar of ternary.cc; the unary ops' gradients are in unary.cu): same expressions
// in the same types. Integer division by zero sets OpParams::error_flag (the CPU reports it;
// nothing faults).
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
__device__ __forceinline__ T IntPow(T base, T e) {
  if (e < 0) return base == T(1) ? T(1) : base == T(-1) ? ((e & 1) ? T(-1) : T(1)) : T(0);
  T r = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) r = static_cast<T>(r * base);
    base = static_cast<T>(base * base);
  }
  return r;
}

// floor_divide (0), remainder (1), fmod (2) on integers; y != 0.
template <int K, typename T>
__device__ __forceinline__ T IntDivOp(T x, T y) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return K == 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : T(0);
  }
  T q = x / y, r = x % y;
  bool adjust = r != 0 && ((r < 0) != (y < 0));
  if constexpr (K == 0)
    return adjust ? T(q - 1) : q;
  else if constexpr (K == 1)
    return adjust ? T(r + y) : r;
  else
    return r;
}
template <int K, typename T>
__device__ __forceinline__ T FloatDivOp(T x, T y) {
  if constexpr (K == 0) {
    return Floor(x / y);
  } else if constexpr (K == 1) {
    T r = Fmod(x, y);
    return (r != T(0) && ((r < T(0)) != (y < T(0)))) ? r + y : r;
  } else {
    return Fmod(x, y);
  }
}

template <typename T>
struct BinaryF {
  BinaryOp op;
  T s0, s1;
  double d0;
  int* flag;
  // The unary table's backward ops (oneflow_like/opdefs/unary.def) when `grad` is set: they share
  // this functor's loops instead of instantiating their own.
  bool grad = false;
  opdefs::UnaryId grad_op = {};
  opdefs::UnaryAttrsAll attrs = {};
  __device__ T Grad(T dy, T s) const {
    if constexpr (!std::is_same_v<T, bool>) {
      opdefs::ScalarMath<T> m;
      switch (grad_op) {
#define OFL_ATTRS(...)
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(name, Name, types, ...)                \
  case opdefs::UnaryId::name:                                 \
    if constexpr (opdefs::InTypes<opdefs::Types::types, T>()) \
      return opdefs::Name##Fn{}(m, dy, s, attrs.name);        \
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
  __device__ T operator()(T x, T y) const {
    if (grad) return Grad(x, y);
    constexpr bool kFloat = std::is_floating_point_v<T>;
    constexpr bool kBool = std::is_same_v<T, bool>;
    if constexpr (!kBool) {
      switch (op) {
        case BinaryOp::add: return d0 == 1.0 ? T(x + y) : d0 == -1.0 ? T(x - y) : T(x + s0 * y);
        case BinaryOp::sub: return s0 == T(1) ? T(x - y) : T(x - s0 * y);
        case BinaryOp::mul: return T(x * y);
        case BinaryOp::pow:
          if constexpr (kFloat)
            return Pow(x, y);
          else
            return IntPow(x, y);
        case BinaryOp::floor_divide:
        case BinaryOp::remainder:
        case BinaryOp::fmod: {
          int k = op == BinaryOp::floor_divide ? 0 : op == BinaryOp::remainder ? 1 : 2;
          if constexpr (kFloat) {
            return k == 0   ? FloatDivOp<0>(x, y)
                   : k == 1 ? FloatDivOp<1>(x, y)
                            : FloatDivOp<2>(x, y);
          } else {
            if (y == T(0)) {
              *flag = 1;
              return T(0);
            }
            return k == 0 ? IntDivOp<0>(x, y) : k == 1 ? IntDivOp<1>(x, y) : IntDivOp<2>(x, y);
          }
        }
        default: break;
      }
    }
    switch (op) {
      case BinaryOp::maximum: return (x > y || IsNanV(x)) ? x : y;
      case BinaryOp::minimum: return (x < y || IsNanV(x)) ? x : y;
      default: break;
    }
    if constexpr (!kFloat) {
      switch (op) {
        case BinaryOp::bitwise_and: return static_cast<T>(x & y);
        case BinaryOp::bitwise_or: return static_cast<T>(x | y);
        case BinaryOp::bitwise_xor: return static_cast<T>(x ^ y);
        default: break;
      }
    }
    if constexpr (kFloat) {
      switch (op) {
        case BinaryOp::div: return x / y;
        case BinaryOp::reduce_eq_mask: {
          if (d0 == 0) return T((x == y || (IsNanV(x) && IsNanV(y))) ? 1 : 0);
          T a = x < 0 ? -x : x;
          return T((a == y || (IsNanV(a) && IsNanV(y))) ? (x < 0 ? -1 : 1) : 0);
        }
        case BinaryOp::lerp_scalar:
          return s0 < T(0.5) ? x + s0 * (y - x) : y - (y - x) * (T(1) - s0);
        default: break;
      }
    }
    return x;
  }
};

template <typename T>
struct BinaryBoolF {
  BinaryBoolOp op;
  __device__ bool operator()(T x, T y) const {
    switch (op) {
      case BinaryBoolOp::eq: return x == y;
      case BinaryBoolOp::ne: return x != y;
      case BinaryBoolOp::lt: return x < y;
      case BinaryBoolOp::le: return x <= y;
      case BinaryBoolOp::gt: return x > y;
      case BinaryBoolOp::ge: return x >= y;
      case BinaryBoolOp::logical_and: return x && y;
      case BinaryBoolOp::logical_or: return x || y;
      case BinaryBoolOp::logical_xor: return x != y;
    }
    return false;
  }
};

}  // namespace

bool BinarySupported(BinaryOp op, ScalarType t) {
  switch (op) {
#define OFL_CASE(o, set) \
  case BinaryOp::o: return InSet(set, t);
    OFL_CUDA_BINARY_OPS(OFL_CASE)
#undef OFL_CASE
  }
  return false;
}
bool BinaryBoolSupported(BinaryBoolOp op, ScalarType t) {
  switch (op) {
#define OFL_CASE(o, set) \
  case BinaryBoolOp::o: return InSet(set, t);
    OFL_CUDA_BINARY_BOOL_OPS(OFL_CASE)
#undef OFL_CASE
  }
  return false;
}

cudaError_t LaunchBinary(BinaryOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                         const Operand& out, const Operand& a, const Operand& b,
                         cudaStream_t stream) {
  if (!BinarySupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, {
    BinaryF<scalar_t> f{op, static_cast<scalar_t>(p.p0), static_cast<scalar_t>(p.p1), p.p0,
                        p.error_flag};
    e = LaunchBinaryLoop<scalar_t>(loop, out, a, b, f, stream);
  });
  return e;
}

cudaError_t LaunchBinaryBool(BinaryBoolOp op, ScalarType t, const LoopShape& loop,
                             const Operand& out, const Operand& a, const Operand& b,
                             cudaStream_t stream) {
  if (!BinaryBoolSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, e = (LaunchMixedBinary<bool, scalar_t>(
                                    loop, out, a, b, BinaryBoolF<scalar_t>{op}, stream)));
  return e;
}

cudaError_t LaunchUnaryGradTable(opdefs::UnaryId op, ScalarType t, const opdefs::UnaryAttrsAll& a,
                                 const LoopShape& loop, const Operand& out, const Operand& dy,
                                 const Operand& s, cudaStream_t stream) {
  if (!UnaryTableSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC(t, {
    BinaryF<scalar_t> f{BinaryOp::add, scalar_t(0), scalar_t(0), 0.0, nullptr, true, op, a};
    e = LaunchBinaryLoop<scalar_t>(loop, out, dy, s, f, stream);
  });
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
