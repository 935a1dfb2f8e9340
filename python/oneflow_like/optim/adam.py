"""Adam and AdamW (torch.optim rules, bias-corrected), amsgrad optional:
  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  (amsgrad: vmax = max(vmax, v), used for v)
  p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)
Adam adds wd * p to g (L2); AdamW (or Adam(decoupled_weight_decay=True)) scales p by
(1 - lr * wd) first (decoupled decay).
"""
import math

import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_betas, _flags


class Adam(Optimizer):
    _decoupled = False

    @staticmethod
    def _graph_hparams(group):
        """Read from float64 tensors (group["_hp_tensors"]) inside an nn.Graph trace."""
        return {"lr": group["lr"], "beta1": group["betas"][0]}

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0.0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        name = type(self).__name__
        if not (lr >= 0.0 and eps >= 0.0 and weight_decay >= 0.0):
            raise ValueError(
                f"[{name}] lr, eps and weight_decay must be >= 0, got {lr}, {eps}, {weight_decay}"
            )
        _check_betas(name, betas)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                decoupled_weight_decay=decoupled_weight_decay or self._decoupled,
                **_flags(name, foreach, capturable, differentiable, fused),
            ),
        )

    def _graph_prepare(self):
        """Creates the state eagerly so an nn.Graph can carry it across runs: the moments as
        zeros and the step count as a float64 0-d tensor on the parameter's device (a Python int
        would be baked into the traced graph). Bias corrections are then computed from that tensor inside the graph.
        """
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if not state:
                    state["exp_avg"] = flow.zeros_like(p)
                    state["exp_avg_sq"] = flow.zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = flow.zeros_like(p)
                    state["step"] = 0
                if not isinstance(state["step"], flow.Tensor):
                    # on p's device (torch's capturable=True): a CUDA graph updates it on the GPU
                    state["step"] = flow.tensor(
                        float(state["step"]), dtype=flow.float64, device=p.device
                    )

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                for p, g in self._grads(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = flow.zeros_like(p)
                        state["exp_avg_sq"] = flow.zeros_like(p)
                        if group["amsgrad"]:
                            state["max_exp_avg_sq"] = flow.zeros_like(p)
                    if isinstance(state["step"], flow.Tensor):  # graph-capable state
                        self._tensor_step(p, g, state, group)
                        continue
                    state["step"] = t = state["step"] + 1
                    m, v = self._update_moments(p, g, state, group)
                    bc1 = 1.0 - b1**t
                    bc2_sqrt = math.sqrt(1.0 - b2**t)
                    denom = (v.sqrt() * (1.0 / bc2_sqrt)).add_(eps)
                    p.addcdiv_(m, denom, value=-lr / bc1)
        return loss

    def _update_moments(self, p, g, state, group, lr=None, b1=None):
        """Weight decay, then m and v (v = max(v) with amsgrad) updated in place; returns (m, v).
        `lr`, `b1`: float64 tensors inside an nn.Graph trace, else the group's values."""
        (gb1, b2), wd = group["betas"], group["weight_decay"]
        lr = group["lr"] if lr is None else lr
        b1 = gb1 if b1 is None else b1
        if wd != 0:
            if group.get("decoupled_weight_decay", self._decoupled):
                p.mul_(
                    (1.0 - lr * wd).to(p.dtype) if isinstance(lr, flow.Tensor) else 1.0 - lr * wd
                )
            else:
                g = g.add(p, alpha=wd)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        if isinstance(b1, flow.Tensor):
            m.mul_(b1.to(p.dtype)).add_(g * (1.0 - b1).to(p.dtype))
        else:
            m.mul_(b1).add_(g, alpha=1.0 - b1)
        v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]
            vmax.copy_(flow.maximum(vmax, v))
            v = vmax
        return m, v

    def _tensor_step(self, p, g, state, group):
        """The same update with the step count in a tensor (traceable by nn.Graph)."""
        (b1, b2), eps = group["betas"], group["eps"]
        lr = group["lr"]
        if getattr(self, "_graph_tracing", False):
            lr, b1 = group["_hp_tensors"]["lr"], group["_hp_tensors"]["beta1"]
        t = state["step"]
        t.add_(1.0)
        m, v = self._update_moments(p, g, state, group, lr, b1)
        bc1 = 1.0 - b1**t  # float64, like the Python floats of the eager rule
        inv_bc2_sqrt = (1.0 - b2**t).sqrt().reciprocal().to(p.dtype)
        step_size = ((-lr) / bc1).to(p.dtype)
        denom = (v.sqrt() * inv_bc2_sqrt).add_(eps)
        p.add_(m / denom * step_size)


class AdamW(Adam):
    _decoupled = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )
