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
import collections.abc
import numbers
import os
import queue
import signal
import sys
import time

import numpy as np

import oneflow_like as flow


from oneflow_like.utils.data.sampler import (  # noqa: E402
    Sampler,
    SequentialSampler,
    RandomSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    BatchSampler,
)
from oneflow_like.utils.data.dataset import (  # noqa: E402
    Dataset,
    IterableDataset,
    StackDataset,
    TensorDataset,
    Subset,
    ConcatDataset,
    ChainDataset,
    random_split,
)


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
    tensor (float32 for Python floats, int64 for ints), structures recursed (a namedtuple stays
    that namedtuple, fields collated)."""
    elem = batch[0]
    if isinstance(elem, flow.Tensor):
        return flow.stack(list(batch), 0)
    if isinstance(elem, dict):
        return {k: default_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, (tuple, list)) and not isinstance(elem, (str, bytes)):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in a batch should be of equal size")
        cols = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple keeps its type
            return type(elem)(*cols)
        return cols if isinstance(elem, list) else tuple(cols)
    return _to_flow(_numpy_collate(batch))


# ---- samplers --------------------------------------------------------------------------------


def default_convert(data):
    """NumPy arrays and scalars -> flow tensors, recursing through mappings, namedtuples and
    sequences (plain tuples become lists, as in torch); anything else is returned as it is. The
    collate_fn of a DataLoader with batch_size=None."""
    if isinstance(data, flow.Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and data.dtype.kind in "SaUO":
            return data
        return flow.from_numpy(np.array(data, order="C"))
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Iterates over `dataset` in batches.

    batch_size: samples per batch (None: yield single samples through default_convert); shuffle:
    a fresh permutation per epoch (RandomSampler over `generator`); sampler: the indices to load
    (exclusive with shuffle); batch_sampler: lists of indices, one per batch (exclusive with
    batch_size, shuffle, sampler and drop_last); drop_last: drop the final short batch;
    collate_fn: list of samples -> batch (run in the workers when num_workers > 0); num_workers:
    0 loads in this process, > 0 uses that many worker processes; prefetch_factor: batches in
    flight per worker (default 2); persistent_workers: keep the workers across epochs; timeout:
    seconds to wait for a batch (0: no limit, but a dead worker is still reported); pin_memory:
    accepted (page-locked staging applies to CUDA copies; CPU batches are returned as they are),
    as are pin_memory_device and in_order (batches are always returned in order).
    An IterableDataset takes no sampler: each worker iterates its own copy (shard it with
    get_worker_info()), and batches come from the workers in turn until all are exhausted.
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
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
        pin_memory_device="",
        in_order=True,
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (
                ("shuffle", shuffle),
                ("sampler", sampler),
                ("batch_sampler", batch_sampler),
            ):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, "
                        f"but got {name}={value}"
                    )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size, self.drop_last, self.generator = batch_size, drop_last, generator
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.timeout = num_workers, timeout
        self.collate_fn = collate_fn
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.multiprocessing_context = multiprocessing_context
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order  # batches always come back in order here (what True asks)
        self.persistent_workers = persistent_workers and num_workers > 0
        self._pool = None

    def _batches(self):
        """Index lists, one per batch (map-style datasets)."""
        if self.batch_sampler is not None:
            return [list(b) for b in self.batch_sampler]
        return [[i] for i in self.sampler]

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def _fetcher(self):
        if self._iterable:
            return _IterableFetcher(self.dataset, self.collate_fn, self.batch_size, self.drop_last)
        return _Fetcher(self.dataset, self.collate_fn, self.batch_sampler is not None)

    def __iter__(self):
        if self.num_workers == 0:
            return self._iter_single()
        return self._iter_workers()

    def _iter_single(self):
        fetch = self._fetcher()
        if self._iterable:
            while True:
                batch = fetch(None, 0)
                if isinstance(batch, _IterableEnd):
                    return
                yield batch
        for b in self._batches():
            yield fetch(b)

    def _iter_workers(self):
        pool = self._pool
        if pool is None or not pool.alive():
            pool = _WorkerPool(self)
            if self.persistent_workers:
                self._pool = pool
        try:
            if self._iterable:
                yield from pool.run_iterable()
            else:
                yield from pool.run(self._batches())
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
    num_workers=0): dataset lookups, then collate_fn. Without auto-collation (no batch sampler):
    one sample, through default_convert."""

    def __init__(self, dataset, collate_fn, auto_collation):
        self.dataset, self.collate_fn, self.auto = dataset, collate_fn, auto_collation

    def __call__(self, indices, epoch=None):
        if self.collate_fn is None and hasattr(self.dataset, "_get_batch") and self.auto:
            return self.dataset._get_batch(indices)
        if not self.auto:
            return (self.collate_fn or default_convert)(self.dataset[indices[0]])
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            data = getitems(indices)
        else:
            data = [self.dataset[i] for i in indices]
        return (self.collate_fn or default_collate)(data)


class _IterableEnd:
    """What an exhausted IterableDataset fetcher returns (crosses the worker queue)."""


class _IterableFetcher:
    """The next batch of an IterableDataset; a new epoch number starts a new iterator."""

    def __init__(self, dataset, collate_fn, batch_size, drop_last):
        self.dataset, self.collate_fn = dataset, collate_fn
        self.batch_size, self.drop_last = batch_size, drop_last
        self._epoch, self._it = None, None

    def __call__(self, indices, epoch=None):
        if epoch != self._epoch:
            self._epoch, self._it = epoch, iter(self.dataset)
        if self._it is None:
            return _IterableEnd()
        if self.batch_size is None:
            try:
                return (self.collate_fn or default_convert)(next(self._it))
            except StopIteration:
                self._it = None
                return _IterableEnd()
        items = []
        for x in self._it:
            items.append(x)
            if len(items) == self.batch_size:
                break
        if len(items) < self.batch_size:
            self._it = None
            if not items or self.drop_last:
                return _IterableEnd()
        return (self.collate_fn or default_collate)(items)


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
        fetch = loader._fetcher()
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

    def run_iterable(self):
        """Batches of an IterableDataset: requests go to the live workers in turn (as in
        PyTorch); a worker that answers with _IterableEnd gets no more, and its answer is
        skipped. Ends when every worker is exhausted."""
        self.epoch += 1
        epoch, n = self.epoch, len(self.index_qs)
        live, owner, pending = [True] * n, {}, {}
        state = {"sent": 0, "next": 0}

        def send():
            for _ in range(n):
                w = state["next"]
                state["next"] = (w + 1) % n
                if live[w]:
                    owner[state["sent"]] = w
                    self.index_qs[w].put((epoch, state["sent"], None))
                    state["sent"] += 1
                    return

        while state["sent"] < self.ahead and any(live):
            send()
        want = 0
        while want < state["sent"]:
            while want not in pending:
                e, i, data, err = self._get()
                if e is None:
                    self.shutdown()
                    err.reraise()
                if e != epoch:
                    continue
                if err is not None:
                    err.reraise()
                if isinstance(data, _IterableEnd):
                    live[owner[i]] = False
                pending[i] = data
            data = pending.pop(want)
            want += 1
            if any(live):
                send()
            if not isinstance(data, _IterableEnd):
                yield data

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
            data, err = fetch(indices, epoch), None
        except Exception:  # re-raised in the parent, with this traceback
            data, err = None, _ExceptionWrapper(sys.exc_info(), where)
        result_q.put((epoch, i, data, err))


from oneflow_like.utils.data.distributed import DistributedSampler  # noqa: E402,F401
from oneflow_like.utils.data import dataloader, dataset, sampler  # noqa: E402,F401
