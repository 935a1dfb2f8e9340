"""Knowledge distillation on the digits: a teacher CNN trained with CrossEntropyLoss, then a
small student trained on KLDivLoss(batchmean) between temperature-softened distributions plus
the hard-label loss, with SGD + OneCycleLR stepped per batch and torch.inference_mode() for the
teacher's targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from _digits import digits

torch.manual_seed(0)
x_np, y_np = digits(1000)
x, y = torch.from_numpy(x_np).unsqueeze(1), torch.from_numpy(y_np)
loader = DataLoader(TensorDataset(x[:800], y[:800]), batch_size=50, shuffle=True)
x_test, y_test = x[800:], y[800:]


def accuracy(model):
    model.eval()
    with torch.inference_mode():
        return (model(x_test).argmax(1) == y_test).float().mean().item()


teacher = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1),
    nn.BatchNorm2d(16),
    nn.ReLU(),
    nn.Conv2d(16, 32, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Linear(512, 10),
)
opt = torch.optim.Adam(teacher.parameters(), lr=1e-2)
for epoch in range(6):
    teacher.train()
    for xb, yb in loader:
        opt.zero_grad()
        F.cross_entropy(teacher(xb), yb).backward()
        opt.step()
teacher_acc = accuracy(teacher)
print(f"teacher accuracy {teacher_acc:.3f}")
assert teacher_acc > 0.85

student = nn.Sequential(nn.Flatten(), nn.Linear(64, 24), nn.ReLU(), nn.Linear(24, 10))
T, alpha, epochs = 4.0, 0.7, 8
kl = nn.KLDivLoss(reduction="batchmean")
optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=0.2, epochs=epochs, steps_per_epoch=len(loader)
)
teacher.eval()
losses = []
for epoch in range(epochs):
    student.train()
    total = 0.0
    for xb, yb in loader:
        with torch.inference_mode():
            soft_targets = F.softmax(teacher(xb) / T, dim=1)
        logits = student(xb)
        distill = kl(F.log_softmax(logits / T, dim=1), soft_targets) * (T * T)
        loss = alpha * distill + (1 - alpha) * F.cross_entropy(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item()
    losses.append(total / len(loader))
    print(f"epoch {epoch}: loss {losses[-1]:.4f}, lr {scheduler.get_last_lr()[0]:.5f}")
student_acc = accuracy(student)
print(f"student accuracy {student_acc:.3f}")
assert losses[-1] < 0.5 * losses[0], losses
assert student_acc > 0.8
