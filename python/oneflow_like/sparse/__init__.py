"""oneflow_like.sparse (torch.sparse): COO sparse tensors and the operations on them.

    adj = flow.sparse_coo_tensor(indices, values, (n, n))
    h = flow.sparse.mm(adj, x)            # dense (n, k); gradients reach x and the values
    emb = flow.nn.Embedding(10, 3, sparse=True)   # emb.weight.grad is sparse (rows touched)

See _coo.py for the representation (indices and values as two dense tensors).
"""
import numpy as np

from .. import _C
from .._tensor import sparse_coo
from ..autograd import Function
from ._coo import SparseCOOTensor, _host, _unravel

Tensor = _C.Tensor

__all__ = [
    "DoubleTensor",
    "FloatTensor",
    "LongTensor",
    "addmm",
    "hspmm",
    "log_softmax",
    "mm",
    "smm",
    "softmax",
    "sum",
]


def _as_int64_indices(indices, device):
    if isinstance(indices, Tensor):
        if indices.dtype.is_floating_point or indices.dtype == _C.bool:
            raise RuntimeError(
                f"[sparse_coo_tensor] indices must be an int64 tensor, got {indices.dtype}"
            )
        t = indices.detach().to(_C.int64)
    else:
        t = _C.tensor(np.asarray(indices, dtype=np.int64))
    return t.to(device) if device is not None else t


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    check_invariants=None,
    is_coalesced=None,
):
    """torch.sparse_coo_tensor: a sparse tensor with `values[k]` at `indices[:, k]` (duplicates
    are summed by coalesce()). size defaults to the smallest that holds the indices."""
    import oneflow_like as flow

    if not isinstance(values, Tensor):
        values = flow.tensor(values, dtype=dtype)
    if dtype is not None:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    idx = _as_int64_indices(indices, values.device)
    if idx.ndim != 2:
        raise RuntimeError(
            f"[sparse_coo_tensor] indices must be sparse_dim x nnz, but got: {list(idx.shape)}"
        )
    if values.ndim == 0:
        raise RuntimeError("[sparse_coo_tensor] values must have at least one dimension (nnz)")
    sd, nnz = idx.shape
    if values.shape[0] != nnz:
        raise RuntimeError(
            f"[sparse_coo_tensor] indices and values must have same nnz, but got nnz from "
            f"indices: {nnz}, nnz from values: {values.shape[0]}"
        )
    host = _host(idx)
    if nnz and host.min() < 0:
        d = int(np.nonzero((host < 0).any(1))[0][0])
        raise RuntimeError(
            f"[sparse_coo_tensor] found negative index {int(host[d].min())} for dim {d}"
        )
    dense = list(values.shape[1:])
    if size is None:
        sparse_sizes = [int(m) + 1 for m in host.max(1)] if nnz else [0] * sd
        size = sparse_sizes + dense
    else:
        size = [int(s) for s in size]
        if len(size) != sd + len(dense):
            raise RuntimeError(
                f"[sparse_coo_tensor] number of dimensions must be sparse_dim ({sd}) + dense_dim "
                f"({len(dense)}), but got {len(size)} (size {size})"
            )
        if size[sd:] != dense:
            raise RuntimeError(
                f"[sparse_coo_tensor] values has incorrect size, expected {[nnz] + size[sd:]}, "
                f"got {[nnz] + dense}"
            )
        if nnz:
            top = host.max(1)
            for d in range(sd):
                if top[d] >= size[d]:
                    raise RuntimeError(
                        f"[sparse_coo_tensor] size is inconsistent with indices: for dim {d}, "
                        f"size is {size[d]} but found index {int(top[d])}"
                    )
    if requires_grad:
        values = values.detach().requires_grad_(True)  # a sparse leaf: its .grad is sparse
    elif values.requires_grad and values.is_leaf:
        values = values.clone()  # not a leaf (as torch): the gradient goes on to `values`
    return SparseCOOTensor(idx, values, size, bool(is_coalesced))


def _legacy_constructor(name, dtype):
    def make(*args):
        """torch.sparse.<name>(indices, values, size) or (size): the legacy constructors of
        pre-1.0 tutorials (pygcn), a sparse_coo_tensor of this dtype."""
        if len(args) >= 2 and isinstance(args[0], Tensor):
            return sparse_coo_tensor(*args[:3], dtype=dtype)
        size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        sd = len(size)
        empty = _C.zeros(0, dtype=dtype)
        return sparse_coo_tensor(_C.zeros(sd, 0, dtype=_C.int64), empty, size, dtype=dtype)

    make.__name__ = name
    return make


