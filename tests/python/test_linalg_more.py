"""torch.linalg's factorizations and solvers beyond test_linalg.py against torch in float64 (and
float32), with gradients compared to torch's autograd: lu_factor(_ex), lu, lu_solve,
solve_triangular, householder_product, inv_ex/cholesky_ex/solve_ex, ldl_factor/ldl_solve, lstsq,
matrix_rank, cond, tensorinv, tensorsolve, vander, matrix_exp, matmul, LinAlgError; the top-level
torch.lu, lu_solve, lu_unpack, geqrf, orgqr, ormqr, nuclear_norm, frobenius_norm, svd_lowrank,
pca_lowrank and the Tensor methods; the errors; eager == nn.Graph."""
import math

import numpy as np
import pytest
import torch
from op_testing import same_as_torch

import oneflow_like as flow

R = np.random.default_rng(7)
G = R.standard_normal((4, 4))
GB = R.standard_normal((2, 3, 4, 4))
TALL = R.standard_normal((2, 6, 3))
WIDE = R.standard_normal((2, 3, 5))
RHS = R.standard_normal((2, 3, 4, 2))
TRI = np.tril(R.standard_normal((2, 4, 4))) + 3 * np.eye(4)  # well conditioned
TRIU = np.triu(R.standard_normal((2, 4, 4))) + 3 * np.eye(4)
_X = R.standard_normal((2, 4, 4))
SPD = _X @ _X.transpose(0, 2, 1) + 4 * np.eye(4)
SYM = _X + _X.transpose(0, 2, 1)
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def lin(fn):
    """fn(linalg_module, *tensors) as a (flow, torch) pair."""
    return (lambda *x: fn(flow.linalg, *x)), (lambda *x: fn(torch.linalg, *x))


def top(fn):
    """fn(top_level_module, *tensors) as a (flow, torch) pair."""
    return (lambda *x: fn(flow, *x)), (lambda *x: fn(torch, *x))


def _hh_inputs():
    """Householder vectors and taus from geqrf of a tall batch (so the product is orthonormal),
    with the taus perturbed so the gradient is general."""
    a, tau = torch.geqrf(torch.tensor(TALL))
    return [a.detach().numpy(), tau.detach().numpy() + 0.1 * R.standard_normal(tau.shape)]


