// CPU kernels of the unary elementwise family, generated from oneflow_like/opdefs/unary.def:
// each op's functor runs on ScalarMath<T> inside UnaryLoop (backward ops <name>_grad(dy, saved):
// BinaryLoop), instantiated for the op's dtype set. Attributes are read once per call into the
// op's typed struct, so the inner loop sees plain values and vectorises. bfloat16 (float ops):
// the formula in float on chunks widened from bf16 (bf16_loops.h), for the ops that
// framework/autocast.cc lets through in bf16.
#include "kernels/cpu/bf16_loops.h"
#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace kernels {
namespace {
using opdefs::ScalarMath;
using opdefs::Types;

template <Types K, typename Fn>
bool SwitchTypes(DType t, Fn&& fn) {
  bool done = false;
  if constexpr (K == Types::Float) {
    OFL_SWITCH_FLOAT(t, {
      fn(scalar_t{});
      done = true;
    });
  } else if constexpr (K == Types::Numeric) {
    OFL_SWITCH_NUMERIC(t, {
      fn(scalar_t{});
      done = true;
    });
  } else {
    OFL_SWITCH_INTEGRAL_BOOL(t, {
      fn(scalar_t{});
      done = true;
    });
    // bitwise_not of u16/u32/u64 (torch 2.x's limited unsigned support)
    OFL_SWITCH_UNSIGNED_WIDE(t, {
      fn(scalar_t{});
      done = true;
    });
  }
  return done;
}

Status Unsupported(const KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
}

Status PowScalarKernel(KernelContext& ctx);

template <typename Fn>
Status UnaryKernel(KernelContext& ctx) {
  if constexpr (std::is_same_v<Fn, opdefs::PowScalarFn>) {
    return PowScalarKernel(ctx);
  } else {
    const TensorView &out = ctx.output(0), &in = ctx.input(0);
    const auto a = opdefs::ReadAttrs<typename Fn::Attrs>(ctx.attrs());
    if constexpr (Fn::kTypes != Types::IntBool) {
      if (out.dtype == DType::kBF16) {
        Bf16UnaryLoop(out, in, [a](float x) { return Fn{}(ScalarMath<float>{}, x, a); });
        return Status();
      }
    }
    bool ok = SwitchTypes<Fn::kTypes>(out.dtype, [&](auto tag) {
      using T = decltype(tag);
      UnaryLoop<T, T>(out, in, [a](T x) -> T { return Fn{}(ScalarMath<T>{}, x, a); });
    });
    return ok ? Status() : Unsupported(ctx, out.dtype);
  }
}

template <typename Fn>
Status BackwardKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &dy = ctx.input(0), &s = ctx.input(1);
  const auto a = opdefs::ReadAttrs<typename Fn::Attrs>(ctx.attrs());
  if constexpr (Fn::kTypes != Types::IntBool) {
    if (out.dtype == DType::kBF16) {
      Bf16BinaryLoop(out, dy, s,
                     [a](float d, float v) { return Fn{}(ScalarMath<float>{}, d, v, a); });
      return Status();
    }
  }
  bool ok = SwitchTypes<Fn::kTypes>(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    BinaryLoop<T, T>(out, dy, s, [a](T d, T v) -> T { return Fn{}(ScalarMath<T>{}, d, v, a); });
  });
  return ok ? Status() : Unsupported(ctx, out.dtype);
}

// pow_scalar: one loop per common exponent, with the exponent a constant the compiler folds
// into the functor (so x**2 is a multiply that vectorises).
Status PowScalarKernel(KernelContext& ctx) {
  using Fn = opdefs::PowScalarFn;
  const TensorView &out = ctx.output(0), &in = ctx.input(0);
  const auto a = opdefs::ReadAttrs<Fn::Attrs>(ctx.attrs());
  bool ok = SwitchTypes<Fn::kTypes>(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto loop = [&](auto exponent) {
      UnaryLoop<T, T>(out, in, [exponent](T x) -> T {
        return Fn{}(ScalarMath<T>{}, x, Fn::Attrs{decltype(exponent)::value});
      });
    };
    if (a.exponent == 1) return loop(std::integral_constant<int, 1>{});
    if (a.exponent == 2) return loop(std::integral_constant<int, 2>{});
    if (a.exponent == 3) return loop(std::integral_constant<int, 3>{});
    if (a.exponent == 0) return loop(std::integral_constant<int, 0>{});
    if (std::is_floating_point_v<T> && a.exponent == -1)
      return loop(std::integral_constant<int, -1>{});
    UnaryLoop<T, T>(out, in, [a](T x) -> T { return Fn{}(ScalarMath<T>{}, x, a); });
  });
  return ok ? Status() : Unsupported(ctx, out.dtype);
}

// logical_not: any dtype in; bool out (or the input's dtype, in place). Not in the table: its
// output dtype differs from its input's.
Status LogicalNotKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (out.dtype == DType::kBool)
      UnaryLoop<bool, T>(out, a, [](T x) { return x == T(0); });
    else
      UnaryLoop<T, T>(out, a, [](T x) { return static_cast<T>(x == T(0)); });
  };
  if (SwitchTypes<Types::Numeric>(a.dtype, run) || SwitchTypes<Types::IntBool>(a.dtype, run))
    return Status();
  return Unsupported(ctx, a.dtype);
}

}  // namespace

namespace unary_table {  // (registrations named by .def line numbers)
// clang-format off
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, ...) \
  OFL_REGISTER_KERNEL(name, kCPU, UnaryKernel<opdefs::Name##Fn>);
#define OFL_UNARY_GRAD(name, Name, ...) \
  OFL_REGISTER_KERNEL(name, kCPU, BackwardKernel<opdefs::Name##Fn>);
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
// clang-format on
}  // namespace unary_table
OFL_REGISTER_KERNEL(logical_not, kCPU, LogicalNotKernel);

}  // namespace kernels
}  // namespace oneflow_like
