"""The Spatial Transformer Networks tutorial on the 8x8 digits, randomly rotated and shifted: a
localization network regresses a 2x3 affine matrix (its last layer initialised to the identity
transform with weight.data.zero_() and bias.data.copy_), F.affine_grid + F.grid_sample warp the
input, then a small CNN classifies. Checks: the loss fell, the accuracy is high, and the
identity theta reproduces the input through affine_grid/grid_sample."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

from _digits import digits

torch.manual_seed(0)
x, y = digits()
clean = F.pad(torch.from_numpy(x).unsqueeze(1), (4, 4, 4, 4))  # 16x16
labels = torch.from_numpy(y)


def random_affine(imgs):
    n = imgs.size(0)
    ang = (torch.rand(n) - 0.5) * (math.pi / 3)  # +-30 degrees
    shift = (torch.rand(n, 2) - 0.5) * 0.4
    theta = torch.stack(
        [
            torch.stack([torch.cos(ang), -torch.sin(ang), shift[:, 0]], 1),
            torch.stack([torch.sin(ang), torch.cos(ang), shift[:, 1]], 1),
        ],
        1,
    )
    grid = F.affine_grid(theta, imgs.size(), align_corners=False)
    return F.grid_sample(imgs, grid, align_corners=False)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=3, padding=1)
        self.conv2_drop = nn.Dropout2d(0.1)
        self.fc1 = nn.Linear(20 * 4 * 4, 50)
        self.fc2 = nn.Linear(50, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=3, padding=1),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        self.fc_loc = nn.Sequential(nn.Linear(10 * 4 * 4, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 4 * 4)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
        return x

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 20 * 4 * 4)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, 0.1, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


# The identity transform reproduces the input (bilinear sampling at the pixel centres).
ident = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]).expand(4, 2, 3)
same = F.grid_sample(
    clean[:4], F.affine_grid(ident, clean[:4].size(), align_corners=False), align_corners=False
)
assert torch.allclose(same, clean[:4], atol=1e-5)

model = Net()
optimizer = optim.Adam(model.parameters(), lr=3e-3)
train_x, train_y = clean[:1400], labels[:1400]
losses = []
for epoch in range(10):
    model.train()
    perm = torch.randperm(1400)
    total = 0.0
    for i in range(0, 1400, 64):
        idx = perm[i : i + 64]
        data = random_affine(train_x[idx])
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, train_y[idx])
        loss.backward()
        optimizer.step()
        total += loss.item() * len(idx)
    losses.append(total / 1400)
    print(f"epoch {epoch} loss {losses[-1]:.4f}")

model.eval()
with torch.no_grad():
    test_data = random_affine(clean[1400:])
    acc = (model(test_data).argmax(1) == labels[1400:]).float().mean().item()
    warped = model.stn(test_data)
print("test accuracy", acc)
assert warped.shape == test_data.shape
assert losses[-1] < 0.4 * losses[0], losses
assert acc > 0.85, acc
print("ok")
