"""Full-batch curve fitting with L-BFGS and a strong-Wolfe line search (the closure pattern),
then the same model refined with Rprop: a small MLP regressing a 1-D function."""
import math

import torch
from torch import nn

torch.manual_seed(0)
x = torch.linspace(-2, 2, 200).unsqueeze(1)
y = torch.sin(2 * x) + 0.3 * x**2

model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.LBFGS(
    model.parameters(), lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe"
)


def closure():
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    return loss


with torch.no_grad():
    start = criterion(model(x), y).item()
for i in range(15):
    loss = optimizer.step(closure)
    if i % 5 == 0:
        print(f"L-BFGS step {i}: loss {loss.item():.6f}")
with torch.no_grad():
    after_lbfgs = criterion(model(x), y).item()
print(f"loss {start:.4f} -> {after_lbfgs:.6f}")
assert after_lbfgs < 1e-2 * start, (start, after_lbfgs)

rprop = torch.optim.Rprop(model.parameters(), lr=1e-3)
for _ in range(50):
    rprop.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    rprop.step()
assert loss.item() < 1.5 * after_lbfgs and math.isfinite(loss.item())
