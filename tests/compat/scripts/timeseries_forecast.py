"""Forecasting a noisy seasonal series: sliding windows cut with Tensor.unfold, a custom
Dataset + DataLoader, a dilated causal Conv1d (TCN-style) front end feeding an LSTM, MSELoss,
a chronological validation split and early stopping that restores the best state_dict."""
import copy
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
t = torch.arange(0, 600, dtype=torch.float32)
series = (
    torch.sin(2 * math.pi * t / 24) + 0.5 * torch.sin(2 * math.pi * t / 7) + 0.1 * torch.randn(600)
)

window, horizon = 48, 1
frames = series.unfold(0, window + horizon, 1)  # [n_windows, window + horizon]
assert frames.shape == (600 - window - horizon + 1, window + horizon)
assert torch.equal(frames[5], series[5 : 5 + window + horizon])


class Windows(Dataset):
    def __init__(self, frames):
        self.x = frames[:, :window].unsqueeze(-1)
        self.y = frames[:, window:]

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


split = int(0.8 * len(frames))
train_dl = DataLoader(Windows(frames[:split]), batch_size=32, shuffle=True, drop_last=True)
val_ds = Windows(frames[split:])


class CausalConv1d(nn.Conv1d):
    def __init__(self, cin, cout, k, dilation):
        super().__init__(cin, cout, k, dilation=dilation)
        self.left = (k - 1) * dilation

    def forward(self, x):
        return super().forward(nn.functional.pad(x, (self.left, 0)))


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.tcn = nn.Sequential(
            CausalConv1d(1, 16, 3, 1),
            nn.ReLU(),
            CausalConv1d(16, 16, 3, 2),
            nn.ReLU(),
            CausalConv1d(16, 16, 3, 4),
            nn.ReLU(),
        )
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, horizon)

    def forward(self, x):  # x: [B, T, 1]
        h = self.tcn(x.transpose(1, 2)).transpose(1, 2)
        out, (hn, cn) = self.lstm(h)
        return self.out(out[:, -1])


model = Forecaster()
# causality: the output at step t ignores later inputs
probe = torch.randn(1, 1, 20)
a = model.tcn(probe)
probe2 = probe.clone()
probe2[..., 15:] = 0
assert torch.allclose(a[..., :15], model.tcn(probe2)[..., :15])

opt = torch.optim.Adam(model.parameters(), lr=3e-3)
loss_fn = nn.MSELoss()
best, best_state, patience, bad = float("inf"), None, 3, 0
train_losses, val_losses = [], []
for epoch in range(25):
    model.train()
    total = 0.0
    for x, y in train_dl:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item() * len(x)
    train_losses.append(total / (len(train_dl) * 32))
    model.eval()
    with torch.no_grad():
        val = loss_fn(model(val_ds.x), val_ds.y).item()
    val_losses.append(val)
    if val < best - 1e-4:
        best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
    else:
        bad += 1
        if bad >= patience:
            break
model.load_state_dict(best_state)
with torch.no_grad():
    final = loss_fn(model(val_ds.x), val_ds.y).item()
print(
    f"train {train_losses[0]:.3f} -> {train_losses[-1]:.3f}, best val {best:.4f} after {len(val_losses)} epochs"
)
assert train_losses[-1] < 0.3 * train_losses[0]
assert abs(final - best) < 1e-6
assert best < 0.05
