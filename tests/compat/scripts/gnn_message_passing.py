"""Node classification on two planted communities with a two-layer GCN written by hand:
symmetric degree normalisation, message passing with index_add / scatter_add_ /
scatter_reduce (mean and amax), and the same propagation as torch.sparse.mm on a COO matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n, per = 60, 30
y = torch.cat([torch.zeros(per, dtype=torch.long), torch.ones(per, dtype=torch.long)])
src, dst = [], []
for i in range(n):
    for j in range(i + 1, n):
        same = y[i] == y[j]
        if torch.rand(()) < (0.25 if same else 0.02):
            src += [i, j]
            dst += [j, i]
edge_index = torch.tensor([src, dst], dtype=torch.long)
x = torch.randn(n, 8) + F.one_hot(y, 8).float()

# add self loops, then D^-1/2 (A + I) D^-1/2 edge weights
loops = torch.arange(n)
ei = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
deg = torch.zeros(n).scatter_add_(0, ei[1], torch.ones(ei.size(1)))
norm = deg[ei[0]].rsqrt() * deg[ei[1]].rsqrt()
adj = torch.sparse_coo_tensor(ei.flip(0), norm, (n, n)).coalesce()


def propagate(h):
    return torch.zeros_like(h).index_add_(0, ei[1], h[ei[0]] * norm.unsqueeze(1))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 16)
        self.l2 = nn.Linear(16, 2)

    def forward(self, x):
        h = F.relu(propagate(self.l1(x)))
        h = F.dropout(h, 0.2, self.training)
        return propagate(self.l2(h))


model = GCN()
# the hand-written propagation equals the sparse matrix product
h = torch.randn(n, 4)
assert torch.allclose(propagate(h), torch.sparse.mm(adj, h), atol=1e-5)

# neighbourhood mean / max aggregations (GraphSAGE style) agree with a dense loop
idx = ei[1].unsqueeze(1).expand(-1, 4)
mean = torch.zeros(n, 4).scatter_reduce(0, idx, h[ei[0]], reduce="mean", include_self=False)
amax = torch.zeros(n, 4).scatter_reduce(0, idx, h[ei[0]], reduce="amax", include_self=False)
for v in (0, 17, 45):
    nb = ei[0][ei[1] == v]
    assert torch.allclose(mean[v], h[nb].mean(0), atol=1e-5)
    assert torch.allclose(amax[v], h[nb].max(0).values, atol=1e-6)

train = torch.zeros(n, dtype=torch.bool)
train[torch.randperm(n)[:20]] = True
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
losses = []
for epoch in range(100):
    model.train()
    opt.zero_grad()
    loss = F.cross_entropy(model(x)[train], y[train])
    loss.backward()
    opt.step()
    losses.append(loss.item())
model.eval()
with torch.no_grad():
    acc = (model(x).argmax(1)[~train] == y[~train]).float().mean().item()
print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, test accuracy {acc:.2f}")
assert losses[-1] < 0.5 * losses[0]
assert acc > 0.8, acc