FloatTensor = _legacy_constructor("FloatTensor", _C.dtype.float32)
DoubleTensor = _legacy_constructor("DoubleTensor", _C.dtype.float64)
LongTensor = _legacy_constructor("LongTensor", _C.dtype.int64)


def _dense_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse: the nonzero entries (rows of the first sparse_dim dims when dense dims
    remain) of a dense tensor, coalesced. Differentiable with respect to the dense tensor."""
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"[to_sparse] only layout=sparse_coo is supported, got {layout}")
    if dense_dim is not None:
        sparse_dim = self.ndim - dense_dim
    sd = self.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= self.ndim:
        raise RuntimeError(
            f"[to_sparse] sparse_dim must be in [0, {self.ndim}] for a {self.ndim}-d tensor, "
            f"got {sd}"
        )
    sizes = list(self.shape[:sd])
    n = int(np.prod(sizes, dtype=np.int64))
    flat = self.reshape(n, *self.shape[sd:])
    nonzero = _host(flat != 0).reshape(n, -1).any(1)
    lin = np.nonzero(nonzero)[0].astype(np.int64)
    values = flat.index_select(0, _C.tensor(lin, device=self.device))
    return SparseCOOTensor(_unravel(lin, sizes, self.device), values, self.shape, True)


def _need_sparse(op, x):
    if not (isinstance(x, Tensor) and x.is_sparse):
        raise TypeError(f"[sparse.{op}] expects a sparse COO tensor, got a dense tensor")


def mm(mat1, mat2, reduce=None):
    """torch.sparse.mm: sparse @ dense -> dense, sparse @ sparse -> sparse."""
    if reduce is not None:
        raise NotImplementedError(f"[sparse.mm] reduce={reduce!r} is not supported")
    _need_sparse("mm", mat1)
    return mat1.mm(mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    out = _mm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out
    mat = mat.to_dense()
    return out + (mat if beta == 1 else mat * beta)


def sum(input, dim=None, dtype=None):  # noqa: A001
    """torch.sparse.sum: all entries (dense 0-d) or over dims (sparse, dense once every sparse
    dim is summed)."""
    _need_sparse("sum", input)
    return input.sum(dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: softmax over the specified entries along dim (the others count as
    -inf, so they stay unspecified)."""
    _need_sparse("softmax", input)
    return input.softmax(dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    _need_sparse("log_softmax", input)
    return input.log_softmax(dim, dtype)


def hspmm(mat1, mat2):
    """torch.hspmm: sparse @ dense as a hybrid sparse tensor (sparse_dim 1: the rows of mat1
    that hold entries, each a dense row of the product)."""
    _need_sparse("hspmm", mat1)
    out = mat1.mm(mat2)
    rows = np.unique(_host(mat1._indices()[0])).astype(np.int64)
    rows_t = _C.tensor(rows, device=out.device)
    return SparseCOOTensor(rows_t.reshape(1, -1), out.index_select(0, rows_t), out.shape, True)


def smm(mat1, mat2):
    """torch.smm: sparse @ dense as a sparse tensor (every column of the rows hspmm keeps)."""
    h = hspmm(mat1, mat2)
    rows, k = _host(h._indices()[0]), h.shape[1]
    idx = np.stack([np.repeat(rows, k), np.tile(np.arange(k, dtype=np.int64), len(rows))])
    idx_t = _C.tensor(idx, device=h.device)
    return SparseCOOTensor(idx_t, h._values().reshape(-1), h.shape, True)


# ---- flow.* functions that take a sparse argument --------------------------------------------
def _mm(a, b):
    if a.is_sparse:
        return a.mm(b)
    if a.ndim != 2:
        raise RuntimeError(f"[mm] mat1 must be a matrix, got {list(a.shape)}")
    return b.__rmatmul__(a)


def _matmul(a, b):
    return a.matmul(b) if a.is_sparse else b.__rmatmul__(a)


def _add(input, other, *, alpha=1):
    if input.is_sparse:
        return input.add(other, alpha=alpha)
    return other._added_to(input, alpha)


def _sub(input, other, *, alpha=1):
    return _add(input, other, alpha=-alpha)


def _mul(input, other):
    return input.mul(other) if input.is_sparse else other.mul(input)


def _sum(input, dim=None, keepdim=False, *, dtype=None):
    return input.sum(dim, keepdim, dtype)


# Top-level functions that take a sparse first argument in torch's sparse tutorials (GCN's
# torch.mm / torch.spmm / torch.sparse.mm). Each routed function costs a Python frame (~1 us) on
# every dense call, so only the matrix products are routed: the elementwise ops and reductions
# of a sparse tensor are its methods and operators (s + t, d + s, s.sum(), s.t(); dense + sparse
# reaches SparseCOOTensor.__radd__ first, a subclass), and flow.sparse.sum; flow.add(d, s) and
# the like raise the runtime's error naming the op.
_ROUTES = {
    "mm": _mm,
    "matmul": _matmul,
    "addmm": lambda input, mat1, mat2, *, beta=1, alpha=1: addmm(
        input, mat1, mat2, beta=beta, alpha=alpha
    ),
}


def _routed(dense_fn, sparse_fn):
    def fn(*args, **kwargs):
        for a in args:
            if type(a) is SparseCOOTensor:
                return sparse_fn(*args, **kwargs)
        if kwargs and any(type(v) is SparseCOOTensor for v in kwargs.values()):
            return sparse_fn(*args, **kwargs)
        return dense_fn(*args, **kwargs)

    fn.__name__ = getattr(dense_fn, "__name__", "fn")
    fn.__doc__ = getattr(dense_fn, "__doc__", None)
    fn._dense = dense_fn
    return fn


# ---- nn.Embedding(sparse=True) ---------------------------------------------------------------
class _SparseEmbedding(Function):
    """Rows of weight at input; backward accumulates a sparse COO gradient (one row per looked-up
    index, padding_idx left out) into weight.grad itself and passes nothing along the edge."""

    @staticmethod
    def forward(ctx, weight, input, padding_idx):
        ctx.weight, ctx.input, ctx.padding_idx = weight, input, padding_idx
        return _C.nn_functional.embedding(input, weight, padding_idx)

    @staticmethod
    def backward(ctx, grad):
        w, idx = ctx.weight, ctx.input.reshape(-1)
        rows = grad.reshape(-1, w.shape[1])
        if ctx.padding_idx is not None:
            keep = _C.tensor(
                np.nonzero(_host(idx) != ctx.padding_idx)[0].astype(np.int64), device=idx.device
            )
            idx, rows = idx.index_select(0, keep), rows.index_select(0, keep)
        # its own copy of the rows: the incoming gradient may be a broadcast view, and clipping
        # scales a gradient in place
        g = SparseCOOTensor(idx.reshape(1, -1), rows.detach().clone(), w.shape)
        _accumulate_grad(w, g)
        return None, None, None


def _accumulate_grad(leaf, g):
    """leaf.grad += g (sparse) as torch: sparse + sparse concatenates (uncoalesced), a dense
    gradient stays dense."""
    cur = leaf.grad
    if cur is None:
        leaf.grad = g
    elif cur.is_sparse:
        leaf.grad = SparseCOOTensor(
            _C.cat([cur._indices(), g._indices()], 1),
            _C.cat([cur._values(), g._values()], 0),
            cur.shape,
        )
    else:
        leaf.grad = cur + g.to_dense()


def _embedding(input, weight, padding_idx):
    """F.embedding(..., sparse=True)."""
    if not (weight.requires_grad and _C.is_grad_enabled()):
        return _C.nn_functional.embedding(input, weight, padding_idx)
    if type(weight) is Tensor:
        raise RuntimeError(
            f"[embedding] sparse=True keeps the sparse gradient on the weight object: pass an "
            f"nn.Parameter (or another Tensor subclass), got a plain {tuple(weight.shape)} "
            f"{weight.dtype} tensor"
        )
    if not weight.is_leaf:
        raise RuntimeError("[embedding] sparse=True needs a leaf weight (an nn.Parameter)")
    return _SparseEmbedding.apply(weight, input, padding_idx)


def _install(flow):
    """Adds the sparse entry points to the flow namespace and Tensor."""
    for name, handler in _ROUTES.items():
        setattr(flow, name, _routed(getattr(flow, name), handler))
    flow.sparse_coo_tensor = sparse_coo_tensor
    flow.hspmm, flow.smm = hspmm, smm
    flow.spmm = flow.mm  # torch.spmm (pygcn's spelling of mm with a sparse first argument)
    Tensor.to_sparse = _dense_to_sparse
    Tensor.to_sparse_coo = lambda self: _dense_to_sparse(self)
    Tensor.sparse_mask = _sparse_mask


def _sparse_mask(self, mask):
    """Tensor.sparse_mask: self's entries at the indices of the sparse tensor `mask`."""
    _need_sparse("sparse_mask", mask)
    return mask._with_values(mask._gather(self))
