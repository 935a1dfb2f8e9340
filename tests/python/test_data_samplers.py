"""utils.data samplers, IterableDataset / ChainDataset, default_convert and the sampler= /
batch_sampler= arguments of DataLoader, against torch 1.13 where the result is deterministic."""
import collections

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like.utils import data as fdata

torch = pytest.importorskip("torch")
tdata = torch.utils.data


def to_list(x):
    if isinstance(x, (flow.Tensor, torch.Tensor)):
        return x.numpy().tolist()
    if isinstance(x, (list, tuple)):
        return [to_list(v) for v in x]  # default_collate keeps tuples, torch's makes lists
    if isinstance(x, dict):
        return {k: to_list(v) for k, v in x.items()}
    return x


def raises_like(fn_ours, fn_torch):
    with pytest.raises(Exception) as t:
        fn_torch()
    with pytest.raises(type(t.value)) as o:
        fn_ours()
    assert str(o.value) == str(t.value)


def test_submodules_expose_the_same_classes():
    from oneflow_like.utils.data.dataloader import DataLoader, default_collate, get_worker_info
    from oneflow_like.utils.data.dataset import ChainDataset, IterableDataset, TensorDataset
    from oneflow_like.utils.data.sampler import BatchSampler, SubsetRandomSampler

    assert DataLoader is fdata.DataLoader and default_collate is fdata.default_collate
    assert get_worker_info is fdata.get_worker_info
    assert IterableDataset is fdata.IterableDataset and ChainDataset is fdata.ChainDataset
    assert TensorDataset is fdata.TensorDataset
    assert BatchSampler is fdata.BatchSampler and SubsetRandomSampler is fdata.SubsetRandomSampler
    for name in dir(tdata.sampler):
        if name.endswith("Sampler") and not name.startswith("_"):
            assert hasattr(fdata.sampler, name), name


@pytest.mark.parametrize("bs,drop", [(1, False), (3, False), (3, True), (10, True), (4, False)])
def test_sequential_and_batch_sampler_match_torch(bs, drop):
    ours = fdata.BatchSampler(fdata.SequentialSampler(range(10)), bs, drop)
    ref = tdata.BatchSampler(tdata.SequentialSampler(range(10)), bs, drop)
    assert list(ours) == list(ref)
    assert len(ours) == len(ref)


def test_sampler_argument_errors_match_torch():
    raises_like(
        lambda: fdata.RandomSampler(range(3), replacement=1),
        lambda: tdata.RandomSampler(range(3), replacement=1),
    )
    raises_like(
        lambda: fdata.RandomSampler(range(3), num_samples=0),
        lambda: tdata.RandomSampler(range(3), num_samples=0),
    )
    raises_like(
        lambda: fdata.BatchSampler(range(3), 0, False),
        lambda: tdata.BatchSampler(range(3), 0, False),
    )
    raises_like(
        lambda: fdata.BatchSampler(range(3), 2, 0), lambda: tdata.BatchSampler(range(3), 2, 0)
    )
    raises_like(
        lambda: fdata.WeightedRandomSampler([1.0, 2.0], 0),
        lambda: tdata.WeightedRandomSampler([1.0, 2.0], 0),
    )
    raises_like(
        lambda: fdata.WeightedRandomSampler([[1.0, 2.0]], 1),
        lambda: tdata.WeightedRandomSampler([[1.0, 2.0]], 1),
    )


def test_random_sampler_permutation_num_samples_and_generator():
    s = fdata.RandomSampler(range(7))
    assert sorted(s) == list(range(7)) and len(s) == 7
    s = fdata.RandomSampler(range(4), num_samples=10)
    out = list(s)
    assert len(out) == 10 == len(s)
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3] and len(set(out[8:])) == 2
    r = list(fdata.RandomSampler(range(5), replacement=True, num_samples=200))
    assert len(r) == 200 and set(r) == set(range(5))  # a repeat is near certain
    a = list(fdata.RandomSampler(range(20), generator=7))
    b = list(fdata.RandomSampler(range(20), generator=7))
    assert a == b
    s = fdata.RandomSampler(range(20), generator=7)
    assert list(s) != list(s)  # a stateful generator: the next epoch differs
    flow.manual_seed(3)
    a = list(fdata.RandomSampler(range(20)))
    flow.manual_seed(3)
    assert a == list(fdata.RandomSampler(range(20)))


def test_subset_and_weighted_random_sampler():
    idx = [3, 9, 11, 40]
    s = fdata.SubsetRandomSampler(idx, generator=1)
    assert sorted(s) == idx and len(s) == 4
    w = fdata.WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 4000, generator=0)
    out = np.array(list(w))
    assert len(w) == 4000 and set(out.tolist()) == {1, 2}
    assert abs((out == 2).mean() - 0.75) < 0.04
    w = fdata.WeightedRandomSampler(flow.tensor([1.0, 2.0, 3.0, 4.0]), 4, replacement=False)
    assert sorted(w) == [0, 1, 2, 3]
    assert w.weights.dtype == flow.float64
    with pytest.raises(RuntimeError):
        list(fdata.WeightedRandomSampler([1.0, 0.0], 2, replacement=False))


