"""oneflow_like.linalg against torch.linalg in float64, with gradients: the LAPACK family
(cholesky, inv, det, slogdet, solve and torch's det/logdet/slogdet/inverse/cholesky) and the
composites (norms, products, powers)."""
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
G = R.standard_normal((4, 4))  # general square matrices (either sign of det)
GB = R.standard_normal((2, 4, 4))
_X = R.standard_normal((2, 4, 4))
SPD = _X @ _X.transpose(0, 2, 1) + 4 * np.eye(4)  # symmetric positive-definite batch
SYM = _X + _X.transpose(0, 2, 1)  # symmetric, distinct eigenvalues


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
    ("matrix_power_neg3", lambda L, x: L.matrix_power(x, -3), [S + 3 * np.eye(3)]),
    ("cholesky", lambda L, x: L.cholesky(x), [SPD]),
    ("cholesky_upper", lambda L, x: L.cholesky(x, upper=True), [SPD]),
    ("cholesky_one", lambda L, x: L.cholesky(x), [SPD[1]]),
    ("inv", lambda L, x: L.inv(x), [G]),
    ("inv_batch", lambda L, x: L.inv(x), [GB]),
    ("det", lambda L, x: L.det(x), [GB]),
    ("det_one", lambda L, x: L.det(x), [G]),
    ("slogdet_logabsdet", lambda L, x: L.slogdet(x)[1], [GB]),
    ("slogdet_sign", lambda L, x: L.slogdet(x)[0] * L.slogdet(x)[1], [GB]),
    ("solve_matrix", lambda L, a, b: L.solve(a, b), [GB, R.standard_normal((2, 4, 3))]),
    ("solve_vector", lambda L, a, b: L.solve(a, b), [G, R.standard_normal(4)]),
    ("solve_vector_batch", lambda L, a, b: L.solve(a, b), [GB, R.standard_normal((2, 4))]),
    ("solve_broadcast", lambda L, a, b: L.solve(a, b), [G, R.standard_normal((3, 4, 2))]),
    ("solve_right", lambda L, a, b: L.solve(a, b, left=False), [GB, R.standard_normal((2, 5, 4))]),
    # eigh: eigenvectors are unique up to sign, so compare sign-free functions of them.
    ("eigh_values", lambda L, x: L.eigh(x)[0], [SYM]),
    ("eigh_vectors_squared", lambda L, x: L.eigh(x)[1] ** 2, [SYM]),
    ("eigh_both", lambda L, x: L.eigh(x)[0].unsqueeze(-1) * L.eigh(x)[1] ** 2, [SYM]),
    ("eigh_upper", lambda L, x: L.eigh(x, UPLO="U")[1] ** 2, [SYM]),
    ("eigh_rebuild", lambda L, x: _rebuild(L.eigh(x)), [SYM[0]]),
    ("eigvalsh", lambda L, x: L.eigvalsh(x), [SYM]),
    ("qr_tall", lambda L, x: L.qr(x)[0] + L.qr(x)[1].sum(), [R.standard_normal((2, 5, 3))]),
    ("qr_square", lambda L, x: L.qr(x).Q * L.qr(x).R, [G]),
    ("qr_r_of_tall", lambda L, x: L.qr(x).R, [R.standard_normal((6, 4))]),
    # svd: singular vectors up to sign, so U and Vh enter through sign-free products.
    ("svdvals", lambda L, x: L.svdvals(x), [B]),
    (
        "svd_tall",
        lambda L, x: _svd_gauge_free(L.svd(x.transpose(-2, -1), full_matrices=False)),
        [B],
    ),
    ("svd_wide", lambda L, x: _svd_gauge_free(L.svd(x, full_matrices=False)), [B]),
    ("svd_square", lambda L, x: _svd_gauge_free(L.svd(x)), [GB]),
    ("pinv", lambda L, x: L.pinv(x), [B]),
    ("matrix_norm_nuc", lambda L, x: L.matrix_norm(x, "nuc"), [B]),
    ("matrix_norm_2", lambda L, x: L.matrix_norm(x, 2, keepdim=True), [B]),
    ("matrix_norm_m2_dims", lambda L, x: L.matrix_norm(x, -2, dim=(0, 2)), [B]),
]


