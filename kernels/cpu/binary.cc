// CPU kernels of the binary elementwise family. Inputs share one dtype (promoted by the schema)
// and broadcast to the output's shape; the output may be strided (in-place variants). Each op is
// a lambda over plain values so the contiguous loops vectorise.
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

#define OFL_SWITCH_BOOL(dtype, ...)          \
  switch (dtype) {                           \
    OFL_DTYPE_CASE(kBool, bool, __VA_ARGS__) \
    default: break;                          \
  }

Status Unsupported(const KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
}

// out = EXPR(x, y) with out of the inputs' dtype (TO = scalar_t) or bool.
#define OFL_BINARY_KERNEL(Name, SWITCH, TO, EXPR)                                              \
  Status Name(KernelContext& ctx) {                                                            \
    const TensorView &out = ctx.output(0), &a = ctx.input(0), &b = ctx.input(1);               \
    [[maybe_unused]] double alpha_d = ctx.attrs().Float("alpha", 1.0);                         \
    bool done = false;                                                                         \
    SWITCH(a.dtype, {                                                                          \
      [[maybe_unused]] scalar_t alpha = static_cast<scalar_t>(alpha_d);                        \
      BinaryLoop<TO, scalar_t>(out, a, b,                                                      \
                               [=](scalar_t x, scalar_t y) { return static_cast<TO>(EXPR); }); \
      done = true;                                                                             \
    });                                                                                        \
    return done ? Status() : Unsupported(ctx, a.dtype);                                        \
  }

Status AddKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0), &b = ctx.input(1);
  double alpha_d = ctx.attrs().Float("alpha", 1.0);
  bool done = false;
  OFL_SWITCH_NUMERIC(out.dtype, {
    scalar_t alpha = static_cast<scalar_t>(alpha_d);
    if (alpha_d == 1.0)
      BinaryLoop<scalar_t, scalar_t>(out, a, b,
                                     [](scalar_t x, scalar_t y) { return scalar_t(x + y); });
    else if (alpha_d == -1.0)
      BinaryLoop<scalar_t, scalar_t>(out, a, b,
                                     [](scalar_t x, scalar_t y) { return scalar_t(x - y); });
    else
      BinaryLoop<scalar_t, scalar_t>(
          out, a, b, [=](scalar_t x, scalar_t y) { return scalar_t(x + alpha * y); });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, out.dtype);
}
OFL_BINARY_KERNEL(SubKernel, OFL_SWITCH_NUMERIC, scalar_t,
                  alpha == scalar_t(1) ? x - y : x - alpha * y)
OFL_BINARY_KERNEL(MulKernel, OFL_SWITCH_NUMERIC, scalar_t, x* y)
OFL_BINARY_KERNEL(DivKernel, OFL_SWITCH_FLOAT, scalar_t, x / y)
// NaN propagates from either side.
OFL_BINARY_KERNEL(MaximumKernel, OFL_SWITCH_NUMERIC_BOOL, scalar_t, (x > y || x != x) ? x : y)
OFL_BINARY_KERNEL(MinimumKernel, OFL_SWITCH_NUMERIC_BOOL, scalar_t, (x < y || x != x) ? x : y)

OFL_BINARY_KERNEL(EqKernel, OFL_SWITCH_NUMERIC_BOOL, bool, x == y)
OFL_BINARY_KERNEL(NeKernel, OFL_SWITCH_NUMERIC_BOOL, bool, x != y)
OFL_BINARY_KERNEL(LtKernel, OFL_SWITCH_NUMERIC_BOOL, bool, x < y)
OFL_BINARY_KERNEL(LeKernel, OFL_SWITCH_NUMERIC_BOOL, bool, x <= y)
OFL_BINARY_KERNEL(GtKernel, OFL_SWITCH_NUMERIC_BOOL, bool, x > y)
OFL_BINARY_KERNEL(GeKernel, OFL_SWITCH_NUMERIC_BOOL, bool, x >= y)
OFL_BINARY_KERNEL(LogicalAndKernel, OFL_SWITCH_BOOL, bool, x&& y)
OFL_BINARY_KERNEL(LogicalOrKernel, OFL_SWITCH_BOOL, bool, x || y)
OFL_BINARY_KERNEL(LogicalXorKernel, OFL_SWITCH_BOOL, bool, x != y)
OFL_BINARY_KERNEL(BitwiseAndKernel, OFL_SWITCH_INTEGRAL_BOOL, scalar_t, x& y)
OFL_BINARY_KERNEL(BitwiseOrKernel, OFL_SWITCH_INTEGRAL_BOOL, scalar_t, x | y)
OFL_BINARY_KERNEL(BitwiseXorKernel, OFL_SWITCH_INTEGRAL_BOOL, scalar_t, x ^ y)

