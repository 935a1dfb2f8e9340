"""Adadelta (torch.optim rule):
  g += wd p;  v = rho v + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) * g
  u = rho u + (1 - rho) d^2;  p -= lr d
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_hparams, _flags


class Adadelta(Optimizer):
    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        _check_hparams("Adadelta", lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"[Adadelta] Invalid rho value: {rho}")
        flags = _flags("Adadelta", foreach, capturable, differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, dict(defaults, **flags))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
                for p, g in self._grads(group):
                    state = self._lazy_state(
                        p,
                        step=lambda: 0,
                        square_avg=lambda: flow.zeros_like(p),
                        acc_delta=lambda: flow.zeros_like(p),
                    )
                    state["step"] += 1
                    if wd != 0:
                        g = g.add(p, alpha=wd)
                    v, u = state["square_avg"], state["acc_delta"]
                    v.mul_(rho).addcmul_(g, g, value=1.0 - rho)
                    delta = (u + eps).sqrt() / (v + eps).sqrt() * g
                    u.mul_(rho).addcmul_(delta, delta, value=1.0 - rho)
                    p.add_(delta, alpha=-lr)
        return loss