def _svd_gauge_free(usv):
    u, s, vh = usv
    return (u * u).sum(-1, keepdim=True) * s.sum(-1, keepdim=True).unsqueeze(-1) + (
        u.unsqueeze(-1) * vh.unsqueeze(-3)
    ).sum(-2)


def test_qr_modes_match_torch():
    for shape in ((5, 3), (3, 5), (2, 4, 4), (0, 3)):
        a = R.standard_normal(shape)
        for mode in ("reduced", "complete", "r"):
            q, r = flow.linalg.qr(flow.tensor(a), mode=mode)
            tq, tr = torch.linalg.qr(torch.tensor(a), mode=mode)
            assert tuple(q.shape) == tuple(tq.shape) and tuple(r.shape) == tuple(tr.shape), mode
            np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), atol=1e-12)
            np.testing.assert_allclose(q.detach().numpy(), tq.detach().numpy(), atol=1e-12)
    q, r = flow.qr(flow.tensor(R.standard_normal((4, 2))), some=False)
    assert tuple(q.shape) == (4, 4) and tuple(r.shape) == (4, 2)
    w = flow.empty(3, 7)
    flow.nn.init.orthogonal_(w)
    np.testing.assert_allclose(w.detach().numpy() @ w.detach().numpy().T, np.eye(3), atol=1e-5)
    with pytest.raises(ValueError, match="derivative"):
        x = flow.tensor(R.standard_normal((3, 5)), requires_grad=True)
        flow.linalg.qr(x)[0].sum().backward()


def _rebuild(lv):
    values, vectors = lv
    return (vectors * values.unsqueeze(-2)) @ vectors.transpose(-2, -1)


# torch's top-level names of the same kernels (functions and Tensor methods).
TOP = [
    ("det", lambda m, x: m.det(x), [GB]),
    ("logdet", lambda m, x: m.logdet(x), [SPD]),
    ("slogdet", lambda m, x: m.slogdet(x).logabsdet, [GB]),
    ("inverse", lambda m, x: m.inverse(x), [G]),
    ("cholesky", lambda m, x: m.cholesky(x), [SPD]),
    ("method_det", lambda m, x: x.det(), [GB]),
    ("method_inverse", lambda m, x: x.inverse(), [GB]),
    ("method_cholesky_upper", lambda m, x: x.cholesky(upper=True), [SPD]),
]


@pytest.mark.parametrize("name,fn,arrays", TOP, ids=[c[0] for c in TOP])
def test_top_level_matches_torch(name, fn, arrays):
    same_as_torch(lambda *x: fn(flow, *x), lambda *x: fn(torch, *x), *arrays)


def test_lapack_float32_and_special_values():
    a = GB.astype(np.float32)
    np.testing.assert_allclose(
        flow.linalg.inv(flow.tensor(a)).detach().numpy(), np.linalg.inv(a), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        flow.linalg.det(flow.tensor(a)).detach().numpy(), np.linalg.det(a), rtol=1e-4
    )
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    sign, logabs = flow.linalg.slogdet(flow.tensor(sing))
    assert sign.item() == 0.0 and logabs.item() == -math.inf  # as torch
    assert flow.linalg.det(flow.tensor(sing)).item() == 0.0
    neg = np.array([[0.0, 1.0], [1.0, 0.0]])  # det -1: logdet is NaN
    assert math.isnan(flow.logdet(flow.tensor(neg)).item())
    e = flow.linalg.inv(flow.eye(0))
    assert tuple(e.shape) == (0, 0)


