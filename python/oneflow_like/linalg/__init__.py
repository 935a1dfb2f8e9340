"""torch.linalg: cholesky(_ex), inv(_ex), det, slogdet, solve(_ex), eigh, eigvalsh, qr, svd,
svdvals, lu_factor(_ex), solve_triangular, householder_product and ldl_factor(_ex)/ldl_solve on
LAPACK kernels (kernels/cpu/linalg.cc, CPU, float32/float64, batched, with gradients except
ldl_*, as PyTorch), and what composes from them and existing ops (so autograd differentiates
it): lu, lu_solve, lstsq (QR for driver 'gels', the SVD for the others), matrix_rank, cond,
tensorinv, tensorsolve, vander, vector_norm, matrix_norm, norm, vecdot, cross, multi_dot,
matrix_power (negative powers through inv), matrix_exp, matmul, diagonal, pinv (through svd), the
nuclear and spectral matrix norms (through svdvals).

Singular or non-positive-definite input raises LinAlgError (a RuntimeError, as torch's), naming
the function and, for batches, the batch element: eagerly the functions read the _ex kernels'
info; inside an nn.Graph trace (info cannot be read there) they call the kernels that fail on
such input themselves. Not built yet: eig, eigvals (absent: under mock_torch a script that uses
one fails naming torch.linalg.X)."""
import math

import numpy as np

import oneflow_like as flow
from oneflow_like import _tensor_ops

__all__ = [
    "cholesky",
    "inv",
    "det",
    "slogdet",
    "solve",
    "eig",
    "eigvals",
    "eigh",
    "eigvalsh",
    "qr",
    "svd",
    "svdvals",
    "pinv",
    "vector_norm",
    "matrix_norm",
    "norm",
    "vecdot",
    "cross",
    "multi_dot",
    "matrix_power",
    "diagonal",
    "LinAlgError",
    "cholesky_ex",
    "inv_ex",
    "solve_ex",
    "lu_factor",
    "lu_factor_ex",
    "lu",
    "lu_solve",
    "solve_triangular",
    "householder_product",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "matrix_rank",
    "cond",
    "tensorinv",
    "tensorsolve",
    "vander",
    "matrix_exp",
    "matmul",
]


class LinAlgError(RuntimeError, ValueError):
    """torch.linalg.LinAlgError: a singular or non-positive-definite input (a RuntimeError, as
    torch's; also a ValueError, the error the kernels raise themselves inside nn.Graph)."""


def _tracing(*ts):
    """Whether a result is traced (nn.Graph): then info cannot be read."""
    return flow._C._tracing_active() or any(t.is_lazy for t in ts)


def _check_info(op, info, message):
    """Raises LinAlgError for the first matrix whose info is non-zero: "op: (Batch element i):
    message(info)" (the batch prefix only for batches, as torch)."""
    bad = np.asarray(info.numpy()).reshape(-1)
    nz = np.flatnonzero(bad != 0)
    if nz.size:
        i = int(nz[0])
        where = f"(Batch element {i}): " if info.dim() > 0 else ""
        raise LinAlgError(f"{op}: {where}{message(int(bad[i]))}")


def _inv_message(i):
    return (
        f"The diagonal element {i} is zero, the inversion could not be completed because the "
        "input matrix is singular."
    )


def _cholesky_message(i):
    return (
        "The factorization could not be completed because the input is not positive-definite "
        f"(the leading minor of order {i} is not positive-definite)."
    )


def _solve_message(i):
    return f"The solver failed because the input matrix is singular (U[{i}, {i}] is zero)."


def _lu_message(i):
    return (
        f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you "
        "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
        "linalg.lu_factor_ex(A, pivot)"
    )


def _ldl_message(i):
    return (
        f"The factorization could not be completed because the block diagonal matrix D is "
        f"singular (D[{i},{i}] is zero)."
    )


