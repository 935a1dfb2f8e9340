// CPU kernels of the binary elementwise family, generated from oneflow_like/opdefs/binary.def:
// each op's functor runs on ScalarMath<T> inside BinaryLoop (scalar variants: UnaryLoop with the
// scalar converted once), instantiated for the op's dtype set. Inputs share one dtype (promoted
// by the schema) and broadcast to the output's shape; the output may be strided (in-place
// variants). Attributes are read once per call into the op's typed struct and the common
// attribute values (alpha == 1 / -1) run loops whose attributes are constants, so the inner
// loops vectorise. Integer division by zero is reported after the loop, never executed.
// bfloat16 (the float ops with a same-type output): the formula in float on chunks widened from
// bf16 (bf16_loops.h); framework/autocast.cc lists the ops whose bf16 calls come here instead of
// going through f32 tensors.
#include "kernels/cpu/bf16_loops.h"
#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace kernels {
namespace {
using opdefs::ScalarMath;
using opdefs::Types;

#define OFL_SWITCH_BOOL(dtype, ...)          \
  switch (dtype) {                           \
    OFL_DTYPE_CASE(kBool, bool, __VA_ARGS__) \
    default: break;                          \
  }

// kWide: the op also runs on u16/u32/u64 (torch 2.x's limited unsigned support covers the
// comparisons, bitwise ops and maximum/minimum; framework/op.cc lets only those through).
template <Types K, bool kWide, typename Fn>
bool SwitchTypes(DType t, Fn&& fn) {
  bool done = false;
  auto run = [&](auto tag) {
    fn(tag);
    done = true;
  };
  if constexpr (kWide) {
    if (IsUnsignedWide(t)) {
      OFL_SWITCH_UNSIGNED_WIDE(t, run(scalar_t{}));
      return done;
    }
  }
  if constexpr (K == Types::Float) {
    OFL_SWITCH_FLOAT(t, run(scalar_t{}));
  } else if constexpr (K == Types::Numeric) {
    OFL_SWITCH_NUMERIC(t, run(scalar_t{}));
  } else if constexpr (K == Types::NumericBool) {
    OFL_SWITCH_NUMERIC_BOOL(t, run(scalar_t{}));
  } else if constexpr (K == Types::IntBool) {
    OFL_SWITCH_INTEGRAL_BOOL(t, run(scalar_t{}));
  } else {
    OFL_SWITCH_BOOL(t, run(scalar_t{}));
  }
  return done;
}

Status Unsupported(const KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
}

// Runs `loop(math, attrs)`, with the attributes as constants where the table's common values
// make the formula a single operation (add/sub with alpha == 1, add with alpha == -1).
template <typename Fn, typename Attrs, typename Loop>
void WithConstantAttrs(const Attrs& a, Loop&& loop) {
  if constexpr (std::is_same_v<Attrs, opdefs::AlphaAttrs>) {
    if (a.alpha == 1) return loop([] { return opdefs::AlphaAttrs{1.0}; });
    if (std::is_same_v<Fn, opdefs::AddFn> && a.alpha == -1)
      return loop([] { return opdefs::AlphaAttrs{-1.0}; });
  }
  loop([a] { return a; });
}

// Whether the op has a bf16 kernel: a float formula with an output of the inputs' type.
template <typename Fn>
constexpr bool kHasBf16 =
    !Fn::kBoolOut && (Fn::kTypes == Types::Float || Fn::kTypes == Types::Numeric ||
                      Fn::kTypes == Types::NumericBool);

template <typename Fn>
Status BinaryKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &x = ctx.input(0), &y = ctx.input(1);
  const auto a = opdefs::ReadAttrs<typename Fn::Attrs>(ctx.attrs());
  if constexpr (kHasBf16<Fn>) {
    if (x.dtype == DType::kBF16) {
      const ScalarMath<float> m{};
      WithConstantAttrs<Fn>(a, [&](auto attrs) {
        Bf16BinaryLoop(out, x, y, [m, attrs](float u, float v) { return Fn{}(m, u, v, attrs()); });
      });
      return Status();
    }
  }
  int zero = 0;
  constexpr bool kWide = Fn::kTypes == Types::NumericBool || Fn::kTypes == Types::IntBool;
  bool ok = SwitchTypes<Fn::kTypes, kWide>(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using TO = std::conditional_t<Fn::kBoolOut, bool, T>;
    ScalarMath<T> m;
    if constexpr (!std::is_floating_point_v<T>) m.zero_flag = &zero;
    WithConstantAttrs<Fn>(a, [&](auto attrs) {
      BinaryLoop<TO, T>(out, x, y, [m, attrs](T u, T v) -> TO { return Fn{}(m, u, v, attrs()); });
    });
  });
  if (!ok) return Unsupported(ctx, x.dtype);
  if (__atomic_load_n(&zero, __ATOMIC_RELAXED))
    return InvalidArgument("[%s] ZeroDivisionError: integer division by zero (%s)", ctx.op(),
                           DTypeName(x.dtype));
  return Status();
}

template <typename Fn>
Status ScalarKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &x = ctx.input(0);
  const double s = opdefs::ReadAttrs<typename Fn::Attrs>(ctx.attrs()).scalar;
  if constexpr (kHasBf16<Fn>) {
    if (x.dtype == DType::kBF16) {
      const ScalarMath<float> m{};
      const float sv = m.scalar(s);
      Bf16UnaryLoop(out, x, [m, sv](float u) { return Fn{}(m, u, sv, opdefs::ScalarAttrs{}); });
      return Status();
    }
  }
  // The comparisons with a scalar run on u16/u32/u64 too.
  bool ok = SwitchTypes<Fn::kTypes, Fn::kBoolOut>(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using TO = std::conditional_t<Fn::kBoolOut, bool, T>;
    const ScalarMath<T> m{};
    const T sv = m.scalar(s);
    UnaryLoop<TO, T>(out, x, [m, sv](T u) -> TO { return Fn{}(m, u, sv, opdefs::ScalarAttrs{}); });
  });
  return ok ? Status() : Unsupported(ctx, x.dtype);
}

}  // namespace

namespace binary_table {  // (registrations named by .def line numbers)
// clang-format off
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, ...) \
  OFL_REGISTER_KERNEL(name, kCPU, BinaryKernel<opdefs::Name##Fn>);
#define OFL_BINARY_SCALAR(name, Name, ...) \
  OFL_REGISTER_KERNEL(name, kCPU, ScalarKernel<opdefs::Name##Fn>);
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on
}  // namespace binary_table

}  // namespace kernels
}  // namespace oneflow_like
