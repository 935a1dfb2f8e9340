"""A BERT-style masked language model on a toy grammar: TransformerEncoderLayer(norm_first=True,
activation="gelu"), 15% of positions chosen with torch.bernoulli (80/10/10 mask/random/keep),
CrossEntropyLoss(ignore_index=-100), AdamW with no weight decay on biases and LayerNorm weights,
a linear-warmup LambdaLR, and gradient checkpointing of each layer with
torch.utils.checkpoint.checkpoint(use_reentrant=False)."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
PAD, MASK, V, L = 0, 1, 20, 16


def sentences(n):
    # tokens 2..19; each sequence counts upwards modulo 18 from a random start: predictable
    start = torch.randint(0, 18, (n, 1))
    return (start + torch.arange(L)) % 18 + 2


class MLM(nn.Module):
    def __init__(self, d=48, layers=2):
        super().__init__()
        self.tok = nn.Embedding(V, d, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, L, d))
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d, 4, 96, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            for _ in range(layers)
        )
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, V)

    def forward(self, ids, use_checkpoint=False):
        h = self.tok(ids) + self.pos
        for layer in self.layers:
            h = checkpoint(layer, h, use_reentrant=False) if use_checkpoint else layer(h)
        return self.head(self.norm(h))


def mask_tokens(ids):
    labels = ids.clone()
    chosen = torch.bernoulli(torch.full(ids.shape, 0.15)).bool()
    labels[~chosen] = -100
    replace = torch.bernoulli(torch.full(ids.shape, 0.8)).bool() & chosen
    ids = ids.masked_fill(replace, MASK)
    rand = torch.bernoulli(torch.full(ids.shape, 0.5)).bool() & chosen & ~replace
    ids = torch.where(rand, torch.randint(2, V, ids.shape), ids)
    return ids, labels


model = MLM()
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if name.endswith("bias") or "norm" in name or name == "pos" else decay).append(p)
opt = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2
)
warmup, total = 20, 250
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / (total - warmup))
)
loss_fn = nn.CrossEntropyLoss(ignore_index=-100)

# checkpointed and plain forward/backward agree
ids, labels = mask_tokens(sentences(4))
g = []
for use in (False, True):
    model.zero_grad()
    loss_fn(model(ids, use).view(-1, V), labels.view(-1)).backward()
    g.append(model.tok.weight.grad.clone())
assert torch.allclose(g[0], g[1], atol=1e-5)

losses = []
for step in range(total):
    ids, labels = mask_tokens(sentences(32))
    logits = model(ids, use_checkpoint=step % 2 == 0)
    loss = loss_fn(logits.view(-1, V), labels.view(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    losses.append(loss.item())
assert opt.param_groups[1]["weight_decay"] == 0.0

model.eval()
with torch.no_grad():
    ids, labels = mask_tokens(sentences(64))
    pred = model(ids).argmax(-1)
    m = labels != -100
    acc = (pred[m] == labels[m]).float().mean().item()
print(
    f"mlm loss {sum(losses[:5]) / 5:.3f} -> {sum(losses[-5:]) / 5:.3f}, masked accuracy {acc:.2f}"
)
assert sum(losses[-5:]) < 0.5 * sum(losses[:5])
assert acc > 0.3, acc  # chance is 1/18