def cholesky(A, *, upper=False, out=None):
    """L with A = L L^T from A's lower triangle (upper=True: U with A = U^T U from the upper one).
    A matrix that is not positive-definite raises LinAlgError, naming the leading minor."""
    if _tracing(A):
        return _out(flow._C._linalg_cholesky(A, upper), out)
    r = flow._C._linalg_cholesky_ex(A, upper)
    _check_info("linalg.cholesky", r.info, _cholesky_message)
    return _out(r.L, out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): cholesky without failing; info [batch] int32 is 0 or the order of the leading
    minor that is not positive-definite (check_errors=True raises LinAlgError then)."""
    r = flow._C._linalg_cholesky_ex(A, upper)
    if check_errors and not _tracing(r.info):
        _check_info("linalg.cholesky_ex", r.info, _cholesky_message)
    return _out_tuple(r, out)


def inv(A, *, out=None):
    """A^-1 for a batch of square matrices; a singular matrix raises LinAlgError."""
    if _tracing(A):
        return _out(flow._C._linalg_inv(A), out)
    r = flow._C._linalg_inv_ex(A)
    _check_info("linalg.inv", r.info, _inv_message)
    return _out(r.inverse, out)


def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): inv without failing; info [batch] int32 is 0 or the index of the first
    zero pivot (check_errors=True raises LinAlgError then)."""
    r = flow._C._linalg_inv_ex(A)
    if check_errors and not _tracing(r.info):
        _check_info("linalg.inv_ex", r.info, _inv_message)
    return _out_tuple(r, out)


def det(A, *, out=None):
    return _out(flow._C._linalg_det(A), out)


def slogdet(A, *, out=None):
    """(sign, logabsdet): det A = sign * exp(logabsdet); a singular matrix gives (0, -inf)."""
    if out is not None:
        raise TypeError("linalg.slogdet: out= is not supported")
    return flow._C._linalg_slogdet(A)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left=False: X A = B). B is a matrix batch [..., n, k] or a vector batch
    [..., n]; the batch dimensions broadcast. A singular matrix raises LinAlgError."""
    if _tracing(A, B):
        return _out(flow._C._linalg_solve(A, B, left), out)
    r = flow._C._linalg_solve_ex(A, B, left)
    _check_info("linalg.solve", r.info, _solve_message)
    return _out(r.result, out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info): solve without failing (check_errors=True raises LinAlgError)."""
    r = flow._C._linalg_solve_ex(A, B, left)
    if check_errors and not _tracing(r.info):
        _check_info("linalg.solve_ex", r.info, _solve_message)
    return _out_tuple(r, out)


from ..return_types import linalg_ldl_factor as ldl_factor_t  # noqa: E402
from ..return_types import linalg_lstsq as lstsq_t  # noqa: E402
from ..return_types import linalg_lu as lu_t  # noqa: E402
from ..return_types import linalg_lu_factor as lu_factor_t  # noqa: E402


def _no_pivot(op, pivot):
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info) with P A = L U (getrf, partial pivoting), A [..., m, n]: LU holds L's
    strict lower part (unit diagonal) and U, pivots [..., min(m, n)] int32 are LAPACK's 1-based row
    interchanges, info the first zero U[i, i] (check_errors=True raises LinAlgError then).
    Differentiable for square A."""
    _no_pivot("linalg.lu_factor_ex", pivot)
    r = flow._C._linalg_lu_factor_ex(A)
    if check_errors and not _tracing(r.info):
        _check_info("torch.linalg.lu_factor_ex", r.info, _lu_message)
    return _out_tuple(r, out)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of lu_factor_ex; a singular matrix raises LinAlgError, as torch."""
    _no_pivot("linalg.lu_factor", pivot)
    r = flow._C._linalg_lu_factor_ex(A)
    if not _tracing(r.info):
        _check_info("torch.linalg.lu_factor", r.info, _lu_message)
    return _out_tuple(lu_factor_t(r.LU, r.pivots), out)


