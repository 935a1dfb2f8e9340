"""Text classification with nn.EmbeddingBag as the PyTorch text-classification tutorial writes it:
a vocabulary built by hand, a collate_fn that concatenates token ids and builds the offsets,
EmbeddingBag(mode="mean") -> Linear, SGD with StepLR, clip_grad_norm_, and a no_grad evaluation
with accuracy from argmax/eq/float().mean(). The data: synthetic "sentences" whose class is carried
by a few topic words among shared filler words."""
import random

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, random_split

torch.manual_seed(0)
random.seed(0)

NUM_CLASS = 4
topics = [[f"t{c}_{k}" for k in range(6)] for c in range(NUM_CLASS)]
filler = [f"w{k}" for k in range(40)]


def make_sentence(label):
    n = random.randint(5, 14)
    words = random.choices(filler, k=n)
    for _ in range(random.randint(1, 3)):
        words.insert(random.randrange(len(words) + 1), random.choice(topics[label]))
    return " ".join(words)


class TextDataset(Dataset):
    def __init__(self, n):
        self.items = [
            (lab, make_sentence(lab)) for lab in (random.randrange(NUM_CLASS) for _ in range(n))
        ]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


full = TextDataset(1200)
vocab = {"<unk>": 0}
for _, text in full.items:
    for tok in text.split():
        vocab.setdefault(tok, len(vocab))


def text_pipeline(text):
    return [vocab.get(tok, 0) for tok in text.split()]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(_label)
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False, mode="mean")
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


train_ds, valid_ds = random_split(full, [1000, 200], generator=torch.Generator().manual_seed(42))
train_dataloader = DataLoader(train_ds, batch_size=32, shuffle=True, collate_fn=collate_batch)
valid_dataloader = DataLoader(valid_ds, batch_size=64, shuffle=False, collate_fn=collate_batch)

model = TextClassificationModel(len(vocab), 32, NUM_CLASS)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)


def evaluate(dataloader):
    model.eval()
    accs = []
    with torch.no_grad():
        for label, text, offsets in dataloader:
            predicted_label = model(text, offsets)
            accs.append((predicted_label.argmax(1) == label).float().mean().item())
    return sum(accs) / len(accs)


losses = []
for epoch in range(1, 6):
    model.train()
    total = 0.0
    for idx, (label, text, offsets) in enumerate(train_dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total += loss.item()
    losses.append(total / len(train_dataloader))
    scheduler.step()
    acc = evaluate(valid_dataloader)
    print(
        f"epoch {epoch} loss {losses[-1]:.4f} valid accuracy {acc:.3f} lr {scheduler.get_last_lr()[0]:.3f}"
    )

assert losses[-1] < 0.5 * losses[0], losses
assert acc > 0.9, acc
# A bag with per_sample_weights (mode="sum") is the weighted sum of its rows.
bag = nn.EmbeddingBag(10, 3, mode="sum")
idx = torch.tensor([1, 2, 4, 5, 4, 3])
offs = torch.tensor([0, 2])
w = torch.rand(6)
out = bag(idx, offs, per_sample_weights=w)
ref = torch.stack(
    [(bag.weight[idx[:2]] * w[:2, None]).sum(0), (bag.weight[idx[2:]] * w[2:, None]).sum(0)]
)
assert torch.allclose(out, ref, atol=1e-6)
print("ok")
