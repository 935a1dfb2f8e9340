"""Samplers the runtime has no single op for, composed from flow.rand/randn and elementwise
ops: Gamma (Marsaglia-Tsang, with implicit reparameterisation gradients), Poisson (Knuth for
small rates, Hormann's PTRS above) and Binomial (geometric-gap inversion for small n*p,
Hormann's BTRS above). Rejection runs in vectorised rounds: every round draws for the whole
tensor and keeps the first accepted candidate of each element."""
import numpy as np

import oneflow_like as flow

_MAX_ROUNDS = 10000  # rejection rounds before giving up (acceptance rates are >= 0.6)


def _uniform(like):
    return flow.rand(like.shape, dtype=like.dtype, device=like.device)


def _reject_loop(name, shape_like, propose):
    """Runs `propose()` -> (candidate, accepted) until every element has accepted once."""
    result = flow.zeros_like(shape_like)
    done = flow.zeros(shape_like.shape, dtype=flow.bool, device=shape_like.device)
    for _ in range(_MAX_ROUNDS):
        cand, accept = propose(done)
        take = accept & ~done
        result = flow.where(take, cand, result)
        done = done | accept
        if bool(done.all()):
            return result
    raise RuntimeError(f"{name}: rejection sampler did not finish in {_MAX_ROUNDS} rounds")


def _marsaglia_tsang(alpha):
    """Gamma(alpha, 1) draws for alpha >= 1 (Marsaglia & Tsang 2000)."""
    d = alpha - 1.0 / 3.0
    c = 1.0 / flow.sqrt(9.0 * d)

    def propose(done):
        x = flow.randn(alpha.shape, dtype=alpha.dtype, device=alpha.device)
        v = 1.0 + c * x
        positive = v > 0
        v = flow.where(positive, v, flow.ones_like(v)) ** 3
        u = _uniform(alpha).clamp(min=flow.finfo(alpha.dtype).tiny)
        accept = positive & (flow.log(u) < 0.5 * x * x + d - d * v + d * flow.log(v))
        return d * v, accept

    return _reject_loop("Gamma sampler", alpha, propose)


def _gamma_sample(alpha):
    """Gamma(alpha, 1) draws, any alpha > 0: alpha < 1 boosts to alpha + 1 and scales by
    U^(1/alpha). Draws are clamped to the dtype's smallest normal number (as PyTorch's)."""
    small = alpha < 1
    boosted = flow.where(small, alpha + 1.0, alpha)
    x = _marsaglia_tsang(boosted)
    u = _uniform(alpha).clamp(min=flow.finfo(alpha.dtype).tiny)
    scale = flow.where(small, flow.exp(flow.log(u) / alpha), flow.ones_like(alpha))
    return (x * scale).clamp(min=flow.finfo(alpha.dtype).tiny)


def _gamma_cdf_grad_alpha_series(alpha, x):
    """d/d alpha of the regularised lower incomplete gamma P(alpha, x), from the series
    P = sum_n exp((alpha + n) log x - x - lgamma(alpha + n + 1)), differentiated termwise:
    sum_n t_n (log x - digamma(alpha + n + 1)). Summed in blocks of 64 terms until every
    element's terms have passed their peak (n > x - alpha) and fallen below 1e-18 of the sum.
    The cost grows like sqrt(alpha), and far in the upper tail (P within 1e-10 of 1) the sum
    cancels: used for alpha < 20, where such tails have probability < 1e-10."""
    block = 64
    n0 = 0
    total = flow.zeros_like(x)
    psum = flow.zeros_like(x)
    a = alpha.unsqueeze(-1)
    lx = flow.log(x).unsqueeze(-1)
    xx = x.unsqueeze(-1)
    while True:
        n = flow.arange(n0, n0 + block, dtype=x.dtype, device=x.device)
        an = a + n
        t = flow.exp(an * lx - xx - flow.lgamma(an + 1.0))
        total = total + (t * (lx - flow.digamma(an + 1.0))).sum(-1)
        psum = psum + t.sum(-1)
        last = t.select(-1, block - 1)
        n0 += block
        past_peak = (alpha + n0) > x
        small = last <= 1e-18 * psum.clamp(min=flow.finfo(x.dtype).tiny)
        if bool((past_peak & small).all()):
            return total


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_GL_PANELS = 4


