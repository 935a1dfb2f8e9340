// CPU kernels of the unary elementwise family. Each op is a small functor templated on the
// element type, built once per call from the attrs (so the inner loop sees plain values and
// vectorises); UnaryKernel instantiates it for the dtypes the op supports. Backward ops
// <name>_grad(dy, saved) are binary functors over the same dtypes.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

enum Types { kFloat, kNumeric, kIntBool };

template <Types K, typename Fn>
bool SwitchTypes(DType t, Fn&& fn) {
  bool done = false;
  if constexpr (K == kFloat) {
    OFL_SWITCH_FLOAT(t, {
      fn(scalar_t{});
      done = true;
    });
  } else if constexpr (K == kNumeric) {
    OFL_SWITCH_NUMERIC(t, {
      fn(scalar_t{});
      done = true;
    });
  } else {
    OFL_SWITCH_INTEGRAL_BOOL(t, {
      fn(scalar_t{});
      done = true;
    });
  }
  return done;
}

Status Unsupported(const KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
}

template <template <typename> class Fn, Types K>
Status UnaryKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  bool ok = SwitchTypes<K>(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const Fn<T> f(ctx.attrs());
    UnaryLoop<T, T>(out, a, f);
  });
  return ok ? Status() : Unsupported(ctx, out.dtype);
}

template <template <typename> class Fn, Types K>
Status BackwardKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &dy = ctx.input(0), &s = ctx.input(1);
  bool ok = SwitchTypes<K>(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const Fn<T> f(ctx.attrs());
    BinaryLoop<T, T>(out, dy, s, f);
  });
  return ok ? Status() : Unsupported(ctx, out.dtype);
}

// A functor without attributes: T operator()(T x) / (T dy, T s) returning EXPR.
#define OFL_UNARY_FN(Name, EXPR)                             \
  template <typename T>                                      \
  struct Name {                                              \
    explicit Name(const AttrMap&) {}                         \
    T operator()(T x) const { return static_cast<T>(EXPR); } \
  };
#define OFL_BACKWARD_FN(Name, EXPR)                                \
  template <typename T>                                            \
  struct Name {                                                    \
    explicit Name(const AttrMap&) {}                               \
    T operator()(T dy, T s) const { return static_cast<T>(EXPR); } \
  };

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double k2OverSqrtPi = 1.12837916709551257390;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

template <typename T>
T Sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

OFL_UNARY_FN(NegFn, -x)
OFL_UNARY_FN(AbsFn, x < T(0) ? -x : x)
OFL_UNARY_FN(SquareFn, x* x)
OFL_UNARY_FN(SignFn, (T(0) < x) - (x < T(0)))
OFL_UNARY_FN(ReluFn, x > T(0) ? x : T(0))
OFL_UNARY_FN(ExpFn, std::exp(x))
OFL_UNARY_FN(LogFn, std::log(x))
OFL_UNARY_FN(Log1pFn, std::log1p(x))
OFL_UNARY_FN(SqrtFn, std::sqrt(x))
OFL_UNARY_FN(RsqrtFn, T(1) / std::sqrt(x))
OFL_UNARY_FN(SinFn, std::sin(x))
OFL_UNARY_FN(CosFn, std::cos(x))
OFL_UNARY_FN(TanhFn, std::tanh(x))
OFL_UNARY_FN(SigmoidFn, Sigmoid(x))
OFL_UNARY_FN(SiluFn, x* Sigmoid(x))
OFL_UNARY_FN(ErfFn, std::erf(x))
OFL_UNARY_FN(ReciprocalFn, T(1) / x)
template <typename T>
struct BitwiseNotFn {
  explicit BitwiseNotFn(const AttrMap&) {}
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else
      return static_cast<T>(~x);
  }
};

// Rounding is the identity on integers (and must not go through double for int64).
#define OFL_ROUNDING_FN(Name, FN)                \
  template <typename T>                          \
  struct Name {                                  \
    explicit Name(const AttrMap&) {}             \
    T operator()(T x) const {                    \
      if constexpr (std::is_floating_point_v<T>) \
        return FN(x);                            \
      else                                       \
        return x;                                \
    }                                            \
  };
OFL_ROUNDING_FN(FloorFn, std::floor)
OFL_ROUNDING_FN(CeilFn, std::ceil)
OFL_ROUNDING_FN(RoundFn, std::nearbyint)  // half to even under the default rounding mode