def test_lapack_errors_name_the_problem():
    with pytest.raises(ValueError, match="linalg.inv: .*singular"):
        flow.linalg.inv(flow.tensor([[1.0, 2.0], [2.0, 4.0]])).detach().numpy()
    with pytest.raises(ValueError, match=r"\(Batch element 1\): .*not positive-definite.*order 2"):
        flow.linalg.cholesky(
            flow.tensor(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]))
        ).detach().numpy()
    with pytest.raises(ValueError, match="linalg.solve: .*singular"):
        flow.linalg.solve(
            flow.zeros(3, 3, dtype=flow.float64), flow.ones(3, dtype=flow.float64)
        ).detach().numpy()
    with pytest.raises(ValueError, match="square matrices, but they are 2 by 3"):
        flow.linalg.inv(flow.ones(2, 3))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        flow.linalg.det(flow.ones(3))
    with pytest.raises(TypeError, match="floating point"):
        flow.linalg.inv(flow.ones(2, 2, dtype=flow.int64))
    with pytest.raises(TypeError, match="same dtype"):
        flow.linalg.solve(flow.eye(2), flow.ones(2, dtype=flow.float64))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        flow.linalg.solve(flow.eye(3), flow.ones(2, 2))
    # the runtime stays usable after a kernel error
    assert flow.linalg.det(flow.eye(3)).item() == 1.0


def test_lapack_in_graph_equals_eager():
    class Solve(flow.nn.Graph):
        def build(self, a, b, spd):
            return flow.linalg.solve(a, b), flow.linalg.cholesky(spd), flow.linalg.slogdet(a)[1]

    a0, b0, spd = flow.tensor(GB), flow.tensor(R.standard_normal((2, 4, 3))), flow.tensor(SPD)
    x, l, ld = Solve()(a0, b0, spd)
    np.testing.assert_array_equal(x.detach().numpy(), flow.linalg.solve(a0, b0).detach().numpy())
    np.testing.assert_array_equal(l.detach().numpy(), flow.linalg.cholesky(spd).detach().numpy())
    np.testing.assert_array_equal(ld.detach().numpy(), flow.linalg.slogdet(a0)[1].detach().numpy())

    class M(flow.nn.Module):
        def forward(self, a, b):
            d = flow.linalg.det(a).reshape(-1, 1, 1)
            return flow.linalg.solve(a, b) + flow.linalg.inv(a).sum() + d

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = M()

        def build(self, a, b):
            return self.m(a, b)

    a, b = flow.tensor(GB), flow.tensor(R.standard_normal((2, 4, 3)))
    # The LAPACK ops run as kernel calls inside the graph; the fused sum around them may add in
    # another order (an ulp).
    np.testing.assert_allclose(
        G()(a, b).detach().numpy(), M()(a, b).detach().numpy(), rtol=1e-13, atol=1e-13
    )


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_linalg(name, fn, arrays):
    if name == "vecdot" and not hasattr(torch.linalg, "vecdot"):  # torch >= 2.0
        ff = lin(fn)[0]
        x, y = arrays
        np.testing.assert_allclose(
            ff(flow.tensor(x), flow.tensor(y)).detach().numpy(), (x * y).sum(-1)
        )
        return
    if name == "matrix_power_0":  # no gradient to compare (a constant)
        ff, tf = lin(fn)
        np.testing.assert_array_equal(
            ff(flow.tensor(arrays[0])).detach().numpy(),
            tf(torch.tensor(arrays[0])).detach().numpy(),
        )
        return
    same_as_torch(*lin(fn), *arrays)


def test_missing_orders_raise():
    with pytest.raises(RuntimeError, match="must be 1-D or 2-D"):
        flow.linalg.norm(flow.ones(2, 2, 2), 1)


