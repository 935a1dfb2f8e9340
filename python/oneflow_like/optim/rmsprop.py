"""RMSprop (torch.optim rule):
  g += wd * p;  v = alpha v + (1 - alpha) g^2;  (centered: ga = alpha ga + (1 - alpha) g,
  avg = sqrt(v - ga^2) + eps, else avg = sqrt(v) + eps);
  momentum > 0: buf = momentum buf + g / avg, p -= lr buf;  else p -= lr g / avg
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _check_hparams, _flags


class RMSprop(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0.0,
        momentum=0.0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_hparams(
            "RMSprop", lr=lr, alpha=alpha, eps=eps, momentum=momentum, weight_decay=weight_decay
        )
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
                **_flags("RMSprop", foreach, capturable, differentiable),
            ),
        )

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
                for p, g in self._grads(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["square_avg"] = flow.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = flow.zeros_like(p)
                        if centered:
                            state["grad_avg"] = flow.zeros_like(p)
                    state["step"] += 1
                    if wd != 0:
                        g = g.add(p, alpha=wd)
                    v = state["square_avg"]
                    v.mul_(alpha).addcmul_(g, g, value=1.0 - alpha)
                    if centered:
                        ga = state["grad_avg"]
                        ga.mul_(alpha).add_(g, alpha=1.0 - alpha)
                        avg = (v - ga * ga).sqrt().add_(eps)
                    else:
                        avg = v.sqrt().add_(eps)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).addcdiv_(g, avg, value=1.0)
                        p.add_(buf, alpha=-lr)
                    else:
                        p.addcdiv_(g, avg, value=-lr)
        return loss