class Squares(fdata.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return np.array([i, i * i], dtype=np.float64), i


class TSquares(tdata.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return np.array([i, i * i], dtype=np.float64), i


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_batch_sampler_and_sampler_match_torch(workers):
    batches = [[0, 5], [9], [1, 2, 3]]
    ours = list(fdata.DataLoader(Squares(), batch_sampler=batches, num_workers=workers))
    ref = list(tdata.DataLoader(TSquares(), batch_sampler=batches))
    assert to_list(ours) == to_list(ref)
    ours = list(fdata.DataLoader(Squares(), sampler=[4, 1, 7], batch_size=2, num_workers=workers))
    ref = list(tdata.DataLoader(TSquares(), sampler=[4, 1, 7], batch_size=2))
    assert to_list(ours) == to_list(ref)
    ours = fdata.DataLoader(Squares(), batch_size=None, num_workers=workers)
    ref = tdata.DataLoader(TSquares(), batch_size=None)
    assert to_list(list(ours)) == to_list(list(ref)) and len(ours) == len(ref) == 10
    assert isinstance(ours.batch_sampler, type(None)) and isinstance(
        ours.sampler, fdata.SequentialSampler
    )
    loader = fdata.DataLoader(Squares(), batch_size=3, shuffle=True, generator=5)
    assert isinstance(loader.sampler, fdata.RandomSampler)
    assert isinstance(loader.batch_sampler, fdata.BatchSampler) and len(loader) == 4
    seen = sorted(i for _, lab in loader for i in lab.numpy().tolist())
    assert seen == list(range(10))


def test_dataloader_argument_errors_match_torch():
    raises_like(
        lambda: fdata.DataLoader(Squares(), sampler=[0], shuffle=True),
        lambda: tdata.DataLoader(TSquares(), sampler=[0], shuffle=True),
    )
    raises_like(
        lambda: fdata.DataLoader(Squares(), batch_sampler=[[0]], batch_size=2),
        lambda: tdata.DataLoader(TSquares(), batch_sampler=[[0]], batch_size=2),
    )
    raises_like(
        lambda: fdata.DataLoader(Squares(), batch_sampler=[[0]], drop_last=True),
        lambda: tdata.DataLoader(TSquares(), batch_sampler=[[0]], drop_last=True),
    )
    raises_like(
        lambda: fdata.DataLoader(Squares(), batch_size=None, drop_last=True),
        lambda: tdata.DataLoader(TSquares(), batch_size=None, drop_last=True),
    )
    raises_like(
        lambda: fdata.DataLoader(Stream(5), shuffle=True),
        lambda: tdata.DataLoader(TStream(5), shuffle=True),
    )
    raises_like(
        lambda: fdata.DataLoader(Stream(5), sampler=[0]),
        lambda: tdata.DataLoader(TStream(5), sampler=[0]),
    )


def _shard(n, info):
    if info is None:
        return range(n)
    return range(info.id, n, info.num_workers)


def _stream_class(base, get_worker_info, name):
    """An IterableDataset yielding 0..n-1, split between workers by get_worker_info() (the torch
    recipe); one for each library."""

    class Stream(base):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            for i in _shard(self.n, get_worker_info()):
                yield np.array([i, -i], dtype=np.int64)

        def __len__(self):
            return self.n

    Stream.__name__ = Stream.__qualname__ = name
    return Stream


Stream = _stream_class(fdata.IterableDataset, fdata.get_worker_info, "Stream")
TStream = _stream_class(tdata.IterableDataset, tdata.get_worker_info, "TStream")


@pytest.mark.parametrize("workers", [0, 2, 3])
@pytest.mark.parametrize("bs,drop", [(None, False), (1, False), (3, False), (3, True)])
def test_iterable_dataset_matches_torch(workers, bs, drop):
    ours = fdata.DataLoader(Stream(11), batch_size=bs, drop_last=drop, num_workers=workers)
    ref = tdata.DataLoader(TStream(11), batch_size=bs, drop_last=drop, num_workers=workers)
    assert to_list(list(ours)) == to_list(list(ref))
    assert to_list(list(ours)) == to_list(list(ref))  # a second epoch restarts the streams
    assert len(ours) == len(ref)


def test_persistent_workers_restart_iterable_epochs():
    loader = fdata.DataLoader(Stream(7), batch_size=2, num_workers=2, persistent_workers=True)
    first = to_list(list(loader))
    assert first == to_list(list(loader))
    assert sorted(r[0] for b in first for r in b) == list(range(7))


def test_chain_dataset_and_iterable_add():
    ours = list(fdata.ChainDataset([Stream(2), Stream(3)]))
    assert [x.tolist() for x in ours] == [[0, 0], [1, -1], [0, 0], [1, -1], [2, -2]]
    chained = Stream(2) + Stream(1)
    assert isinstance(chained, fdata.ChainDataset) and len(chained) == 3
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(fdata.ChainDataset([Squares()]))
    raises_like(lambda: fdata.ConcatDataset([Stream(2)]), lambda: tdata.ConcatDataset([TStream(2)]))
    loader = fdata.DataLoader(fdata.ChainDataset([Stream(2), Stream(3)]), batch_size=2)
    assert [b.numpy()[:, 0].tolist() for b in loader] == [[0, 1], [0, 1], [2]]


def test_default_convert_matches_torch():
    Point = collections.namedtuple("Point", "x y")
    cases = [
        0,
        "s",
        np.array([1.5, 2.5]),
        np.int64(3),
        (np.array([1]), 2),
        [np.array([1, 2]), "a"],
        {"a": np.zeros((2, 2)), "b": [1, np.float64(0.5)]},
        Point(np.array(0), np.array([1.0])),
        np.array(["a", "b"]),
    ]
    for c in cases:
        ours, ref = fdata.default_convert(c), tdata.default_convert(c)
        assert type(ours).__name__ == type(ref).__name__
        if isinstance(ref, np.ndarray):
            assert ours is c
        else:
            assert to_list(ours) == to_list(ref)
    t = fdata.default_convert(np.array([1.0, 2.0], dtype=np.float32))
    assert isinstance(t, flow.Tensor) and t.dtype == flow.float32