def _gamma_cdf_grad_alpha_quadrature(alpha, x):
    """d/d alpha of P(alpha, x) = integral of (log t - digamma(alpha)) p(t; alpha) dt, by
    composite Gauss-Legendre (4 panels of 16 nodes): over [max(0, alpha - 14 sd), x] below the
    mean, and as minus the integral over [x, max(alpha, x) + 24 sd] above it (no cancellation
    in either tail). sd = sqrt(alpha); for alpha >= 20 the density is smooth on that scale."""
    sd = flow.sqrt(alpha)
    lower = x < alpha
    lo = flow.where(lower, (alpha - 14.0 * sd).clamp(min=0.0), x)
    hi = flow.where(lower, x, flow.maximum(alpha, x) + 24.0 * sd)
    width = (hi - lo) / _GL_PANELS
    k = flow.arange(_GL_PANELS, dtype=x.dtype, device=x.device)
    nodes = flow.tensor(_GL_NODES, dtype=x.dtype, device=x.device)
    weights = flow.tensor(_GL_WEIGHTS, dtype=x.dtype, device=x.device)
    mids = lo.unsqueeze(-1) + width.unsqueeze(-1) * (k + 0.5)  # [..., panels]
    half = (width / 2).unsqueeze(-1).unsqueeze(-1)
    t = mids.unsqueeze(-1) + half * nodes  # [..., panels, nodes]
    a = alpha.unsqueeze(-1).unsqueeze(-1)
    log_t = flow.log(t)
    f = (log_t - flow.digamma(a)) * flow.exp((a - 1.0) * log_t - t - flow.lgamma(a))
    integral = (f * weights * half).sum(-1).sum(-1)
    return flow.where(lower, integral, -integral)


def _gamma_cdf_grad_alpha(alpha, x):
    """d/d alpha of the Gamma(alpha, 1) CDF at x: the series below alpha = 20, quadrature
    above (each element computed once; the other method sees harmless stand-in values)."""
    big = alpha >= 20.0
    if not bool(big.any()):
        return _gamma_cdf_grad_alpha_series(alpha, x)
    if bool(big.all()):
        return _gamma_cdf_grad_alpha_quadrature(alpha, x)
    one = flow.ones_like(alpha)
    series = _gamma_cdf_grad_alpha_series(flow.where(big, one, alpha), flow.where(big, one, x))
    quad = _gamma_cdf_grad_alpha_quadrature(
        flow.where(big, alpha, 20.0 * one), flow.where(big, x, 20.0 * one)
    )
    return flow.where(big, quad, series)


