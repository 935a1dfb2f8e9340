"""SimCLR on 2-D point clouds: two augmented views per sample made with torch ops (noise,
random rotation, scaling), an encoder + projection head, the NT-Xent loss (F.normalize, cosine
similarity matrix, masked_fill of the diagonal, cross-entropy over similarities), then a linear
probe on the frozen encoder."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_cls, per = 4, 64
centers = torch.randn(n_cls, 6) * 3
labels = torch.arange(n_cls).repeat_interleave(per)
data = centers[labels] + 0.5 * torch.randn(n_cls * per, 6)


def augment(x):
    theta = torch.rand(x.size(0)) * 0.4 - 0.2
    c, s = torch.cos(theta), torch.sin(theta)
    x = x.clone()
    a, b = x[:, 0].clone(), x[:, 1].clone()
    x[:, 0], x[:, 1] = c * a - s * b, s * a + c * b
    scale = torch.empty(x.size(0), 1).uniform_(0.8, 1.2)
    return x * scale + 0.1 * torch.randn_like(x)


class SimCLR(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(6, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16)
        )
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.head(self.encoder(x))


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    n = z1.size(0)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


model = SimCLR()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=30)
losses = []
for epoch in range(30):
    perm = torch.randperm(data.size(0))
    total = 0.0
    for i in range(0, data.size(0), 64):
        x = data[perm[i : i + 64]]
        loss = nt_xent(model(augment(x)), model(augment(x)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    losses.append(total)

# the similarity helper agrees with F.cosine_similarity
a, b = torch.randn(5, 8), torch.randn(5, 8)
cos = F.normalize(a, dim=1) @ F.normalize(b, dim=1).t()
assert torch.allclose(cos.diagonal(), F.cosine_similarity(a, b, dim=1), atol=1e-6)

# linear probe on frozen features
model.eval()
with torch.no_grad():
    feats = model.encoder(data)
probe = nn.Linear(16, n_cls)
popt = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
for _ in range(100):
    popt.zero_grad()
    F.cross_entropy(probe(feats), labels).backward()
    popt.step()
acc = (probe(feats).argmax(1) == labels).float().mean().item()
print(
    f"nt-xent {losses[0]:.2f} -> {losses[-1]:.2f}, probe accuracy {acc:.2f}, lr {sched.get_last_lr()[0]:.2e}"
)
assert losses[-1] < losses[0] * 0.9
assert acc > 0.9
assert math.isclose(sched.get_last_lr()[0], 0.0, abs_tol=1e-9)