def _lu_unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's LU [..., m, n] and pivots: P [..., m, m], L [..., m, k] with unit
    diagonal, U [..., k, n] (k = min(m, n)); the parts not asked for are empty tensors."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    empty = flow.empty(0, dtype=LU.dtype, device=LU.device)
    P = flow._C._linalg_lu_permutation(LU, pivots) if unpack_pivots else empty
    if not unpack_data:
        return lu_t(P, empty, empty)
    eye = flow.eye(m, k, dtype=LU.dtype, device=LU.device)
    L = flow.tril(LU[..., :, :k], -1) + eye
    U = flow.triu(LU[..., :k, :])
    return lu_t(P, L, U)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U (lu_factor, then unpacked); differentiable for square A."""
    _no_pivot("linalg.lu", pivot)
    r = flow._C._linalg_lu_factor_ex(A)
    return _out_tuple(_lu_unpack(r.LU, r.pivots), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (adjoint: A^T X = B; left=False: X A = B or X A^T = B) for A = P L U from
    lu_factor: triangular solves with LU's two triangles and the permutation, so the gradient
    reaches LU and B. Batches broadcast."""
    if LU.dim() < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(
            f"linalg.lu_solve: Expected LU to be square, got shape {tuple(LU.shape)}"
        )
    if B.dim() < 2:
        raise RuntimeError(
            f"linalg.lu_solve: Expected B to have at least 2 dimensions, got {tuple(B.shape)}"
        )
    if not left:  # X A = B  <=>  A^T X^T = B^T
        Xt = lu_solve(LU, pivots, B.transpose(-2, -1), adjoint=not adjoint)
        return _out(Xt.transpose(-2, -1), out)
    if B.shape[-2] != LU.shape[-1]:
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'A^H X = B' if adjoint else 'AX = B'} ({tuple(LU.shape)} and {tuple(B.shape)})"
        )
    P = flow._C._linalg_lu_permutation(LU, pivots)
    tri = flow._C._linalg_solve_triangular
    if not adjoint:  # X = U^-1 L^-1 P^T B
        Y = tri(LU, flow.matmul(P.transpose(-2, -1), B), False, True, True)
        return _out(tri(LU, Y, True, True, False), out)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    LUt = LU.transpose(-2, -1)
    Y = tri(LUt, B, False, True, False)
    return _out(flow.matmul(P, tri(LUt, Y, True, True, True)), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (left=False: X A = B) for A upper or lower triangular (only that triangle is
    read; unitriangular: its diagonal taken as ones), B [..., n, k]; batches broadcast (trsm).
    A zero on the diagonal gives inf/nan, as torch's."""
    return _out(flow._C._linalg_solve_triangular(A, B, upper, left, unitriangular), out)


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i A's column i below
    the diagonal (unit entry on it): A [..., m, n] (m >= n), tau [..., k] (k <= n) (orgqr)."""
    return _out(flow._C._linalg_householder_product(A, tau), out)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): the Bunch-Kaufman A = L D L^T of A's lower triangle (sytrf), as LAPACK
    leaves it (torch's layout); info > 0 where D is singular (check_errors=True raises
    LinAlgError). No gradient (backward raises, as torch's)."""
    r = flow._C._linalg_ldl_factor_ex(A, hermitian)
    if check_errors and not _tracing(r.info):
        _check_info("torch.linalg.ldl_factor_ex", r.info, _ldl_message)
    return _out_tuple(r, out)


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of ldl_factor_ex; a singular D raises LinAlgError."""
    r = flow._C._linalg_ldl_factor_ex(A, hermitian)
    if not _tracing(r.info):
        _check_info("torch.linalg.ldl_factor", r.info, _ldl_message)
    return _out_tuple(ldl_factor_t(r.LD, r.pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B for A = L D L^T from ldl_factor (sytrs); batches broadcast."""
    return _out(flow._C._linalg_ldl_solve(LD, pivots, B, hermitian), out)


def _eps(dtype):
    return 1.1920928955078125e-07 if dtype == flow.float32 else 2.220446049250313e-16


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _triangular(R, B, upper):
    """R^-1 B for triangular R; complex R (solve_triangular has no complex kernel) through
    linalg.solve on the triangle."""
    if R.dtype.is_complex:
        return solve(R.triu() if upper else R.tril(), B)
    return solve_triangular(R, B, upper=upper)


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) minimising ||A X - B|| (A [..., m, n], B
    [..., m, k] or [..., m]; batches broadcast), as torch's CPU drivers: 'gels' (A of full rank:
    QR of A, or of A^T for m < n, the minimum-norm solution) gives no rank and no singular
    values; 'gelsy' (the default), 'gelsd' and 'gelss' go through the SVD, with singular values at
    or below rcond * the largest (rcond: eps * max(m, n) by default) counted as zero, and give the
    rank; 'gelsd'/'gelss' also the singular values. residuals (the squared residual of each column)
    are computed when m > n and every matrix has full rank, for drivers other than 'gelsy', as
    torch's; otherwise they are empty. The solution is differentiable (through QR or SVD)."""
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(
            f"torch.linalg.lstsq: parameter `driver` should be one of {_LSTSQ_DRIVERS}, "
            f"got {driver!r}"
        )
    if A.dim() < 2:
        raise RuntimeError(
            f"torch.linalg.lstsq: input must have at least 2 dimensions, got {tuple(A.shape)}"
        )
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype != B.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected A and B floating point or complex of the same dtype, "
            f"got "
            f"{A.dtype} and {B.dtype}"
        )
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if Bm.dim() < 2 or Bm.shape[-2] != m:
        raise RuntimeError(
            f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got A "
            f"{tuple(A.shape)} and B {tuple(B.shape)}"
        )
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2])))
    A = A.expand(*batch, m, n)
    Bm = Bm.expand(*batch, m, Bm.shape[-1])
    empty = flow.empty(0, dtype=A.dtype, device=A.device)
    rank = flow.empty(0, dtype=flow.int64, device=A.device)
    sv = empty
    full_rank = True
    if driver == "gels":
        if m >= n:
            Q, R = qr(A)
            X = _triangular(R, flow.matmul(Q.mH, Bm), True)
        else:
            Q, R = qr(A.mH)
            X = flow.matmul(Q, _triangular(R.mH, Bm, False))
    else:
        U, S, Vh = svd(A, full_matrices=False)
        cut = (_eps(A.dtype) * max(m, n)) if rcond is None else rcond
        smax = S.amax(dim=-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
        keep = S > smax * cut
        s_inv = flow.where(keep, 1.0 / flow.where(keep, S, flow.ones_like(S)), flow.zeros_like(S))
        X = flow.matmul(Vh.mH, s_inv.unsqueeze(-1) * flow.matmul(U.mH, Bm))
        rank = keep.to(flow.int64).sum(-1)
        full_rank = _tracing(rank) or bool((rank == min(m, n)).all())
        if driver in ("gelsd", "gelss"):
            sv = S
    residuals = empty
    if m > n and driver != "gelsy" and full_rank:
        r = flow.matmul(A, X) - Bm
        r = r.abs() if r.dtype.is_complex else r
        residuals = (r * r).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    return lstsq_t(X.squeeze(-1) if vector else X, residuals, rank, sv)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """The number of singular values (eigenvalue magnitudes if hermitian) above
    max(atol, rtol * the largest), int64: rtol defaults to eps * max(m, n), or 0 when atol > 0
    is given (torch's rule); tol is the deprecated spelling of atol."""
    if tol is not None:
        atol = tol if atol is None else atol
    if A.dim() < 2:
        raise RuntimeError(
            f"linalg.matrix_rank: The input tensor A must have at least 2 dimensions, got "
            f"{tuple(A.shape)}"
        )
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    smax = S.amax(dim=-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    default_rtol = _eps(A.dtype) * max(A.shape[-2], A.shape[-1])
    if rtol is None:
        if atol is None:
            rtol = default_rtol
        elif isinstance(atol, flow.Tensor):
            rtol = flow.where(atol > 0, flow.zeros_like(atol), flow.full_like(atol, default_rtol))
        else:
            rtol = 0.0 if atol > 0 else default_rtol
    if isinstance(rtol, flow.Tensor):
        rtol = rtol.unsqueeze(-1)
    tol_t = smax * rtol
    if atol is not None:
        a = atol.unsqueeze(-1) if isinstance(atol, flow.Tensor) else atol
        tol_t = flow.maximum(tol_t, a if isinstance(a, flow.Tensor) else flow.full_like(tol_t, a))
    return _out((S > tol_t).to(flow.int64).sum(-1), out)


_COND_NORMS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A, p=None, *, out=None):
    """The condition number in norm p: for p None / 2 / -2 the ratio of the extreme singular
    values (any A [..., m, n]); for 'fro', 'nuc', inf, -inf, 1, -1 (square A)
    matrix_norm(A, p) * matrix_norm(inv(A), p), inf for singular matrices (as torch)."""
    if A.dim() < 2:
        raise RuntimeError(
            f"linalg.cond: The input tensor A must have at least 2 dimensions, got "
            f"{tuple(A.shape)}"
        )
    if p is None or p in (2, -2):
        S = svdvals(A)
        big, small = S[..., 0], S[..., -1]
        return _out(small / big if p == -2 else big / small, out)
    if p not in _COND_NORMS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p!r}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.cond(ord={p!r}): A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    Ainv, info = flow._C._linalg_inv_ex(A)
    c = matrix_norm(A, p) * matrix_norm(Ainv, p)
    return _out(flow.where(info > 0, flow.full_like(c, math.inf), c), out)