class _StandardGamma(flow.autograd.Function):
    """Gamma(alpha, 1) draws; backward: the implicit reparameterisation gradient
    dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha), P the Gamma CDF and p its density."""

    @staticmethod
    def forward(ctx, alpha):
        x = _gamma_sample(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        dcdf = _gamma_cdf_grad_alpha(alpha, x)
        log_pdf = (alpha - 1.0) * flow.log(x) - x - flow.lgamma(alpha)
        return grad * (-dcdf * flow.exp(-log_pdf))


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape; differentiable in alpha."""
    return _StandardGamma.apply(alpha)


def poisson(rate):
    """Poisson(rate) draws of rate's shape (float, as PyTorch's). Rate 0 gives 0."""
    rate = rate.detach()
    small = rate < 10
    # Knuth: count uniforms until their running product falls below exp(-rate).
    limit = flow.exp(-flow.where(small, rate, flow.zeros_like(rate)))
    prod = flow.ones_like(rate)
    k_small = flow.zeros_like(rate)
    active = small.clone()
    rounds = 0
    while bool(active.any()):
        prod = prod * _uniform(rate)
        active = active & (prod > limit)
        k_small = k_small + active.to(rate.dtype)
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise RuntimeError("Poisson sampler: Knuth's method did not finish")
    if not bool((~small).any()):
        return k_small
    lam = flow.where(small, flow.full_like(rate, 10.0), rate)
    slam = flow.sqrt(lam)
    loglam = flow.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose(done):
        u = _uniform(rate) - 0.5
        v = _uniform(rate).clamp(min=flow.finfo(rate.dtype).tiny)
        us = 0.5 - u.abs()
        k = flow.floor((2 * a / us + b) * u + lam + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        rejected = (k < 0) | ((us < 0.013) & (v > us))
        kk = k.clamp(min=0)
        lhs = flow.log(v) + flow.log(invalpha) - flow.log(a / (us * us) + b)
        rhs = -lam + kk * loglam - flow.lgamma(kk + 1)
        return k, quick | (~rejected & (lhs <= rhs)) | small

    k_large = _reject_loop("Poisson sampler", rate, propose)
    return flow.where(small, k_small, k_large)


def binomial(total_count, probs):
    """Binomial(total_count, probs) draws (float) of the broadcast shape of the two."""
    n = total_count.detach()
    p = probs.detach()
    flip = p > 0.5
    q = flow.where(flip, 1 - p, p)  # q <= 1/2; the count of the other outcome when flipped
    use_inv = n * q < 10
    # Inversion: successes = how many geometric gaps fit in n trials.
    q_inv = flow.where(use_inv, q, flow.zeros_like(q))
    log_fail = flow.log1p(-q_inv)
    pos = flow.zeros_like(q)
    k_inv = flow.zeros_like(q)
    active = use_inv & (q_inv > 0) & (n > 0)
    rounds = 0
    while bool(active.any()):
        u = _uniform(q).clamp(min=flow.finfo(q.dtype).tiny)
        gap = flow.ceil(flow.log(u) / log_fail)
        pos = pos + flow.where(active, gap, flow.zeros_like(gap))
        active = active & (pos <= n)
        k_inv = k_inv + active.to(q.dtype)
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise RuntimeError("Binomial sampler: inversion did not finish")
    if bool(use_inv.all()):
        k = k_inv
    else:
        # BTRS (Hormann 1993) for n*q >= 10; other elements get harmless stand-in parameters.
        nn = flow.where(use_inv, flow.full_like(n, 100.0), n)
        pp = flow.where(use_inv, flow.full_like(q, 0.5), q)
        qq = 1 - pp
        spq = flow.sqrt(nn * pp * qq)
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * pp
        c = nn * pp + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = flow.log(pp / qq)
        m = flow.floor((nn + 1) * pp)
        h = flow.lgamma(m + 1) + flow.lgamma(nn - m + 1)

        def propose(done):
            u = _uniform(q) - 0.5
            v = _uniform(q).clamp(min=flow.finfo(q.dtype).tiny)
            us = 0.5 - u.abs()
            k = flow.floor((2 * a / us + b) * u + c)
            inside = (k >= 0) & (k <= nn)
            quick = inside & (us >= 0.07) & (v <= vr)
            kk = k.clamp(min=0).minimum(nn)
            lv = flow.log(v * alpha / (a / (us * us) + b))
            bound = h - flow.lgamma(kk + 1) - flow.lgamma(nn - kk + 1) + (kk - m) * lpq
            return k, quick | (inside & (lv <= bound)) | use_inv

        k_btrs = _reject_loop("Binomial sampler", q, propose)
        k = flow.where(use_inv, k_inv, k_btrs)
    return flow.where(flip, n - k, k)
