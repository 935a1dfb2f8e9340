"""Complex linear algebra (issue 19): matmul / mm / bmm / mv / dot / vdot / linear / einsum through
one BLAS cgemm / zgemm (complex_bmm), the LAPACK family's c* / z* paths (solve, inv, det, slogdet,
cholesky, qr, svd, eigh, lstsq, pinv, norms, matrix_exp), the ordering ops' errors and the
triangle / diagonal ops, against NumPy complex128, finite differences in float64 of the real and
imaginary parts (torch's convention: z.grad = dL/d(re z) + i dL/d(im z)) and torch 1.13."""

import re

import numpy as np
import pytest

import oneflow_like as flow
from test_complex import fd_grad  # central differences of the real and imaginary parts

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")
RNG = np.random.default_rng(1919)


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def tol(dt):
    return (
        dict(rtol=2e-4, atol=2e-4)
        if dt in (np.complex64, flow.complex64)
        else dict(rtol=1e-10, atol=1e-10)
    )


def hermitian_pd(*batch, n=4):
    a = crand(*batch, n, n)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


def weights(shape, seed):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape) + 1j * r.standard_normal(shape)


def wsum(lib, t, w):
    """A real loss of a (complex or real) tensor: sum(re(conj(w) t)) through view_as_real."""
    if t.dtype.is_complex:
        if hasattr(t, "resolve_conj"):  # torch: a lazily conjugated view has no real view
            t = t.resolve_conj()
        tr = lib.view_as_real(t)
        wr, wi = lib.tensor(np.asarray(w.real, np.float64)), lib.tensor(
            np.asarray(w.imag, np.float64)
        )
        return (tr[..., 0] * wr + tr[..., 1] * wi).sum()
    return (t * lib.tensor(np.asarray(w.real, np.float64))).sum()


def check_grad(f, *arrays, rtol=1e-5, atol=1e-6):
    """f(lib, *tensors) -> tuple of outputs; loss = sum of wsum over them. Autograd of each input
    against central differences."""

    def loss_np(*xs):
        ts = [flow.tensor(x) for x in xs]
        outs = f(flow, *ts)
        return sum(
            float(wsum(flow, o, weights(tuple(o.shape), k)).numpy()) for k, o in enumerate(outs)
        )

    ts = [flow.tensor(a, requires_grad=True) for a in arrays]
    outs = f(flow, *ts)
    total = None
    for k, o in enumerate(outs):
        term = wsum(flow, o, weights(tuple(o.shape), k))
        total = term if total is None else total + term
    total.backward()
    for i, (a, t) in enumerate(zip(arrays, ts)):

        def li(z, i=i):
            xs = list(arrays)
            xs[i] = z
            return loss_np(*xs)

        np.testing.assert_allclose(t.grad.numpy(), fd_grad(li, a.copy()), rtol=rtol, atol=atol)
    return [t.grad.numpy() for t in ts]


def torch_grads(f, *arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    outs = f(torch, *ts)
    total = sum(wsum(torch, o, weights(tuple(o.shape), k)) for k, o in enumerate(outs))
    total.backward()
    return [t.grad.resolve_conj().numpy() for t in ts]


# ---- matmul family: one complex GEMM -----------------------------------------------------------

MATMUL = [
    ("mm", lambda L, a, b: L.mm(a, b), (3, 4), (4, 5)),
    ("bmm", lambda L, a, b: L.bmm(a, b), (2, 3, 4), (2, 4, 5)),
    ("matmul_fold", lambda L, a, b: L.matmul(a, b), (2, 3, 4), (4, 5)),
    ("matmul_2d_3d", lambda L, a, b: L.matmul(a, b), (3, 4), (2, 4, 5)),
    ("matmul_bcast", lambda L, a, b: L.matmul(a, b), (2, 1, 3, 4), (1, 3, 4, 2)),
    ("mv", lambda L, a, b: L.mv(a, b), (3, 4), (4,)),
    ("vec_mat", lambda L, a, b: L.matmul(a, b), (4,), (2, 4, 3)),
    ("dot", lambda L, a, b: L.dot(a, b), (5,), (5,)),
    ("vdot", lambda L, a, b: L.vdot(a, b), (5,), (5,)),
    ("einsum", lambda L, a, b: L.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 2)),
    ("linear", lambda L, a, b: L.nn.functional.linear(a, b), (2, 3, 4), (5, 4)),
    ("matmul_T", lambda L, a, b: L.matmul(a, b.transpose(-2, -1)), (3, 4), (5, 4)),
    ("matmul_mH", lambda L, a, b: L.matmul(a.mH, b), (4, 3), (4, 2)),
]
NP_MATMUL = {
    "mm": np.matmul,
    "bmm": np.matmul,
    "matmul_fold": np.matmul,
    "matmul_2d_3d": np.matmul,
    "matmul_bcast": np.matmul,
    "mv": np.matmul,
    "vec_mat": np.matmul,
    "dot": np.dot,
    "vdot": np.vdot,
    "einsum": lambda a, b: np.einsum("bij,bjk->bik", a, b),
    "linear": lambda a, b: a @ b.T,
    "matmul_T": lambda a, b: a @ b.T,
    "matmul_mH": lambda a, b: np.conj(a.T) @ b,
}


