"""DataLoader worker processes return flow tensors through shared memory (issue 18), and
oneflow_like.multiprocessing sends tensors between processes without pickling their data."""
import os
import signal
import time

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.multiprocessing as ofl_mp
from oneflow_like.utils.data import DataLoader, Dataset, TensorDataset, get_worker_info


def test_tensor_dataset_with_workers_is_the_everyday_case():
    # The case the issue reports: flow tensors in the dataset, num_workers=2.
    ds = TensorDataset(flow.arange(1000).float(), flow.arange(1000))
    xs, ys = [], []
    for x, y in DataLoader(ds, batch_size=64, num_workers=2):
        assert isinstance(x, flow.Tensor) and x.dtype == flow.float32 and y.dtype == flow.int64
        xs.append(x.detach().numpy())
        ys.append(y.detach().numpy())
    np.testing.assert_array_equal(np.concatenate(xs), np.arange(1000, dtype=np.float32))
    np.testing.assert_array_equal(np.concatenate(ys), np.arange(1000))


class Computing(Dataset):
    """Runs flow ops in the worker (the VM of a forked child), large enough to use its threads."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        a = flow.full((256, 256), float(i + 1))
        return (a @ a).sum(dim=0)[:4], i


def test_workers_run_flow_ops_and_collate_in_the_worker():
    seen = []

    def collate(samples):
        seen.append(os.getpid())  # runs in the worker, as in PyTorch
        return flow.stack([s[0] for s in samples]), [s[1] for s in samples]

    out = list(DataLoader(Computing(), batch_size=2, num_workers=2, collate_fn=collate))
    assert seen == []  # nothing collated in this process
    assert [b[1] for b in out] == [[0, 1], [2, 3], [4, 5]]
    got = np.concatenate([b[0].detach().numpy() for b in out])
    want = np.array([[65536.0 * (i + 1) ** 2] * 4 for i in range(6)], dtype=np.float32)
    np.testing.assert_allclose(got, want)


class WhoAmI(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return flow.tensor([info.id, info.num_workers, info.seed % 1000, flow.rand(1).item()])


def test_worker_info_and_per_worker_seeds():
    assert get_worker_info() is None
    rows = np.concatenate(
        [b.detach().numpy() for b in DataLoader(WhoAmI(), batch_size=2, num_workers=2)]
    )
    assert set(rows[:, 0]) == {0, 1} and set(rows[:, 1]) == {2}
    # Workers draw from different streams: no two samples share a random number.
    assert len(set(rows[:, 3].tolist())) == 8


class Dying(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 4:
            os.kill(os.getpid(), signal.SIGKILL)
        return flow.tensor([float(i)])


def test_a_worker_that_dies_is_reported_with_its_signal():
    t0 = time.time()
    with pytest.raises(RuntimeError, match="DataLoader worker .*SIGKILL.* exited unexpectedly"):
        list(DataLoader(Dying(), batch_size=2, num_workers=2))
    assert time.time() - t0 < 30


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3 if i == 2 else 0)
        return flow.tensor([float(i)])


def test_timeout_bounds_each_wait():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=1))


def test_worker_init_fn_failure_names_the_worker():
    def init(worker_id):
        raise ValueError(f"bad init {worker_id}")

    with pytest.raises(ValueError, match="(?s)in DataLoader worker process .*bad init"):
        list(
            DataLoader(
                TensorDataset(flow.arange(8)), batch_size=2, num_workers=2, worker_init_fn=init
            )
        )


def test_persistent_workers_survive_epochs():
    ds = TensorDataset(flow.arange(20).float())
    dl = DataLoader(ds, batch_size=5, num_workers=2, persistent_workers=True, prefetch_factor=1)
    first = [b[0].detach().numpy() for b in dl]
    pids = [w.pid for w in dl._pool.workers]
    # Abandon an epoch half way, then run a full one on the same processes.
    it = iter(dl)
    next(it)
    del it
    second = [b[0].detach().numpy() for b in dl]
    assert [w.pid for w in dl._pool.workers] == pids
    np.testing.assert_array_equal(np.concatenate(first), np.concatenate(second))
    dl._pool.shutdown()


def test_loader_argument_errors():
    ds = TensorDataset(flow.arange(4))
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, prefetch_factor=4)
    with pytest.raises(ValueError, match="timeout"):
        DataLoader(ds, num_workers=1, timeout=-1)


def _child(q, r):
    t = q.get(timeout=20)
    t.mul_(2)  # writes into the shared block
    r.put((t.detach().numpy().sum(), t.dtype == flow.float64, tuple(t.shape), type(t).__name__))


def test_tensors_cross_processes_through_shared_memory():
    ctx = ofl_mp.get_context("fork")
    q, r = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_child, args=(q, r))
    p.start()
    q.put(flow.arange(12, dtype=flow.float64).reshape(3, 4))
    total, is_f64, shape, name = r.get(timeout=20)
    p.join(timeout=20)
    assert (total, is_f64, shape) == (2 * 66.0, True, (3, 4))


def test_parameters_and_grad_rules():
    from multiprocessing import reduction

    p = flow.nn.Parameter(flow.ones(3))
    q = reduction.ForkingPickler.loads(reduction.ForkingPickler.dumps(p))
    assert type(q) is flow.nn.Parameter and q.requires_grad
    np.testing.assert_array_equal(q.detach().numpy(), np.ones(3, np.float32))
    empty = reduction.ForkingPickler.loads(reduction.ForkingPickler.dumps(flow.zeros(0, 5)))
    assert tuple(empty.shape) == (0, 5)
    x = flow.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="non-leaf tensor that requires grad"):
        reduction.ForkingPickler.dumps(x)
    with pytest.raises(ValueError, match="unknown strategy"):
        ofl_mp.set_sharing_strategy("file_system_tmp")
