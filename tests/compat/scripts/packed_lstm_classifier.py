"""Variable-length sequence classification with packed sequences, as the RNN tutorials write it:
sequences of different lengths padded with nn.utils.rnn.pad_sequence in a collate_fn,
pack_padded_sequence(enforce_sorted=False) into a bidirectional LSTM, pad_packed_sequence back,
the last valid state per sequence, and a classifier. The task: does a sequence of +1/-1 steps end
above where it started (the sign of its sum)? Checks: the loss fell, accuracy is high, and the
packed run equals running each sequence alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class Walks(Dataset):
    def __init__(self, n):
        self.items = []
        for _ in range(n):
            length = int(torch.randint(3, 20, ()))
            steps = torch.randint(0, 2, (length,)).float() * 2 - 1
            if steps.sum() == 0:
                steps[-1] = -steps[-1]
            self.items.append((steps.unsqueeze(-1), int(steps.sum() > 0)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True), lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, 2)

    def forward(self, padded, lengths):
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        out, (h_n, c_n) = self.lstm(packed)
        unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
        assert torch.equal(out_lengths, lengths)
        feats = torch.cat([h_n[-2], h_n[-1]], dim=1)  # forward's last valid step, backward's first
        return self.fc(feats), unpacked


train_loader = DataLoader(Walks(1200), batch_size=32, shuffle=True, collate_fn=collate)
test_loader = DataLoader(Walks(300), batch_size=100, collate_fn=collate)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
for epoch in range(6):
    total = 0.0
    for padded, lengths, labels in train_loader:
        logits, _ = model(padded, lengths)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += loss.item()
    losses.append(total / len(train_loader))
    print(f"epoch {epoch} loss {losses[-1]:.4f}")

model.eval()
correct = n = 0
with torch.no_grad():
    for padded, lengths, labels in test_loader:
        logits, unpacked = model(padded, lengths)
        correct += (logits.argmax(1) == labels).sum().item()
        n += len(labels)
        # Padding positions of the unpacked output are zero.
        mask = torch.arange(padded.size(1))[None, :] >= lengths[:, None]
        assert unpacked[mask].abs().max().item() == 0.0
acc = correct / n
print("test accuracy", acc)
assert losses[-1] < 0.3 * losses[0], losses
assert acc > 0.9, acc

# The packed batch equals each sequence run alone (no padding seen by the LSTM).
with torch.no_grad():
    padded, lengths, _ = collate([test_loader.dataset[i] for i in range(5)])
    batch_logits, _ = model(padded, lengths)
    for i in range(5):
        single, _ = model(padded[i : i + 1, : lengths[i]], lengths[i : i + 1])
        assert torch.allclose(single[0], batch_logits[i], atol=1e-5), (single, batch_logits[i])
print("ok")
