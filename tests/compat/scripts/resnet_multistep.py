"""A small ResNet the way torchvision's and the CIFAR tutorials write it, on the 8x8 digits padded
to 12x12: BasicBlock with a 1x1 downsample shortcut, nn.AdaptiveAvgPool2d((1, 1)), torch.flatten,
kaiming_normal_(mode="fan_out"), out += identity and ReLU(inplace=True) after BatchNorm; torchvision-style
transforms written by hand (Compose, RandomCrop with padding, RandomHorizontalFlip-like shift,
Normalize); SGD with two parameter groups (no weight decay on biases and norm weights) and
MultiStepLR; a model summary from named_parameters/numel; torch.no_grad accuracy."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from _digits import digits

torch.manual_seed(0)
random.seed(0)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class RandomCrop:
    def __init__(self, size, padding=0):
        self.size, self.padding = size, padding

    def __call__(self, img):
        if self.padding:
            img = F.pad(img, (self.padding,) * 4)
        h, w = img.shape[-2:]
        i = random.randint(0, h - self.size)
        j = random.randint(0, w - self.size)
        return img[..., i : i + self.size, j : j + self.size]


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, img):
        return (img - self.mean) / self.std


class Digits(Dataset):
    def __init__(self, x, y, transform):
        self.x, self.y, self.transform = x, y, transform

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = F.pad(torch.from_numpy(self.x[i]).unsqueeze(0), (2, 2, 2, 2))  # 1x12x12
        return self.transform(img), int(self.y[i])


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10, width=16):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(1, width, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, width * 2, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


x, y = digits()
mean, std = float(x.mean()), float(x.std())
train_tf = Compose([RandomCrop(12, padding=1), Normalize([mean], [std])])
test_tf = Compose([Normalize([mean], [std])])
train_loader = DataLoader(Digits(x[:1000], y[:1000], train_tf), batch_size=32, shuffle=True)
test_loader = DataLoader(Digits(x[1400:], y[1400:], test_tf), batch_size=128)

model = ResNet(BasicBlock, [1, 1])
total = sum(p.numel() for p in model.parameters())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"{'name':30s} {'shape':>20s} {'params':>8s}")
for name, p in model.named_parameters():
    print(f"{name:30s} {str(tuple(p.shape)):>20s} {p.numel():8d}")
print(f"total {total} trainable {trainable}")
assert (
    total
    == trainable
    == 16 * 9
    + 2 * 16
    + 2 * (16 * 16 * 9 + 2 * 16)
    + (16 * 32 * 9 + 32 * 32 * 9 + 4 * 32 + 16 * 32 + 2 * 32)
    + 32 * 10
    + 10
)

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
optimizer = torch.optim.SGD(
    [{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
    lr=0.05,
    momentum=0.9,
    nesterov=True,
)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[5, 7], gamma=0.1)
criterion = nn.CrossEntropyLoss()


def test():
    model.eval()
    correct, n = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            pred = model(data).argmax(dim=1)
            correct += pred.eq(target).sum().item()
            n += target.size(0)
    return correct / n


losses, lrs = [], []
for epoch in range(8):
    model.train()
    running = 0.0
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
        running += loss.item()
    losses.append(running / len(train_loader))
    lrs.append(scheduler.get_last_lr())
    scheduler.step()
    print(f"epoch {epoch} loss {losses[-1]:.4f} lr {lrs[-1]} test accuracy {test():.3f}")

assert [round(lr[0], 6) for lr in lrs] == [0.05] * 5 + [0.005] * 2 + [0.0005], lrs
assert all(len(lr) == 2 for lr in lrs)
assert optimizer.param_groups[1]["weight_decay"] == 0.0 and len(
    optimizer.param_groups[1]["params"]
) == len(no_decay)
assert losses[-1] < 0.2 * losses[0], losses
acc = test()
assert acc > 0.93, acc
print("ok")
