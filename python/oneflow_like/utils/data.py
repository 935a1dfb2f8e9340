"""Datasets and the DataLoader.

DataLoader yields batches made by `collate_fn` (default: stack tensors / NumPy arrays / numbers
into flow tensors, recursing through tuples, lists and dicts). Shuffling draws from a NumPy
generator seeded by `generator` (an int, a numpy.random.Generator or a flow.Generator) or, when None, by
flow.randint so that flow.manual_seed makes runs repeatable. With num_workers > 0, worker
processes (fork) fetch samples and collate them as NumPy only; the parent turns the NumPy batch
into flow tensors, so the runtime is never touched in a child.
"""
import multiprocessing as mp
import numbers
import queue

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
    if isinstance(elem, flow.Tensor):
        raise TypeError(
            "worker processes collate NumPy only: return NumPy arrays from the dataset "
            "when num_workers > 0"
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


class DataLoader:
    """Iterates over `dataset` in batches.

    batch_size: samples per batch (None: yield single collated samples); shuffle: a fresh
    permutation per epoch from `generator`; drop_last: drop the final short batch; collate_fn:
    list of samples -> batch; num_workers: 0 loads in this process, > 0 uses that many worker
    processes (the dataset must return NumPy arrays/numbers; collate_fn then receives NumPy
    batches already collated, and must be None or accept them).
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
        prefetch_factor=2,
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

    def _fetch(self, indices):
        if (
            self.collate_fn is None
            and hasattr(self.dataset, "_get_batch")
            and self.batch_size is not None
        ):
            return self.dataset._get_batch(indices)
        samples = [self.dataset[i] for i in indices]
        if self.batch_size is None:
            return (self.collate_fn or _single)(samples[0])
        return (self.collate_fn or default_collate)(samples)

    def _iter_single(self, batches):
        for b in batches:
            yield self._fetch(b)

    def _iter_workers(self, batches):
        ctx = mp.get_context(self.multiprocessing_context or "fork")
        index_q, result_q = ctx.Queue(), ctx.Queue()
        workers = [
            ctx.Process(
                target=_worker_loop,
                daemon=True,
                args=(
                    self.dataset,
                    index_q,
                    result_q,
                    self.worker_init_fn,
                    w,
                    self.batch_size is None,
                ),
            )
            for w in range(self.num_workers)
        ]
        for w in workers:
            w.start()
        try:
            sent = 0
            ahead = max(1, self.prefetch_factor) * self.num_workers
            while sent < len(batches) and sent < ahead:
                index_q.put((sent, batches[sent]))
                sent += 1
            pending = {}
            timeout = self.timeout if self.timeout > 0 else None
            for want in range(len(batches)):
                while want not in pending:
                    try:
                        i, data, err = result_q.get(timeout=timeout if timeout else 5.0)
                    except queue.Empty:
                        if timeout is not None or not all(w.is_alive() for w in workers):
                            raise RuntimeError("DataLoader worker exited unexpectedly or timed out")
                        continue
                    if err is not None:
                        raise RuntimeError(f"DataLoader worker failed on batch {i}:\n{err}")
                    pending[i] = data
                data = pending.pop(want)
                if sent < len(batches):
                    index_q.put((sent, batches[sent]))
                    sent += 1
                batch = _to_flow(data)
                yield self.collate_fn(batch) if self.collate_fn is not None else batch
        finally:
            for _ in workers:
                index_q.put(None)
            for w in workers:
                w.join(timeout=5)
                if w.is_alive():
                    w.terminate()
            index_q.close()
            result_q.close()


def _single(x):
    return _to_flow(x)


def _worker_loop(dataset, index_q, result_q, init_fn, worker_id, unbatched):
    import traceback

    if init_fn is not None:
        init_fn(worker_id)
    while True:
        job = index_q.get()
        if job is None:
            return
        i, indices = job
        try:
            samples = [dataset[k] for k in indices]
            data = samples[0] if unbatched else _numpy_collate(samples)
            result_q.put((i, data, None))
        except Exception:  # reported in the parent with the batch index
            result_q.put((i, None, traceback.format_exc()))
