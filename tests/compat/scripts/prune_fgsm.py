"""Two tutorials on one trained LeNet-style digits CNN: the pruning tutorial (torch.nn.utils.prune:
l1_unstructured on a conv, random_unstructured, ln_structured over output channels,
global_unstructured across layers, the weight_orig/weight_mask reparametrization and forward
pre-hook, prune.remove to make it permanent, is_pruned) and the FGSM adversarial-example tutorial
(input gradients with requires_grad on the data, data_grad.sign(), torch.clamp, accuracy falling
as epsilon grows)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch.utils.data import DataLoader, TensorDataset

from _digits import digits

torch.manual_seed(0)
x, y = digits()
data = torch.from_numpy(x).unsqueeze(1)
targets = torch.from_numpy(y)
train_loader = DataLoader(TensorDataset(data[:1400], targets[:1400]), batch_size=64, shuffle=True)
test_loader = DataLoader(TensorDataset(data[1400:], targets[1400:]), batch_size=1, shuffle=False)


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 2 * 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


model = LeNet()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
losses = []
for epoch in range(8):
    total = 0.0
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    losses.append(total / len(train_loader))
print("train losses", [round(v, 4) for v in losses])
assert losses[-1] < 0.2 * losses[0]


def accuracy(m):
    m.eval()
    with torch.no_grad():
        return (m(data[1400:]).argmax(1) == targets[1400:]).float().mean().item()


base_acc = accuracy(model)
print("accuracy", base_acc)
assert base_acc > 0.93


# ---- FGSM ----
def fgsm_attack(image, epsilon, data_grad):
    sign_data_grad = data_grad.sign()
    perturbed_image = image + epsilon * sign_data_grad
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    return perturbed_image


def test(model, test_loader, epsilon):
    correct = 0
    adv_examples = []
    for data_, target in test_loader:
        data_.requires_grad = True
        output = model(data_)
        init_pred = output.max(1, keepdim=True)[1]
        if init_pred.item() != target.item():
            continue
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = data_.grad.data
        perturbed_data = fgsm_attack(data_, epsilon, data_grad)
        output = model(perturbed_data)
        final_pred = output.max(1, keepdim=True)[1]
        if final_pred.item() == target.item():
            correct += 1
        elif len(adv_examples) < 5:
            adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
            adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
    final_acc = correct / float(len(test_loader))
    print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")
    return final_acc, adv_examples


model.eval()
accs = [test(model, test_loader, eps)[0] for eps in (0.0, 0.1, 0.25)]
assert abs(accs[0] - base_acc) < 1e-6
assert accs[0] > accs[1] > accs[2], accs
assert accs[2] < 0.5 * accs[0], accs

# ---- pruning ----
module = model.conv1
prune.random_unstructured(module, name="weight", amount=0.3)
assert [n for n, _ in module.named_parameters()] == ["bias", "weight_orig"]
assert [n for n, _ in module.named_buffers()] == ["weight_mask"]
assert torch.equal(module.weight, module.weight_orig * module.weight_mask)
assert len(module._forward_pre_hooks) == 1
assert int((module.weight_mask == 0).sum()) == round(0.3 * module.weight.nelement())
prune.l1_unstructured(module, name="bias", amount=3)
assert int((module.bias == 0).sum()) == 3
# the 3 smallest |bias| entries are the ones removed
kept = module.bias_orig.abs()[module.bias_mask.bool()]
dropped = module.bias_orig.abs()[~module.bias_mask.bool()]
assert dropped.max() <= kept.min()
prune.ln_structured(model.conv2, name="weight", amount=0.5, n=2, dim=0)
zero_channels = (model.conv2.weight.flatten(1).abs().sum(1) == 0).sum().item()
assert zero_channels == 8, zero_channels
# iterative pruning composes: the hook is a PruningContainer holding both
prune.l1_unstructured(module, name="weight", amount=0.2)
hook = [h for h in module._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
assert isinstance(hook, prune.PruningContainer) and len(hook) == 2
assert int((module.weight == 0).sum()) >= round(0.44 * module.weight.nelement())
prune.remove(module, "weight")
assert "weight_orig" not in dict(module.named_parameters()) and not hasattr(module, "weight_mask")
assert prune.is_pruned(model)

parameters_to_prune = ((model.fc1, "weight"), (model.fc2, "weight"))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.6)
n_zero = sum(int(torch.sum(m.weight == 0)) for m, _ in parameters_to_prune)
n_all = sum(m.weight.nelement() for m, _ in parameters_to_prune)
print(f"global sparsity {100.0 * n_zero / n_all:.2f}%")
assert abs(n_zero / n_all - 0.6) < 0.01
pruned_acc = accuracy(model)
print("accuracy after pruning", pruned_acc)
# fine-tune the pruned model: masks stay, accuracy recovers
for epoch in range(4):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        F.nll_loss(model(xb), yb).backward()
        optimizer.step()
assert int(sum(torch.sum(m.weight == 0) for m, _ in parameters_to_prune)) >= n_zero
fine_acc = accuracy(model)
print("accuracy after fine-tuning", fine_acc)
assert fine_acc > 0.9
print("ok")