@pytest.mark.parametrize("name, fn, sa, sb", MATMUL, ids=[m[0] for m in MATMUL])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_matmul_family_values(name, fn, sa, sb, dt):
    a, b = crand(*sa, dtype=dt), crand(*sb, dtype=dt)
    got = fn(flow, flow.tensor(a), flow.tensor(b))
    assert got.dtype == (flow.complex64 if dt == np.complex64 else flow.complex128)
    np.testing.assert_allclose(got.numpy(), NP_MATMUL[name](a, b), **tol(dt))


@pytest.mark.parametrize("name, fn, sa, sb", MATMUL, ids=[m[0] for m in MATMUL])
def test_matmul_family_gradients(name, fn, sa, sb):
    a, b = crand(*sa), crand(*sb)
    got = check_grad(lambda L, x, y: (fn(L, x, y),), a, b)
    if torch is not None:
        want = torch_grads(lambda L, x, y: (fn(L, x, y),), a, b)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_matmul_mixed_real_and_bias():
    a, w, bias = crand(2, 3), RNG.standard_normal((4, 3)), crand(4)
    got = flow.nn.functional.linear(flow.tensor(a), flow.tensor(w), flow.tensor(bias))
    np.testing.assert_allclose(got.numpy(), a @ w.T + bias, rtol=1e-12)
    got = flow.addmm(flow.tensor(bias), flow.tensor(a), flow.tensor(w.T), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(got.numpy(), 0.5 * bias + 2.0 * (a @ w.T), rtol=1e-12)
    # a real operand gets a real gradient (torch: the real part)
    x = flow.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    y = flow.tensor(crand(4, 2))
    flow.view_as_real(x @ y).sum().backward()
    assert x.grad.dtype == flow.float64
    np.testing.assert_allclose(
        x.grad.numpy(), np.real((np.ones((3, 2)) * (1 + 1j)) @ np.conj(y.numpy().T))
    )


def test_matmul_errors():
    with pytest.raises(ValueError, match=r"\[matmul\] size mismatch \(4 vs 3\)"):
        flow.tensor(crand(2, 4)) @ flow.tensor(crand(3, 2))
    with pytest.raises(ValueError, match=r"matmul.*1-D"):
        flow.matmul(flow.tensor(crand(3)).sum(), flow.tensor(crand(3)))


def test_complex_bmm_is_one_op():
    names = {r["name"] for r in flow._C._complex_table()}
    assert "complex_bmm" in names


# ---- LAPACK family -----------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_linalg_values(dt):
    a, b = crand(2, 4, 4, dtype=dt), crand(2, 4, 3, dtype=dt)
    A, B = flow.tensor(a), flow.tensor(b)
    t = tol(dt)
    np.testing.assert_allclose(flow.linalg.solve(A, B).numpy(), np.linalg.solve(a, b), **t)
    np.testing.assert_allclose(flow.linalg.inv(A).numpy(), np.linalg.inv(a), **t)
    np.testing.assert_allclose(flow.linalg.det(A).numpy(), np.linalg.det(a), **t)
    sign, logabs = flow.linalg.slogdet(A)
    ns, nl = np.linalg.slogdet(a)
    assert sign.dtype == A.dtype and logabs.dtype == (
        flow.float32 if dt == np.complex64 else flow.float64
    )
    np.testing.assert_allclose(sign.numpy(), ns, **t)
    np.testing.assert_allclose(logabs.numpy(), nl, **t)
    h = hermitian_pd(2).astype(dt)
    L = flow.linalg.cholesky(flow.tensor(h)).numpy()
    np.testing.assert_allclose(L, np.linalg.cholesky(h), **t)
    U = flow.linalg.cholesky(flow.tensor(h), upper=True).numpy()
    np.testing.assert_allclose(np.conj(np.swapaxes(U, -1, -2)) @ U, h, **t)
    w, v = flow.linalg.eigh(flow.tensor(h))
    assert w.dtype == logabs.dtype
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(h), **t)
    vv = v.numpy()
    np.testing.assert_allclose(
        vv @ (w.numpy()[..., None] * np.conj(np.swapaxes(vv, -1, -2))), h, **t
    )
    np.testing.assert_allclose(
        flow.linalg.eigvalsh(flow.tensor(h), UPLO="U").numpy(), np.linalg.eigvalsh(h, "U"), **t
    )
    m = crand(2, 5, 3, dtype=dt)
    for mode in ("reduced", "complete"):
        q, r = flow.linalg.qr(flow.tensor(m), mode=mode)
        np.testing.assert_allclose((q @ r).numpy(), m, **t)
        qh = q.numpy()
        np.testing.assert_allclose(
            np.conj(np.swapaxes(qh, -1, -2)) @ qh,
            np.broadcast_to(np.eye(qh.shape[-1]), (2,) + (qh.shape[-1],) * 2),
            **t,
        )
        assert np.allclose(np.tril(r.numpy(), -1), 0)
    assert flow.linalg.qr(flow.tensor(m), mode="r").Q.numel() == 0
    for full in (True, False):
        u, s, vh = flow.linalg.svd(flow.tensor(m), full_matrices=full)
        assert s.dtype == logabs.dtype
        np.testing.assert_allclose(s.numpy(), np.linalg.svd(m, compute_uv=False), **t)
        k = s.shape[-1]
        rec = (u[..., :, :k] * s.unsqueeze(-2)) @ vh[..., :k, :]
        np.testing.assert_allclose(rec.numpy(), m, **t)
    np.testing.assert_allclose(
        flow.linalg.svdvals(flow.tensor(m)).numpy(), np.linalg.svd(m, compute_uv=False), **t
    )
    np.testing.assert_allclose(
        flow.linalg.pinv(flow.tensor(m)).numpy(),
        np.linalg.pinv(m),
        **(t if dt == np.complex128 else dict(rtol=1e-3, atol=1e-3)),
    )


