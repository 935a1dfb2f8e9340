"""Normalised weights, as torch.nn.utils.parametrizations writes them (PyTorch 2.x): a small GAN on
a 2-D mixture of Gaussians whose discriminator uses spectral_norm on every Linear (hinge loss), and a
regression MLP with weight_norm whose original0/original1 (g and v) are trained; orthogonal() keeps
a square layer orthogonal; parametrize.is_parametrized, cached() and remove_parametrizations
finish the tour. Checks: the discriminator's largest singular values stay near 1, the GAN's
samples cover the modes, the regression loss falls, and removing a parametrization keeps the
function."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm

torch.manual_seed(0)

# --- a spectrally normalised GAN on 4 Gaussians ---
centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0], [0.0, -2.0]])


def real_batch(n):
    return centers[torch.randint(0, 4, (n,))] + 0.1 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
D = nn.Sequential(
    spectral_norm(nn.Linear(2, 64)),
    nn.LeakyReLU(0.2),
    spectral_norm(nn.Linear(64, 64)),
    nn.LeakyReLU(0.2),
    spectral_norm(nn.Linear(64, 1)),
)
assert parametrize.is_parametrized(D[0], "weight")
assert "parametrizations.weight.original" in dict(D[0].named_parameters())
optG = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
optD = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.9))
for step in range(1500):
    real = real_batch(128)
    fake = G(torch.randn(128, 8))
    d_loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake.detach())).mean()
    optD.zero_grad()
    d_loss.backward()
    optD.step()
    g_loss = -D(G(torch.randn(128, 8))).mean()
    optG.zero_grad()
    g_loss.backward()
    optG.step()
    if step % 300 == 0:
        print(f"step {step} d_loss {d_loss.item():.3f} g_loss {g_loss.item():.3f}")

D.eval()
with torch.no_grad():
    sig = [torch.linalg.matrix_norm(m.weight, ord=2).item() for m in D if isinstance(m, nn.Linear)]
    samples = G(torch.randn(2000, 8))
print("largest singular values", [round(s, 3) for s in sig])
assert all(0.8 < s < 1.2 for s in sig), sig
nearest = torch.cdist(samples, centers).argmin(dim=1)
counts = torch.bincount(nearest, minlength=4)
dist = torch.cdist(samples, centers).min(dim=1).values
print("mode counts", counts.tolist(), "median distance", dist.median().item())
assert (counts > 100).sum() >= 3, counts
assert dist.median().item() < 0.6

# --- weight_norm regression ---
xs = torch.linspace(-math.pi, math.pi, 256).unsqueeze(1)
ys = torch.sin(2 * xs) + 0.5 * xs
net = nn.Sequential(weight_norm(nn.Linear(1, 64)), nn.Tanh(), weight_norm(nn.Linear(64, 1)))
g0 = net[0].parametrizations.weight.original0
v0 = net[0].parametrizations.weight.original1
assert g0.shape == (64, 1) and v0.shape == (64, 1)
assert torch.allclose(net[0].weight, g0 * v0 / v0.norm(dim=1, keepdim=True))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
losses = []
for step in range(400):
    loss = F.mse_loss(net(xs), ys)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(f"weight_norm regression loss {losses[0]:.4f} -> {losses[-1]:.4f}")
assert losses[-1] < 0.05 * losses[0], (losses[0], losses[-1])
before = net(xs).detach()
parametrize.remove_parametrizations(net[0], "weight")
assert not parametrize.is_parametrized(net[0])
assert isinstance(net[0].weight, nn.Parameter)
assert torch.allclose(net(xs), before, atol=1e-6)
with parametrize.cached():
    out = net(xs)
assert torch.allclose(out, before, atol=1e-6)

# --- orthogonal ---
q = orthogonal(nn.Linear(16, 16))
opt = torch.optim.SGD(q.parameters(), lr=0.1)
target = torch.randn(32, 16)
for _ in range(20):
    loss = (q(target) - target.flip(1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    w = q.weight
    assert torch.allclose(w @ w.T, torch.eye(16), atol=1e-4)
print("ok")
