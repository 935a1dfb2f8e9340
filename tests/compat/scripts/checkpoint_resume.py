"""Checkpoint and resume, as the PyTorch recipe "Saving and loading a general checkpoint"
writes it: model, optimizer and scheduler state_dicts plus the epoch in one torch.save; a fresh
process-like restart loads them and goes on. The resumed run must equal the uninterrupted one."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

from _digits import digits


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


def build():
    torch.manual_seed(0)
    model = MLP()
    optimizer = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2, amsgrad=True)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
    return model, optimizer, scheduler


x, y = digits(512)
dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
criterion = nn.CrossEntropyLoss(label_smoothing=0.05)


def run_epochs(model, optimizer, scheduler, epochs):
    losses = []
    for epoch in epochs:
        loader = DataLoader(dataset, batch_size=32, shuffle=True, generator=epoch)
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
        scheduler.step()
        losses.append(total / len(loader))
    return losses


model, optimizer, scheduler = build()
full = run_epochs(model, optimizer, scheduler, range(6))
print("uninterrupted:", [round(l, 4) for l in full])
assert full[-1] < 0.5 * full[0]

with tempfile.TemporaryDirectory() as d:
    PATH = os.path.join(d, "checkpoint.pt")
    model, optimizer, scheduler = build()
    first = run_epochs(model, optimizer, scheduler, range(3))
    torch.save(
        {
            "epoch": 3,
            "model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
            "scheduler_state_dict": scheduler.state_dict(),
            "loss": first[-1],
        },
        PATH,
    )
    del model, optimizer, scheduler

    model, optimizer, scheduler = build()
    checkpoint = torch.load(PATH, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    epoch = checkpoint["epoch"]
    model.train()
    rest = run_epochs(model, optimizer, scheduler, range(epoch, 6))
    print("resumed:      ", [round(l, 4) for l in first + rest])
    for a, b in zip(full, first + rest):
        assert abs(a - b) < 1e-5 * max(1.0, abs(a)), (full, first + rest)

    # Whole-model save, as in "Save/Load Entire Model" (needs weights_only=False).
    torch.save(model, os.path.join(d, "model.pt"))
    whole = torch.load(os.path.join(d, "model.pt"), weights_only=False)
    whole.eval()
    model.eval()
    xb = torch.from_numpy(x[:8])
    assert torch.equal(whole(xb), model(xb))