template <typename T>
struct LeakyReluFn {
  T slope;
  explicit LeakyReluFn(const AttrMap& a) : slope(T(a.Float("negative_slope", 0.01))) {}
  T operator()(T x) const { return x > T(0) ? x : x * slope; }
};
template <typename T>
struct EluFn {
  T alpha;
  explicit EluFn(const AttrMap& a) : alpha(T(a.Float("alpha", 1.0))) {}
  T operator()(T x) const { return x > T(0) ? x : alpha * std::expm1(x); }
};
template <typename T>
struct GeluFn {
  bool tanh_approx;
  explicit GeluFn(const AttrMap& a) : tanh_approx(a.Bool("approximate")) {}
  T operator()(T x) const {
    if (tanh_approx)
      return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x)));
    return T(0.5) * x * (T(1) + std::erf(x * T(kSqrt1_2)));
  }
};
template <typename T>
struct SoftplusFn {
  T beta, threshold;
  explicit SoftplusFn(const AttrMap& a)
      : beta(T(a.Float("beta", 1.0))), threshold(T(a.Float("threshold", 20.0))) {}
  T operator()(T x) const {
    return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
  }
};

// Clamp bounds arrive as doubles (+-inf when open); integers clamp to their own range first.
template <typename T>
struct ClampFn {
  T lo, hi;
  explicit ClampFn(const AttrMap& a) : lo(Bound(a.Float("min"))), hi(Bound(a.Float("max"))) {}
  static T Bound(double v) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(v);
    } else {
      if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
      if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return static_cast<T>(v);
    }
  }
  // NaN propagates (neither comparison holds); min > max gives max, as in PyTorch.
  T operator()(T x) const {
    T v = x < lo ? lo : x;
    return v > hi ? hi : v;
  }
};

// x ** p: common exponents take a multiply/sqrt path that vectorises; integers use repeated
// squaring.
template <typename T>
struct PowScalarFn {
  double p;
  explicit PowScalarFn(const AttrMap& a) : p(a.Float("exponent")) {}
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(x, static_cast<T>(p));
    } else {
      T r = 1, b = x;
      for (int64_t e = static_cast<int64_t>(p); e > 0; e >>= 1) {
        if (e & 1) r = static_cast<T>(r * b);
        b = static_cast<T>(b * b);
      }
      return r;
    }
  }
};
template <typename T>
struct RPowScalarFn {
  T base;
  explicit RPowScalarFn(const AttrMap& a) : base(T(a.Float("scalar"))) {}
  T operator()(T x) const { return std::pow(base, x); }
};

Status PowScalarKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  double p = ctx.attrs().Float("exponent");
  bool ok = SwitchTypes<kNumeric>(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (p == 1)
      UnaryLoop<T, T>(out, a, [](T x) { return x; });
    else if (p == 2)
      UnaryLoop<T, T>(out, a, [](T x) { return static_cast<T>(x * x); });
    else if (p == 3)
      UnaryLoop<T, T>(out, a, [](T x) { return static_cast<T>(x * x * x); });
    else if (p == 0)
      UnaryLoop<T, T>(out, a, [](T) { return T(1); });
    else if (std::is_floating_point_v<T> && p == 0.5)
      UnaryLoop<T, T>(out, a, SqrtFn<T>(ctx.attrs()));
    else if (std::is_floating_point_v<T> && p == -1)
      UnaryLoop<T, T>(out, a, ReciprocalFn<T>(ctx.attrs()));
    else
      UnaryLoop<T, T>(out, a, PowScalarFn<T>(ctx.attrs()));
  });
  return ok ? Status() : Unsupported(ctx, out.dtype);
}

// logical_not: any dtype in; bool out (or the input's dtype, in place).
Status LogicalNotKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (out.dtype == DType::kBool)
      UnaryLoop<bool, T>(out, a, [](T x) { return x == T(0); });
    else
      UnaryLoop<T, T>(out, a, [](T x) { return static_cast<T>(x == T(0)); });
  };
  if (SwitchTypes<kNumeric>(a.dtype, run) || SwitchTypes<kIntBool>(a.dtype, run)) return Status();
  return Unsupported(ctx, a.dtype);
}

