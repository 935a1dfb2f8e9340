"""A U-Net style segmenter as the segmentation tutorials write it: DoubleConv blocks, MaxPool2d
down, ConvTranspose2d up (and one F.interpolate bilinear up), torch.cat skip connections, a 1x1
head, and a Dice + BCEWithLogits loss. The data: 32x32 images of random discs and rectangles with
noise; the mask is the discs only. Checks: the loss fell and the IoU on fresh images is high."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
S = 32


def make_batch(n):
    yy, xx = torch.meshgrid(torch.arange(S), torch.arange(S), indexing="ij")
    imgs = torch.zeros(n, 1, S, S)
    masks = torch.zeros(n, 1, S, S)
    for i in range(n):
        for _ in range(2):
            cy, cx = torch.randint(6, S - 6, (2,)).tolist()
            r = torch.randint(3, 6, ()).item()
            disc = ((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r
            imgs[i, 0][disc] = 1.0
            masks[i, 0][disc] = 1.0
        y0, x0 = torch.randint(0, S - 8, (2,)).tolist()
        h, w = torch.randint(3, 8, (2,)).tolist()
        imgs[i, 0, y0 : y0 + h, x0 : x0 + w] = 1.0
        masks[i, 0, y0 : y0 + h, x0 : x0 + w] = 0.0
    imgs = imgs + 0.2 * torch.randn_like(imgs)
    return imgs, masks


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels, bilinear=False):
        super().__init__()
        self.bilinear = bilinear
        if not bilinear:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        else:
            self.reduce = nn.Conv2d(in_channels, in_channels // 2, kernel_size=1)
        self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        if self.bilinear:
            x1 = self.reduce(F.interpolate(x1, scale_factor=2, mode="bilinear", align_corners=True))
        else:
            x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels=1, n_classes=1, base=8):
        super().__init__()
        self.inc = DoubleConv(n_channels, base)
        self.down1 = Down(base, base * 2)
        self.down2 = Down(base * 2, base * 4)
        self.up1 = Up(base * 4, base * 2)
        self.up2 = Up(base * 2, base, bilinear=True)
        self.outc = nn.Conv2d(base, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def dice_loss(logits, target, eps=1.0):
    probs = torch.sigmoid(logits)
    num = 2 * (probs * target).sum(dim=(1, 2, 3)) + eps
    den = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps
    return 1 - (num / den).mean()


model = UNet()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
bce = nn.BCEWithLogitsLoss()
losses = []
for step in range(80):
    imgs, masks = make_batch(16)
    model.train()
    logits = model(imgs)
    loss = bce(logits, masks) + dice_loss(logits, masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    imgs, masks = make_batch(32)
    pred = (torch.sigmoid(model(imgs)) > 0.5).float()
    inter = (pred * masks).sum()
    union = ((pred + masks) > 0).float().sum()
    iou = (inter / union).item()
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, IoU {iou:.3f}")
assert sum(losses[-5:]) / 5 < 0.6 * sum(losses[:5]) / 5, (losses[:5], losses[-5:])
assert iou > 0.7, iou
print("ok")
