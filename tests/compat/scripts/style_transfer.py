"""Neural style transfer (the tutorial's recipe on a tiny fixed CNN): features captured with
register_forward_hook, Gram-matrix style loss and a content loss, the input image optimised
directly (requires_grad_ on data) by LBFGS with a closure, clamp_ under no_grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

cnn = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1),
    nn.ReLU(),
    nn.Conv2d(8, 8, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1),
    nn.ReLU(),
).eval()
for p in cnn.parameters():
    p.requires_grad_(False)

features = {}


def save(name):
    def hook(module, inputs, output):
        features[name] = output

    return hook


handles = [cnn[1].register_forward_hook(save("relu1")), cnn[6].register_forward_hook(save("relu3"))]


def gram(f):
    b, c, h, w = f.size()
    f = f.view(b * c, h * w)
    return torch.mm(f, f.t()).div(b * c * h * w)


yy, xx = torch.meshgrid(torch.linspace(-1, 1, 24), torch.linspace(-1, 1, 24), indexing="ij")
content = torch.stack([xx, yy, xx * yy]).unsqueeze(0).add(1).div(2)
style = (torch.sin(8 * xx) * torch.cos(8 * yy)).expand(3, -1, -1).unsqueeze(0).add(1).div(2)

cnn(content)
content_target = features["relu3"].detach()
cnn(style)
style_targets = {k: gram(v).detach() for k, v in features.items()}

image = content.clone().requires_grad_(True)
optimizer = torch.optim.LBFGS([image], lr=0.5, max_iter=10)
history = []


def closure():
    with torch.no_grad():
        image.clamp_(0, 1)
    optimizer.zero_grad()
    cnn(image)
    style_loss = sum(F.mse_loss(gram(features[k]), style_targets[k]) for k in style_targets)
    content_loss = F.mse_loss(features["relu3"], content_target)
    loss = 1e5 * style_loss + content_loss
    loss.backward()
    history.append((style_loss.item(), content_loss.item()))
    return loss


for _ in range(5):
    optimizer.step(closure)
with torch.no_grad():
    image.clamp_(0, 1)
for h in handles:
    h.remove()
features.clear()
cnn(image)
assert features == {}  # the hooks are gone
print(
    f"style loss {history[0][0]:.3e} -> {history[-1][0]:.3e}, content {history[-1][1]:.3e}, steps {len(history)}"
)
assert history[-1][0] < 0.2 * history[0][0]
assert image.min() >= 0 and image.max() <= 1
assert image.grad is not None and image.grad.shape == image.shape