// Backward functors: dy is the incoming gradient, s the saved output (y) or input (x).
OFL_BACKWARD_FN(ReluGradFn, s > T(0) ? dy : T(0))
OFL_BACKWARD_FN(SigmoidGradFn, dy* s*(T(1) - s))
OFL_BACKWARD_FN(TanhGradFn, dy*(T(1) - s * s))
OFL_BACKWARD_FN(RsqrtGradFn, T(-0.5) * dy * s * s * s)
OFL_BACKWARD_FN(ReciprocalGradFn, -dy* s* s)
OFL_BACKWARD_FN(ErfGradFn, dy* T(k2OverSqrtPi) * std::exp(-s * s))
template <typename T>
struct SiluGradFn {
  explicit SiluGradFn(const AttrMap&) {}
  T operator()(T dy, T x) const {
    T sg = Sigmoid(x);
    return dy * sg * (T(1) + x * (T(1) - sg));
  }
};
template <typename T>
struct EluGradFn {  // from y: y + alpha = alpha * exp(x) for x <= 0
  T alpha;
  explicit EluGradFn(const AttrMap& a) : alpha(T(a.Float("alpha", 1.0))) {}
  T operator()(T dy, T y) const { return y > T(0) ? dy : dy * (y + alpha); }
};
template <typename T>
struct LeakyReluGradFn {
  T slope;
  explicit LeakyReluGradFn(const AttrMap& a) : slope(T(a.Float("negative_slope", 0.01))) {}
  T operator()(T dy, T x) const { return x > T(0) ? dy : dy * slope; }
};
template <typename T>
struct SoftplusGradFn {
  T beta, threshold;
  explicit SoftplusGradFn(const AttrMap& a)
      : beta(T(a.Float("beta", 1.0))), threshold(T(a.Float("threshold", 20.0))) {}
  T operator()(T dy, T x) const { return x * beta > threshold ? dy : dy * Sigmoid(x * beta); }
};
template <typename T>
struct GeluGradFn {
  bool tanh_approx;
  explicit GeluGradFn(const AttrMap& a) : tanh_approx(a.Bool("approximate")) {}
  T operator()(T dy, T x) const {
    if (tanh_approx) {
      T x2 = x * x, t = std::tanh(T(kSqrt2OverPi) * (x + T(0.044715) * x2 * x));
      T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * 0.044715) * x2);
      return dy * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dinner);
    }
    T cdf = T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2)));
    return dy * (cdf + x * T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x));
  }
};
template <typename T>
struct ClampGradFn {  // the gradient passes where min <= x <= max (PyTorch's convention)
  T lo, hi;
  explicit ClampGradFn(const AttrMap& a) : lo(T(a.Float("min"))), hi(T(a.Float("max"))) {}
  T operator()(T dy, T x) const { return x >= lo && x <= hi ? dy : T(0); }
};
template <typename T>
struct PowScalarGradFn {
  T p;
  explicit PowScalarGradFn(const AttrMap& a) : p(T(a.Float("exponent"))) {}
  T operator()(T dy, T x) const {
    if (p == T(0)) return T(0);
    if (p == T(1)) return dy;
    if (p == T(2)) return T(2) * x * dy;
    return dy * p * std::pow(x, p - T(1));
  }
};

}  // namespace