# ---- the linalg table (oneflow_like/opdefs/linalg.def) -------------------------------------------
# Its APIs are tested above: torch's top-level functions and Tensor methods (kind fn_method) and
# the private _C._linalg_* entries flow.linalg wraps (kind private), per sig and result column.
LINALG_APIS = {
    "_linalg_cholesky": ("private", "upper", "tensor"),
    "_linalg_det": ("private", "a", "tensor"),
    "_linalg_eigh": ("private", "uplo", "eigh"),
    "_linalg_inv": ("private", "a", "tensor"),
    "_linalg_qr": ("private", "mode", "qr"),
    "_linalg_slogdet": ("private", "a", "slogdet"),
    "_linalg_solve": ("private", "solve", "tensor"),
    "_linalg_svd": ("private", "full", "svd"),
    "cholesky": ("fn_method", "upper", "tensor"),
    "det": ("fn_method", "a", "tensor"),
    "inverse": ("fn_method", "a", "tensor"),
    "logdet": ("fn_method", "a", "tensor"),
    "qr": ("fn_method", "some", "qr"),
    "slogdet": ("fn_method", "a", "slogdet"),
    "_linalg_inv_ex": ("private", "a", "inv_ex"),
    "_linalg_cholesky_ex": ("private", "upper", "cholesky_ex"),
    "_linalg_solve_ex": ("private", "solve", "solve_ex"),
    "_linalg_lu_factor_ex": ("private", "a", "lu_factor_ex"),
    "_linalg_lu_permutation": ("private", "pivots", "tensor"),
    "_linalg_solve_triangular": ("private", "triangular", "tensor"),
    "_linalg_householder_product": ("private", "tau", "tensor"),
    "orgqr": ("fn_method", "tau", "tensor"),
    "geqrf": ("fn_method", "a", "geqrf"),
    "ormqr": ("fn_method", "ormqr", "tensor"),
    "_linalg_ldl_factor_ex": ("private", "hermitian", "ldl_factor_ex"),
    "_linalg_ldl_solve": ("private", "ldl_solve", "tensor"),
}
LINALG_SIG_ARGS = {  # after the first argument (input, or A for the private entries)
    "a": [],
    "upper": ["upper"],
    "solve": ["B", "left"],
    "mode": ["mode"],
    "some": ["some"],
    "full": ["full_matrices"],
    "uplo": ["UPLO"],
    "triangular": ["B", "upper", "left", "unitriangular"],
    "tau": ["tau"],
    "ormqr": ["input2", "input3", "left", "transpose"],
    "hermitian": ["hermitian"],
    "ldl_solve": ["pivots", "B", "hermitian"],
    "pivots": ["pivots"],
}
LINALG_FIELDS = {
    "slogdet": ("sign", "logabsdet"),
    "eigh": ("eigenvalues", "eigenvectors"),
    "qr": ("Q", "R"),
    "svd": ("U", "S", "Vh"),
    "inv_ex": ("inverse", "info"),
    "cholesky_ex": ("L", "info"),
    "lu_factor_ex": ("LU", "pivots", "info"),
    "geqrf": ("a", "tau"),
    "ldl_factor_ex": ("LD", "pivots", "info"),
}


def _signature_args(fn, name):
    """The argument names in a pybind11 docstring's first line `name(a: T, *, b: T = d) -> R`."""
    line = fn.__doc__.splitlines()[0]
    assert line.startswith(name + "(") and ") -> " in line, line
    inner = line[len(name) + 1 : line.rindex(") -> ")]
    return [p.split(":")[0].strip() for p in inner.split(", ")]


