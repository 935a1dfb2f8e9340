// CPU kernels of the ternary elementwise family: where (tensor or scalar branches), addcmul,
// addcdiv, lerp. Value operands share one dtype; the condition is bool.
#include <type_traits>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

Status Unsupported(const KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(t));
}

// out[i] = f(cond[i], x[i]) with bool cond and T x broadcast to out's shape.
template <typename T, typename F>
void CondLoop(const TensorView& out, const TensorView& c0, const TensorView& x0, F f) {
  TensorView c = BroadcastTo(c0, out.shape), x = BroadcastTo(x0, out.shape);
  if (out.contiguous() && c.contiguous() && x.contiguous()) {
    T* o = out.ptr<T>();
    const bool* cp = c.ptr<const bool>();
    const T* xp = x.ptr<const T>();
    ParallelFor(out.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) o[i] = f(cp[i], xp[i]);
    });
    return;
  }
  std::array<const DimVector*, 3> st{&out.strides, &c.strides, &x.strides};
  ForEachRow<3>(
      out.shape, st,
      {static_cast<char*>(out.data), static_cast<char*>(c.data), static_cast<char*>(x.data)},
      {int64_t(sizeof(T)), int64_t(sizeof(bool)), int64_t(sizeof(T))},
      [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        T* o = reinterpret_cast<T*>(p[0]);
        const bool* cp = reinterpret_cast<const bool*>(p[1]);
        const T* xp = reinterpret_cast<const T*>(p[2]);
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(cp[i * s[1]], xp[i * s[2]]);
      });
}

// A scalar attr as T (f16/bf16 through float).
template <typename T>
T ScalarAs(double v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<T>(v);
  else
    return T(static_cast<float>(v));
}

Status WhereKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  bool done = false;
  OFL_SWITCH_ALL(out.dtype, {
    TernaryLoop<scalar_t, bool, scalar_t, scalar_t>(
        out, c, x, y, [](bool k, scalar_t a, scalar_t b) { return k ? a : b; });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, out.dtype);
}

// where_scalar_other: cond ? x : s; where_scalar_input: cond ? s : y.
template <bool kScalarIsOther>
Status WhereScalarKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &c = ctx.input(0), &v = ctx.input(1);
  double s_d = ctx.attrs().Float("scalar");
  bool done = false;
  OFL_SWITCH_ALL(out.dtype, {
    const scalar_t s = ScalarAs<scalar_t>(s_d);
    CondLoop<scalar_t>(
        out, c, v, [s](bool k, scalar_t a) { return kScalarIsOther ? (k ? a : s) : (k ? s : a); });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, out.dtype);
}

// addcmul: t + v * a * b (any numeric dtype); addcdiv: t + v * a / b (floats).
template <bool kDiv>
Status AddcKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  double v_d = ctx.attrs().Float("value", 1.0);
  bool done = false;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T v = static_cast<T>(v_d);
    TernaryLoop<T, T, T, T>(out, ctx.input(0), ctx.input(1), ctx.input(2), [v](T t, T a, T b) {
      return static_cast<T>(kDiv ? t + v * a / b : t + v * a * b);
    });
    done = true;
  };
  if constexpr (kDiv) {
    OFL_SWITCH_FLOAT(out.dtype, run(scalar_t{}));
  } else {
    OFL_SWITCH_NUMERIC(out.dtype, run(scalar_t{}));
  }
  return done ? Status() : Unsupported(ctx, out.dtype);
}

// Two-sided form keeps lerp(a, b, 1) == b exactly.
template <typename T>
T LerpValue(T s, T e, T w) {
  return w < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
}

Status LerpKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    TernaryLoop<scalar_t, scalar_t, scalar_t, scalar_t>(
        out, ctx.input(0), ctx.input(1), ctx.input(2),
        [](scalar_t s, scalar_t e, scalar_t w) { return LerpValue(s, e, w); });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, out.dtype);
}

Status LerpScalarKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  double w_d = ctx.attrs().Float("weight");
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    const scalar_t w = static_cast<scalar_t>(w_d);
    BinaryLoop<scalar_t, scalar_t>(out, ctx.input(0), ctx.input(1),
                                   [w](scalar_t s, scalar_t e) { return LerpValue(s, e, w); });
    done = true;
  });
  return done ? Status() : Unsupported(ctx, out.dtype);
}

}  // namespace

OFL_REGISTER_KERNEL(where, kCPU, WhereKernel);
OFL_REGISTER_KERNEL(where_scalar_other, kCPU, WhereScalarKernel<true>);
OFL_REGISTER_KERNEL(where_scalar_input, kCPU, WhereScalarKernel<false>);
OFL_REGISTER_KERNEL(addcmul, kCPU, AddcKernel<false>);
OFL_REGISTER_KERNEL(addcdiv, kCPU, AddcKernel<true>);
OFL_REGISTER_KERNEL(lerp, kCPU, LerpKernel);
OFL_REGISTER_KERNEL(lerp_scalar, kCPU, LerpScalarKernel);

}  // namespace kernels
}  // namespace oneflow_like
