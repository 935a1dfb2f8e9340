"""SparseAdam (torch.optim.SparseAdam): Adam made lazy for sparse gradients
(nn.Embedding(sparse=True)). Only the rows present in the coalesced gradient g are touched:
  m[r] += (1 - b1) (g - m[r]);  v[r] += (1 - b2) (g^2 - v[r])
  p[r] -= lr sqrt(1 - b2^t) / (1 - b1^t) * m[r] / (sqrt(v[r]) + eps)
with t the parameter's step count; rows not in g keep their moments (no decay).
"""
import math

import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer


class SparseAdam(Optimizer):
    _sparse_grads = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        params = list(params)
        sparse_params = []
        for i, p in enumerate(params):
            if isinstance(p, dict):
                sparse_params += [[i, j] for j, q in enumerate(p.get("params", [])) if q.is_sparse]
            elif p.is_sparse:
                sparse_params.append(i)
        if sparse_params:
            raise ValueError(
                f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter "
                "tensors"
            )
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not g.is_sparse:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam "
                            "instead"
                        )
                    state = self._lazy_state(
                        p,
                        step=lambda: 0,
                        exp_avg=lambda: flow.zeros_like(p),
                        exp_avg_sq=lambda: flow.zeros_like(p),
                    )
                    state["step"] += 1
                    g = (-g if group["maximize"] else g).coalesce()
                    values = g._values()
                    m_old, v_old = g._gather(state["exp_avg"]), g._gather(state["exp_avg_sq"])
                    m_step = (values - m_old) * (1 - beta1)
                    v_step = (values * values - v_old) * (1 - beta2)
                    g._with_values(m_step)._add_to_(state["exp_avg"])
                    g._with_values(v_step)._add_to_(state["exp_avg_sq"])
                    m, v = m_step + m_old, v_step + v_old
                    t = state["step"]
                    step_size = lr * math.sqrt(1 - beta2**t) / (1 - beta1**t)
                    g._with_values(m / (v.sqrt() + eps))._add_to_(p, -step_size)
        return loss