// Integer power by squaring; negative exponents give 0 unless |base| == 1 (truncation).
template <typename T>
T IntPow(T base, T e) {
  if (e < 0) return base == T(1) ? T(1) : base == T(-1) ? ((e & 1) ? T(-1) : T(1)) : T(0);
  T r = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) r = static_cast<T>(r * base);
    base = static_cast<T>(base * base);
  }
  return r;
}
template <typename T>
T PowOf(T x, T y) {
  if constexpr (std::is_floating_point_v<T>)
    return std::pow(x, y);
  else
    return IntPow(x, y);
}
OFL_BINARY_KERNEL(PowKernel, OFL_SWITCH_NUMERIC, scalar_t, PowOf(x, y))

// floor_divide / remainder / fmod. Integer division by zero is reported, never executed; the
// overflowing MIN / -1 is computed with wrap-around.
enum DivKind { kFloorDiv, kRemainder, kFmod };
template <DivKind K, typename T>
T IntDivOp(T x, T y) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return K == kFloorDiv ? static_cast<T>(U(0) - static_cast<U>(x)) : T(0);
  }
  T q = x / y, r = x % y;
  bool adjust = r != 0 && ((r < 0) != (y < 0));
  if constexpr (K == kFloorDiv)
    return adjust ? T(q - 1) : q;
  else if constexpr (K == kRemainder)
    return adjust ? T(r + y) : r;
  else
    return r;
}
template <DivKind K, typename T>
T FloatDivOp(T x, T y) {
  if constexpr (K == kFloorDiv) {
    return std::floor(x / y);
  } else if constexpr (K == kRemainder) {
    T r = std::fmod(x, y);
    return (r != T(0) && ((r < T(0)) != (y < T(0)))) ? r + y : r;
  } else {
    return std::fmod(x, y);
  }
}
template <DivKind K>
Status DivisionKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0), &b = ctx.input(1);
  std::atomic<bool> by_zero{false};
  bool done = false;
  OFL_SWITCH_NUMERIC(a.dtype, {
    using T = scalar_t;
    if constexpr (std::is_floating_point_v<T>) {
      BinaryLoop<T, T>(out, a, b, [](T x, T y) { return FloatDivOp<K>(x, y); });
    } else {
      std::atomic<bool>* zero = &by_zero;
      BinaryLoop<T, T>(out, a, b, [zero](T x, T y) {
        if (y == T(0)) {
          zero->store(true, std::memory_order_relaxed);
          return T(0);
        }
        return IntDivOp<K>(x, y);
      });
    }
    done = true;
  });
  if (!done) return Unsupported(ctx, a.dtype);
  if (by_zero.load())
    return InvalidArgument("[%s] ZeroDivisionError: integer division by zero", ctx.op());
  return Status();
}

// minmax_grad(g, a, b; is_max, side): g where operand `side` won, g/2 at ties.
Status MinMaxGradKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &g = ctx.input(0), &a = ctx.input(1), &b = ctx.input(2);
  bool is_max = ctx.attrs().Bool("is_max"), side_a = ctx.attrs().Int("side") == 0;
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    using T = scalar_t;
    // "mine" beats "other": for the max, mine > other.
    TernaryLoop<T, T, T, T>(out, g, a, b, [=](T dy, T x, T y) {
      T mine = side_a ? x : y, other = side_a ? y : x;
      bool wins = is_max ? mine > other : mine < other;
      return wins ? dy : (mine == other ? dy * T(0.5) : T(0));
    });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, out.dtype);
}

// Scalar variants: out = EXPR(x, s); s is the attr "scalar" in the input's dtype.
#define OFL_SCALAR_KERNEL(Name, TO, EXPR)                                                 \
  Status Name(KernelContext& ctx) {                                                       \
    const TensorView &out = ctx.output(0), &a = ctx.input(0);                             \
    double s_d = ctx.attrs().Float("scalar");                                             \
    bool done = false;                                                                    \
    OFL_SWITCH_NUMERIC(a.dtype, {                                                         \
      scalar_t s = static_cast<scalar_t>(s_d);                                            \
      UnaryLoop<TO, scalar_t>(out, a, [=](scalar_t x) { return static_cast<TO>(EXPR); }); \
      done = true;                                                                        \
    });                                                                                   \
    return done ? Status() : Unsupported(ctx, a.dtype);                                   \
  }