def test_every_linalg_api_is_declared_once_with_the_table_defaults():
    table = flow._C._linalg_table()
    apis = {a["name"]: (a["kind"], a["sig"], a["result"]) for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == LINALG_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"]) == 18
    assert all(name.startswith("linalg_") for name in ops)
    assert ops["linalg_qr"]["attrs"] == {"complete": False}
    assert ops["linalg_svd"]["attrs"] == {"full_matrices": True}
    assert ops["linalg_solve_triangular"]["attrs"] == {"upper": False, "unitriangular": False}
    assert ops["linalg_ormqr"]["attrs"] == {"left": True, "transpose": False}
    assert ops["linalg_ldl_factor_ex"]["attrs"] == {"hermitian": False}
    for name in ("linalg_inv", "linalg_cholesky", "linalg_slogdet", "linalg_solve", "linalg_eigh"):
        assert ops[name]["attrs"] == {}
    # ops PyTorch has no derivative for raise in backward; the permutation has no gradient at all
    for name in ("linalg_geqrf", "linalg_ormqr", "linalg_ldl_factor_ex", "linalg_ldl_solve"):
        assert ops[name]["grad"].startswith("Unsupported") and ops[name]["save"] == "none"
    assert ops["linalg_lu_permutation"]["grad"] == "nullptr"
    # the gradients read the outputs, but slogdet's (the input's inverse) and solve's (both)
    assert ops["linalg_slogdet"]["save"] == "inputs" and ops["linalg_solve"]["save"] == "both"
    assert ops["linalg_svd"]["save"] == "outputs" and ops["linalg_svd"]["out"] == "svd"
    a = flow.tensor(SPD[0])
    for name, (kind, sig, result) in LINALG_APIS.items():
        first = "input" if kind == "fn_method" else "A"
        args = LINALG_SIG_ARGS[sig]
        assert _signature_args(getattr(flow._C, name), name) == [first] + args
        if kind == "fn_method":
            assert _signature_args(getattr(flow.Tensor, name), name) == ["self"] + args
        if sig in (
            "a",
            "upper",
            "mode",
            "some",
            "full",
            "uplo",
            "hermitian",
        ):  # the result column's type
            r = getattr(flow._C, name)(a)
            if result == "tensor":
                assert isinstance(r, flow.Tensor), name
            else:
                # torch.return_types' type: the name without its underscore (_linalg_qr ->
                # linalg_qr, qr -> qr), the fields the result column gives
                assert type(r) is getattr(flow.return_types, name.lstrip("_")), name
                assert r._fields == LINALG_FIELDS[result], name
    # the defaults of op attributes are the structs'
    complete, full = (
        ops["linalg_qr"]["attrs"]["complete"],
        ops["linalg_svd"]["attrs"]["full_matrices"],
    )
    assert f"full_matrices: bool = {full}" in flow._C._linalg_svd.__doc__
    assert ("mode: str = 'complete'" if complete else "mode: str = 'reduced'") in (
        flow._C._linalg_qr.__doc__
    )
    assert f"some: bool = {not complete}" in flow._C.qr.__doc__
    assert f"some: bool = {not complete}" in flow.Tensor.qr.__doc__
    b = flow.tensor(np.random.default_rng(1).standard_normal((3, 5)))
    assert tuple(flow._C._linalg_svd(b).Vh.shape) == ((5, 5) if full else (3, 5))
    assert tuple(flow._C.qr(b.t()).Q.shape) == ((5, 5) if complete else (5, 3))


def test_linalg_api_errors_name_the_op():
    with pytest.raises(TypeError, match=r"_linalg_solve\(\): incompatible function arguments"):
        flow._C._linalg_solve(flow.eye(2), 1.0)
    with pytest.raises(TypeError, match=r"cholesky\(\): incompatible function arguments"):
        flow.eye(2).cholesky([1])
    with pytest.raises(ValueError, match=r"linalg\.qr: mode must be 'reduced', 'complete' or 'r'"):
        flow._C._linalg_qr(flow.eye(2), "full")
    with pytest.raises(ValueError, match=r"linalg\.eigh: UPLO must be 'L' or 'U'"):
        flow._C._linalg_eigh(flow.eye(2), "X")
    with pytest.raises(ValueError, match=r"logdet: A must be batches of square matrices"):
        flow.zeros(2, 3).logdet()
