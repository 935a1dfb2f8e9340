"""MAML on sine-wave regression (the classic few-shot benchmark): the inner loop adapts a copy
of the weights with torch.autograd.grad(create_graph=True) and evaluates them through
torch.func.functional_call, so the outer Adam step differentiates through the adaptation."""
import math

import torch
import torch.nn as nn

try:
    from torch.func import functional_call
except ImportError:  # torch 1.13
    from torch.nn.utils.stateless import functional_call

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
inner_lr, k = 0.01, 10


def task():
    amp, phase = torch.empty(1).uniform_(0.1, 5.0), torch.empty(1).uniform_(0, math.pi)

    def sample(n):
        x = torch.empty(n, 1).uniform_(-5, 5)
        return x, amp * torch.sin(x + phase)

    return sample


def adapt(params, x, y, steps=1, create_graph=True):
    for _ in range(steps):
        loss = nn.functional.mse_loss(functional_call(net, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=create_graph)
        params = {n: p - inner_lr * g for (n, p), g in zip(params.items(), grads)}
    return params


# functional_call with the module's own parameters is the module
x = torch.randn(4, 1)
assert torch.equal(functional_call(net, dict(net.named_parameters()), (x,)), net(x))


def evaluate(n_tasks=20):
    torch.manual_seed(123)
    total = 0.0
    for _ in range(n_tasks):
        sample = task()
        xs, ys = sample(k)
        xq, yq = sample(50)
        params = adapt(dict(net.named_parameters()), xs, ys, steps=5, create_graph=False)
        with torch.no_grad():
            total += nn.functional.mse_loss(functional_call(net, params, (xq,)), yq).item()
    return total / n_tasks


before = evaluate()
torch.manual_seed(1)
meta_losses = []
for it in range(500):
    meta_opt.zero_grad()
    outer = 0.0
    for _ in range(4):
        sample = task()
        xs, ys = sample(k)
        xq, yq = sample(k)
        params = adapt(dict(net.named_parameters()), xs, ys)
        outer = outer + nn.functional.mse_loss(functional_call(net, params, (xq,)), yq)
    (outer / 4).backward()
    meta_opt.step()
    meta_losses.append(outer.item() / 4)
after = evaluate()
print(
    f"meta loss {sum(meta_losses[:20]) / 20:.3f} -> {sum(meta_losses[-20:]) / 20:.3f}, adapted query mse {before:.3f} -> {after:.3f}"
)
assert sum(meta_losses[-20:]) < 0.85 * sum(meta_losses[:20])
assert after < 0.8 * before
