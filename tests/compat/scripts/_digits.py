"""The 8x8 handwritten digits that ship with scikit-learn, as float32 NumPy arrays: the stand-in
for MNIST in these scripts (no download). Plain NumPy: no torch here."""
import numpy as np
from sklearn.datasets import load_digits


def digits(n=None, seed=0):
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))[:n]
    return x[order], y[order]