def test_norms_lstsq_matrix_exp():
    m = crand(3, 4)
    M = flow.tensor(m)
    for ord in (None, 1, 2, np.inf, -np.inf, 0, 3.5):
        got = flow.linalg.vector_norm(M, ord if ord is not None else 2)
        assert got.dtype == flow.float64
        np.testing.assert_allclose(got.numpy(), np.linalg.norm(m.reshape(-1), ord), rtol=1e-12)
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(
            flow.linalg.matrix_norm(M, ord).numpy(), np.linalg.norm(m, ord), rtol=1e-12
        )
    np.testing.assert_allclose(flow.linalg.norm(M).numpy(), np.linalg.norm(m), rtol=1e-12)
    a, b = crand(2, 6, 3), crand(2, 6, 2)
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        x = flow.linalg.lstsq(flow.tensor(a), flow.tensor(b), driver=driver).solution
        want = np.stack([np.linalg.lstsq(a[i], b[i], rcond=None)[0] for i in range(2)])
        np.testing.assert_allclose(x.numpy(), want, rtol=1e-10, atol=1e-10)
    res = flow.linalg.lstsq(flow.tensor(a), flow.tensor(b), driver="gelsd").residuals
    assert res.dtype == flow.float64
    np.testing.assert_allclose(
        res.numpy()[0], np.linalg.lstsq(a[0], b[0], rcond=None)[1], rtol=1e-9
    )
    z = crand(2, 3, 3) * 0.7
    got = flow.linalg.matrix_exp(flow.tensor(z))
    assert got.dtype == flow.complex128
    if torch is not None:
        np.testing.assert_allclose(
            got.numpy(), torch.linalg.matrix_exp(torch.tensor(z)).numpy(), rtol=1e-10, atol=1e-12
        )
    # a diagonal matrix: exp of each entry
    d = np.diag(np.array([1j, 0.5 - 2j, -1.0]))
    np.testing.assert_allclose(
        flow.matrix_exp(flow.tensor(d)).numpy(), np.diag(np.exp(np.diag(d))), rtol=1e-12, atol=1e-14
    )


def _unit_phase(v):
    """A phase-invariant function of eigen / singular vectors: |v|^2."""
    return v.abs() ** 2


