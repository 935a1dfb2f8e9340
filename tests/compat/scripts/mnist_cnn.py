"""PyTorch's MNIST example, on the 8x8 digits: a CNN with dropout, Adadelta, StepLR and
DataLoader, train()/test() loops and a saved state_dict. Written exactly as for PyTorch."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

from _digits import digits


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(288, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    total = 0.0
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(data)
    return total / len(train_loader.dataset)


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(
        f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(test_loader.dataset)}"
    )
    return test_loss, correct / len(test_loader.dataset)


def main():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--no-cuda", action="store_true", default=False)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if use_cuda else "cpu")

    x, y = digits(1200)
    x = torch.from_numpy(x).unsqueeze(1)
    y = torch.from_numpy(y)
    train_set = TensorDataset(x[:1000], y[:1000])
    test_set = TensorDataset(x[1000:], y[1000:])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=200)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    first_loss, _ = test(model, device, test_loader)
    losses = []
    for epoch in range(1, args.epochs + 1):
        losses.append(train(args, model, device, train_loader, optimizer, epoch))
        test_loss, accuracy = test(model, device, test_loader)
        scheduler.step()
    print(f"train loss per epoch: {[round(l, 4) for l in losses]}, lr {scheduler.get_last_lr()}")
    assert losses[-1] < 0.6 * losses[0], losses
    assert test_loss < 0.5 * first_loss and accuracy > 0.8, (first_loss, test_loss, accuracy)
    assert abs(scheduler.get_last_lr()[0] - args.lr * args.gamma**args.epochs) < 1e-12

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mnist_cnn.pt")
        torch.save(model.state_dict(), path)
        restored = Net()
        restored.load_state_dict(torch.load(path))
        restored.eval()
        assert torch.equal(restored(x[:5]), model.cpu()(x[:5]))


if __name__ == "__main__":
    main()
