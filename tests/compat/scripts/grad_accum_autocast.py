"""Gradient accumulation under CPU mixed precision, as the AMP recipe writes it for CPU:
torch.autocast(device_type="cpu", dtype=torch.bfloat16) around the forward and the loss, a
GradScaler(enabled=False) (its calls are pass-throughs on CPU), the loss divided by the number of
accumulation steps, optimizer.step() every accum_steps micro-batches, zero_grad(set_to_none=True),
clip_grad_norm_ after scaler.unscale_. Checks: the autocast outputs are bfloat16 and the loss fell;
accumulating 4 micro-batches gives the gradient of the whole batch (fp32, checked exactly)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from _digits import digits

torch.manual_seed(0)
x, y = digits()
x = torch.from_numpy(x).reshape(len(x), -1)
y = torch.from_numpy(y)
loader = DataLoader(TensorDataset(x[:1536], y[:1536]), batch_size=16, shuffle=True, drop_last=True)

model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
scaler = torch.amp.GradScaler("cpu", enabled=False)
accum_steps = 4

# Accumulated micro-batch gradients equal the full batch's gradient (fp32, mean reduction).
xb, yb = x[:64], y[:64]
model.zero_grad()
F.cross_entropy(model(xb), yb).backward()
full = [p.grad.clone() for p in model.parameters()]
model.zero_grad(set_to_none=True)
for chunk_x, chunk_y in zip(xb.chunk(accum_steps), yb.chunk(accum_steps)):
    (F.cross_entropy(model(chunk_x), chunk_y) / accum_steps).backward()
assert all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(full, model.parameters()))
model.zero_grad(set_to_none=True)
assert all(p.grad is None for p in model.parameters())

epoch_losses = []
for epoch in range(4):
    total, n = 0.0, 0
    for i, (inputs, targets) in enumerate(loader):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            outputs = model(inputs)
            assert outputs.dtype == torch.bfloat16, outputs.dtype
            loss = F.cross_entropy(outputs, targets)
            assert loss.dtype == torch.float32  # cross_entropy autocasts to float32
            loss = loss / accum_steps
        scaler.scale(loss).backward()
        if (i + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        total += loss.item() * accum_steps
        n += 1
    epoch_losses.append(total / n)
    print(f"epoch {epoch} loss {epoch_losses[-1]:.4f}")

assert all(p.dtype == torch.float32 for p in model.parameters())
assert epoch_losses[-1] < 0.3 * epoch_losses[0], epoch_losses
with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    acc = (model(x[1536:]).argmax(1) == y[1536:]).float().mean().item()
print("test accuracy", acc)
assert acc > 0.9, acc
assert scaler.get_scale() == 1.0 and not scaler.is_enabled()
print("ok")
