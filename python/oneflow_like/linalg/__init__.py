"""torch.linalg: cholesky, inv, det, slogdet, solve, eigh, eigvalsh, qr, svd and svdvals on LAPACK
kernels
(kernels/cpu/linalg.cc, CPU, float32/float64, batched, with gradients), and what composes from
existing ops: vector_norm, matrix_norm, norm, vecdot, cross, multi_dot, matrix_power (negative
powers through inv), diagonal, pinv (through svd), the nuclear and spectral matrix norms
(through svdvals). Not built yet: eig, lstsq (absent: under
mock_torch a script that uses one fails naming torch.linalg.X)."""
import math

import oneflow_like as flow
from oneflow_like import _tensor_ops

__all__ = [
    "cholesky",
    "inv",
    "det",
    "slogdet",
    "solve",
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
]


def cholesky(A, *, upper=False, out=None):
    """L with A = L L^T from A's lower triangle (upper=True: U with A = U^T U from the upper one).
    A matrix that is not positive-definite raises, naming the leading minor."""
    return _out(flow._C._linalg_cholesky(A, upper), out)


def inv(A, *, out=None):
    """A^-1 for a batch of square matrices; a singular matrix raises."""
    return _out(flow._C._linalg_inv(A), out)


def det(A, *, out=None):
    return _out(flow._C._linalg_det(A), out)


def slogdet(A, *, out=None):
    """(sign, logabsdet): det A = sign * exp(logabsdet); a singular matrix gives (0, -inf)."""
    if out is not None:
        raise TypeError("linalg.slogdet: out= is not supported")
    return flow._C._linalg_slogdet(A)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left=False: X A = B). B is a matrix batch [..., n, k] or a vector batch
    [..., n]; the batch dimensions broadcast."""
    return _out(flow._C._linalg_solve(A, B, left), out)


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric matrices, read from the lower
    triangle (UPLO="L") or the upper one. Eigenvectors are unique up to sign; the gradient
    assumes A symmetric (it is symmetrised, as PyTorch's)."""
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
    return _out((Vh.transpose(-2, -1) * s_inv.unsqueeze(-2)) @ U.transpose(-2, -1), out)


def eigvalsh(A, UPLO="L", *, out=None):
    return _out(flow._C._linalg_eigh(A, UPLO).eigenvalues, out)


def _out(result, out):
    if out is None:
        return result
    out.copy_(result)
    return out


def _dims(dim, nd):
    if dim is None:
        return list(range(nd))
    return [d % nd for d in ([dim] if isinstance(dim, int) else dim)]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of x flattened (dim=None) or over `dim`: max |x| (inf), min |x| (-inf),
    count of non-zeros (0), (sum |x|^ord)^(1/ord) otherwise."""
    if dtype is not None:
        x = x.to(dtype)
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
