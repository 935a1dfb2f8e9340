"""An image classifier in the style of timm/torchvision recipes on the sklearn digits: a model
built from nn.ModuleDict, nn.ParameterList (learned per-stage scales), nn.Identity, nn.Flatten
and nn.Unflatten; mixup with torch.distributions.Beta and randperm; label smoothing in
CrossEntropyLoss; linear warmup then cosine decay via SequentialLR; a checkpoint with the
optimizer and scheduler state saved with torch.save and restored."""
import io

import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.distributions import Beta

torch.manual_seed(0)
digits = load_digits()
X = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target, dtype=torch.long)
perm = torch.randperm(len(X))
train_idx, test_idx = perm[:1400], perm[1400:]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict(
            {
                "stem": nn.Sequential(
                    nn.Unflatten(1, (1, 8, 8)), nn.Conv2d(1, 16, 3, padding=1), nn.ReLU()
                ),
                "body": nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
                "pre": nn.Identity(),
                "head": nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(32 * 4 * 4, 10)),
            }
        )
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(2)])

    def forward(self, x):
        h = self.blocks["stem"](x) * self.scales[0]
        h = self.blocks["body"](h) * self.scales[1]
        return self.blocks["head"](self.blocks["pre"](h))


model = Net()
assert [n for n, _ in model.named_parameters()][-2:] == ["scales.0", "scales.1"]
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
epochs, steps_per_epoch = 8, 1400 // 64
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=steps_per_epoch)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=(epochs - 1) * steps_per_epoch)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[steps_per_epoch])
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
beta = Beta(torch.tensor([0.4]), torch.tensor([0.4]))


def train_epoch():
    model.train()
    order = train_idx[torch.randperm(len(train_idx))]
    total = 0.0
    for i in range(steps_per_epoch):
        idx = order[i * 64 : (i + 1) * 64]
        xb, yb = X[idx], y[idx]
        lam = beta.sample().item()
        j = torch.randperm(xb.size(0))
        mixed = lam * xb + (1 - lam) * xb[j]
        out = model(mixed)
        loss = lam * criterion(out, yb) + (1 - lam) * criterion(out, yb[j])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item()
    return total / steps_per_epoch


def accuracy():
    model.eval()
    with torch.no_grad():
        return (model(X[test_idx]).argmax(1) == y[test_idx]).float().mean().item()


losses = [train_epoch() for _ in range(epochs // 2)]
buf = io.BytesIO()
torch.save(
    {
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "sched": sched.state_dict(),
        "epoch": epochs // 2,
    },
    buf,
)

# resume into fresh objects and finish training
buf.seek(0)
ckpt = torch.load(buf)
model = Net()
model.load_state_dict(ckpt["model"])
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
opt.load_state_dict(ckpt["opt"])
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=steps_per_epoch)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=(epochs - 1) * steps_per_epoch)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[steps_per_epoch])
sched.load_state_dict(ckpt["sched"])
assert sched.last_epoch == ckpt["epoch"] * steps_per_epoch
losses += [train_epoch() for _ in range(epochs - ckpt["epoch"])]
acc = accuracy()
print(
    f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, test accuracy {acc:.3f}, final lr {sched.get_last_lr()[0]:.2e}"
)
assert losses[-1] < 0.6 * losses[0]
assert acc > 0.9
