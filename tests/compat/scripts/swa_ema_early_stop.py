"""Weight averaging and early stopping, as the PyTorch SWA/EMA recipes write them: an MLP with
BatchNorm trained with SGD, then torch.optim.swa_utils.AveragedModel + SWALR for the last epochs
and update_bn to recompute the BatchNorm statistics; a second average kept as an EMA through
get_ema_multi_avg_fn; a hand-written EMA with torch._foreach_mul_/_foreach_add_ that must agree
with it; and early stopping that keeps copy.deepcopy(model.state_dict()) of the best epoch."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

from _digits import digits

torch.manual_seed(0)
x, y = digits()
x = torch.from_numpy(x).reshape(len(x), -1)
y = torch.from_numpy(y)
train_loader = DataLoader(TensorDataset(x[:1400], y[:1400]), batch_size=64, shuffle=True)
valid_x, valid_y = x[1400:], y[1400:]

model = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30)
swa_model = AveragedModel(model)
swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2, anneal_strategy="cos")
ema_decay = 0.9
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(ema_decay))
my_ema = None  # a hand-written EMA: the first update copies, as AveragedModel's does
swa_start = 8


def evaluate(m):
    m.eval()
    with torch.no_grad():
        out = m(valid_x)
        loss = F.cross_entropy(out, valid_y).item()
        acc = (out.argmax(dim=1) == valid_y).float().mean().item()
    return loss, acc


best_loss, best_state, best_epoch, patience, bad_epochs = float("inf"), None, -1, 4, 0
train_losses = []
for epoch in range(14):
    model.train()
    total = 0.0
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
        ema_model.update_parameters(model)
        with torch.no_grad():
            params = [p.detach() for p in model.parameters()]
            if my_ema is None:
                my_ema = [p.clone() for p in params]
            else:
                torch._foreach_mul_(my_ema, ema_decay)
                torch._foreach_add_(my_ema, params, alpha=1 - ema_decay)
    train_losses.append(total / len(train_loader))
    if epoch >= swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    val_loss, val_acc = evaluate(model)
    print(
        f"epoch {epoch} train {train_losses[-1]:.4f} valid {val_loss:.4f} acc {val_acc:.3f} lr {optimizer.param_groups[0]['lr']:.4f}"
    )
    if val_loss < best_loss:
        best_loss, best_epoch, bad_epochs = val_loss, epoch, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print("early stop")
            break

assert train_losses[-1] < 0.3 * train_losses[0], train_losses
# SWA: n_averaged counts the updates; after update_bn the averaged model is as good as the last.
assert int(swa_model.n_averaged) == max(0, min(epoch, 13) - swa_start + 1), swa_model.n_averaged
update_bn(train_loader, swa_model)
swa_loss, swa_acc = evaluate(swa_model)
print(f"swa valid {swa_loss:.4f} acc {swa_acc:.3f}")
assert swa_acc > 0.9, swa_acc
# The EMA from get_ema_multi_avg_fn equals the hand-written _foreach EMA.
ema_params = list(ema_model.module.parameters())
assert len(ema_params) == len(my_ema)
assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(ema_params, my_ema))
assert not torch.allclose(ema_params[0], model[0].weight)
# The best checkpoint restores exactly.
current = evaluate(model)[0]
model.load_state_dict(best_state)
restored = evaluate(model)[0]
assert abs(restored - best_loss) < 1e-6, (restored, best_loss)
assert restored <= current + 1e-6
# deepcopy made a snapshot, not a view: training on does not move it.
snap = copy.deepcopy(model.state_dict())
with torch.no_grad():
    for p in model.parameters():
        p.add_(1.0)
assert not torch.equal(snap["0.weight"], model.state_dict()["0.weight"])
print("ok")
