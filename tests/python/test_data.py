"""Dataset / DataLoader: batching, shuffling with a seed, drop_last, collation, worker processes."""
import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


class Squares(Dataset):
    """Sample i: (NumPy float32 [i, i*i], int label i % 3)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return np.array([i, i * i], dtype=np.float32), i % 3


class Failing(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise KeyError("sample 5 is broken")
        return super().__getitem__(i)


def rows(batch):
    return batch.numpy().tolist()


def test_tensor_dataset_and_sequential_batches():
    x = flow.tensor(np.arange(20, dtype=np.float32).reshape(10, 2))
    y = flow.tensor(np.arange(10))
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[3]
    assert rows(xi) == [6.0, 7.0] and int(yi.item()) == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [tuple(b[0].shape) for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert rows(batches[2][1]) == [8, 9]
    assert len(DataLoader(ds, batch_size=4)) == 3
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and len(list(dl)) == 2
    with pytest.raises(ValueError):
        TensorDataset(x, flow.tensor(np.arange(9)))


def test_shuffle_is_a_seeded_permutation():
    ds = TensorDataset(flow.tensor(np.arange(50)))
    order = lambda seed: [
        v for (b,) in DataLoader(ds, batch_size=7, shuffle=True, generator=seed) for v in rows(b)
    ]
    a, b, c = order(3), order(3), order(4)
    assert sorted(a) == list(range(50))
    assert a == b and a != c and a != list(range(50))
    dl = DataLoader(ds, batch_size=50, shuffle=True, generator=np.random.default_rng(0))
    e1, e2 = rows(next(iter(dl))[0]), rows(next(iter(dl))[0])
    assert e1 != e2  # a new permutation every epoch


def test_default_collate_numpy_numbers_and_structures():
    dl = DataLoader(Squares(5), batch_size=3)
    x, y = next(iter(dl))
    assert (
        isinstance(x, flow.Tensor)
        and x.dtype == flow.float32
        and rows(x) == [[0, 0], [1, 1], [2, 4]]
    )
    assert y.dtype == flow.int64 and rows(y) == [0, 1, 2]
    out = default_collate([{"a": 1.5, "b": [np.ones(2), 2]}, {"a": 2.5, "b": [np.zeros(2), 3]}])
    assert rows(out["a"]) == [1.5, 2.5]
    assert rows(out["b"][0]) == [[1, 1], [0, 0]] and rows(out["b"][1]) == [2, 3]
    t = default_collate([flow.tensor([1.0, 2.0]), flow.tensor([3.0, 4.0])])
    assert rows(t) == [[1, 2], [3, 4]]


def test_custom_collate_and_unbatched():
    dl = DataLoader(Squares(4), batch_size=2, collate_fn=lambda samples: [s[1] for s in samples])
    assert list(dl) == [[0, 1], [2, 0]]
    single = list(DataLoader(Squares(2), batch_size=None))
    assert rows(single[1][0]) == [1, 1]


def test_subset_concat_random_split():
    ds = Squares(10)
    assert Subset(ds, [4, 7])[1][1] == 7 % 3
    cat = ConcatDataset([Squares(3), Squares(2)])
    assert len(cat) == 5 and cat[4][0].tolist() == [1, 1]
    a, b = random_split(ds, [0.8, 0.2], generator=0)
    assert len(a) == 8 and len(b) == 2
    assert sorted(a.indices + b.indices) == list(range(10))


def test_worker_processes_match_single_process():
    ds = Squares(23)
    single = [(rows(x), rows(y)) for x, y in DataLoader(ds, batch_size=5)]
    multi = [(rows(x), rows(y)) for x, y in DataLoader(ds, batch_size=5, num_workers=2)]
    assert multi == single
    shuffled = [
        v
        for x, _ in DataLoader(ds, batch_size=4, shuffle=True, generator=1, num_workers=2)
        for v in rows(x)
    ]
    assert sorted(r[0] for r in shuffled) == list(range(23))


def test_worker_error_is_raised_in_parent():
    # As PyTorch: the worker's exception type, its message and the worker's traceback.
    with pytest.raises(
        KeyError, match="(?s)Caught KeyError in DataLoader worker process.*sample 5"
    ):
        list(DataLoader(Failing(10), batch_size=2, num_workers=2))


def test_flow_generator_seeds_shuffles_and_splits():
    from oneflow_like.utils.data import DataLoader, TensorDataset, random_split

    ds = TensorDataset(flow.arange(20))

    def order(seed):
        g = flow.Generator().manual_seed(seed)
        return [b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True, generator=g)]

    assert order(1) == order(1) and order(1) != order(2)
    a, b = random_split(ds, [15, 5], generator=flow.Generator().manual_seed(42))
    a2, _ = random_split(ds, [15, 5], generator=flow.Generator().manual_seed(42))
    assert [a[i][0].item() for i in range(15)] == [a2[i][0].item() for i in range(15)]
    assert len(b) == 5


def test_concat_dataset_cumulative_sizes_and_negative_index():
    a, b = Squares(3), Squares(4)
    cat = ConcatDataset([a, b])
    assert cat.cumulative_sizes == [3, 7] == ConcatDataset.cumsum([a, b])
    with pytest.warns(DeprecationWarning, match="cumulative_sizes"):
        assert cat.cummulative_sizes == [3, 7]
    assert cat[3][1] == 0 and cat[-1][1] == 3 % 3 and float(cat[-4][0][0]) == 0.0
    with pytest.raises(
        ValueError, match="absolute value of index should not exceed dataset length"
    ):
        cat[-8]
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])


class Batched(Squares):
    """Records the calls of __getitems__ (the batched lookup DataLoader prefers)."""

    calls = []

    def __getitems__(self, indices):
        Batched.calls.append(list(indices))
        return [self[i] for i in indices]


def test_getitems_protocol_subset_stack_and_loader():
    base = Batched(10)
    sub = Subset(base, [9, 7, 5, 3, 1])
    Batched.calls.clear()
    assert [s[1] for s in sub.__getitems__([0, 1])] == [0, 1]
    assert Batched.calls == [[9, 7]]
    # A list index on a Subset asks the parent with the mapped list.
    assert sub.indices == [9, 7, 5, 3, 1]
    Batched.calls.clear()
    xs, ys = next(iter(DataLoader(sub, batch_size=3)))
    assert Batched.calls == [[9, 7, 5]]
    assert ys.tolist() == [0, 1, 2] and xs[:, 0].tolist() == [9.0, 7.0, 5.0]
    st = flow.utils.data.StackDataset(a=base, b=Squares(10))
    batch = st.__getitems__([2, 4])
    assert [s["a"][1] for s in batch] == [2, 1] and [s["b"][1] for s in batch] == [2, 1]
    tup = flow.utils.data.StackDataset(base, Squares(10)).__getitems__([5])
    assert isinstance(tup[0], tuple) and tup[0][0][1] == tup[0][1][1] == 2


def test_random_split_fractions_follow_torch():
    parts = random_split(Squares(10), [0.33, 0.33, 0.34])
    # floor(3.3), floor(3.3), floor(3.4) = 3, 3, 3; the one left over goes to the first split
    assert [len(p) for p in parts] == [4, 3, 3]
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(Squares(2), [0.9, 0.05, 0.05])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(Squares(10), [3, 3])


def test_default_collate_keeps_namedtuples():
    from collections import namedtuple

    Point = namedtuple("Point", "x label")
    batch = default_collate([Point(np.ones(2, np.float32), 1), Point(np.zeros(2, np.float32), 2)])
    assert type(batch) is Point and batch._fields == ("x", "label")
    assert batch.x.shape == (2, 2) and batch.label.tolist() == [1, 2]
    nested = default_collate([{"p": Point(1.0, 3)}, {"p": Point(2.0, 4)}])
    assert type(nested["p"]) is Point and nested["p"].label.tolist() == [3, 4]