LINALG_GRADS = [
    ("solve", lambda L, a, b: (L.linalg.solve(a, b),), [(2, 3, 3), (2, 3, 2)]),
    ("solve_vec_left_false", lambda L, a, b: (L.linalg.solve(a, b, left=False),), [(3, 3), (2, 3)]),
    ("inv", lambda L, a: (L.linalg.inv(a),), [(2, 3, 3)]),
    ("det", lambda L, a: (L.linalg.det(a),), [(2, 3, 3)]),
    ("slogdet", lambda L, a: tuple(L.linalg.slogdet(a)), [(2, 3, 3)]),
    ("logdet", lambda L, a: (L.logdet(a),), [(3, 3)]),
    ("qr", lambda L, a: tuple(L.linalg.qr(a)), [(4, 3)]),
    ("qr_square", lambda L, a: tuple(L.linalg.qr(a)), [(2, 3, 3)]),
    ("svdvals", lambda L, a: (L.linalg.svdvals(a),), [(2, 4, 3)]),
    (
        "svd_uvh",
        lambda L, a: (lambda u, s, vh: (u @ vh, s, _unit_phase(u)))(
            *L.linalg.svd(a, full_matrices=False)
        ),
        [(4, 3)],
    ),
    (
        "svd_wide",
        lambda L, a: (lambda u, s, vh: (u @ vh, _unit_phase(vh)))(
            *L.linalg.svd(a, full_matrices=False)
        ),
        [(2, 4)],
    ),
    ("pinv", lambda L, a: (L.linalg.pinv(a),), [(4, 3)]),
    (
        "matrix_norm_nuc",
        lambda L, a: (L.linalg.matrix_norm(a, "nuc"), L.linalg.matrix_norm(a)),
        [(3, 3)],
    ),
    ("vector_norm", lambda L, a: (L.linalg.vector_norm(a, 3), L.linalg.vector_norm(a)), [(5,)]),
    ("matrix_exp", lambda L, a: (L.linalg.matrix_exp(a),), [(3, 3)]),
]


@pytest.mark.parametrize("name, fn, shapes", LINALG_GRADS, ids=[g[0] for g in LINALG_GRADS])
def test_linalg_gradients(name, fn, shapes):
    arrays = [crand(*s) for s in shapes]
    if name.startswith(("solve", "inv", "det", "slogdet", "logdet")):
        arrays[0] = arrays[0] + 3 * np.eye(shapes[0][-1])
    got = check_grad(fn, *arrays, rtol=1e-5, atol=1e-6)
    if torch is not None:
        want = torch_grads(fn, *arrays)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)


def _herm(L, x):
    return (x + x.mH) * 0.5


HERM_GRADS = [
    ("cholesky", lambda L, a: (L.linalg.cholesky(_herm(L, a)),)),
    ("cholesky_upper", lambda L, a: (L.linalg.cholesky(_herm(L, a), upper=True),)),
    ("eigh", lambda L, a: (lambda w, v: (w, _unit_phase(v)))(*L.linalg.eigh(_herm(L, a)))),
    ("eigvalsh", lambda L, a: (L.linalg.eigvalsh(_herm(L, a)),)),
    (
        "eigh_projector",
        lambda L, a: (lambda w, v: ((v[..., :, :1] @ v[..., :, :1].mH),))(
            *L.linalg.eigh(_herm(L, a))
        ),
    ),
]


@pytest.mark.parametrize("name, fn", HERM_GRADS, ids=[g[0] for g in HERM_GRADS])
def test_hermitian_gradients(name, fn):
    a = hermitian_pd(2, n=3) + 0.3 * crand(2, 3, 3)  # symmetrised inside the loss
    got = check_grad(fn, a, rtol=1e-5, atol=1e-6)
    if torch is not None:
        (want,) = torch_grads(fn, a)
        np.testing.assert_allclose(got[0], want, rtol=1e-8, atol=1e-10)


def test_linalg_errors():
    sing = np.zeros((2, 3, 3), np.complex128)
    sing[0] = np.eye(3)
    with pytest.raises(
        RuntimeError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 1 is zero"
    ):
        flow.linalg.inv(flow.tensor(sing))
    with pytest.raises(RuntimeError, match=r"linalg.solve: \(Batch element 1\).*singular"):
        flow.linalg.solve(flow.tensor(sing), flow.tensor(crand(2, 3, 1)))
    npd = hermitian_pd(2, n=3)
    npd[1] = -npd[1]
    with pytest.raises(
        RuntimeError, match=r"linalg.cholesky: \(Batch element 1\).*not positive-definite.*order 1"
    ):
        flow.linalg.cholesky(flow.tensor(npd))
    _, info = flow.linalg.cholesky_ex(flow.tensor(npd))
    assert info.tolist() == [0, 1]
    with pytest.raises(
        TypeError, match=r"linalg.solve.*same dtype.*c128.*c64|linalg.solve.*same dtype"
    ):
        flow.linalg.solve(flow.tensor(crand(3, 3)), flow.tensor(crand(3, 1, dtype=np.complex64)))
    sign, logabs = flow.linalg.slogdet(flow.tensor(sing))
    assert sign.numpy()[1] == 0 and logabs.numpy()[1] == -np.inf
    with pytest.raises(TypeError, match=r"linalg.lu_factor.*c128"):
        flow.linalg.lu_factor(flow.tensor(crand(3, 3)))
    with pytest.raises(TypeError, match=r"linalg.solve_triangular: complex input"):
        flow.linalg.solve_triangular(flow.tensor(crand(3, 3)), flow.tensor(crand(3, 1)), upper=True)