def _prod(dims):
    r = 1
    for d in dims:
        r *= d
    return r


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A read as a map from its last dims to its first `ind` dims:
    inv(A.reshape(prod(shape[:ind]), prod(shape[ind:]))) reshaped to shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(
            f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}"
        )
    shape = tuple(A.shape)
    rows, cols = _prod(shape[:ind]), _prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(
            f"linalg.tensorinv: Expected self to satisfy the requirement "
            f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {cols} != {rows} "
            f"(shape {shape}, ind={ind})"
        )
    return _out(inv(A.reshape(rows, cols)).reshape(*shape[ind:], *shape[:ind]), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.dim()) = B: the dims of A in `dims` moved to the end, A reshaped
    to (B.numel(), the rest) and solved."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    out_shape = tuple(A.shape[B.dim() :])
    rows, cols = B.numel(), _prod(out_shape)
    if tuple(A.shape[: B.dim()]) != tuple(B.shape) or rows != cols:
        raise RuntimeError(
            f"linalg.tensorsolve: Expected self to satisfy the requirement "
            f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]) and "
            f"self.shape[:other.ndim] == other.shape, got A {tuple(A.shape)} and B "
            f"{tuple(B.shape)}"
        )
    x = solve(A.reshape(rows, cols), B.reshape(rows))
    return _out(x.reshape(*out_shape), out)


