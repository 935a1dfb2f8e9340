"""A word-level LSTM language model as the PyTorch word_language_model example writes it:
Embedding -> multi-layer LSTM with dropout -> Linear decoder (tied weights), truncated BPTT with
detached hidden states, gradient clipping, and a learning rate cut on a validation plateau."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# A tiny corpus with structure: a cycle of 12 words with noise, so the model can learn it.
vocab, length = 12, 6000
g = torch.Generator().manual_seed(0)
base = torch.arange(length) % vocab
noise = torch.randint(0, vocab, (length,), generator=g)
keep = torch.rand(length, generator=g) < 0.9
corpus = torch.where(keep, base, noise)


def batchify(data, bsz):
    n = data.size(0) // bsz
    return data[: n * bsz].view(bsz, -1).t().contiguous()


train = batchify(corpus[:5000], 16)
valid = batchify(corpus[5000:], 8)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight  # tied weights
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return F.log_softmax(self.decoder(self.drop(output)), dim=-1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (
            weight.new_zeros(self.nlayers, bsz, self.nhid),
            weight.new_zeros(self.nlayers, bsz, self.nhid),
        )


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


model = RNNModel(vocab, 32, 32, 2)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.25, patience=0)
bptt = 20


def evaluate(data):
    model.eval()
    total, hidden = 0.0, model.init_hidden(data.size(1))
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, bptt):
            seq_len = min(bptt, data.size(0) - 1 - i)
            x, y = data[i : i + seq_len], data[i + 1 : i + 1 + seq_len].reshape(-1)
            out, hidden = model(x, hidden)
            total += seq_len * criterion(out.view(-1, vocab), y).item()
    return total / (data.size(0) - 1)


first = evaluate(valid)
for epoch in range(3):
    model.train()
    hidden = model.init_hidden(train.size(1))
    for i in range(0, train.size(0) - 1, bptt):
        seq_len = min(bptt, train.size(0) - 1 - i)
        x, y = train[i : i + seq_len], train[i + 1 : i + 1 + seq_len].reshape(-1)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        out, hidden = model(x, hidden)
        loss = criterion(out.view(-1, vocab), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
    val = evaluate(valid)
    scheduler.step(val)
    print(f"epoch {epoch}: valid loss {val:.3f} (ppl {math.exp(val):.2f})")

print(f"valid loss {first:.3f} -> {val:.3f}")
assert val < first * 0.6, (first, val)
