// CPU kernels of the loss family: nll_loss (with label smoothing) and its gradient, and the
// elementwise binary_cross_entropy_with_logits and its gradient.
#include <cmath>
#include <vector>

#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/loss.h"

namespace oneflow_like {
namespace kernels {
namespace {

using opdefs::kReductionMean;
using opdefs::kReductionNone;
using opdefs::NllLossAttrs;

// logp viewed as (N, C, R); target as (N, R).
struct NllShape {
  int64_t n = 1, c = 1, r = 1;
};
NllShape NllShapeOf(const Shape& s) {
  NllShape d;
  if (s.ndim() == 1) {
    d.c = s[0];
    return d;
  }
  d.n = s[0];
  d.c = s[1];
  for (int64_t i = 2; i < s.ndim(); ++i) d.r *= s[i];
  return d;
}

// Checks targets; returns the denominator of the mean, sum of w[target] over non-ignored targets
// (PyTorch divides the label-smoothing term by the same sum).
template <typename T>
StatusOr<double> CheckTargets(const char* op, const int64_t* t, const T* w, const NllShape& d,
                              int64_t ignore) {
  double wsum = 0;
  for (int64_t i = 0; i < d.n * d.r; ++i) {
    if (t[i] == ignore) continue;
    if (t[i] < 0 || t[i] >= d.c)
      return OutOfRange("[%s] target %d out of range for %d classes", op, t[i], d.c);
    wsum += w ? static_cast<double>(w[t[i]]) : 1.0;
  }
  return wsum;
}

// The attrs and inputs both nll kernels read; x is the log-probabilities, t the targets.
struct NllArgs {
  const TensorView& x;
  const int64_t* t;
  int64_t red, ignore;
  double eps;
  NllShape d;
  int weight_input;  // -1: no class weights
  NllArgs(KernelContext& ctx, int x_input)
      : NllArgs(ctx, x_input, opdefs::ReadAttrs<NllLossAttrs>(ctx.attrs())) {}
  NllArgs(KernelContext& ctx, int x_input, const NllLossAttrs& a)
      : x(ctx.input(x_input)),
        t(ctx.input(x_input + 1).ptr<const int64_t>()),
        red(a.reduction),
        ignore(a.ignore_index),
        eps(a.label_smoothing),
        d(NllShapeOf(x.shape)),
        weight_input(a.has_weight ? x_input + 2 : -1) {}
};

template <typename T, typename F>
Status WithNllArgs(KernelContext& ctx, int x_input, F&& body) {
  NllArgs n(ctx, x_input);
  const T* w = n.weight_input >= 0 ? ctx.input(n.weight_input).ptr<const T>() : nullptr;
  ASSIGN_OR_RETURN(double den, CheckTargets<T>("nll_loss", n.t, w, n.d, n.ignore));
  body(n, w, den);
  return Status();
}

Status NllLossKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  Status st = TypeError("[nll_loss] not supported for %s on cpu", DTypeName(ctx.input(0).dtype));
  OFL_SWITCH_FLOAT(ctx.input(0).dtype, {
    using T = scalar_t;
    st = WithNllArgs<T>(ctx, 0, [&](const NllArgs& na, const T* w, double den) {
      const NllShape& d = na.d;
      const int64_t* t = na.t;
      int64_t red = na.red, ignore = na.ignore;
      double eps = na.eps;
      const T* lp = na.x.ptr<const T>();
      std::vector<double> nll(d.n * d.r, 0.0), smooth(eps > 0 ? d.n * d.r : 0, 0.0);
      ParallelFor(
          d.n * d.r,
          [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
              if (t[i] == ignore) continue;
              int64_t n = i / d.r, r = i % d.r;
              const T* row = lp + n * d.c * d.r + r;
              nll[i] = -(w ? static_cast<double>(w[t[i]]) : 1.0) * row[t[i] * d.r];
              if (eps > 0) {
                double s = 0;
                for (int64_t c = 0; c < d.c; ++c)
                  s -= (w ? static_cast<double>(w[c]) : 1.0) * row[c * d.r];
                smooth[i] = s;
              }
            }
          },
          std::max<int64_t>(1, kParallelGrain / (eps > 0 ? d.c : 1)));
      T* o = out.ptr<T>();
      double k = eps / static_cast<double>(d.c);
      if (red == kReductionNone) {
        for (int64_t i = 0; i < d.n * d.r; ++i)
          o[i] = static_cast<T>((1 - eps) * nll[i] + (eps > 0 ? k * smooth[i] : 0));
      } else {
        double sn = 0, ss = 0;
        for (double v : nll) sn += v;
        for (double v : smooth) ss += v;
        if (red == kReductionMean) {
          sn /= den;
          ss /= den;
        }
        o[0] = static_cast<T>((1 - eps) * sn + k * ss);
      }
    });
  });
  return st;
}

// dlogp[n, c, r] = -g_i ((1 - eps) w[t] [c == t] / D1 + eps / C * w[c] / D2) for valid targets i.
Status NllLossGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &dx = ctx.output(0);
  Status st = TypeError("[nll_loss_grad] not supported for %s on cpu", DTypeName(dy.dtype));
  OFL_SWITCH_FLOAT(dy.dtype, {
    using T = scalar_t;
    st = WithNllArgs<T>(ctx, 1, [&](const NllArgs& na, const T* w, double den) {
      const NllShape& d = na.d;
      const int64_t* t = na.t;
      int64_t red = na.red, ignore = na.ignore;
      double eps = na.eps;
      const T* g = dy.ptr<const T>();
      T* o = dx.ptr<T>();
      double d1 = red == kReductionMean ? den : 1.0, d2 = d1;
      double k = eps / static_cast<double>(d.c);
      ParallelFor(
          d.n,
          [&](int64_t b, int64_t e) {
            std::fill(o + b * d.c * d.r, o + e * d.c * d.r, T(0));
            for (int64_t n = b; n < e; ++n)
              for (int64_t r = 0; r < d.r; ++r) {
                int64_t i = n * d.r + r;
                if (t[i] == ignore) continue;
                double gi =
                    red == kReductionNone ? static_cast<double>(g[i]) : static_cast<double>(g[0]);
                T* row = o + n * d.c * d.r + r;
                if (eps > 0)
                  for (int64_t c = 0; c < d.c; ++c)
                    row[c * d.r] = static_cast<T>(-gi * k * (w ? w[c] : T(1)) / d2);
                row[t[i] * d.r] += static_cast<T>(-gi * (1 - eps) * (w ? w[t[i]] : T(1)) / d1);
              }
          },
          std::max<int64_t>(1, kParallelGrain / (d.c * d.r)));
    });
  });
  return st;
}

