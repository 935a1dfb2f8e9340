"""PyTorch's VAE example on the 8x8 digits: reparameterization with randn_like, a sigmoid
decoder, and the BCE (sum) + KL divergence loss."""
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

from _digits import digits

torch.manual_seed(1)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

x, _ = digits()
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.from_numpy(x)), batch_size=128, shuffle=True
)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(64, 48)
        self.fc21 = nn.Linear(48, 8)
        self.fc22 = nn.Linear(48, 8)
        self.fc3 = nn.Linear(8, 48)
        self.fc4 = nn.Linear(48, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=3e-3)


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data,) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    avg = train_loss / len(train_loader.dataset)
    print(f"====> Epoch: {epoch} Average loss: {avg:.4f}")
    return avg


losses = [train(epoch) for epoch in range(1, 11)]
assert losses[-1] < 0.8 * losses[0], losses
with torch.no_grad():
    sample = model.decode(torch.randn(16, 8).to(device))
    assert sample.shape == (16, 64) and float(sample.min()) >= 0 and float(sample.max()) <= 1
