"""SGD with momentum, dampening, Nesterov momentum and L2 weight decay (torch.optim.SGD rule):
  g = grad + wd * p;  buf = g (first step) else momentum * buf + (1 - dampening) * g
  d = g + momentum * buf (nesterov) else buf;  p -= lr * d
"""
import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer, _flags


class SGD(Optimizer):
    _sparse_grads = True

    @staticmethod
    def _graph_hparams(group):
        """Read from float64 tensors (group["_hp_tensors"]) inside an nn.Graph trace."""
        return {"lr": group["lr"], "momentum": group["momentum"]}

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0.0,
        dampening=0.0,
        weight_decay=0.0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        if not lr >= 0.0:
            raise ValueError(f"[SGD] Invalid learning rate: {lr}")
        if not (momentum >= 0.0 and weight_decay >= 0.0):
            raise ValueError(
                f"[SGD] momentum and weight_decay must be >= 0, got {momentum}, {weight_decay}"
            )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                f"[SGD] Nesterov momentum requires a momentum and zero dampening, got "
                f"momentum={momentum}, dampening={dampening}"
            )
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                **_flags("SGD", foreach, differentiable=differentiable, fused=fused),
            ),
        )

    def _graph_prepare(self):
        """Creates the momentum buffers eagerly (zeros) so an nn.Graph can carry them across runs.
        With dampening 0, a zero buffer gives the same first step as torch's buf = g."""
        for group in self.param_groups:
            if group["momentum"] == 0:
                continue
            if group["dampening"] != 0:
                raise NotImplementedError(
                    "[nn.Graph] SGD with dampening != 0 is not supported in a graph"
                )
            for p in group["params"]:
                state = self.state[p]
                if state.get("momentum_buffer") is None:
                    state["momentum_buffer"] = flow.zeros_like(p)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with flow.no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                wd, nesterov = group["weight_decay"], group["nesterov"]
                for p, g in self._grads(group):
                    if g.is_sparse:  # nn.Embedding(sparse=True)
                        if wd != 0:
                            g.add(p, alpha=wd)  # raises torch's add(sparse, dense) error
                        if momentum == 0:
                            g._add_to_(p, -lr)  # only the rows touched
                            continue
                        g = g.to_dense()  # torch's sparse buffer holds the same values
                    if wd != 0:
                        g = g.add(p, alpha=wd)
                    tracing = getattr(self, "_graph_tracing", False)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = g.clone()
                        elif tracing:  # momentum fed per run; dampening is 0 in a graph
                            mom = group["_hp_tensors"]["momentum"].to(p.dtype)
                            buf.mul_(mom).add_(g)
                        else:
                            buf.mul_(momentum).add_(g, alpha=1.0 - dampening)
                        if nesterov:
                            g = (
                                g + buf * group["_hp_tensors"]["momentum"].to(p.dtype)
                                if tracing
                                else g.add(buf, alpha=momentum)
                            )
                        else:
                            g = buf
                    if tracing:
                        p.sub_(
                            g * group["_hp_tensors"]["lr"].to(p.dtype)
                        )  # == p + (-lr) * g, lr fed per run
                    else:
                        p.add_(g, alpha=-lr)
        return loss
