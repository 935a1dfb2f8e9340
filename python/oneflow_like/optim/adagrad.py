"""Adagrad (torch.optim rule):
  clr = lr / (1 + (t - 1) lr_decay);  g += wd p;  s += g^2;  p -= clr g / (sqrt(s) + eps)
The accumulator s starts at initial_accumulator_value and exists from construction on.
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_hparams, _flags


class Adagrad(Optimizer):
    _sparse_grads = True

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _check_hparams(
            "Adagrad",
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        flags = _flags("Adagrad", foreach, differentiable=differentiable, fused=fused)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            maximize=maximize,
        )
        super().__init__(params, dict(defaults, **flags))  # add_param_group makes the state

    def _init_state(self, p, group):
        return self._lazy_state(
            p,
            step=lambda: 0,
            sum=lambda: flow.full_like(p, group["initial_accumulator_value"]),
        )

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for p in group["params"]:
            self._init_state(p, group)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
                wd = group["weight_decay"]
                for p, g in self._grads(group):
                    state = self._init_state(p, group)
                    state["step"] += 1
                    if g.is_sparse:
                        self._sparse_step(p, g, state, group)
                        continue
                    if wd != 0:
                        g = g.add(p, alpha=wd)
                    clr = lr / (1 + (state["step"] - 1) * lr_decay)
                    s = state["sum"]
                    s.addcmul_(g, g, value=1.0)
                    p.addcdiv_(g, s.sqrt().add_(eps), value=-clr)
        return loss

    @staticmethod
    def _sparse_step(p, g, state, group):
        """torch's sparse path: only the rows in g change (s and p), g coalesced first."""
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        g = g.coalesce()
        s = state["sum"]
        g._with_values(g._values() * g._values())._add_to_(s)
        std = g._gather(s).sqrt().add_(group["eps"])
        g._with_values(g._values() / std)._add_to_(p, -clr)