OFL_REGISTER_KERNEL(neg, kCPU, (UnaryKernel<NegFn, kNumeric>));
OFL_REGISTER_KERNEL(abs, kCPU, (UnaryKernel<AbsFn, kNumeric>));
OFL_REGISTER_KERNEL(square, kCPU, (UnaryKernel<SquareFn, kNumeric>));
OFL_REGISTER_KERNEL(sign, kCPU, (UnaryKernel<SignFn, kNumeric>));
OFL_REGISTER_KERNEL(floor, kCPU, (UnaryKernel<FloorFn, kNumeric>));
OFL_REGISTER_KERNEL(ceil, kCPU, (UnaryKernel<CeilFn, kNumeric>));
OFL_REGISTER_KERNEL(round, kCPU, (UnaryKernel<RoundFn, kNumeric>));
OFL_REGISTER_KERNEL(relu, kCPU, (UnaryKernel<ReluFn, kNumeric>));
OFL_REGISTER_KERNEL(clamp, kCPU, (UnaryKernel<ClampFn, kNumeric>));
OFL_REGISTER_KERNEL(pow_scalar, kCPU, PowScalarKernel);
OFL_REGISTER_KERNEL(rpow_scalar, kCPU, (UnaryKernel<RPowScalarFn, kFloat>));
OFL_REGISTER_KERNEL(bitwise_not, kCPU, (UnaryKernel<BitwiseNotFn, kIntBool>));
OFL_REGISTER_KERNEL(logical_not, kCPU, LogicalNotKernel);
OFL_REGISTER_KERNEL(exp, kCPU, (UnaryKernel<ExpFn, kFloat>));
OFL_REGISTER_KERNEL(log, kCPU, (UnaryKernel<LogFn, kFloat>));
OFL_REGISTER_KERNEL(log1p, kCPU, (UnaryKernel<Log1pFn, kFloat>));
OFL_REGISTER_KERNEL(sqrt, kCPU, (UnaryKernel<SqrtFn, kFloat>));
OFL_REGISTER_KERNEL(rsqrt, kCPU, (UnaryKernel<RsqrtFn, kFloat>));
OFL_REGISTER_KERNEL(sin, kCPU, (UnaryKernel<SinFn, kFloat>));
OFL_REGISTER_KERNEL(cos, kCPU, (UnaryKernel<CosFn, kFloat>));
OFL_REGISTER_KERNEL(tanh, kCPU, (UnaryKernel<TanhFn, kFloat>));
OFL_REGISTER_KERNEL(sigmoid, kCPU, (UnaryKernel<SigmoidFn, kFloat>));
OFL_REGISTER_KERNEL(silu, kCPU, (UnaryKernel<SiluFn, kFloat>));
OFL_REGISTER_KERNEL(gelu, kCPU, (UnaryKernel<GeluFn, kFloat>));
OFL_REGISTER_KERNEL(softplus, kCPU, (UnaryKernel<SoftplusFn, kFloat>));
OFL_REGISTER_KERNEL(elu, kCPU, (UnaryKernel<EluFn, kFloat>));
OFL_REGISTER_KERNEL(leaky_relu, kCPU, (UnaryKernel<LeakyReluFn, kFloat>));
OFL_REGISTER_KERNEL(erf, kCPU, (UnaryKernel<ErfFn, kFloat>));
OFL_REGISTER_KERNEL(reciprocal, kCPU, (UnaryKernel<ReciprocalFn, kFloat>));

OFL_REGISTER_KERNEL(relu_grad, kCPU, (BackwardKernel<ReluGradFn, kNumeric>));
OFL_REGISTER_KERNEL(sigmoid_grad, kCPU, (BackwardKernel<SigmoidGradFn, kFloat>));
OFL_REGISTER_KERNEL(tanh_grad, kCPU, (BackwardKernel<TanhGradFn, kFloat>));
OFL_REGISTER_KERNEL(rsqrt_grad, kCPU, (BackwardKernel<RsqrtGradFn, kFloat>));
OFL_REGISTER_KERNEL(reciprocal_grad, kCPU, (BackwardKernel<ReciprocalGradFn, kFloat>));
OFL_REGISTER_KERNEL(erf_grad, kCPU, (BackwardKernel<ErfGradFn, kFloat>));
OFL_REGISTER_KERNEL(silu_grad, kCPU, (BackwardKernel<SiluGradFn, kFloat>));
OFL_REGISTER_KERNEL(elu_grad, kCPU, (BackwardKernel<EluGradFn, kFloat>));
OFL_REGISTER_KERNEL(leaky_relu_grad, kCPU, (BackwardKernel<LeakyReluGradFn, kFloat>));
OFL_REGISTER_KERNEL(softplus_grad, kCPU, (BackwardKernel<SoftplusGradFn, kFloat>));
OFL_REGISTER_KERNEL(gelu_grad, kCPU, (BackwardKernel<GeluGradFn, kFloat>));
OFL_REGISTER_KERNEL(clamp_grad, kCPU, (BackwardKernel<ClampGradFn, kFloat>));
OFL_REGISTER_KERNEL(pow_scalar_grad, kCPU, (BackwardKernel<PowScalarGradFn, kFloat>));

}  // namespace kernels
}  // namespace oneflow_like