# (name, fn(module, *tensors), float64 inputs): outputs and input gradients equal torch's.
CASES = [
    ("lu_factor_LU", lambda L, x: L.lu_factor(x).LU, [G]),
    ("lu_factor_batch", lambda L, x: L.lu_factor(x).LU, [GB]),
    ("lu_factor_ex_LU", lambda L, x: L.lu_factor_ex(x).LU, [GB]),
    ("lu_factor_tall", lambda L, x: L.lu_factor(x).LU, [TALL]),
    ("lu_factor_wide", lambda L, x: L.lu_factor(x).LU, [WIDE]),
    ("lu_L_tall", lambda L, x: L.lu(x).L, [TALL]),
    ("lu_U_wide", lambda L, x: L.lu(x).U, [WIDE]),
    ("lu_L", lambda L, x: L.lu(x).L, [GB]),
    ("lu_U", lambda L, x: L.lu(x).U, [GB]),
    ("lu_solve", lambda L, a, b: L.lu_solve(*L.lu_factor(a), b), [GB, RHS]),
    ("lu_solve_adjoint", lambda L, a, b: L.lu_solve(*L.lu_factor(a), b, adjoint=True), [GB, RHS]),
    (
        "lu_solve_right",
        lambda L, a, b: L.lu_solve(*L.lu_factor(a), b.transpose(-2, -1), left=False),
        [GB, RHS],
    ),
    (
        "lu_solve_right_adjoint",
        lambda L, a, b: L.lu_solve(*L.lu_factor(a), b.transpose(-2, -1), left=False, adjoint=True),
        [G, RHS[0, 0]],
    ),
    ("lu_solve_broadcast", lambda L, a, b: L.lu_solve(*L.lu_factor(a), b), [G, RHS]),
    ("solve_tri_lower", lambda L, a, b: L.solve_triangular(a, b, upper=False), [TRI, RHS[:, 0]]),
    ("solve_tri_upper", lambda L, a, b: L.solve_triangular(a, b, upper=True), [TRIU, RHS[:, 0]]),
    (
        "solve_tri_unit",
        lambda L, a, b: L.solve_triangular(a, b, upper=False, unitriangular=True),
        [TRI, RHS[:, 0]],
    ),
    (
        "solve_tri_right_upper",
        lambda L, a, b: L.solve_triangular(a, b, upper=True, left=False),
        [TRIU, RHS[:, 0].transpose(0, 2, 1)],
    ),
    (
        "solve_tri_right_unit_lower",
        lambda L, a, b: L.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        [TRI, RHS[:, 0].transpose(0, 2, 1)],
    ),
    (
        "solve_tri_full_matrix_reads_one_triangle",
        lambda L, a, b: L.solve_triangular(a, b, upper=True),
        [GB[0] + 4 * np.eye(4), RHS[0]],
    ),
    ("solve_tri_broadcast", lambda L, a, b: L.solve_triangular(a, b, upper=False), [TRI[0], RHS]),
    ("householder_product", lambda L, a, t: L.householder_product(a, t), _hh_inputs()),
    (
        "householder_product_k_lt_n",
        lambda L, a, t: L.householder_product(a, t[..., :2]),
        _hh_inputs(),
    ),
    ("inv_ex", lambda L, x: L.inv_ex(x).inverse, [GB]),
    ("cholesky_ex", lambda L, x: L.cholesky_ex(x).L, [SPD]),
    ("cholesky_ex_upper", lambda L, x: L.cholesky_ex(x, upper=True).L, [SPD]),
    ("solve_ex", lambda L, a, b: L.solve_ex(a, b).result, [GB, RHS]),
    ("solve_ex_left_false", lambda L, a, b: L.solve_ex(a, b, left=False).result, [G, RHS[0, 0].T]),
    (
        "lstsq_gels_tall",
        lambda L, a, b: L.lstsq(a, b, driver="gels").solution,
        [TALL, TALL[..., :2] + 1],
    ),
    (
        "lstsq_gels_wide",
        lambda L, a, b: L.lstsq(a, b, driver="gels").solution,
        [WIDE, WIDE[..., :2]],
    ),
    ("lstsq_gelsy", lambda L, a, b: L.lstsq(a, b).solution, [TALL, TALL[..., :2] + 1]),
    (
        "lstsq_gelsd",
        lambda L, a, b: L.lstsq(a, b, driver="gelsd").solution,
        [TALL, TALL[..., 1:] * 2],
    ),
    ("lstsq_gelss_square", lambda L, a, b: L.lstsq(a, b, driver="gelss").solution, [GB, RHS]),
    ("cond_none", lambda L, x: L.cond(x), [GB]),
    ("cond_2_wide", lambda L, x: L.cond(x, 2), [WIDE]),
    ("cond_neg2", lambda L, x: L.cond(x, -2), [GB]),
    ("tensorinv", lambda L, x: L.tensorinv(x, ind=2), [R.standard_normal((4, 6, 8, 3))]),
    ("tensorinv_ind1", lambda L, x: L.tensorinv(x, ind=1), [R.standard_normal((6, 2, 3))]),
    (
        "tensorsolve",
        lambda L, a, b: L.tensorsolve(a, b),
        [R.standard_normal((2, 3, 6)), R.standard_normal((2, 3))],
    ),
    (
        "tensorsolve_dims",
        lambda L, a, b: L.tensorsolve(a, b, dims=(0,)),
        [R.standard_normal((6, 2, 3)), R.standard_normal((2, 3))],
    ),
    ("vander", lambda L, x: L.vander(x), [R.standard_normal((2, 4))]),
    ("vander_N", lambda L, x: L.vander(x, N=6), [R.standard_normal(3)]),
    ("matrix_exp", lambda L, x: L.matrix_exp(x), [GB * 0.5]),
    ("matmul", lambda L, a, b: L.matmul(a, b), [GB, RHS]),
]
TOP_CASES = [
    ("lu", lambda T, x: T.lu(x)[0], [GB]),
    ("lu_solve", lambda T, a, b: T.lu_solve(b, *T.lu(a)), [GB, RHS]),
    ("lu_unpack_L", lambda T, x: T.lu_unpack(*T.linalg.lu_factor(x))[1], [GB]),
    ("lu_unpack_U", lambda T, x: T.lu_unpack(*T.linalg.lu_factor(x))[2], [GB]),
    ("lu_unpack_P", lambda T, x: T.lu_unpack(*T.linalg.lu_factor(x))[0] + x, [GB]),
    ("tensor_lu", lambda T, x: x.lu()[0], [G]),
    ("tensor_lu_solve", lambda T, a, b: b.lu_solve(*a.lu()), [GB, RHS]),
    ("orgqr", lambda T, a, t: T.orgqr(a, t), _hh_inputs()),
    ("tensor_orgqr", lambda T, a, t: a.orgqr(t), _hh_inputs()),
    ("nuclear_norm", lambda T, x: T.nuclear_norm(x), [G]),
    ("nuclear_norm_dim", lambda T, x: T.nuclear_norm(x, dim=(0, 2), keepdim=True), [TALL]),
    ("frobenius_norm", lambda T, x: T.frobenius_norm(x, dim=(-2, -1)), [GB]),
    ("frobenius_norm_keepdim", lambda T, x: T.frobenius_norm(x, dim=(0, 1), keepdim=True), [TALL]),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_linalg_matches_torch_float64_with_gradients(name, fn, arrays):
    same_as_torch(*lin(fn), *arrays, tol=1e-8)


@pytest.mark.parametrize("name,fn,arrays", TOP_CASES, ids=[c[0] for c in TOP_CASES])
def test_top_level_matches_torch_float64_with_gradients(name, fn, arrays):
    same_as_torch(*top(fn), *arrays, tol=1e-8)


FLOAT32 = [
    ("lu_factor", lambda L, x: L.lu_factor(x).LU, [GB]),
    ("lu_solve", lambda L, a, b: L.lu_solve(*L.lu_factor(a), b), [GB, RHS]),
    ("solve_triangular", lambda L, a, b: L.solve_triangular(a, b, upper=False), [TRI, RHS[:, 0]]),
    ("householder_product", lambda L, a, t: L.householder_product(a, t), _hh_inputs()),
    ("lstsq", lambda L, a, b: L.lstsq(a, b).solution, [TALL, TALL[..., :2] + 1]),
    ("cond", lambda L, x: L.cond(x), [GB]),
    ("inv_ex", lambda L, x: L.inv_ex(x).inverse, [GB]),
]


@pytest.mark.parametrize("name,fn,arrays", FLOAT32, ids=[c[0] for c in FLOAT32])
def test_float32_matches_torch(name, fn, arrays):
    ff, tf = lin(fn)
    fs = [flow.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    of, ot = ff(*fs), tf(*ts)
    assert of.dtype == flow.float32
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=2e-4, atol=2e-4)
    of.sum().backward()
    ot.sum().backward()
    for f, t in zip(fs, ts):
        np.testing.assert_allclose(
            f.grad.detach().numpy(), t.grad.detach().numpy(), rtol=2e-3, atol=2e-3
        )


@pytest.mark.parametrize("p", ["fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond_through_the_inverse_matches_torch(p):
    """Values against torch.linalg.cond; gradients against torch's autograd of the same formula
    (torch 1.13's own cond backward fails on an in-place update)."""
    np.testing.assert_allclose(
        flow.linalg.cond(flow.tensor(GB), p).detach().numpy(),
        torch.linalg.cond(torch.tensor(GB), p).detach().numpy(),
        rtol=1e-10,
    )
    same_as_torch(
        lambda x: flow.linalg.cond(x, p),
        lambda x: torch.linalg.matrix_norm(x, p) * torch.linalg.matrix_norm(torch.linalg.inv(x), p),
        GB,
        tol=1e-8,
    )


def test_lu_factor_pivots_info_and_unpack_match_torch():
    for a in (G, GB, TALL, WIDE):
        f, t = flow.linalg.lu_factor_ex(flow.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
        np.testing.assert_allclose(
            f.LU.detach().numpy(), t.LU.detach().numpy(), rtol=1e-12, atol=1e-12
        )
        assert f.pivots.dtype == flow.int32 and f.info.dtype == flow.int32
        np.testing.assert_array_equal(f.pivots.detach().numpy(), t.pivots.detach().numpy())
        np.testing.assert_array_equal(f.info.detach().numpy(), t.info.detach().numpy())
        P, L, U = flow.linalg.lu(flow.tensor(a))
        tP, tL, tU = torch.linalg.lu(torch.tensor(a))
        for x, y in ((P, tP), (L, tL), (U, tU)):
            np.testing.assert_allclose(
                x.detach().numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-12
            )
        np.testing.assert_allclose((P @ L @ U).detach().numpy(), a, rtol=1e-12, atol=1e-12)
    # a singular matrix factorises with info naming the zero pivot
    r = flow.linalg.lu_factor_ex(flow.tensor(SINGULAR))
    assert r.info.item() == torch.linalg.lu_factor_ex(torch.tensor(SINGULAR)).info.item() == 2
    # lu_unpack's parts not asked for are empty
    P, L, U = flow.lu_unpack(*flow.linalg.lu_factor(flow.tensor(G)), unpack_data=False)
    assert tuple(L.shape) == tuple(U.shape) == (0,) and tuple(P.shape) == (4, 4)
    LU, piv, infos = flow.lu(flow.tensor(GB), get_infos=True)
    assert tuple(infos.shape) == (2, 3) and not infos.detach().numpy().any()


def test_ex_info_and_check_errors():
    bad = np.stack([np.eye(2), SINGULAR])
    r = flow.linalg.inv_ex(flow.tensor(bad))
    np.testing.assert_array_equal(
        r.info.detach().numpy(), torch.linalg.inv_ex(torch.tensor(bad)).info.detach().numpy()
    )
    notpd = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])
    r = flow.linalg.cholesky_ex(flow.tensor(notpd))
    np.testing.assert_array_equal(
        r.info.detach().numpy(), torch.linalg.cholesky_ex(torch.tensor(notpd)).info.detach().numpy()
    )
    r = flow.linalg.solve_ex(flow.tensor(bad), flow.ones(2, 2, 1, dtype=flow.float64))
    assert r.info.detach().numpy().tolist() == [0, 2]
    with pytest.raises(flow.linalg.LinAlgError, match=r"linalg\.inv_ex: \(Batch element 1\): "):
        flow.linalg.inv_ex(flow.tensor(bad), check_errors=True)
    with pytest.raises(
        flow.linalg.LinAlgError, match=r"cholesky_ex: \(Batch element 1\): .*order 2"
    ):
        flow.linalg.cholesky_ex(flow.tensor(notpd), check_errors=True)
    with pytest.raises(flow.linalg.LinAlgError, match=r"solve_ex: \(Batch element 1\): .*singular"):
        flow.linalg.solve_ex(
            flow.tensor(bad), flow.ones(2, 2, 1, dtype=flow.float64), check_errors=True
        )


def test_singular_input_raises_linalg_error_as_torch():
    assert issubclass(flow.linalg.LinAlgError, RuntimeError)
    s = flow.tensor(SINGULAR)
    for fn in (
        flow.linalg.inv,
        flow.linalg.lu_factor,
        lambda a: flow.linalg.solve(a, flow.ones(2, dtype=flow.float64)),
        lambda a: flow.lu(a),
        lambda a: flow.linalg.tensorinv(a, ind=1),
        flow.linalg.cholesky,
    ):
        with pytest.raises(flow.linalg.LinAlgError):
            fn(s)
    with pytest.raises(
        flow.linalg.LinAlgError, match=r"lu_factor: \(Batch element 1\): U\[2,2\] is zero"
    ):
        flow.linalg.lu_factor(flow.tensor(np.stack([np.eye(2), SINGULAR])))
    with pytest.raises(
        flow.linalg.LinAlgError, match=r"^linalg\.inv: The diagonal element 2 is zero"
    ):
        flow.linalg.inv(s)
    # torch's cond of a singular matrix in a norm through the inverse is inf
    assert (
        flow.linalg.cond(s, "fro").item()
        == math.inf
        == torch.linalg.cond(torch.tensor(SINGULAR), "fro").item()
    )


def test_solve_triangular_only_reads_its_triangle_and_zero_diagonal_gives_inf():
    a = flow.tensor(GB[0, 0] + 4 * np.eye(4))
    b = flow.tensor(RHS[0, 0])
    x = flow.linalg.solve_triangular(a, b, upper=True)
    np.testing.assert_allclose(
        x.detach().numpy(),
        np.linalg.solve(np.triu(a.detach().numpy()), b.detach().numpy()),
        rtol=1e-12,
    )
    z = flow.tensor(np.triu(np.ones((2, 2))) - np.diag([1.0, 0.0]))
    out = flow.linalg.solve_triangular(z, flow.ones(2, 1, dtype=flow.float64), upper=True)
    assert not np.isfinite(out.detach().numpy()).all()


def test_geqrf_orgqr_ormqr_match_torch():
    for a in (TALL, G):
        fa, ftau = flow.geqrf(flow.tensor(a))
        ta, ttau = torch.geqrf(torch.tensor(a))
        np.testing.assert_allclose(fa.detach().numpy(), ta.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(
            ftau.detach().numpy(), ttau.detach().numpy(), rtol=1e-12, atol=1e-12
        )
        q = flow.orgqr(fa, ftau)
        np.testing.assert_allclose(
            q.detach().numpy(), torch.linalg.qr(torch.tensor(a)).Q.detach().numpy(), atol=1e-12
        )
        m = a.shape[-2]
        for left in (True, False):
            for transpose in (True, False):
                c = R.standard_normal((*a.shape[:-2], m, 2) if left else (*a.shape[:-2], 2, m))
                f = flow.ormqr(fa, ftau, flow.tensor(c), left, transpose)
                t = torch.ormqr(ta, ttau, torch.tensor(c), left, transpose)
                np.testing.assert_allclose(
                    f.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12
                )
                g = fa.ormqr(ftau, flow.tensor(c), left=left, transpose=transpose)
                np.testing.assert_array_equal(g.detach().numpy(), f.detach().numpy())
    r = flow.tensor(G).geqrf()
    assert type(r).__name__ == "geqrf" and r._fields == ("a", "tau")


def test_ldl_factor_and_solve_match_torch():
    for a in (SYM, SPD, SYM[0]):
        f, t = flow.linalg.ldl_factor(flow.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
        np.testing.assert_allclose(
            f.LD.detach().numpy(), t.LD.detach().numpy(), rtol=1e-12, atol=1e-12
        )
        np.testing.assert_array_equal(f.pivots.detach().numpy(), t.pivots.detach().numpy())
        b = R.standard_normal((*a.shape[:-1], 3))
        x = flow.linalg.ldl_solve(f.LD, f.pivots, flow.tensor(b))
        np.testing.assert_allclose(
            x.detach().numpy(), np.linalg.solve(a, b), rtol=1e-10, atol=1e-10
        )
        tx = torch.linalg.ldl_solve(t.LD, t.pivots, torch.tensor(b))
        np.testing.assert_allclose(x.detach().numpy(), tx.detach().numpy(), rtol=1e-12, atol=1e-12)
    r = flow.linalg.ldl_factor_ex(flow.tensor(SYM))
    assert r.info.detach().numpy().tolist() == [0, 0]
    # float32
    f = flow.linalg.ldl_factor(flow.tensor(SYM.astype(np.float32)))
    t = torch.linalg.ldl_factor(torch.tensor(SYM.astype(np.float32)))
    np.testing.assert_allclose(f.LD.detach().numpy(), t.LD.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_backward_of_ops_torch_cannot_differentiate_raises():
    x = flow.tensor(TALL, requires_grad=True)
    a, tau = flow.geqrf(x)
    with pytest.raises(RuntimeError, match=r"\[linalg_geqrf\] backward is not supported"):
        a.sum().backward()
    s = flow.tensor(SYM, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[linalg_ldl_factor_ex\] backward is not supported"):
        flow.linalg.ldl_factor(s).LD.sum().backward()
    c = flow.tensor(R.standard_normal((2, 6, 2)), requires_grad=True)
    fa, ftau = flow.geqrf(flow.tensor(TALL))
    with pytest.raises(RuntimeError, match=r"\[linalg_ormqr\] backward is not supported"):
        flow.ormqr(fa, ftau, c).sum().backward()


def test_lstsq_outputs_match_torch_per_driver():
    cases = [(TALL, TALL[..., :2] + 1), (WIDE, WIDE[..., :2]), (GB, RHS)]
    for a, b in cases:
        for driver in ("gels", "gelsy", "gelsd", "gelss"):
            f = flow.linalg.lstsq(flow.tensor(a), flow.tensor(b), driver=driver)
            t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
            assert f._fields == ("solution", "residuals", "rank", "singular_values")
            for x, y in zip(f, t):
                assert tuple(x.shape) == tuple(y.shape), (driver, a.shape, x.shape, y.shape)
                assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
                np.testing.assert_allclose(
                    x.detach().numpy(), y.detach().numpy(), rtol=1e-8, atol=1e-8
                )
    # rank-deficient: the rank and the minimum-norm solution
    a = TALL[0] @ np.diag([1.0, 1.0, 0.0])
    f = flow.linalg.lstsq(flow.tensor(a), flow.tensor(TALL[0, :, :1]), driver="gelsd")
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(TALL[0, :, :1]), driver="gelsd")
    assert f.rank.item() == t.rank.item() == 2
    np.testing.assert_allclose(f.solution.detach().numpy(), t.solution.detach().numpy(), atol=1e-10)
    # a vector right-hand side (a batch of them: B's shape is A's without the last dim)
    v = R.standard_normal((2, 6))
    f = flow.linalg.lstsq(flow.tensor(TALL), flow.tensor(v)).solution
    assert tuple(f.shape) == (2, 3)
    for i in range(2):
        np.testing.assert_allclose(
            f.detach().numpy()[i], np.linalg.lstsq(TALL[i], v[i], rcond=None)[0], atol=1e-10
        )


def test_matrix_rank_matches_torch():
    low = R.standard_normal((3, 5, 2)) @ R.standard_normal((3, 2, 4))
    for a, kw in [
        (low, {}),
        (GB, {}),
        (low, {"atol": 1e-3}),
        (low, {"rtol": 0.5}),
        (low, {"atol": 0.1, "rtol": 0.01}),
        (SYM, {"hermitian": True}),
        (np.zeros((2, 3)), {}),
    ]:
        f = flow.linalg.matrix_rank(flow.tensor(a), **kw)
        t = torch.linalg.matrix_rank(torch.tensor(a), **kw)
        assert f.dtype == flow.int64
        np.testing.assert_array_equal(f.detach().numpy(), t.detach().numpy())
    atol = np.array([1e-3, 100.0, 1e-3])
    f = flow.linalg.matrix_rank(flow.tensor(low), atol=flow.tensor(atol))
    t = torch.linalg.matrix_rank(torch.tensor(low), atol=torch.tensor(atol))
    np.testing.assert_array_equal(f.detach().numpy(), t.detach().numpy())


def test_lowrank_svd_and_pca_recover_low_rank_matrices():
    flow.manual_seed(0)
    a = R.standard_normal((2, 8, 3)) @ R.standard_normal((2, 3, 6))
    for x in (a, a.transpose(0, 2, 1)):
        U, S, V = flow.svd_lowrank(flow.tensor(x), q=4)
        assert tuple(U.shape) == (2, x.shape[1], 4) and tuple(V.shape) == (2, x.shape[2], 4)
        rec = (U * S.unsqueeze(-2)) @ V.transpose(-2, -1)
        np.testing.assert_allclose(rec.detach().numpy(), x, atol=1e-9)
        np.testing.assert_allclose(
            S.detach().numpy()[..., :3],
            torch.linalg.svdvals(torch.tensor(x)).detach().numpy()[..., :3],
            rtol=1e-9,
        )
    U, S, V = flow.pca_lowrank(flow.tensor(a[0]), q=3)
    centered = a[0] - a[0].mean(0, keepdims=True)
    np.testing.assert_allclose(
        S.detach().numpy(), np.linalg.svd(centered, compute_uv=False)[:3], rtol=1e-9
    )
    # gradients flow through the randomized sketch and the small SVD
    x = flow.tensor(a[0], requires_grad=True)
    flow.svd_lowrank(x, q=3)[1].sum().backward()
    assert x.grad is not None and np.isfinite(x.grad.detach().numpy()).all()


def test_errors_name_the_function_and_shapes():
    with pytest.raises(ValueError, match=r"linalg\.solve_triangular: A must be batches of square"):
        flow.linalg.solve_triangular(flow.ones(2, 3), flow.ones(2, 1), upper=True)
    with pytest.raises(
        ValueError, match=r"solve_triangular: Incompatible shapes .*\[3,3\].*\[2,1\]"
    ):
        flow.linalg.solve_triangular(flow.eye(3), flow.ones(2, 1), upper=True)
    with pytest.raises(ValueError, match=r"linalg\.solve_triangular"):
        flow.linalg.solve_triangular(flow.eye(3).expand(2, 3, 3), flow.ones(3, 3, 1), upper=True)
    with pytest.raises(
        TypeError, match=r"solve_triangular: Expected A and B to have the same dtype"
    ):
        flow.linalg.solve_triangular(flow.eye(2), flow.ones(2, 1, dtype=flow.float64), upper=True)
    with pytest.raises(TypeError, match=r"linalg\.lu_factor: Expected a floating point"):
        flow.linalg.lu_factor(flow.ones(2, 2, dtype=flow.int64))
    with pytest.raises(ValueError, match=r"linalg\.lu_factor: .*at least 2 dimensions"):
        flow.linalg.lu_factor(flow.ones(3))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        flow.linalg.lu_factor(flow.eye(2), pivot=False)
    with pytest.raises(
        ValueError, match=r"householder_product: input\.shape\[-2\] must be greater"
    ):
        flow.linalg.householder_product(flow.ones(2, 3), flow.ones(2))
    with pytest.raises(ValueError, match=r"householder_product: Expected tau of shape"):
        flow.linalg.householder_product(flow.ones(3, 2), flow.ones(3))
    with pytest.raises(ValueError, match=r"ormqr: input\.shape\[-2\] must equal other"):
        flow.ormqr(flow.ones(3, 2), flow.ones(2), flow.ones(4, 2))
    with pytest.raises(ValueError, match=r"linalg\.ldl_factor: A must be batches of square"):
        flow.linalg.ldl_factor(flow.ones(2, 3))
    with pytest.raises(TypeError, match=r"ldl_solve: Expected pivots to be int32"):
        flow.linalg.ldl_solve(flow.eye(2), flow.ones(2), flow.ones(2, 1))
    with pytest.raises(RuntimeError, match=r"lu_solve: Incompatible shapes"):
        lu, piv = flow.linalg.lu_factor(flow.eye(3))
        flow.linalg.lu_solve(lu, piv, flow.ones(2, 1))
    with pytest.raises(ValueError, match=r"lu_unpack: Expected pivots of shape"):
        flow.lu_unpack(flow.eye(3), flow.ones(2, dtype=flow.int32))
    with pytest.raises(RuntimeError, match=r"lstsq: parameter `driver` should be one of"):
        flow.linalg.lstsq(flow.eye(2), flow.ones(2, 1), driver="gelsx")
    with pytest.raises(RuntimeError, match=r"lstsq: input\.size\(-2\) should match"):
        flow.linalg.lstsq(flow.eye(2), flow.ones(3, 1))
    with pytest.raises(RuntimeError, match=r"linalg\.cond got an invalid norm type: 3"):
        flow.linalg.cond(flow.eye(2), 3)
    with pytest.raises(
        RuntimeError, match=r"linalg\.cond\(ord='fro'\): A must be batches of square"
    ):
        flow.linalg.cond(flow.ones(2, 3), "fro")
    with pytest.raises(RuntimeError, match=r"tensorinv: Expected self to satisfy"):
        flow.linalg.tensorinv(flow.ones(2, 3, 4), ind=1)
    with pytest.raises(RuntimeError, match=r"tensorsolve: Expected self to satisfy"):
        flow.linalg.tensorsolve(flow.ones(2, 3, 4), flow.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"vander: N must be greater than 1"):
        flow.linalg.vander(flow.ones(3), N=1)


def test_eager_equals_graph_for_lu_factor_solve_triangular_lstsq():
    class Lin(flow.nn.Graph):
        def build(self, a, tri, b):
            lu, piv = flow.linalg.lu_factor(a)
            x = flow.linalg.solve_triangular(tri, b, upper=False)
            y = flow.linalg.lstsq(a, b).solution
            z = flow.linalg.lu_solve(lu, piv, b)
            return lu, piv, x, y, z, flow.linalg.inv(a)

    a, tri, b = flow.tensor(GB[0]), flow.tensor(TRI[0]), flow.tensor(RHS[0])
    lazy = Lin()(a, tri, b)
    lu, piv = flow.linalg.lu_factor(a)
    eager = (
        lu,
        piv,
        flow.linalg.solve_triangular(tri, b, upper=False),
        flow.linalg.lstsq(a, b).solution,
        flow.linalg.lu_solve(lu, piv, b),
        flow.linalg.inv(a),
    )
    for x, y in zip(lazy, eager):
        assert x.dtype == y.dtype
        # kernel calls give the same bits; the composed lstsq may fuse in another order
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(lazy[0].detach().numpy(), eager[0].detach().numpy())
    np.testing.assert_array_equal(lazy[2].detach().numpy(), eager[2].detach().numpy())
