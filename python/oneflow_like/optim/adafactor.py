"""Adafactor (torch.optim.Adafactor, PyTorch 2.5; Shazeer & Stern 2018 as PyTorch writes it): a
factored second moment for matrices (row and column means of g^2 kept instead of the full
matrix), no first moment, a step size relative to the parameter's RMS:
  beta2_t = 1 - t^beta2_decay;  rho_t = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) rho_t
  p *= 1 - lr wd
  ndim > 1:  R = lerp(R, mean_last(g^2), 1 - beta2_t);  C = lerp(C, mean_second_last(g^2), ...)
             V = R C / max(mean(R), eps1)
  else:      V = lerp(V, g^2, 1 - beta2_t)
  u = g / sqrt(max(V, eps1^2));  p -= alpha / max(1, RMS(u) / d) u
eps1=None is the parameter dtype's machine epsilon."""
import math

import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _flags


class Adafactor(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        if isinstance(lr, flow.Tensor):
            lr = float(lr.item())
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        flags = _flags("Adafactor", foreach)
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=tuple(eps),
            d=d,
            weight_decay=weight_decay,
            maximize=maximize,
        )
        super().__init__(params, dict(defaults, **flags))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, decay, d = group["lr"], group["beta2_decay"], group["d"]
                (eps1, eps2), wd = group["eps"], group["weight_decay"]
                for p, g in self._grads(group):
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    self._update(p, g, self._state(p, g), lr, decay, eps1, eps2, d, wd)
        return loss

    def _state(self, p, g):
        if g.dim() > 1:
            row = list(g.shape)
            row[-1] = 1
            col = list(g.shape)
            col[-2] = 1
            return self._lazy_state(
                p,
                step=lambda: 0,
                row_var=lambda: flow.zeros(row, dtype=g.dtype, device=g.device),
                col_var=lambda: flow.zeros(col, dtype=g.dtype, device=g.device),
            )
        return self._lazy_state(p, step=lambda: 0, variance=lambda: flow.zeros_like(g))

    @staticmethod
    def _rms(t):
        return t.norm(2).item() / math.sqrt(max(t.numel(), 1))

    def _update(self, p, g, state, lr, decay, eps1, eps2, d, wd):
        if eps1 is None:
            eps1 = flow.finfo(p.dtype).eps
        state["step"] = t = state["step"] + 1
        one_minus_beta2 = float(t) ** decay
        rho = min(lr, 1.0 / math.sqrt(t))
        alpha = max(eps2, self._rms(p)) * rho
        if wd != 0:
            p.mul_(1.0 - lr * wd)
        if g.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            sq = g * g
            row_var.lerp_(sq.mean(dim=-1, keepdim=True), one_minus_beta2)
            col_var.lerp_(sq.mean(dim=-2, keepdim=True), one_minus_beta2)
            var = flow.matmul(row_var, col_var)
            var = var / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
        else:
            state["variance"].lerp_(g * g, one_minus_beta2)
            var = state["variance"]
        update = var.clamp(min=eps1 * eps1).rsqrt() * g
        denom = max(1.0, self._rms(update) / d)
        p.add_(update, alpha=-alpha / denom)
