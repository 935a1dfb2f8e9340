"""The PyTorch DCGAN example, shrunk to the 8x8 digits: a ConvTranspose2d + BatchNorm2d generator,
a strided Conv2d + LeakyReLU discriminator, weights_init through Module.apply, BCEWithLogits and
Adam(betas=(0.5, 0.999)). A GAN's losses need not fall, so the check is on the samples: their mean
image and pixel statistics move close to the data's."""
import torch
import torch.nn as nn
import torch.optim as optim

from _digits import digits

torch.manual_seed(0)
x, _ = digits()
data = torch.from_numpy(x).unsqueeze(1)  # (N, 1, 8, 8) in [0, 1]
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(data), batch_size=64, shuffle=True
)
nz = 16


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


netG = nn.Sequential(
    nn.ConvTranspose2d(nz, 64, 4, 1, 0, bias=False),  # 1x1 -> 4x4
    nn.BatchNorm2d(64),
    nn.ReLU(True),
    nn.ConvTranspose2d(64, 1, 4, 2, 1, bias=False),  # 4x4 -> 8x8
    nn.Sigmoid(),
)
netD = nn.Sequential(
    nn.Conv2d(1, 64, 4, 2, 1, bias=False),  # 8x8 -> 4x4
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(64, 1, 4, 1, 0, bias=False),  # 4x4 -> 1x1
    nn.Flatten(),
)
netG.apply(weights_init)
netD.apply(weights_init)
criterion = nn.BCEWithLogitsLoss()
optD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
fixed_noise = torch.randn(512, nz, 1, 1)


def gap():
    """How far generated samples are from the data: mean-image and per-pixel-std distance."""
    with torch.no_grad():
        fake = netG(fixed_noise)
    return (
        (fake.mean(0) - data.mean(0)).abs().mean() + (fake.std(0) - data.std(0)).abs().mean()
    ).item()


netG.eval()
start = gap()
netG.train()
for epoch in range(8):
    for (real,) in loader:
        b = real.size(0)
        # (1) D: maximise log D(x) + log(1 - D(G(z)))
        netD.zero_grad()
        errD_real = criterion(netD(real), torch.ones(b, 1))
        noise = torch.randn(b, nz, 1, 1)
        fake = netG(noise)
        errD_fake = criterion(netD(fake.detach()), torch.zeros(b, 1))
        (errD_real + errD_fake).backward()
        optD.step()
        # (2) G: maximise log D(G(z))
        netG.zero_grad()
        errG = criterion(netD(fake), torch.ones(b, 1))
        errG.backward()
        optG.step()
    print(f"epoch {epoch}: loss_D {(errD_real + errD_fake).item():.3f} loss_G {errG.item():.3f}")

netG.eval()
end = gap()
print(f"sample gap {start:.3f} -> {end:.3f}")
assert end < 0.5 * start, (start, end)
