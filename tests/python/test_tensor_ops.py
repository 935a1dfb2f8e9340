"""torch.* composites (oneflow_like/_tensor_ops.py) against PyTorch in float64: results and, for
differentiable cases, the gradient of every float input."""
import numpy as np
import pytest
import torch

import oneflow_like as flow

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
V = R.standard_normal(4)
W = R.standard_normal(3)
B3 = R.standard_normal((2, 3, 4))
C3 = R.standard_normal((2, 4, 5))
Ar = A[::-1].copy()


def both(fn):
    """The same lambda for both libraries: `lib` is flow or torch."""
    return (lambda *x: fn(flow, *x)), (lambda *x: fn(torch, *x))


# (id, fn(lib, *tensors), arrays, differentiable)
CASES = [
    ("outer", lambda L, x, y: L.outer(x, y), [V, W], True),
    ("ger", lambda L, x, y: x.ger(y), [V, W], True),
    ("dot", lambda L, x, y: L.dot(x, y), [V, V], True),
    ("inner", lambda L, x, y: L.inner(x, y), [A, A], True),
    ("mv", lambda L, m, x: L.mv(m, x), [A, V], True),
    ("addmv", lambda L, i, m, x: L.addmv(i, m, x, beta=0.5, alpha=2), [W, A, V], True),
    (
        "baddbmm",
        lambda L, i, x, y: L.baddbmm(i, x, y, alpha=0.3),
        [R.standard_normal((2, 3, 5)), B3, C3],
        True,
    ),
    ("addbmm", lambda L, i, x, y: L.addbmm(i, x, y), [R.standard_normal((3, 5)), B3, C3], True),
    ("kron", lambda L, x, y: L.kron(x, y), [A, R.standard_normal((2, 3))], True),
    (
        "cross",
        lambda L, x, y: L.cross(x, y, dim=1),
        [R.standard_normal((4, 3)), R.standard_normal((4, 3))],
        True,
    ),
    ("trace", lambda L, x: L.trace(x), [A], True),
    ("diag_vec", lambda L, x: L.diag(x, -2), [V], True),
    ("diag_mat", lambda L, x: x.diag(1), [A], True),
    ("diag_embed", lambda L, x: L.diag_embed(x, 1, 0, 2), [B3], True),
    ("diag_embed_neg", lambda L, x: L.diag_embed(x, -2), [B3], True),
    ("diagflat", lambda L, x: L.diagflat(x), [A], True),
    ("movedim", lambda L, x: L.movedim(x, (0, 2), (2, 0)), [B3], True),
    ("swapaxes", lambda L, x: x.swapaxes(0, 2), [B3], True),
    ("rot90", lambda L, x: L.rot90(x, 3, (1, 2)), [B3], True),
    ("fliplr", lambda L, x: L.fliplr(x), [A], True),
    ("hstack", lambda L, x, y: L.hstack([x, y]), [A, A], True),
    ("vstack", lambda L, x, y: L.vstack([x, y]), [V, V], True),
    ("dstack", lambda L, x, y: L.dstack([x, y]), [A, A], True),
    ("column_stack", lambda L, x, y: L.column_stack([x, y]), [W, A], True),
    ("atleast_3d", lambda L, x: L.atleast_3d(x), [A], True),
    ("tensor_split", lambda L, x: L.tensor_split(x, 3, 1), [A], True),
    ("tensor_split_idx", lambda L, x: x.tensor_split([1, 3], 1), [A], True),
    ("meshgrid_xy", lambda L, x, y: L.meshgrid(x, y, indexing="xy"), [V, W], True),
    ("meshgrid_ij", lambda L, x, y: L.meshgrid(x, y, indexing="ij"), [V, W], True),
    ("cartesian_prod", lambda L, x, y: L.cartesian_prod(x, y), [V, W], True),
    ("block_diag", lambda L, x, y: L.block_diag(x, y), [A, R.standard_normal((2, 2))], True),
    ("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), [A, V], True),
    ("mT", lambda L, x: x.mT, [B3], True),
    ("count_nonzero", lambda L, x: L.count_nonzero(x, 0), [np.array([[0.0, 1], [2, 0]])], False),
    ("var_mean", lambda L, x: L.var_mean(x, 1), [A], True),
    ("std_mean", lambda L, x: L.std_mean(x, 0, keepdim=True), [A], True),
    ("aminmax", lambda L, x: tuple(L.aminmax(x, dim=1)), [A], False),
    ("nanmean", lambda L, x: L.nanmean(x, 1), [np.array([[1.0, np.nan, 3], [4, 5, 6]])], True),
    ("median_dim", lambda L, x: tuple(L.median(x, 1)), [A], True),
    ("median_all", lambda L, x: L.median(x), [A], True),
    (
        "median_nan",
        lambda L, x: tuple(x.median(1)),
        [np.array([[1.0, np.nan, 0], [3, 2, 1]])],
        False,
    ),
    ("quantile_dim", lambda L, x: L.quantile(x, 0.3, dim=1), [A], True),
    ("quantile_all", lambda L, x: L.quantile(x, 0.7), [A], True),
    (
        "quantile_vec",
        lambda L, x: L.quantile(x, L.tensor([0.2, 0.9], dtype=L.float64), dim=1, keepdim=True),
        [A],
        True,
    ),
    (
        "quantile_nan_line",
        lambda L, x: L.quantile(x, 0.5, dim=1),
        [np.array([[1.0, np.nan, 3], [4, 5, 6]])],
        False,
    ),
    (
        "nanquantile",
        lambda L, x: L.nanquantile(x, 0.4, dim=1),
        [np.array([[1.0, np.nan, 3], [4, 5, 6]])],
        True,
    ),
    (
        "nanquantile_all_nan",
        lambda L, x: L.nanquantile(x, L.tensor([0.3, 1.0], dtype=L.float64), dim=0),
        [np.array([[np.nan, 1.0], [np.nan, 2]])],
        False,
    ),
    (
        "nanquantile_nearest",
        lambda L, x: L.nanquantile(x, 0.5, interpolation="nearest"),
        [np.array([1.0, np.nan, 2, 7, 3])],
        False,
    ),
    ("quantile_lower", lambda L, x: L.quantile(x, 0.4, dim=0, interpolation="lower"), [A], True),
    (
        "quantile_vec_all",
        lambda L, x: L.quantile(x, L.tensor([0.1, 0.5], dtype=L.float64)),
        [A],
        True,
    ),
    (
        "atan2_axes",
        lambda L, x, y: L.atan2(x, y),
        [np.array([1.0, -1, 0, 2, -2]), np.array([0.0, 0, 1, -1, -1])],
        False,
    ),
    ("logaddexp", lambda L, x, y: L.logaddexp(x, y), [A, Ar], True),
    ("logaddexp2", lambda L, x, y: L.logaddexp2(x, y), [A, Ar], True),
    ("hypot", lambda L, x, y: L.hypot(x, y), [A, Ar], True),
    ("atan2", lambda L, x, y: L.atan2(x, y), [A, Ar], True),
    ("nan_to_num", lambda L, x: L.nan_to_num(x), [np.array([np.nan, np.inf, -np.inf, 1.0])], False),
    (
        "heaviside",
        lambda L, x, y: L.heaviside(x, y),
        [np.array([-1.0, 0, 2]), np.array([0.5])],
        False,
    ),
    (
        "bucketize",
        lambda L, x, b: L.bucketize(x, b),
        [np.array([0.5, 1, 2.5, 9]), np.array([1.0, 2, 3])],
        False,
    ),
    (
        "bucketize_right",
        lambda L, x, b: L.bucketize(x, b, right=True),
        [np.array([0.5, 1, 2.5, 9]), np.array([1.0, 2, 3])],
        False,
    ),
    (
        "searchsorted",
        lambda L, s, x: L.searchsorted(s, x),
        [np.sort(A, 1), R.standard_normal((3, 2))],
        False,
    ),
    (
        "searchsorted_side",
        lambda L, s, x: L.searchsorted(s, x, side="right"),
        [np.array([1.0, 2, 2, 3]), np.array([2.0, 0.5])],
        False,
    ),
    ("isin", lambda L, x, t: L.isin(x, t), [np.array([1, 2, 3, 4]), np.array([2, 4])], False),
    (
        "unique",
        lambda L, x: L.unique(x, return_inverse=True, return_counts=True),
        [np.array([3, 1, 2, 3, 1, 5])],
        False,
    ),
    (
        "unique_dim",
        lambda L, x: L.unique(x, dim=0, return_inverse=True, return_counts=True),
        [np.array([[1, 2], [0, 5], [1, 2], [0, 1]])],
        False,
    ),
    (
        "unique_consecutive",
        lambda L, x: L.unique_consecutive(x, return_counts=True, return_inverse=True),
        [np.array([1, 1, 2, 2, 3, 1, 1])],
        False,
    ),
    ("bincount", lambda L, x: L.bincount(x, minlength=7), [np.array([1, 1, 3, 0])], False),
    (
        "bincount_w",
        lambda L, x, w: x.bincount(w),
        [np.array([1, 1, 3, 0]), np.array([0.5, 1, 2, 3])],
        False,
    ),
    ("histc", lambda L, x: L.histc(x, 5, -2, 2), [R.standard_normal(50)], False),
    ("take", lambda L, x, i: L.take(x, i), [A, np.array([[0, 5], [11, 3]])], True),
    (
        "take_along_dim",
        lambda L, x, i: L.take_along_dim(x, i, 1),
        [A, np.array([[0], [2], [3]])],
        True,
    ),
    ("index_fill", lambda L, x, i: x.index_fill(1, i, -1.0), [A, np.array([0, 2])], True),
    ("trapezoid", lambda L, y: L.trapezoid(y, dx=0.5), [A], True),
    ("trapezoid_x", lambda L, y, x: L.trapezoid(y, x), [A, np.sort(V)], True),
    ("cumulative_trapezoid", lambda L, y: L.cumulative_trapezoid(y), [A], True),
    ("diff", lambda L, x: L.diff(x, 2, 1), [A], True),
    (
        "diff_prepend",
        lambda L, x, p: L.diff(x, 1, 1, prepend=p),
        [A, R.standard_normal((3, 2))],
        True,
    ),
    ("logspace", lambda L: L.logspace(0, 2, 5, dtype=L.float64), [], False),
    ("vander", lambda L, x: L.vander(x, 4), [V], False),  # torch 1.13 cannot differentiate it
    ("cdist", lambda L, x, y: L.cdist(x, y), [A, R.standard_normal((5, 4))], True),
    ("cdist_p1", lambda L, x, y: L.cdist(x, y, p=1), [A, R.standard_normal((5, 4))], True),
    ("dist", lambda L, x, y: L.dist(x, y), [A, Ar], True),
    ("tril_indices", lambda L: L.tril_indices(4, 3, 1), [], False),
    ("triu_indices", lambda L: L.triu_indices(4, 5, -1), [], False),
    ("signbit", lambda L, x: L.signbit(x), [np.array([-0.0, 0.0, -1, 2])], False),
    ("clone", lambda L, x: L.clone(x), [A], True),
    ("rsub", lambda L, x: L.rsub(x, 2.0), [A], True),
]


@pytest.mark.parametrize("name,fn,arrays,grad", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn, arrays, grad):
    ta = [torch.tensor(a, requires_grad=grad and a.dtype == np.float64) for a in arrays]
    fa = [flow.tensor(a, requires_grad=grad and a.dtype == np.float64) for a in arrays]
    to, fo = fn(torch, *ta), fn(flow, *fa)
    tos = to if isinstance(to, (tuple, list)) else (to,)
    fos = fo if isinstance(fo, (tuple, list)) else (fo,)
    assert len(tos) == len(fos)
    for t, f in zip(tos, fos):
        assert tuple(f.shape) == tuple(t.shape), (f.shape, t.shape)
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    if grad:
        up = R.standard_normal(tuple(tos[0].shape))
        (tos[0] * torch.tensor(up)).sum().backward()
        (fos[0] * flow.tensor(up)).sum().backward()
        for t, f in zip(ta, fa):
            if t.grad is not None:
                np.testing.assert_allclose(
                    f.grad.detach().numpy(), t.grad.detach().numpy(), rtol=1e-8, atol=1e-10
                )


def test_errors_and_shapes():
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        flow.dot(flow.ones(2, 2), flow.ones(2))
    with pytest.raises(RuntimeError, match="inputs dimension 1 must have length 3"):
        flow.cross(flow.ones(2, 4), flow.ones(2, 4), dim=1)
    with pytest.raises(RuntimeError, match="bincount only supports"):
        flow.bincount(flow.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        flow.broadcast_shapes((3, 2), (4,))
    assert tuple(flow.broadcast_shapes((3, 1), (1, 4))) == (3, 4)
    nan_unique = flow.unique(flow.tensor([float("nan"), 1.0, float("nan")]))
    assert nan_unique.shape == (3,)  # every NaN is its own value, as in PyTorch
