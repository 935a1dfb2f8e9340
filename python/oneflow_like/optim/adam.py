"""Adam and AdamW (torch.optim rules, bias-corrected), amsgrad optional:
  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  (amsgrad: vmax = max(vmax, v), used for v)
  p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)
Adam adds wd * p to g (L2); AdamW scales p by (1 - lr * wd) first (decoupled decay).
"""
import math

import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, maximize=False):
        if lr < 0.0 or eps < 0.0 or weight_decay < 0.0:
            raise ValueError("lr, eps and weight_decay must be >= 0")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid beta parameters: {betas}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                wd, amsgrad = group["weight_decay"], group["amsgrad"]
                for p, g in self._grads(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = flow.zeros_like(p)
                        state["exp_avg_sq"] = flow.zeros_like(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = flow.zeros_like(p)
                    state["step"] = t = state["step"] + 1
                    if wd != 0:
                        if self._decoupled:
                            p.mul_(1.0 - lr * wd)
                        else:
                            g = g.add(p, alpha=wd)
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(b1).add_(g, alpha=1.0 - b1)
                    _addcmul_(v.mul_(b2), g, g, 1.0 - b2)
                    if amsgrad:
                        vmax = state["max_exp_avg_sq"]
                        vmax.copy_(flow.maximum(vmax, v))
                        v = vmax
                    bc1 = 1.0 - b1 ** t
                    bc2_sqrt = math.sqrt(1.0 - b2 ** t)
                    denom = (v.sqrt() * (1.0 / bc2_sqrt)).add_(eps)
                    _addcdiv_(p, m, denom, -lr / bc1)
        return loss


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


def _addcmul_(t, a, b, value):
    """t += value * a * b, in place (one fused op when the binding has addcmul_)."""
    if _has("addcmul_"):
        return t.addcmul_(a, b, value=value)
    return t.add_(a * b, alpha=value)


def _addcdiv_(t, a, b, value):
    """t += value * a / b, in place."""
    if _has("addcdiv_"):
        return t.addcdiv_(a, b, value=value)
    return t.add_(a / b, alpha=value)


_has_cache = {}


def _has(method):
    r = _has_cache.get(method)
    if r is None:
        r = _has_cache[method] = hasattr(flow.Tensor, method)
    return r
