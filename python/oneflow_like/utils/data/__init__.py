"""Datasets and the DataLoader.

DataLoader yields batches made by `collate_fn` (default: stack tensors / NumPy arrays / numbers
into flow tensors, recursing through tuples, lists and dicts). Shuffling draws from a NumPy
generator seeded by `generator` (an int, a numpy.random.Generator or a flow.Generator) or, when None, by
flow.randint so that flow.manual_seed makes runs repeatable. With num_workers > 0, worker
processes (fork by default) fetch samples and run collate_fn, as in PyTorch; the batches (flow
tensors included) come back through shared memory (oneflow_like.multiprocessing), in order.
Workers are seeded (flow and `random`: base_seed + worker id, see get_worker_info()), a worker's
exception is re-raised in the parent with its traceback, a worker that dies is reported with its
exit code or signal, `timeout` bounds each wait, and `persistent_workers` keeps the processes
across epochs. The runtime is fork-safe (vm/: the VM drains and re-creates its threads in the
child).
"""
import numbers
import os
import queue
import signal
import sys
import time

import numpy as np

import oneflow_like as flow


class Dataset:
    """Map-style dataset: __getitem__(index) and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples (t[i] for t in tensors); tensors (flow or NumPy) share dim 0."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError(
                "Size mismatch between tensors: " + ", ".join(str(tuple(t.shape)) for t in tensors)
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _get_batch(self, indices):
        """The whole batch with one gather per tensor (used by DataLoader's default collate)."""
        out = []
        for t in self.tensors:
            if isinstance(t, np.ndarray):
                out.append(flow.from_numpy(np.array(t[indices], order="C")))
            else:
                idx = flow.tensor(indices, dtype=flow.int64)
                if t.device != idx.device:
                    idx = idx.to(t.device)
                out.append(t[idx])
        return tuple(out)


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, i):
        return self.dataset[self.indices[i]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        self.cumulative = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self):
        return self.cumulative[-1] if self.cumulative else 0

    def __getitem__(self, i):
        if i < 0:
            i += len(self)
        k = int(np.searchsorted(self.cumulative, i, side="right"))
        return self.datasets[k][i - (self.cumulative[k - 1] if k else 0)]


def random_split(dataset, lengths, generator=None):
    n = len(dataset)
    if all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1.0) < 1e-6:
        counts = [int(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset")
    perm = _rng(generator).permutation(n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start : start + length]))
        start += length
    return out


# ---- collation -------------------------------------------------------------------------------


def _numpy_collate(batch):
    """Collates a list of samples into NumPy arrays (tuples/lists/dicts recursed)."""
    elem = batch[0]
    if isinstance(elem, np.ndarray):
        return np.stack(batch)
    if isinstance(elem, (bool, np.bool_)):
        return np.asarray(batch, dtype=np.bool_)
    if isinstance(elem, numbers.Integral):
        return np.asarray(batch, dtype=np.int64)
    if isinstance(elem, numbers.Real):
        return np.asarray(batch, dtype=np.float32)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, dict):
        return {k: _numpy_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, (tuple, list)):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in a batch should be of equal size")
        return (
            type(elem)(_numpy_collate(list(s)) for s in zip(*batch))
            if isinstance(elem, list)
            else tuple(_numpy_collate(list(s)) for s in zip(*batch))
        )
    raise TypeError(
        f"default_collate: batch must contain tensors, NumPy arrays, numbers, dicts "
        f"or lists; found {type(elem).__name__}"
    )


def _to_flow(x):
    """NumPy leaves (from _numpy_collate) -> flow tensors."""
    if isinstance(x, np.ndarray):
        return flow.from_numpy(np.array(x, order="C", copy=False))
    if isinstance(x, dict):
        return {k: _to_flow(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_to_flow(v) for v in x)
    if isinstance(x, list) and x and not isinstance(x[0], (str, bytes)):
        return [_to_flow(v) for v in x]
    return x


def default_collate(batch):
    """Stacks a list of samples: flow tensors -> flow.stack, NumPy arrays and numbers -> a flow
    tensor (float32 for Python floats, int64 for ints), structures recursed."""
    elem = batch[0]
    if isinstance(elem, flow.Tensor):
        return flow.stack(list(batch), 0)
    if isinstance(elem, dict):
        return {k: default_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, (tuple, list)) and not isinstance(elem, (str, bytes)):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in a batch should be of equal size")
        cols = [default_collate(list(s)) for s in zip(*batch)]
        return cols if isinstance(elem, list) else tuple(cols)
    return _to_flow(_numpy_collate(batch))


# ---- samplers --------------------------------------------------------------------------------


def _rng(generator):
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, flow.Generator):
        return generator.numpy_rng
    if generator is None:
        seed = int(flow.randint(0, 2**31 - 1, (1,)).item())
        return np.random.default_rng(seed)
    return np.random.default_rng(int(generator))


class Sampler:
    """Yields dataset indices (pass one to DataLoader(sampler=...))."""

    def __iter__(self):
        raise NotImplementedError


