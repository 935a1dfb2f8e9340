"""flow.quasirandom (torch.quasirandom): SobolEngine, low-discrepancy Sobol' sequences.

The sequence comes from SciPy's `scipy.stats.qmc.Sobol` (Debian python3-scipy, in the Makefile's
packages): the Joe-Kuo direction numbers up to 21201 dimensions and 30 bits, as torch's
SobolEngine uses, so unscrambled draws equal torch's. Scrambled draws (linear matrix scramble plus
a digital shift) follow `seed`, as torch's do, though with SciPy's random stream rather than
torch's, so the scrambled values differ from torch's for the same seed.
"""
import warnings

import numpy as np

import oneflow_like as flow

__all__ = ["SobolEngine"]


class SobolEngine:
    """torch.quasirandom.SobolEngine(dimension, scramble=False, seed=None)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(
                "Supported range of dimensionality for SobolEngine is "
                f"[1, {self.MAXDIM}], got {dimension}"
            )
        from scipy.stats import qmc

        self.seed, self.scramble, self.dimension = seed, scramble, int(dimension)
        self._engine = qmc.Sobol(self.dimension, scramble=bool(scramble), bits=self.MAXBIT,
                                 seed=seed)  # fmt: skip
        self.num_generated = 0

    def _out(self, points, out, dtype):
        t = flow.tensor(points, dtype=dtype if dtype is not None else flow.get_default_dtype())
        if out is not None:
            out.resize_(*t.shape).copy_(t)
            return out
        return t

    def draw(self, n=1, out=None, dtype=None):
        """The next n points of the sequence, a [n, dimension] tensor."""
        if n < 0:
            raise ValueError(f"[SobolEngine.draw] n must be non-negative, got {n}")
        with warnings.catch_warnings():  # SciPy warns when n is not a power of 2; torch does not
            warnings.simplefilter("ignore", UserWarning)
            points = self._engine.random(n) if n else np.zeros((0, self.dimension))
        self.num_generated += n
        return self._out(points, out, dtype)

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of 2 (the sequence's balance
        properties hold only for such blocks)."""
        n = 2**m
        total_n = self.num_generated + n
        if total_n & (total_n - 1):
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"{self.num_generated}+2**{m}={total_n}. If you still want to do this, please "
                "use 'SobolEngine.draw()' instead."
            )
        return self.draw(n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point (the scrambling, if any, is kept)."""
        self._engine.reset()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skips the next n points."""
        self._engine.fast_forward(n)
        self.num_generated += n
        return self

    def __repr__(self):
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"