@needs_torch
def test_linalg_matches_torch_batched():
    a = crand(2, 3, 4, 4)
    h = hermitian_pd(2, 3, n=4)
    ta, th = torch.tensor(a), torch.tensor(h)
    fa, fh = flow.tensor(a), flow.tensor(h)
    pairs = [
        (flow.linalg.inv(fa), torch.linalg.inv(ta)),
        (flow.linalg.det(fa), torch.linalg.det(ta)),
        (flow.linalg.slogdet(fa)[0], torch.linalg.slogdet(ta)[0]),
        (flow.linalg.cholesky(fh), torch.linalg.cholesky(th)),
        (flow.linalg.eigvalsh(fh), torch.linalg.eigvalsh(th)),
        (flow.linalg.svdvals(fa), torch.linalg.svdvals(ta)),
        (flow.linalg.qr(fa).R.abs(), torch.linalg.qr(ta).R.abs()),
        (flow.linalg.pinv(fa), torch.linalg.pinv(ta)),
        (flow.linalg.matrix_norm(fa, "nuc"), torch.linalg.matrix_norm(ta, "nuc")),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)


# ---- ordering ops raise as torch; triangles and diagonals --------------------------------------

ORDERING = [
    ("sort", lambda L, z: L.sort(z), "\"sort\" not implemented for 'ComplexDouble'"),
    ("argsort", lambda L, z: L.argsort(z), "\"sort\" not implemented for 'ComplexDouble'"),
    ("max", lambda L, z: L.max(z), "\"max_all\" not implemented for 'ComplexDouble'"),
    ("min", lambda L, z: z.min(), "\"min_all\" not implemented for 'ComplexDouble'"),
    ("max_dim", lambda L, z: L.max(z, 0), "max(): does not support complex input"),
    ("min_dim", lambda L, z: z.min(1), "min(): does not support complex input"),
    ("topk", lambda L, z: L.topk(z, 1), "\"topk_cpu\" not implemented for 'ComplexDouble'"),
    ("argmax", lambda L, z: z.argmax(), "\"argmax_cpu\" not implemented for 'ComplexDouble'"),
    ("argmin", lambda L, z: z.argmin(), "\"argmin_cpu\" not implemented for 'ComplexDouble'"),
]


@pytest.mark.parametrize("name, fn, msg", ORDERING, ids=[o[0] for o in ORDERING])
def test_ordering_ops_raise_as_torch(name, fn, msg):
    z = crand(2, 3)
    with pytest.raises(RuntimeError) as e:
        fn(flow, flow.tensor(z))
    assert str(e.value) == msg
    z64 = flow.tensor(z.astype(np.complex64))
    with pytest.raises(RuntimeError, match="ComplexFloat|complex input"):
        fn(flow, z64)


TRI = [
    ("tril", lambda L, z: (L.tril(z), L.tril(z, -1))),
    ("triu", lambda L, z: (L.triu(z), L.triu(z, 1))),
    ("diag", lambda L, z: (L.diag(z), L.diag(z[0]), L.diag(z[0], 1))),
    ("diagonal", lambda L, z: (L.diagonal(z, 1),)),
    ("trace", lambda L, z: (L.trace(z),)),
    ("diag_embed", lambda L, z: (L.diag_embed(z), L.diag_embed(z, -1))),
]
NP_TRI = {
    "tril": lambda z: (np.tril(z), np.tril(z, -1)),
    "triu": lambda z: (np.triu(z), np.triu(z, 1)),
    "diag": lambda z: (np.diag(z), np.diag(z[0]), np.diag(z[0], 1)),
    "diagonal": lambda z: (np.diagonal(z, 1),),
    "trace": lambda z: (np.trace(z),),
}


