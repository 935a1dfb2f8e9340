// Device code of the unary elementwise family (kernels/cpu/unary.cc and the scalar variants of
// kernels/cpu/binary.cc): same expressions in the same types, so results match the CPU up to the
// last-ulp differences of the device math library.
#include <limits>

#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

template <typename T>
__device__ __forceinline__ T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}

// One functor for every op: `op` is uniform across the grid, so the switch costs no divergence,
// and each (dtype) is instantiated once instead of once per op (compile time).
template <typename T>
struct UnaryF {
  UnaryOp op;
  T s0, s1;   // scalar parameters in T
  double d0;  // pow_scalar's exponent
  int mode;   // pow_scalar: 0 general, 1 x, 2 x*x, 3 x*x*x, 4 one, 5 sqrt, 6 reciprocal
  __device__ T operator()(T x) const {
    constexpr bool kFloat = std::is_floating_point_v<T>;
    switch (op) {
      case UnaryOp::neg: return T(-x);
      case UnaryOp::abs: return x < T(0) ? T(-x) : x;
      case UnaryOp::square: return T(x * x);
      case UnaryOp::sign: return static_cast<T>((T(0) < x) - (x < T(0)));
      case UnaryOp::floor:
        if constexpr (kFloat)
          return Floor(x);
        else
          return x;
      case UnaryOp::ceil:
        if constexpr (kFloat)
          return Ceil(x);
        else
          return x;
      case UnaryOp::round:
        if constexpr (kFloat)
          return Rint(x);
        else
          return x;
      case UnaryOp::relu: return x > T(0) ? x : T(0);
      case UnaryOp::clamp: {
        T v = x < s0 ? s0 : x;
        return v > s1 ? s1 : v;
      }
      case UnaryOp::pow_scalar:
        switch (mode) {
          case 1: return x;
          case 2: return T(x * x);
          case 3: return T(x * x * x);
          case 4: return T(1);
          default: break;
        }
        if constexpr (kFloat) {
          if (mode == 5) return Sqrt(x);
          if (mode == 6) return T(1) / x;
          return Pow(x, s0);
        } else {
          T r = 1, b = x;
          for (int64_t e = static_cast<int64_t>(d0); e > 0; e >>= 1) {
            if (e & 1) r = static_cast<T>(r * b);
            b = static_cast<T>(b * b);
          }
          return r;
        }
      case UnaryOp::add_scalar: return T(x + s0);
      case UnaryOp::mul_scalar: return T(x * s0);
      case UnaryOp::rsub_scalar: return T(s0 - x);
      case UnaryOp::rdiv_scalar: return T(s0 / x);
      case UnaryOp::logical_not: return static_cast<T>(x == T(0));
      case UnaryOp::bitwise_not:
        if constexpr (std::is_same_v<T, bool>)
          return !x;
        else if constexpr (!kFloat)
          return static_cast<T>(~x);
        else
          return x;
      default: break;
    }
    if constexpr (kFloat) {
      switch (op) {
        case UnaryOp::rpow_scalar: return Pow(s0, x);
        case UnaryOp::exp: return Exp(x);
        case UnaryOp::log: return Log(x);
        case UnaryOp::log1p: return Log1p(x);
        case UnaryOp::sqrt: return Sqrt(x);
        case UnaryOp::rsqrt: return T(1) / Sqrt(x);
        case UnaryOp::sin: return Sin(x);
        case UnaryOp::cos: return Cos(x);
        case UnaryOp::tanh: return Tanh(x);
        case UnaryOp::sigmoid: return Sigmoid(x);
        case UnaryOp::silu: return x * Sigmoid(x);
        case UnaryOp::gelu:
          if (d0 != 0)
            return T(0.5) * x * (T(1) + Tanh(T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x)));
          return T(0.5) * x * (T(1) + Erf(x * T(kSqrt1_2)));
        case UnaryOp::softplus:
          return x * s0 > s1 ? x : Log1p(Exp(x * s0)) / s0;  // s0 = beta, s1 = threshold
        case UnaryOp::elu: return x > T(0) ? x : s0 * Expm1(x);
        case UnaryOp::leaky_relu: return x > T(0) ? x : x * s0;
        case UnaryOp::erf: return Erf(x);
        case UnaryOp::reciprocal: return T(1) / x;
        default: break;
      }
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

// The CPU's ClampFn::Bound: integers clamp the double bound to their own range first.
template <typename T>
T Bound(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

template <typename T>
UnaryF<T> MakeUnary(UnaryOp op, const OpParams& p) {
  UnaryF<T> f{op, T(0), T(0), p.p0, 0};
  if (op == UnaryOp::clamp) {
    f.s0 = Bound<T>(p.p0);
    f.s1 = Bound<T>(p.p1);
  } else if constexpr (!std::is_same_v<T, bool>) {
    f.s0 = static_cast<T>(p.p0);
    f.s1 = static_cast<T>(p.p1);
  }
  if (op == UnaryOp::pow_scalar) {
    double e = p.p0;
    bool fl = std::is_floating_point_v<T>;
    f.mode = e == 1             ? 1
             : e == 2           ? 2
             : e == 3           ? 3
             : e == 0           ? 4
             : (fl && e == 0.5) ? 5
             : (fl && e == -1)  ? 6
                                : 0;
  }
  return f;
}

}  // namespace

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
                                    loop, out, in, MakeUnary<scalar_t>(op, p), stream)));
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
