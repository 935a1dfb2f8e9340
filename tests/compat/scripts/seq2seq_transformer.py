"""Sequence to sequence with nn.Transformer (the PyTorch translation-tutorial pattern): token and
positional embeddings, a causal target mask from generate_square_subsequent_mask, padding masks,
teacher forcing, then greedy decoding. The task: reverse a sequence of digits."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
PAD, BOS, VOCAB, LEN = 0, 1, 12, 6  # digits are tokens 2..11


def batch(n):
    lengths = torch.randint(3, LEN + 1, (n,))
    src = torch.full((n, LEN), PAD, dtype=torch.long)
    tgt = torch.full((n, LEN + 1), PAD, dtype=torch.long)
    tgt[:, 0] = BOS
    for i, k in enumerate(lengths.tolist()):
        seq = torch.randint(2, VOCAB, (k,))
        src[i, :k] = seq
        tgt[i, 1 : k + 1] = seq.flip(0)
    return src, tgt


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):  # (B, T, E)
        return x + self.pe[: x.size(1)]


class Seq2Seq(nn.Module):
    def __init__(self, d_model=32):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
        self.pos = PositionalEncoding(d_model)
        self.transformer = nn.Transformer(
            d_model,
            nhead=4,
            num_encoder_layers=2,
            num_decoder_layers=2,
            dim_feedforward=64,
            dropout=0.0,
            batch_first=True,
        )
        self.out = nn.Linear(d_model, VOCAB)
        self.scale = math.sqrt(d_model)

    def forward(self, src, tgt_in):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.transformer(
            self.pos(self.emb(src) * self.scale),
            self.pos(self.emb(tgt_in) * self.scale),
            tgt_mask=tgt_mask,
            src_key_padding_mask=src == PAD,
            tgt_key_padding_mask=tgt_in == PAD,
            memory_key_padding_mask=src == PAD,
        )
        return self.out(h)


model = Seq2Seq()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
losses = []
for step in range(250):
    src, tgt = batch(64)
    logits = model(src, tgt[:, :-1])
    loss = loss_fn(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
    if step % 50 == 0:
        print(f"step {step}: loss {loss.item():.3f}")

# Greedy decoding of fresh sequences.
model.eval()
src, tgt = batch(32)
with torch.no_grad():
    ys = torch.full((32, 1), BOS, dtype=torch.long)
    for _ in range(LEN):
        nxt = model(src, ys)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], 1)
mask = tgt[:, 1:] != PAD
acc = ((ys[:, 1:] == tgt[:, 1:]) & mask).sum().item() / mask.sum().item()
first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
print(f"loss {first:.3f} -> {last:.3f}, greedy token accuracy {acc:.2f}")
assert last < 0.5 * first, (first, last)