class DataLoader:
    """Iterates over `dataset` in batches.

    batch_size: samples per batch (None: yield single collated samples); shuffle: a fresh
    permutation per epoch from `generator`; drop_last: drop the final short batch; collate_fn:
    list of samples -> batch (run in the workers when num_workers > 0); num_workers: 0 loads in
    this process, > 0 uses that many worker processes; prefetch_factor: batches in flight per
    worker (default 2); persistent_workers: keep the workers across epochs; timeout: seconds to
    wait for a batch (0: no limit, but a dead worker is still reported); pin_memory: accepted
    (page-locked staging applies to CUDA copies; CPU batches are returned as they are).
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        generator=None,
        prefetch_factor=None,
        persistent_workers=False,
        multiprocessing_context=None,
    ):
        if batch_sampler is not None:
            raise NotImplementedError("batch_sampler is not supported; use sampler + batch_size")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative")
        self.dataset = dataset
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last
        self.sampler = sampler
        self.num_workers, self.timeout = num_workers, timeout
        self.collate_fn = collate_fn
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.multiprocessing_context = multiprocessing_context
        self.pin_memory = pin_memory
        self.persistent_workers = persistent_workers and num_workers > 0
        self._pool = None
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. "
                "let num_workers > 0 to enable multiprocessing"
            )
        self._rng = _rng(generator) if shuffle and sampler is None else None

    def _indices(self):
        if self.sampler is not None:
            return list(iter(self.sampler))
        n = len(self.dataset)
        if self.shuffle:
            return self._rng.permutation(n).tolist()
        return list(range(n))

    def _batches(self):
        idx = self._indices()
        if self.batch_size is None:
            return [[i] for i in idx]
        bs = self.batch_size
        out = [idx[i : i + bs] for i in range(0, len(idx), bs)]
        if self.drop_last and out and len(out[-1]) < bs:
            out.pop()
        return out

    def __len__(self):
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return (
            n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
        )

    def __iter__(self):
        batches = self._batches()
        if self.num_workers == 0:
            return self._iter_single(batches)
        return self._iter_workers(batches)

    def _iter_single(self, batches):
        fetch = _Fetcher(self.dataset, self.collate_fn, self.batch_size)
        for b in batches:
            yield fetch(b)

    def _iter_workers(self, batches):
        pool = self._pool
        if pool is None or not pool.alive():
            pool = _WorkerPool(self)
            if self.persistent_workers:
                self._pool = pool
        try:
            yield from pool.run(batches)
        finally:
            if not self.persistent_workers:
                pool.shutdown()

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()


class WorkerInfo:
    """What get_worker_info() returns inside a DataLoader worker process."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_worker_info = None


def get_worker_info():
    """In a DataLoader worker process: its WorkerInfo (id, num_workers, seed, dataset); None in
    the main process."""
    return _worker_info