def vander(x, *, N=None):
    """The Vandermonde matrix [..., n, N] of x [..., n] with increasing powers x^0 .. x^(N-1)
    (N defaults to n), as torch.linalg.vander (torch.vander's columns run the other way)."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {N}")
    ones = flow.ones_like(x).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    return flow.cat([ones, powers], -1)


def matrix_exp(A):
    """torch.linalg.matrix_exp: torch.matrix_exp."""
    return flow.matrix_exp(A)


def matmul(input, other, *, out=None):
    """torch.linalg.matmul: torch.matmul."""
    return _out(flow.matmul(input, other), out)


from ..return_types import linalg_eig as _EigResult  # noqa: E402


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors as columns) of square matrices, complex (LAPACK zgeev; real A
    is cast to complex). Eigenvectors have norm 1 and are unique up to a phase: a loss that
    depends on the phase has no gradient (torch's error). CPU only."""
    if out is not None:
        raise TypeError("linalg.eig: out= is not supported")
    return _EigResult(*flow._C._linalg_eig(A))


def eigvals(A, *, out=None):
    """The eigenvalues of square matrices, complex (see eig)."""
    return _out(flow._C._linalg_eig(A)[0], out)


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric (complex: Hermitian) matrices,
    read from the lower triangle (UPLO="L") or the upper one; the eigenvalues are real.
    Eigenvectors are unique up to sign (complex: a phase); the gradient assumes A Hermitian (it
    is symmetrised, as PyTorch's)."""
    if out is not None:
        raise TypeError("linalg.eigh: out= is not supported")
    return flow._C._linalg_eigh(A, UPLO)


def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q R (geqrf + orgqr): mode "reduced" (Q [m, k], R [k, n], k = min(m, n)),
    "complete" (Q [m, m], R [m, n]) or "r" (R only, Q empty). Differentiable for m >= n in
    reduced mode, and square A in any mode."""
    if out is not None:
        raise TypeError("linalg.qr: out= is not supported")
    return flow._C._linalg_qr(A, mode)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending (gesdd). Differentiable with
    full_matrices=False (and for square A); singular vectors are unique up to sign."""
    if out is not None:
        raise TypeError("linalg.svd: out= is not supported")
    return flow._C._linalg_svd(A, full_matrices)


def svdvals(A, *, driver=None, out=None):
    return _out(flow._C._linalg_svd(A, False).S, out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse through the SVD: singular values at or below
    max(atol, rtol * the largest) count as zero; rtol defaults to eps * max(m, n) when atol is
    not given (PyTorch's rule)."""
    U, S, Vh = flow._C._linalg_svd(A, False)
    smax = S.amax(dim=-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    if rtol is None:
        eps = 1.1920928955078125e-07 if A.dtype == flow.float32 else 2.220446049250313e-16
        rtol = 0.0 if atol is not None and atol > 0 else eps * max(A.shape[-2], A.shape[-1])
    cutoff = smax * rtol
    if atol is not None:
        cutoff = flow.clamp(cutoff, min=atol)
    keep = S > cutoff
    s_inv = flow.where(keep, 1.0 / flow.where(keep, S, flow.ones_like(S)), flow.zeros_like(S))
    return _out((Vh.mH * s_inv.unsqueeze(-2)) @ U.mH, out)


def eigvalsh(A, UPLO="L", *, out=None):
    return _out(flow._C._linalg_eigh(A, UPLO).eigenvalues, out)


def _out(result, out):
    if out is None:
        return result
    out.copy_(result)
    return out


def _out_tuple(result, out):
    """A namedtuple result, copied into the tensors of `out` (a tuple of as many) if given."""
    if out is None:
        return result
    if len(out) != len(result):
        raise TypeError(f"expected out= to be a tuple of {len(result)} tensors, got {len(out)}")
    for o, r in zip(out, result):
        o.copy_(r)
    return type(result)(*out)


def _dims(dim, nd):
    if dim is None:
        return list(range(nd))
    return [d % nd for d in ([dim] if isinstance(dim, int) else dim)]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of x flattened (dim=None) or over `dim`: max |x| (inf), min |x| (-inf),
    count of non-zeros (0), (sum |x|^ord)^(1/ord) otherwise."""
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.is_complex:  # the norm of |x|, real (torch)
        x = x.abs()
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: expected a floating point input, got {x.dtype}")
    dims = _dims(dim, x.dim()) if x.dim() else []
    a = x.abs()
    if ord == math.inf:
        return a.amax(dims, keepdim=keepdim) if dims else a
    if ord == -math.inf:
        return a.amin(dims, keepdim=keepdim) if dims else a
    if ord == 0:
        return (x != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    if ord == 1:
        return a.sum(dims, keepdim=keepdim)
    if ord == 2:
        return (x * x).sum(dims, keepdim=keepdim).sqrt()
    return (a**ord).sum(dims, keepdim=keepdim) ** (1.0 / ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Frobenius, 1 / -1 (max / min column sum), inf / -inf (max / min row sum), 'nuc' (sum of
    the singular values), 2 / -2 (largest / smallest singular value)."""
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(
            f"linalg.matrix_norm: the input must have at least 2 dims, got {A.dim()}"
        )
    r, c = [d % A.dim() for d in dim]
    if ord == "fro":
        return vector_norm(A, 2, (r, c), keepdim)
    if ord in ("nuc", 2, -2):
        sv = svdvals(A.movedim((r, c), (-2, -1)))
        out = sv.sum(-1) if ord == "nuc" else (sv.amax(-1) if ord == 2 else sv.amin(-1))
        if keepdim:
            out = out.unsqueeze(min(r, c)).unsqueeze(max(r, c))
        return out
    if ord in (1, -1):  # column sums: reduce rows, then max/min over columns
        s = A.abs().sum(r, keepdim=True)
        out = s.amax(c, keepdim=True) if ord == 1 else s.amin(c, keepdim=True)
    elif ord in (math.inf, -math.inf):
        s = A.abs().sum(c, keepdim=True)
        out = s.amax(r, keepdim=True) if ord > 0 else s.amin(r, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: order {ord!r} is not supported")
    return out if keepdim else out.squeeze([max(r, c), min(r, c)])


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """vector_norm for 1-D dims, matrix_norm for 2 dims; ord=None is 2 / 'fro'."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None and A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if dim is None and ord is not None and A.dim() != 1:
        raise RuntimeError(
            f"linalg.norm: with ord={ord!r} and dim=None the input must be 1-D or 2-D, got "
            f"{A.dim()}-D"
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


def cross(input, other, *, dim=-1):
    return _tensor_ops.cross(input, other, dim=dim)


def multi_dot(tensors):
    """A chain of matrix products (a 1-D first / last operand is a row / column vector)."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(1)
    out = ts[0]
    for t in ts[1:]:
        out = flow.matmul(out, t)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def matrix_power(A, n):
    """A^n by repeated squaring (n < 0: of inv(A))."""
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, got {tuple(A.shape)}"
        )
    if n < 0:
        A, n = inv(A), -n
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else flow.matmul(result, base)
        n >>= 1
        if n:
            base = flow.matmul(base, base)
    if result is None:
        eye = flow.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return eye.expand(*A.shape) if A.dim() > 2 else eye
    return result


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return flow.diagonal(A, offset, dim1, dim2)
