"""Adamax (torch.optim rule), Adam with the infinity norm:
  g += wd p;  m = b1 m + (1 - b1) g;  u = max(b2 u, |g| + eps);  p -= lr / (1 - b1^t) m / u
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_betas, _check_hparams, _flags


class Adamax(Optimizer):
    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_hparams("Adamax", lr=lr, eps=eps, weight_decay=weight_decay)
        _check_betas("Adamax", betas)
        flags = _flags("Adamax", foreach, capturable, differentiable)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, dict(defaults, **flags))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                wd = group["weight_decay"]
                for p, g in self._grads(group):
                    state = self._lazy_state(
                        p,
                        step=lambda: 0,
                        exp_avg=lambda: flow.zeros_like(p),
                        exp_inf=lambda: flow.zeros_like(p),
                    )
                    state["step"] = t = state["step"] + 1
                    if wd != 0:
                        g = g.add(p, alpha=wd)
                    m, u = state["exp_avg"], state["exp_inf"]
                    m.mul_(b1).add_(g, alpha=1.0 - b1)
                    u.copy_(flow.maximum(u * b2, g.abs() + eps))
                    p.addcdiv_(m, u, value=-lr / (1.0 - b1**t))
        return loss
