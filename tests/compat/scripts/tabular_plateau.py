"""Imbalanced binary classification on tabular data: BCEWithLogitsLoss with pos_weight, SGD with
Nesterov momentum and weight decay, ReduceLROnPlateau on a validation loss, Kaiming init,
nn.DataParallel, a forward hook collecting activations, and a non-persistent buffer."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
n, d = 1200, 10
features = torch.randn(n, d)
w_true = torch.randn(d)
logits = 4.0 * (features @ w_true) - 3.0
labels = (torch.rand(n) < torch.sigmoid(logits)).float()
data = TensorDataset(features, labels)
train_set, val_set = random_split(data, [1000, 200])
train = DataLoader(train_set, batch_size=50, shuffle=True)
val = DataLoader(val_set, batch_size=200)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", features.mean(0), persistent=False)
        self.body = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 1))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.constant_(m.bias, 0.0)

    def forward(self, x):
        return self.body(x - self.mean).squeeze(1)


net = Net()
assert "mean" not in net.state_dict()
model = nn.DataParallel(net)
seen = []
handle = net.body[1].register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
pos_weight = (labels == 0).sum() / (labels == 1).sum()
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.SGD(
    model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4
)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
    optimizer, mode="min", factor=0.5, patience=1
)


def evaluate():
    model.eval()
    with torch.no_grad():
        xb, yb = next(iter(val))
        return criterion(model(xb), yb).item()


history = [evaluate()]
for epoch in range(12):
    model.train()
    for xb, yb in train:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
    val_loss = evaluate()
    scheduler.step(val_loss)
    history.append(val_loss)
    print(f"epoch {epoch}: val loss {val_loss:.4f}, lr {optimizer.param_groups[0]['lr']:.4f}")
handle.remove()
calls = len(seen)
model(features[:3])
assert len(seen) == calls and seen[0] == (200, 32) and seen[1] == (50, 32)
assert min(history[1:]) < 0.7 * history[0], history
assert list(model.state_dict())[0].startswith("module.")