@pytest.mark.parametrize("name, fn", TRI, ids=[t[0] for t in TRI])
def test_triangles_and_diagonals(name, fn):
    z = crand(3, 3)
    got = fn(flow, flow.tensor(z))
    if name in NP_TRI:
        for g, w in zip(got, NP_TRI[name](z)):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-15)
    grads = check_grad(fn, z)
    if torch is not None:
        got_t = fn(torch, torch.tensor(z))
        for g, w in zip(got, got_t):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-15)
        np.testing.assert_allclose(grads[0], torch_grads(fn, z)[0], rtol=1e-10, atol=1e-12)


def test_adjoint_mH_H_conjugate():
    z = crand(2, 3)
    t = flow.tensor(z)
    np.testing.assert_array_equal(t.mH.numpy(), np.conj(z.T))
    np.testing.assert_array_equal(t.H.numpy(), np.conj(z.T))
    np.testing.assert_array_equal(flow.adjoint(t).numpy(), np.conj(z.T))
    np.testing.assert_array_equal(t.mT.numpy(), z.T)
    r = flow.tensor(z.real)
    np.testing.assert_array_equal(r.mH.numpy(), z.real.T)


def test_linalg_on_cuda_names_op_and_device():
    if not flow.cuda.is_available():
        pytest.skip("no CUDA device: complex linalg on cuda is checked to raise on a GPU machine")
    x = flow.tensor(crand(3, 3)).to("cuda")
    with pytest.raises(TypeError, match=r"linalg_inv\] not supported for complex128 on cuda"):
        flow.linalg.inv(x)
    np.testing.assert_allclose((x @ x).cpu().numpy(), (x.cpu() @ x.cpu()).numpy(), rtol=1e-12)


# ---- printing, as torch ------------------------------------------------------------------------

PRINT_CASES = [
    np.array([1 + 2j, 3 - 1j], np.complex64),
    np.array([1.5 + 2.25j, -3.125 - 1j, 0.1j]),
    np.array([[1e-5 + 1j, 2.0 + 3e5j]], np.complex64),
    np.array([1e10 + 1j, 1 - 1e-10j]),
    np.array([np.nan + 1j, complex(np.inf, -np.inf), 0j]),
    np.array([], np.complex64),
    np.zeros((0, 2), np.complex128),
    np.array(1 + 1j, np.complex64),
    np.array([100 + 0.5j, -1 - 200j]),
    np.array([-0.0 - 0.0j, 2 + 0j]),
]


def _print_cases():
    r = np.random.default_rng(3)
    return PRINT_CASES + [
        (r.standard_normal((3, 4)) + 1j * r.standard_normal((3, 4))).astype(np.complex64),
        r.standard_normal(2000) + 1j * r.standard_normal(2000),
        (r.standard_normal((2, 3, 1200)) + 1j).astype(np.complex64),
        r.standard_normal((40, 30)) * 1e-3 + 1j * r.standard_normal((40, 30)),
    ]


@needs_torch
@pytest.mark.parametrize(
    "options",
    [
        {},
        dict(precision=2),
        dict(sci_mode=True),
        dict(threshold=5, edgeitems=1),
        dict(linewidth=40),
    ],
)
def test_printing_matches_torch(options):
    try:
        torch.set_printoptions(**options)
        flow.set_printoptions(**options)
        for c in _print_cases():
            # (the dtype suffix may wrap to its own line: "oneflow_like." is longer than "torch.")
            want = re.sub(r",\n *dtype=", ", dtype=", repr(torch.tensor(c)))
            got = re.sub(r",\n *dtype=", ", dtype=", repr(flow.tensor(c)))
            assert got == want.replace("torch.", "oneflow_like.")
    finally:
        torch.set_printoptions(profile="default")
        torch.set_printoptions(sci_mode=None)
        flow.set_printoptions(profile="default")


def test_printing_suffixes_and_item():
    z = flow.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
    assert repr(z) == "tensor([1.+2.j, 3.-1.j], dtype=oneflow_like.complex128, requires_grad=True)"
    assert repr(z.detach()[0].item()) == "(1+2j)"
    assert isinstance(flow.tensor(np.complex64(1 - 1j)).item(), complex)


# ---- eigenvector phase check (torch's), gradcheck on complex ------------------------------------
_PHASE_MSG = (
    r"{}: The eigenvectors in the complex case are specified up to multiplication by e\^\{{i "
    r"phi\}}. The specified loss function depends on this quantity, so it is ill-defined."
)