template <typename T>
inline T SoftplusNeg(T x) {
  return std::max(-x, T(0)) + std::log1p(std::exp(-std::abs(x)));
}  // log(1 + e^-x)

Status BceKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.input(1), &out = ctx.output(0);
  bool has_pw = ctx.num_inputs() > 2, done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    using T = scalar_t;
    const T *xp = x.ptr<const T>(), *yp = y.ptr<const T>(),
            *pw = has_pw ? ctx.input(2).ptr<const T>() : nullptr;
    T* o = out.ptr<T>();
    ParallelFor(x.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T lw = pw ? T(1) + (pw[i] - T(1)) * yp[i] : T(1);
        o[i] = (T(1) - yp[i]) * xp[i] + lw * SoftplusNeg(xp[i]);
      }
    });
    done = true;
  });
  if (!done)
    return TypeError("[binary_cross_entropy_with_logits] not supported for %s on cpu",
                     DTypeName(x.dtype));
  return Status();
}

// dx = g ((1 - y) - lw sigmoid(-x)); dy = g (-x + (pw - 1) softplus(-x)); dpw = g y softplus(-x).
Status BceGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  bool has_pw = ctx.num_inputs() > 3, done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    using T = scalar_t;
    const T *g = dy.ptr<const T>(), *xp = x.ptr<const T>(), *yp = y.ptr<const T>();
    const T* pw = has_pw ? ctx.input(3).ptr<const T>() : nullptr;
    T *dx = ctx.output(0).ptr<T>(), *dt = ctx.output(1).ptr<T>(),
      *dpw = has_pw ? ctx.output(2).ptr<T>() : nullptr;
    ParallelFor(x.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T p = pw ? pw[i] : T(1), lw = T(1) + (p - T(1)) * yp[i], sp = SoftplusNeg(xp[i]);
        T sig_neg = T(1) / (T(1) + std::exp(xp[i]));
        dx[i] = g[i] * ((T(1) - yp[i]) - lw * sig_neg);
        dt[i] = g[i] * (-xp[i] + (p - T(1)) * sp);
        if (dpw) dpw[i] = g[i] * yp[i] * sp;
      }
    });
    done = true;
  });
  if (!done)
    return TypeError("[bce_with_logits_grad] not supported for %s on cpu", DTypeName(x.dtype));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(nll_loss, kCPU, NllLossKernel);
OFL_REGISTER_KERNEL(nll_loss_grad, kCPU, NllLossGradKernel);
OFL_REGISTER_KERNEL(binary_cross_entropy_with_logits, kCPU, BceKernel);
OFL_REGISTER_KERNEL(bce_with_logits_grad, kCPU, BceGradKernel);

}  // namespace kernels
}  // namespace oneflow_like