class _ExceptionWrapper:
    """An exception raised in a worker, carried to the parent with its formatted traceback."""

    def __init__(self, exc_info, where):
        import traceback

        self.exc_type = exc_info[0]
        self.msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.msg}"
        if self.exc_type is KeyError:  # KeyError quotes its message
            msg = KeyError(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # an exception type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        raise exc


class _Fetcher:
    """Turns a list of indices into a batch (what a worker runs, and the main process with
    num_workers=0): dataset lookups, then collate_fn."""

    def __init__(self, dataset, collate_fn, batch_size):
        self.dataset, self.collate_fn, self.batch_size = dataset, collate_fn, batch_size

    def __call__(self, indices):
        if self.collate_fn is None and hasattr(self.dataset, "_get_batch") and self.batch_size:
            return self.dataset._get_batch(indices)
        if self.batch_size is None:
            return (self.collate_fn or _single)(self.dataset[indices[0]])
        return (self.collate_fn or default_collate)([self.dataset[i] for i in indices])


# How often a waiting worker or parent checks that the other side is still alive (seconds).
_STATUS_INTERVAL = 5.0


class _WorkerPool:
    """num_workers processes, each fed batch jobs through its own index queue (batch i goes to
    worker i % num_workers, as in PyTorch, so the assignment is repeatable); results (tensors
    through shared memory, oneflow_like.multiprocessing) come back on one result queue and are
    yielded in batch order. Jobs carry an epoch number so a persistent pool drops the results of an
    epoch the user abandoned."""

    def __init__(self, loader):
        from oneflow_like import multiprocessing as ofl_mp  # registers the tensor reducer

        ctx = ofl_mp.get_context(loader.multiprocessing_context or "fork")
        self.index_qs = [ctx.Queue() for _ in range(loader.num_workers)]
        self.result_q = ctx.Queue()
        self.epoch = 0
        self.timeout = loader.timeout
        self.ahead = max(1, loader.prefetch_factor or 2) * loader.num_workers
        fetch = _Fetcher(loader.dataset, loader.collate_fn, loader.batch_size)
        base_seed = int(flow.randint(0, 2**62, (1,)).item())
        self.workers = [
            ctx.Process(
                target=_worker_loop,
                daemon=True,
                args=(
                    fetch,
                    self.index_qs[w],
                    self.result_q,
                    loader.worker_init_fn,
                    w,
                    loader.num_workers,
                    base_seed,
                    loader.dataset,
                    os.getpid(),
                ),
            )
            for w in range(loader.num_workers)
        ]
        for w in self.workers:
            w.start()
        self.closed = False

    def alive(self):
        return not self.closed and all(w.is_alive() for w in self.workers)

    def _check_workers(self, grace=0.0):
        """Raises naming every dead worker. `grace`: after a failed receive, how long to wait
        for the dying worker to be reaped (the receive can fail before its exit is visible)."""
        deadline = time.monotonic() + grace
        dead = [w for w in self.workers if not w.is_alive()]
        while not dead and time.monotonic() < deadline:
            time.sleep(0.01)
            dead = [w for w in self.workers if not w.is_alive()]
        if dead:
            how = []
            for w in dead:
                code = w.exitcode
                if code is not None and code < 0:
                    try:
                        name = signal.Signals(-code).name
                    except ValueError:
                        name = str(-code)
                    how.append(f"pid {w.pid} killed by signal {name}")
                else:
                    how.append(f"pid {w.pid} exit code {code}")
            self.shutdown()
            raise RuntimeError(
                f"DataLoader worker ({', '.join(how)}) exited unexpectedly; if it ran out of "
                f"memory, lower batch_size or num_workers"
            )

    def _get(self):
        """The next (epoch, i, data, err) from the result queue, with the timeout rules."""
        if self.timeout and self.timeout > 0:
            try:
                return self.result_q.get(timeout=self.timeout)
            except (EOFError, OSError, RuntimeError) as e:
                self._check_workers(grace=2.0)
                raise RuntimeError(f"DataLoader: could not receive a batch from a worker: {e!r}")
            except queue.Empty:
                self._check_workers()
                self.shutdown()
                raise RuntimeError(
                    f"DataLoader timed out after {self.timeout} seconds waiting for a batch"
                ) from None
        while True:
            try:
                return self.result_q.get(timeout=_STATUS_INTERVAL)
            except queue.Empty:
                self._check_workers()
            except (EOFError, OSError, RuntimeError) as e:
                # A batch's shared memory travels as a file descriptor that its worker hands over
                # when asked: a worker killed after queueing a batch leaves it unreadable.
                self._check_workers(grace=2.0)
                raise RuntimeError(f"DataLoader: could not receive a batch from a worker: {e!r}")

    def _send(self, epoch, i, indices):
        self.index_qs[i % len(self.index_qs)].put((epoch, i, indices))

    def run(self, batches):
        self.epoch += 1
        epoch, sent, pending = self.epoch, 0, {}
        while sent < len(batches) and sent < self.ahead:
            self._send(epoch, sent, batches[sent])
            sent += 1
        for want in range(len(batches)):
            while want not in pending:
                e, i, data, err = self._get()
                if e is None:  # worker_init_fn failed: that worker is gone
                    self.shutdown()
                    err.reraise()
                if e != epoch:
                    continue  # a result of an abandoned epoch
                if err is not None:
                    err.reraise()
                pending[i] = data
            if sent < len(batches):
                self._send(epoch, sent, batches[sent])
                sent += 1
            yield pending.pop(want)

    def shutdown(self):
        if self.closed:
            return
        self.closed = True
        for q in self.index_qs:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self.workers:
            w.join(timeout=_STATUS_INTERVAL)
            if w.is_alive():
                w.terminate()
                w.join(timeout=_STATUS_INTERVAL)
        for q in self.index_qs + [self.result_q]:
            q.cancel_join_thread()
            q.close()


def _single(x):
    return _to_flow(x)


def _worker_loop(
    fetch, index_q, result_q, init_fn, worker_id, num_workers, base_seed, dataset, ppid
):
    """A worker process: seeds its generators, runs worker_init_fn, then fetches and collates
    batches until it gets None or the parent is gone. Batches are flow tensors, sent through
    shared memory by the reducer of oneflow_like.multiprocessing."""
    import random

    global _worker_info
    seed = base_seed + worker_id
    flow.manual_seed(seed)
    random.seed(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    where = f"in DataLoader worker process {worker_id}"
    if init_fn is not None:
        try:
            init_fn(worker_id)
        except Exception:
            result_q.put((None, None, None, _ExceptionWrapper(sys.exc_info(), where)))
            return
    while True:
        try:
            job = index_q.get(timeout=_STATUS_INTERVAL)
        except queue.Empty:
            if os.getppid() != ppid:  # the parent died: nobody will read our results
                return
            continue
        if job is None:
            return
        epoch, i, indices = job
        try:
            data, err = fetch(indices), None
        except Exception:  # re-raised in the parent, with this traceback
            data, err = None, _ExceptionWrapper(sys.exc_info(), where)
        result_q.put((epoch, i, data, err))


from oneflow_like.utils.data.distributed import DistributedSampler  # noqa: E402,F401