@pytest.mark.parametrize("op", ["eigh", "eig"])
def test_eigenvector_phase_dependent_loss_raises_as_torch(op):
    a = hermitian_pd(n=3) + (0 if op == "eigh" else crand(3, 3))
    name = "linalg_eigh_backward" if op == "eigh" else "linalg_eig_backward"
    for loss in (lambda v: v.real.sum(), lambda v: v.imag.sum(), lambda v: v[..., 0].angle().sum()):
        x = flow.tensor(a).requires_grad_()
        _, v = getattr(flow.linalg, op)(x)
        with pytest.raises(RuntimeError, match=_PHASE_MSG.format(name)):
            loss(v).backward()
        if torch is not None:
            xt = torch.tensor(a, requires_grad=True)
            _, vt = getattr(torch.linalg, op)(xt)
            with pytest.raises(RuntimeError, match=_PHASE_MSG.format(name)):
                loss(vt).backward()
    # gauge-invariant losses keep working (|v|, v v^H, eigenvalues), as torch's
    for loss in (
        lambda w, v: v.abs().sum(),
        lambda w, v: (v @ v.mH).real.sum() + (v[..., :1] @ v[..., :1].mH).imag.sum(),
        lambda w, v: (w * (1 - 2j)).imag.sum() + (v.abs() ** 2 * w.real.unsqueeze(-2)).sum(),
    ):
        x = flow.tensor(a).requires_grad_()
        loss(*getattr(flow.linalg, op)(x)).backward()
        if torch is not None:
            xt = torch.tensor(a, requires_grad=True)
            loss(*getattr(torch.linalg, op)(xt)).backward()
            np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_svd_singular_vector_phase_dependent_loss_raises_as_torch():
    a = crand(4, 3)
    msg = (
        r"svd_backward: The singular vectors in the complex case are specified up to "
        r"multiplication by e\^\{i phi\}. The specified loss function depends on this phase "
        r"term, making it ill-defined."
    )
    for lib in [flow] + ([torch] if torch is not None else []):
        for loss in (lambda u, vh: u.real.sum(), lambda u, vh: vh.imag.sum()):
            x = lib.tensor(a, requires_grad=True) if lib is torch else flow.tensor(a)
            x = x if lib is torch else x.requires_grad_()
            u, _, vh = lib.linalg.svd(x, full_matrices=False)
            with pytest.raises(RuntimeError, match=msg):
                loss(u, vh).backward()
    # U Vh, |U|, |Vh|: gauge invariant, as torch
    grads = []
    for lib in [flow] + ([torch] if torch is not None else []):
        x = lib.tensor(a, requires_grad=True) if lib is torch else flow.tensor(a).requires_grad_()
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        ((u @ vh).real.sum() + u.abs().sum() + (vh.abs() ** 2 * s.unsqueeze(-1)).sum()).backward()
        grads.append(x.grad.numpy())
    if len(grads) == 2:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)


def test_eigh_backward_twice_without_retain_graph_names_the_freed_graph():
    """The 'backward through the graph a second time' error after eigh is the right one: an
    earlier backward freed eigh's saved eigenvectors (torch says the same); with retain_graph the
    second backward runs (and a phase-dependent loss raises the phase error)."""
    x = flow.tensor(hermitian_pd(n=3)).requires_grad_()
    _, v = flow.linalg.eigh(x)
    v.abs().sum().backward()
    with pytest.raises(Exception, match="backward through the graph a second time"):
        (v.abs() ** 2).sum().backward()
    x = flow.tensor(hermitian_pd(n=3)).requires_grad_()
    _, v = flow.linalg.eigh(x)
    v.abs().sum().backward(retain_graph=True)
    (v.abs() ** 2).sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match=_PHASE_MSG.format("linalg_eigh_backward")):
        v.real.sum().backward()


def _cg(*shape, seed=0):
    r = np.random.default_rng(seed)
    return flow.tensor(r.standard_normal(shape) + 1j * r.standard_normal(shape)).requires_grad_()


def _rg(*shape, seed=0):
    return flow.tensor(np.random.default_rng(seed).standard_normal(shape)).requires_grad_()


def _eye3():
    return flow.eye(3, dtype=flow.float64).to(flow.complex128)


