"""A training loop instrumented the usual way: tqdm progress, SummaryWriter scalars and weight
histograms (read back with tensorboard's EventAccumulator), torch.set_printoptions for the
printed tensors, and print(model) whose text must be torch's module repr."""
import contextlib
import io
import tempfile

import torch
import torch.nn as nn
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(4, 16),
    nn.LayerNorm(16),
    nn.GELU(approximate="tanh"),
    nn.Dropout(p=0.1),
    nn.Linear(16, 1, bias=False),
)
expected = """Sequential(
  (0): Linear(in_features=4, out_features=16, bias=True)
  (1): LayerNorm((16,), eps=1e-05, elementwise_affine=True)
  (2): GELU(approximate='tanh')
  (3): Dropout(p=0.1, inplace=False)
  (4): Linear(in_features=16, out_features=1, bias=False)
)"""
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    print(model)
assert buf.getvalue().strip() == expected, buf.getvalue()

torch.set_printoptions(precision=2, sci_mode=False)
t = torch.tensor([[1.23456, 1000.5], [0.001, -2.0]])
assert str(t) == "tensor([[     1.23,   1000.50],\n        [     0.00,     -2.00]])", str(t)
torch.set_printoptions(profile="default")

X = torch.randn(512, 4)
Y = (X[:, :1] * 2 - X[:, 1:2]).tanh()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
with tempfile.TemporaryDirectory() as logdir:
    writer = SummaryWriter(log_dir=logdir)
    for step in tqdm(range(100), desc="train", leave=False):
        idx = torch.randint(0, 512, (64,))
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        writer.add_scalar("loss/train", loss.item(), step)
        if step % 25 == 0:
            for name, p in model.named_parameters():
                writer.add_histogram(name, p.detach(), step)
    writer.add_scalars("lr", {"group0": opt.param_groups[0]["lr"]}, 100)
    writer.close()

    acc = EventAccumulator(logdir, size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    scalars = acc.Scalars("loss/train")
    assert [s.step for s in scalars] == list(range(100))
    assert abs(scalars[-1].value - losses[-1]) < 1e-5
    hist = acc.Histograms("0.weight")
    assert [h.step for h in hist] == [0, 25, 50, 75] and hist[0].histogram_value.num == 64

print(f"loss {losses[0]:.3f} -> {losses[-1]:.4f}")
assert losses[-1] < 0.2 * losses[0]
