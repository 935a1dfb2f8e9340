"""Rprop, resilient backpropagation (torch.optim rule), per element:
  s = sign(g * g_prev);  step = clamp(step * (eta_plus if s > 0, eta_minus if s < 0, 1 if 0),
  step_min, step_max);  g = 0 where s < 0;  p -= sign(g) step;  g_prev = g
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_hparams, _flags


class Rprop(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_hparams("Rprop", lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"[Rprop] Invalid eta values: {etas[0]}, {etas[1]}")
        flags = _flags("Rprop", foreach, capturable, differentiable)
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize)
        super().__init__(params, dict(defaults, **flags))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                (eta_minus, eta_plus), (step_min, step_max) = group["etas"], group["step_sizes"]
                for p, g in self._grads(group):
                    state = self._lazy_state(
                        p,
                        step=lambda: 0,
                        prev=lambda: flow.zeros_like(p),
                        step_size=lambda: flow.full_like(p, group["lr"]),
                    )
                    state["step"] += 1
                    s = (g * state["prev"]).sign()
                    factor = flow.where(s > 0, eta_plus, flow.where(s < 0, eta_minus, 1.0))
                    step_size = state["step_size"]
                    step_size.mul_(factor).clamp_(step_min, step_max)
                    g = flow.where(s < 0, 0.0, g)
                    p.addcmul_(g.sign(), step_size, value=-1.0)
                    state["prev"].copy_(g)
        return loss
