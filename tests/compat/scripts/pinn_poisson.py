"""A physics-informed network for u''(x) = -pi^2 sin(pi x) on [0, 1], u(0) = u(1) = 0 (exact
solution sin(pi x)): the residual uses second derivatives from torch.autograd.grad with
create_graph=True; torch.autograd.functional.jacobian / hessian check the derivatives."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

net = nn.Sequential(nn.Linear(1, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 1))


def residual(x):
    x = x.requires_grad_(True)
    u = net(x)
    du = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)[0]
    return d2u + math.pi**2 * torch.sin(math.pi * x)


# the double-backward derivatives agree with autograd.functional
x0 = torch.tensor([[0.3]])
x1 = x0.clone().requires_grad_(True)
u = net(x1)
du = torch.autograd.grad(u.sum(), x1, create_graph=True)[0]
d2u = torch.autograd.grad(du.sum(), x1)[0]
f = lambda t: net(t.reshape(1, 1)).sum()
jac = torch.autograd.functional.jacobian(f, x0.reshape(1))
hes = torch.autograd.functional.hessian(f, x0.reshape(1))
assert torch.allclose(jac, du.detach().reshape(1), atol=1e-10)
assert torch.allclose(hes.reshape(1), d2u.reshape(1), atol=1e-10)

opt = torch.optim.Adam(net.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=300, gamma=0.3)
boundary = torch.tensor([[0.0], [1.0]])
losses = []
for step in range(600):
    x = torch.rand(64, 1)
    loss = residual(x).pow(2).mean() + 10 * net(boundary).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    losses.append(loss.item())

xs = torch.linspace(0, 1, 101).unsqueeze(1)
with torch.no_grad():
    err = (net(xs) - torch.sin(math.pi * xs)).abs().max().item()
print(f"loss {losses[0]:.3f} -> {losses[-1]:.5f}, max error {err:.4f}")
assert losses[-1] < 0.01 * losses[0]
assert err < 0.05
