"""torch.utils.data.sampler: index samplers (re-exported by oneflow_like.utils.data).

Random samplers draw from a NumPy generator: `generator` may be a numpy.random.Generator or an
int seed (converted once, so epochs differ); with a flow.Generator each iteration seeds a fresh
one from that generator's next draw, with None from flow.randint, so flow.manual_seed (or the
generator's state) makes runs repeatable.
"""
import numbers

import numpy as np

import oneflow_like as flow


def _rng(generator):
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, flow.Generator):
        return generator.numpy_rng
    if generator is None:
        seed = int(flow.randint(0, 2**31 - 1, (1,)).item())
        return np.random.default_rng(seed)
    return np.random.default_rng(int(generator))


class _RandomSource:
    """The generator a random sampler draws from on each __iter__."""

    def __init__(self, generator):
        self.generator = generator
        # An int or NumPy generator is converted once (so epochs differ); None and a
        # flow.Generator give a fresh NumPy generator per iteration, seeded from the flow
        # generator's next draw, so its get_state()/set_state() replays the epochs after it.
        self._np = (
            None if generator is None or isinstance(generator, flow.Generator) else _rng(generator)
        )

    def rng(self):
        return self._np if self._np is not None else _rng(self.generator)


class Sampler:
    """Yields dataset indices (pass one to DataLoader(sampler=...))."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _check_bool(name, value, exc=ValueError):
    if not isinstance(value, bool):
        raise exc(f"{name} should be a boolean value, but got {name}={value}")


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class RandomSampler(Sampler):
    """A random permutation of the indices (repeated, then cut, to reach num_samples), or with
    replacement num_samples independent uniform draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        self._source = _RandomSource(generator)
        _check_bool("replacement", replacement, TypeError)
        _check_positive("num_samples", self.num_samples)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, rng = len(self.data_source), self._source.rng()
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator
        self._source = _RandomSource(generator)

    def __iter__(self):
        for i in self._source.rng().permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to `weights` (with or without
    replacement, like torch.multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_positive("num_samples", num_samples)
        _check_bool("replacement", replacement)
        w = weights.detach().numpy() if isinstance(weights, flow.Tensor) else np.asarray(weights)
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > int((w > 0).sum()):
            raise RuntimeError(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
            )
        self.weights = flow.tensor(w, dtype=flow.float64)
        self._p = w / w.sum()
        self.num_samples, self.replacement = num_samples, replacement
        self.generator = generator
        self._source = _RandomSource(generator)

    def __iter__(self):
        rng = self._source.rng()
        idx = rng.choice(len(self._p), size=self.num_samples, replace=self.replacement, p=self._p)
        return iter(idx.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter unless
    drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive("batch_size", batch_size)
        _check_bool("drop_last", drop_last)
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]
