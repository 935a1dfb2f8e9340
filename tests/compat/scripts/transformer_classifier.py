"""A Transformer-encoder sequence classifier on synthetic token sequences (label: whether token
7 occurs more often than token 3), with padding masks, AdamW, a linear warm-up then cosine decay
(SequentialLR), gradient clipping and weight init through Module.apply."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
VOCAB, SEQ, PAD = 12, 16, 0


def make_data(n):
    tokens = torch.randint(1, VOCAB, (n, SEQ))
    lengths = torch.randint(SEQ // 2, SEQ + 1, (n,))
    pad = torch.arange(SEQ).unsqueeze(0) >= lengths.unsqueeze(1)
    tokens = tokens.masked_fill(pad, PAD)
    label = ((tokens == 7).sum(1) > (tokens == 3).sum(1)).long()
    return tokens, label


class Classifier(nn.Module):
    def __init__(self, d_model=32, nhead=4):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, SEQ, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward=64, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(d_model, 2)

    def forward(self, tokens):
        pad = tokens == PAD
        h = self.encoder(self.embed(tokens) + self.pos, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)


model = Classifier()
model.apply(init_weights)
train = DataLoader(TensorDataset(*make_data(768)), batch_size=64, shuffle=True)
test_x, test_y = make_data(256)
epochs = 8
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
warmup = LinearLR(optimizer, start_factor=0.1, total_iters=len(train))
cosine = CosineAnnealingLR(optimizer, T_max=(epochs - 1) * len(train))
scheduler = SequentialLR(optimizer, [warmup, cosine], milestones=[len(train)])

losses = []
for epoch in range(epochs):
    model.train()
    total = 0.0
    for tokens, label in train:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens), label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        total += loss.item()
    losses.append(total / len(train))
    model.eval()
    with torch.no_grad():
        acc = (model(test_x).argmax(1) == test_y).float().mean().item()
    print(f"epoch {epoch}: loss {losses[-1]:.4f} test accuracy {acc:.3f}")
assert losses[-1] < 0.6 * losses[0], losses
assert acc > 0.75, acc
