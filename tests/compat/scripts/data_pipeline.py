"""The torch.utils.data toolbox a real pipeline combines: a map-style Dataset with a transform, an
IterableDataset that shards itself across workers with get_worker_info, Subset, ConcatDataset,
WeightedRandomSampler to rebalance an imbalanced set, BatchSampler, default_collate on dicts, and
DataLoader(num_workers=2, persistent_workers=True, pin_memory=False, drop_last=True,
generator=torch.Generator().manual_seed(0), worker_init_fn, prefetch_factor). A classifier trained
on the rebalanced loader learns the rare class."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    Subset,
    WeightedRandomSampler,
    get_worker_info,
)
from torch.utils.data.dataloader import default_collate


class Blobs(Dataset):
    """Three 2-D Gaussian classes; class 2 is rare."""

    def __init__(self, n_per_class, seed, transform=None):
        rng = np.random.default_rng(seed)
        centers = np.array([[0.0, 3.0], [3.0, 0.0], [-3.0, -3.0]])
        xs, ys = [], []
        for c, n in enumerate(n_per_class):
            xs.append(centers[c] + rng.normal(size=(n, 2)))
            ys += [c] * n
        self.x = np.concatenate(xs).astype(np.float32)
        self.y = np.array(ys, dtype=np.int64)
        self.transform = transform

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        x = torch.from_numpy(self.x[i])
        if self.transform is not None:
            x = self.transform(x)
        return {"x": x, "y": int(self.y[i])}


class CountingStream(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)


if __name__ == "__main__":
    torch.manual_seed(0)
    # IterableDataset sharded over two workers: every item once.
    stream = DataLoader(CountingStream(3, 17), num_workers=2, batch_size=None)
    assert sorted(int(v) for v in stream) == list(range(3, 17))

    scale = lambda x: x / 3.0  # noqa: E731
    train = ConcatDataset(
        [
            Blobs([400, 400, 20], seed=1, transform=scale),
            Blobs([100, 100, 5], seed=2, transform=scale),
        ]
    )
    assert len(train) == 1025 and train[820]["y"] == 0 and train.cumulative_sizes == [820, 1025]
    valid = Subset(Blobs([200, 200, 200], seed=3, transform=scale), indices=list(range(0, 600, 2)))
    assert len(valid) == 300

    labels = torch.tensor([train[i]["y"] for i in range(len(train))])
    class_count = torch.bincount(labels)
    weights = (1.0 / class_count.float())[labels]
    sampler = WeightedRandomSampler(
        weights,
        num_samples=len(train),
        replacement=True,
        generator=torch.Generator().manual_seed(0),
    )
    g = torch.Generator()
    g.manual_seed(0)
    loader = DataLoader(
        train,
        batch_size=64,
        sampler=sampler,
        num_workers=2,
        persistent_workers=True,
        pin_memory=False,
        drop_last=True,
        worker_init_fn=seed_worker,
        generator=g,
        prefetch_factor=2,
    )
    assert len(loader) == 1025 // 64

    # The rebalanced loader draws the rare class about a third of the time.
    drawn = torch.cat([b["y"] for b in loader])
    frac = (drawn == 2).float().mean().item()
    print("rare-class fraction per epoch", round(frac, 3))
    assert 0.25 < frac < 0.42, frac

    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(6):
        total = 0.0
        for batch in loader:
            assert batch["x"].shape == (64, 2) and batch["y"].dtype == torch.int64
            loss = F.cross_entropy(model(batch["x"]), batch["y"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total / len(loader))
        print(f"epoch {epoch} loss {losses[-1]:.4f}")
    assert losses[-1] < 0.3 * losses[0], losses

    # Evaluation in batches drawn by a BatchSampler over a SequentialSampler, with default_collate.
    correct = total = 0
    model.eval()
    with torch.no_grad():
        for idx in BatchSampler(SequentialSampler(valid), batch_size=50, drop_last=False):
            batch = default_collate([valid[i] for i in idx])
            pred = model(batch["x"]).argmax(1)
            correct += (pred == batch["y"]).sum().item()
            total += len(idx)
    acc = correct / total
    per_class = []
    xs = torch.stack([valid[i]["x"] for i in range(len(valid))])
    ys = torch.tensor([valid[i]["y"] for i in range(len(valid))])
    with torch.no_grad():
        pred = model(xs).argmax(1)
    for c in range(3):
        per_class.append((pred[ys == c] == c).float().mean().item())
    print("valid accuracy", acc, "per class", per_class)
    assert acc > 0.95 and min(per_class) > 0.9, per_class

    # Two runs of the same seeded shuffle give the same order; a different seed does not.
    def order(seed):
        dl = DataLoader(
            range(20), batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(seed)
        )
        return torch.cat(list(dl)).tolist()

    assert order(0) == order(0) and order(0) != order(1)
    assert sorted(order(0)) == list(range(20))
    print("ok")
