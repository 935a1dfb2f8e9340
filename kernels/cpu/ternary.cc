// CPU kernels of the ternary elementwise family, generated from oneflow_like/opdefs/ternary.def:
// each op's functor runs on ScalarMath<T> inside TernaryLoop, instantiated for the op's dtype set
// (value operands of one dtype, promoted by the schema; a bool condition first for `cond` ops),
// all broadcast to the output's shape, which may be strided (in-place variants). Scalar variants
// convert their scalar once per call and pass it as a constant. Attributes are read once per
// call into the op's typed struct.
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
  auto run = [&](auto tag) {
    fn(tag);
    done = true;
  };
  if constexpr (K == Types::Float) {
    OFL_SWITCH_FLOAT(t, run(scalar_t{}));
  } else if constexpr (K == Types::Numeric) {
    OFL_SWITCH_NUMERIC(t, run(scalar_t{}));
  } else {
    static_assert(K == Types::All, "ternary ops take Float, Numeric or All");
    OFL_SWITCH_ALL(t, run(scalar_t{}));
  }
  return done;
}

Status Unsupported(const KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
}

// A Python number in T: as PyTorch converts it (ScalarMath::scalar), f16/bf16 through float.
template <typename T>
T ScalarAs(double v) {
  if constexpr (std::is_arithmetic_v<T>)
    return ScalarMath<T>{}.scalar(v);
  else
    return T(static_cast<float>(v));
}

template <typename Fn>
Status TernaryKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const auto a = opdefs::ReadAttrs<typename Fn::Attrs>(ctx.attrs());
  bool ok = SwitchTypes<Fn::kTypes>(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = std::conditional_t<Fn::kCond, bool, T>;
    const ScalarMath<T> m{};
    if constexpr (Fn::kInputs == 3) {
      TernaryLoop<T, C, T, T>(out, ctx.input(0), ctx.input(1), ctx.input(2),
                              [m, a](C x, T y, T z) -> T { return Fn{}(m, x, y, z, a); });
    } else {  // scalar variant: (x, in1) and the scalar (in1 is passed twice, read once)
      const T s = ScalarAs<T>(a.scalar);
      TernaryLoop<T, C, T, T>(out, ctx.input(0), ctx.input(1), ctx.input(1),
                              [m, s](C x, T y, T) -> T { return Fn{}(m, x, y, s, {}); });
    }
  });
  return ok ? Status() : Unsupported(ctx, out.dtype);
}

}  // namespace

namespace ternary_table {  // (registrations named by .def line numbers)
// clang-format off
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, ...) \
  OFL_REGISTER_KERNEL(name, kCPU, TernaryKernel<opdefs::Name##Fn>);
#define OFL_TERNARY_SCALAR OFL_TERNARY
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on
}  // namespace ternary_table

}  // namespace kernels
}  // namespace oneflow_like
