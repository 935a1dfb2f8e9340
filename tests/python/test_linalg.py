"""oneflow_like.linalg (norms, products, powers) against torch.linalg in float64, with gradients."""
import math

import numpy as np
import pytest
import torch
from op_testing import same_as_torch

import oneflow_like as flow

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
B = R.standard_normal((2, 3, 4))
S = R.standard_normal((2, 3, 3))


def lin(fn):
    """fn(linalg_module, *tensors) as a (flow, torch) pair."""
    return (lambda *x: fn(flow.linalg, *x)), (lambda *x: fn(torch.linalg, *x))


CASES = [
    ("vector_norm", lambda L, x: L.vector_norm(x), [B]),
    ("vector_norm_ord3_dim", lambda L, x: L.vector_norm(x, 3, dim=1, keepdim=True), [B]),
    ("vector_norm_inf", lambda L, x: L.vector_norm(x, math.inf, dim=(0, 2)), [B]),
    ("vector_norm_l1", lambda L, x: L.vector_norm(x, 1, dim=-1), [B]),
    ("matrix_norm_fro", lambda L, x: L.matrix_norm(x), [B]),
    ("matrix_norm_1", lambda L, x: L.matrix_norm(x, 1), [B]),
    ("matrix_norm_ninf", lambda L, x: L.matrix_norm(x, -math.inf, keepdim=True), [B]),
    ("norm_default", lambda L, x: L.norm(x), [B]),
    ("norm_matrix_inf", lambda L, x: L.norm(x, math.inf), [A]),
    ("norm_vec_dim", lambda L, x: L.norm(x, 2, dim=1), [A]),
    ("vecdot", lambda L, x, y: L.vecdot(x, y), [A, A[::-1].copy()]),
    (
        "cross",
        lambda L, x, y: L.cross(x, y),
        [R.standard_normal((4, 3)), R.standard_normal((4, 3))],
    ),
    (
        "multi_dot",
        lambda L, a, b, c: L.multi_dot([a, b, c]),
        [R.standard_normal(3), A, R.standard_normal((4, 2))],
    ),
    ("matrix_power_5", lambda L, x: L.matrix_power(x, 5), [S]),
    ("matrix_power_0", lambda L, x: L.matrix_power(x, 0), [S]),
    ("diagonal", lambda L, x: L.diagonal(x, offset=1), [B]),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_linalg(name, fn, arrays):
    if name == "vecdot" and not hasattr(torch.linalg, "vecdot"):  # torch >= 2.0
        ff = lin(fn)[0]
        x, y = arrays
        np.testing.assert_allclose(ff(flow.tensor(x), flow.tensor(y)).numpy(), (x * y).sum(-1))
        return
    if name == "matrix_power_0":  # no gradient to compare (a constant)
        ff, tf = lin(fn)
        np.testing.assert_array_equal(
            ff(flow.tensor(arrays[0])).numpy(), tf(torch.tensor(arrays[0])).numpy()
        )
        return
    same_as_torch(*lin(fn), *arrays)


def test_missing_orders_raise():
    with pytest.raises(NotImplementedError, match="singular values"):
        flow.linalg.matrix_norm(flow.ones(3, 3), "nuc")
    with pytest.raises(NotImplementedError, match="n < 0"):
        flow.linalg.matrix_power(flow.ones(3, 3), -1)
    with pytest.raises(RuntimeError, match="must be 1-D or 2-D"):
        flow.linalg.norm(flow.ones(2, 2, 2), 1)
