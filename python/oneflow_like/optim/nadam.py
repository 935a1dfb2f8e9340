"""NAdam and RAdam (torch.optim rules). Both keep Adam's moments m, v (bias-corrected) and take
weight decay as L2 (g += wd p) or, with decoupled_weight_decay, as p *= 1 - lr wd.

NAdam: mu_t = b1 (1 - 0.5 * 0.96^(t psi)) with psi = momentum_decay, P_t = prod mu_1..mu_t;
  p -= lr (1 - mu_t) / (1 - P_t) g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d,
  d = sqrt(v / (1 - b2^t)) + eps.
RAdam: rho_inf = 2 / (1 - b2) - 1, rho_t = rho_inf - 2 t b2^t / (1 - b2^t); with m_hat = m / (1 - b1^t),
  rho_t > 5: p -= lr m_hat r sqrt(1 - b2^t) / (sqrt(v) + eps),
             r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t));
  else p -= lr m_hat.
"""
import math

import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_betas, _check_hparams, _flags


class _AdamFamily(Optimizer):
    """Shared by NAdam and RAdam: checks, moments and weight decay."""

    def __init__(self, name, params, lr, betas, eps, weight_decay, flags, **extra):
        _check_hparams(name, lr=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(name, betas)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, **extra)
        super().__init__(params, dict(defaults, **_flags(name, **flags)))

    def _moments(self, p, g, group, **init):
        """Weight decay, then step count and m, v updated in place; returns (state, t, g, m, v)."""
        (b1, b2), wd, lr = group["betas"], group["weight_decay"], group["lr"]
        state = self._lazy_state(
            p,
            step=lambda: 0,
            exp_avg=lambda: flow.zeros_like(p),
            exp_avg_sq=lambda: flow.zeros_like(p),
            **init,
        )
        state["step"] = t = state["step"] + 1
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1.0 - lr * wd)
            else:
                g = g.add(p, alpha=wd)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.mul_(b1).add_(g, alpha=1.0 - b1)
        v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
        return state, t, g, m, v


class NAdam(_AdamFamily):
    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_hparams("NAdam", momentum_decay=momentum_decay)
        flags = dict(foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(
            "NAdam",
            params,
            lr,
            betas,
            eps,
            weight_decay,
            flags,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                psi = group["momentum_decay"]
                for p, g in self._grads(group):
                    state, t, g, m, v = self._moments(p, g, group, mu_product=lambda: 1.0)
                    mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
                    mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
                    state["mu_product"] = prod = state["mu_product"] * mu
                    denom = (v * (1.0 / (1.0 - b2**t))).sqrt().add_(eps)
                    p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
                    p.addcdiv_(m, denom, value=-lr * mu_next / (1.0 - prod * mu_next))
        return loss


class RAdam(_AdamFamily):
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        flags = dict(foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(
            "RAdam",
            params,
            lr,
            betas,
            eps,
            weight_decay,
            flags,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                rho_inf = 2.0 / (1.0 - b2) - 1.0
                for p, g in self._grads(group):
                    _, t, g, m, v = self._moments(p, g, group)
                    step_size = lr / (1.0 - b1**t)
                    rho_t = rho_inf - 2.0 * t * b2**t / (1.0 - b2**t)
                    if rho_t > 5.0:
                        r = math.sqrt(
                            (rho_t - 4)
                            * (rho_t - 2)
                            * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                        )
                        scale = step_size * r * math.sqrt(1.0 - b2**t)
                        p.addcdiv_(m, v.sqrt().add_(eps), value=-scale)
                    else:
                        p.add_(m, alpha=-step_size)
        return loss