OFL_SCALAR_KERNEL(AddScalarKernel, scalar_t, x + s)
OFL_SCALAR_KERNEL(MulScalarKernel, scalar_t, x* s)
OFL_SCALAR_KERNEL(RSubScalarKernel, scalar_t, s - x)
OFL_SCALAR_KERNEL(RDivScalarKernel, scalar_t, s / x)
OFL_SCALAR_KERNEL(EqScalarKernel, bool, x == s)
OFL_SCALAR_KERNEL(NeScalarKernel, bool, x != s)
OFL_SCALAR_KERNEL(LtScalarKernel, bool, x < s)
OFL_SCALAR_KERNEL(LeScalarKernel, bool, x <= s)
OFL_SCALAR_KERNEL(GtScalarKernel, bool, x > s)
OFL_SCALAR_KERNEL(GeScalarKernel, bool, x >= s)

}  // namespace

OFL_REGISTER_KERNEL(add, kCPU, AddKernel);
OFL_REGISTER_KERNEL(sub, kCPU, SubKernel);
OFL_REGISTER_KERNEL(mul, kCPU, MulKernel);
OFL_REGISTER_KERNEL(div, kCPU, DivKernel);
OFL_REGISTER_KERNEL(pow, kCPU, PowKernel);
OFL_REGISTER_KERNEL(maximum, kCPU, MaximumKernel);
OFL_REGISTER_KERNEL(minimum, kCPU, MinimumKernel);
OFL_REGISTER_KERNEL(minmax_grad, kCPU, MinMaxGradKernel);
OFL_REGISTER_KERNEL(floor_divide, kCPU, DivisionKernel<kFloorDiv>);
OFL_REGISTER_KERNEL(remainder, kCPU, DivisionKernel<kRemainder>);
OFL_REGISTER_KERNEL(fmod, kCPU, DivisionKernel<kFmod>);
OFL_REGISTER_KERNEL(eq, kCPU, EqKernel);
OFL_REGISTER_KERNEL(ne, kCPU, NeKernel);
OFL_REGISTER_KERNEL(lt, kCPU, LtKernel);
OFL_REGISTER_KERNEL(le, kCPU, LeKernel);
OFL_REGISTER_KERNEL(gt, kCPU, GtKernel);
OFL_REGISTER_KERNEL(ge, kCPU, GeKernel);
OFL_REGISTER_KERNEL(logical_and, kCPU, LogicalAndKernel);
OFL_REGISTER_KERNEL(logical_or, kCPU, LogicalOrKernel);
OFL_REGISTER_KERNEL(logical_xor, kCPU, LogicalXorKernel);
OFL_REGISTER_KERNEL(bitwise_and, kCPU, BitwiseAndKernel);
OFL_REGISTER_KERNEL(bitwise_or, kCPU, BitwiseOrKernel);
OFL_REGISTER_KERNEL(bitwise_xor, kCPU, BitwiseXorKernel);
OFL_REGISTER_KERNEL(add_scalar, kCPU, AddScalarKernel);
OFL_REGISTER_KERNEL(mul_scalar, kCPU, MulScalarKernel);
OFL_REGISTER_KERNEL(rsub_scalar, kCPU, RSubScalarKernel);
OFL_REGISTER_KERNEL(rdiv_scalar, kCPU, RDivScalarKernel);
OFL_REGISTER_KERNEL(eq_scalar, kCPU, EqScalarKernel);
OFL_REGISTER_KERNEL(ne_scalar, kCPU, NeScalarKernel);
OFL_REGISTER_KERNEL(lt_scalar, kCPU, LtScalarKernel);
OFL_REGISTER_KERNEL(le_scalar, kCPU, LeScalarKernel);
OFL_REGISTER_KERNEL(gt_scalar, kCPU, GtScalarKernel);
OFL_REGISTER_KERNEL(ge_scalar, kCPU, GeScalarKernel);

}  // namespace kernels
}  // namespace oneflow_like