# (name, function, inputs, whether gradgradcheck runs too)
GRADCHECK = [
    ("mul_div", lambda a, b: a * b / (b + 3), [(3,), (3,)], True),
    ("exp_log_sqrt", lambda a: (a.exp() + (a + 3).log()) * (a + 3).sqrt(), [(4,)], True),
    ("pow_reciprocal", lambda a: a**3 + (a + 3).reciprocal(), [(4,)], True),
    ("abs_angle", lambda a: (a.abs(), a.angle()), [(4,)], True),
    ("conj_real_imag", lambda a: a.conj() * a.real + a.imag, [(4,)], True),
    (
        "views",
        lambda a: flow.view_as_complex(flow.view_as_real(a) * 2) + flow.view_as_real(a).sum(),
        [(3,)],
        True,
    ),
    ("polar_complex", lambda r, t: (flow.polar(r.abs() + 1, t), flow.complex(r, t)), "real2", True),
    ("sum_mean", lambda a: (a.sum(0), a.mean(-1)), [(2, 3)], True),
    (
        "matmul_einsum",
        lambda a, b: (a @ b, flow.einsum("ij,jk->ik", a, b.conj())),
        [(2, 3), (3, 2)],
        True,
    ),
    ("fft_ifft", lambda a: (flow.fft.fft(a), flow.fft.ifft(a, norm="ortho")), [(4,)], True),
    ("rfft_irfft", lambda a: (flow.fft.rfft(a.real), flow.fft.irfft(a)), [(4,)], True),
    ("hfft_fft2", lambda a: (flow.fft.hfft(a), flow.fft.fft2(a)), [(2, 3)], True),
    ("solve", lambda a, b: flow.linalg.solve(a + 3 * _eye3(), b), [(3, 3), (3, 2)], False),
    ("inv_det", lambda a: (flow.linalg.inv(a + 3 * _eye3()), flow.linalg.det(a)), [(3, 3)], False),
    ("slogdet", lambda a: tuple(flow.linalg.slogdet(a + 3 * _eye3())), [(3, 3)], False),
    ("cholesky", lambda a: flow.linalg.cholesky(a @ a.mH + _eye3()), [(3, 3)], False),
    ("qr", lambda a: tuple(flow.linalg.qr(a)), [(3, 2)], False),
    (
        "svd_invariant",
        lambda a: (lambda u, s, vh: (u @ vh, s))(*flow.linalg.svd(a, full_matrices=False)),
        [(3, 2)],
        False,
    ),
    (
        "eigh_invariant",
        lambda a: (lambda w, v: (w, v.abs()))(*flow.linalg.eigh(a + a.mH)),
        [(3, 3)],
        False,
    ),
    ("eig_invariant", lambda a: (lambda w, v: (w, v.abs()))(*flow.linalg.eig(a)), [(3, 3)], False),
    ("matrix_exp", lambda a: flow.linalg.matrix_exp(a), [(3, 3)], False),
    (
        "lstsq_pinv",
        lambda a, b: (flow.linalg.lstsq(a, b).solution, flow.linalg.pinv(a)),
        [(3, 2), (3, 1)],
        False,
    ),
    ("norms", lambda a: (flow.linalg.vector_norm(a), flow.linalg.matrix_norm(a)), [(2, 3)], False),
]


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("name,fn,shapes,gg", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck_complex_backward_formulas(name, fn, shapes, gg, fast_mode):
    if shapes == "real2":
        inputs = (_rg(3, seed=1), _rg(3, seed=2))
    else:
        inputs = tuple(_cg(*s, seed=i + 3) for i, s in enumerate(shapes))
    assert flow.autograd.gradcheck(fn, inputs, fast_mode=fast_mode)
    if gg:
        assert flow.autograd.gradgradcheck(fn, inputs, fast_mode=fast_mode)


def _conj_missing(lib):
    """z * z with the backward of a holomorphic function written without its conjugate (a
    Function of flow or torch)."""

    class ConjMissing(lib.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z

    return ConjMissing.apply


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_gradcheck_complex_catches_a_wrong_formula_as_torch(fast_mode):
    z = _cg(3, seed=9)
    msg = r"While considering the imaginary part of complex outputs only, Jacobian mismatch for output 0 with respect to input 0"
    with pytest.raises(flow.autograd.GradcheckError, match=msg):
        flow.autograd.gradcheck(_conj_missing(flow), (z,), fast_mode=fast_mode)
    assert not flow.autograd.gradcheck(
        _conj_missing(flow), (z,), fast_mode=fast_mode, raise_exception=False
    )
    if torch is not None:
        with pytest.raises(RuntimeError, match=msg):
            torch.autograd.gradcheck(
                _conj_missing(torch),
                (torch.tensor(z.detach().numpy(), requires_grad=True),),
                fast_mode=fast_mode,
            )
    # a real input with a complex output, and a complex input with a real output, pass
    x = _rg(3, seed=10)
    assert flow.autograd.gradcheck(lambda x: x * (1 + 2j), (x,), fast_mode=fast_mode)
    assert flow.autograd.gradcheck(lambda z: (z * z.conj()).real, (z,), fast_mode=fast_mode)
