"""Metric learning on the digits: an embedding network trained with TripletMarginLoss on
(anchor, positive, negative) triplets, with NAdam and ExponentialLR; then a cosine-embedding
fine-tuning step and a check that same-class pairs end up closer than different-class ones."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from _digits import digits

torch.manual_seed(0)
x_np, y_np = digits(900)
x, y = torch.from_numpy(x_np).reshape(-1, 64), torch.from_numpy(y_np)
by_class = [torch.nonzero(y == c).flatten() for c in range(10)]


def triplets(batch):
    a = torch.randint(0, len(y), (batch,))
    pos, neg = [], []
    for i in a.tolist():
        c = int(y[i])
        same = by_class[c]
        pos.append(int(same[torch.randint(0, len(same), (1,))]))
        other = (c + int(torch.randint(1, 10, (1,)))) % 10
        diff = by_class[other]
        neg.append(int(diff[torch.randint(0, len(diff), (1,))]))
    return x[a], x[torch.tensor(pos)], x[torch.tensor(neg)]


embed = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16))
criterion = nn.TripletMarginLoss(margin=1.0, p=2)
optimizer = torch.optim.NAdam(embed.parameters(), lr=2e-3)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.98)
losses = []
for step in range(150):
    anchor, positive, negative = triplets(64)
    loss = criterion(embed(anchor), embed(positive), embed(negative))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())
first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
print(f"triplet loss {first:.4f} -> {last:.4f}")
assert last < 0.5 * first

cosine = nn.CosineEmbeddingLoss(margin=0.2)
anchor, positive, negative = triplets(128)
pairs_a = torch.cat([anchor, anchor])
pairs_b = torch.cat([positive, negative])
target = torch.cat([torch.ones(128), -torch.ones(128)])
before = cosine(embed(pairs_a), embed(pairs_b), target).item()
for _ in range(20):
    loss = cosine(embed(pairs_a), embed(pairs_b), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
assert loss.item() < before
with torch.no_grad():
    ea, ep, en = embed(anchor), embed(positive), embed(negative)
    d_pos = F.pairwise_distance(ea, ep).mean().item()
    d_neg = F.pairwise_distance(ea, en).mean().item()
print(f"mean distance same class {d_pos:.3f}, other class {d_neg:.3f}")
assert d_pos < d_neg
