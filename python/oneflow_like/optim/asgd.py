"""ASGD, averaged SGD (torch.optim rule):
  g += wd p;  p *= 1 - lambd eta;  p -= eta g;  ax = p if mu == 1 else ax + mu (p - ax)
  eta = lr / (1 + lambd lr t)^alpha;  mu = 1 / max(1, t - t0)
ax, the running average of the parameters, is in state["ax"].
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_hparams, _flags


class ASGD(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_hparams("ASGD", lr=lr, weight_decay=weight_decay)
        flags = _flags("ASGD", foreach, capturable, differentiable)
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, dict(defaults, **flags))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
                wd = group["weight_decay"]
                for p, g in self._grads(group):
                    state = self._lazy_state(
                        p,
                        step=lambda: 0,
                        eta=lambda: float(lr),
                        mu=lambda: 1.0,
                        ax=lambda: flow.zeros_like(p),
                    )
                    state["step"] = t = state["step"] + 1
                    if wd != 0:
                        g = g.add(p, alpha=wd)
                    eta, mu = state["eta"], state["mu"]
                    p.mul_(1.0 - lambd * eta)
                    p.add_(g, alpha=-eta)
                    ax = state["ax"]
                    if mu != 1.0:
                        ax.add_((p - ax) * mu)
                    else:
                        ax.copy_(p)
                    state["eta"] = lr / (1.0 + lambd * lr * t) ** alpha
                    state["mu"] = 1.0 / max(1.0, t - t0)
        return loss
