"""Sparse COO tensors (torch.sparse_coo): `indices` (int64 [sparse_dim, nnz]) and `values`
([nnz, *dense sizes]) kept as two dense tensors; every operation computes through dense ops on
`values` (index_select, index_add, matmul...), so autograd reaches the values and the dense
operands without a sparse kernel. Index bookkeeping (coalesce, validation) runs in NumPy on the
host, as the indices never need gradients.

SparseCOOTensor subclasses flow.Tensor (isinstance holds) around a placeholder with its shape,
dtype and device and no data: a lazy tensor of a trace that is gone, so a runtime function
that is not routed here (flow.relu(sparse)) raises "[relu] lazy tensor outside of a trace"
instead of computing on it. The Tensor methods the class does not implement raise, naming the
method.
"""
import numpy as np

from .. import _C
from .._tensor import Size, sparse_coo

Tensor = _C.Tensor


def _shape_str(x):
    return f"{list(x.shape)} ({'sparse' if x.is_sparse else 'dense'}, {x.dtype})"


def _row_major_strides(sizes):
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= s
    return strides[::-1], acc


def _linear(indices, sizes):
    """The row-major position of each index column among the sparse dims (a flow tensor)."""
    if len(sizes) == 1:
        return indices[0]
    strides, _ = _row_major_strides(sizes)
    st = _C.tensor(np.asarray(strides, dtype=np.int64), device=indices.device)
    return (indices * st.reshape(-1, 1)).sum(0)


def _unravel(lin, sizes, device):
    """int64 [len(sizes), n] indices (a flow tensor) from NumPy row-major positions."""
    if len(sizes) == 0:
        return _C.zeros(0, lin.shape[0], dtype=_C.int64, device=device)
    idx = np.stack(np.unravel_index(lin, tuple(sizes))).astype(np.int64) if lin.size else None
    if idx is None:
        idx = np.zeros((len(sizes), 0), dtype=np.int64)
    return _C.tensor(idx, device=device)


def _placeholder(size, dtype, device):
    """A data-less tensor of this shape that every runtime op rejects (see the module doc)."""
    example = _C.zeros((), dtype=dtype, device=device)  # expanded: no memory for the shape
    return _C._Trace().add_input(example.expand(*size) if len(size) else example)


def _host(t):
    return t.detach().cpu().numpy()


class SparseCOOTensor(Tensor):
    """A sparse tensor in coordinate format, as torch.sparse_coo_tensor makes it."""

    # Routed by flow.sparse's own hooks, not by the __torch_function__ protocol.
    __torch_function__ = _C._disabled_torch_function_impl

    is_sparse = True
    layout = sparse_coo

    is_lazy = False

    def __init__(self, indices, values, size, coalesced=False):
        Tensor.__init__(self, _placeholder(size, values.dtype, values.device))
        self._i, self._v = indices, values
        self._size = Size(int(s) for s in size)
        self._coalesced = bool(coalesced)

    # ---- what it is ---------------------------------------------------------------------
    shape = property(lambda self: self._size)
    dtype = property(lambda self: self._v.dtype)
    device = property(lambda self: self._v.device)
    ndim = property(lambda self: len(self._size))
    is_cuda = property(lambda self: self._v.device.type == "cuda")
    grad_fn = property(lambda self: self._v.grad_fn)
    is_leaf = property(lambda self: self._v.is_leaf)

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    def numel(self):
        return self._size.numel()

    nelement = numel

    def is_floating_point(self):
        return self._v.dtype.is_floating_point

    def sparse_dim(self):
        return self._i.shape[0]

    def dense_dim(self):
        return self._v.dim() - 1

    def _nnz(self):
        return self._i.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._i

    def _values(self):
        return self._v

    def _need_coalesced(self, what):
        if not self._coalesced:
            raise RuntimeError(
                f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first"
            )

    def indices(self):
        self._need_coalesced("indices")
        return self._i

    def values(self):
        self._need_coalesced("values")
        return self._v

    def _sparse_sizes(self):
        return list(self._size[: self.sparse_dim()])

    def _host_linear(self):
        """The row-major position of each entry among the sparse dims, in NumPy."""
        strides, _ = _row_major_strides(self._sparse_sizes())
        return (_host(self._i) * np.asarray(strides, dtype=np.int64).reshape(-1, 1)).sum(0)

    def _with_values(self, values, coalesced=None):
        return SparseCOOTensor(
            self._i, values, self._size, self._coalesced if coalesced is None else coalesced
        )

    # ---- autograd -----------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._v.requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        """A sparse leaf's gradient: sparse, the gradient of the dense tensor it stands for at
        its (coalesced) indices, as torch. Duplicate entries all get that same gradient, so the
        first of each is kept."""
        g = self._v.grad if self._v.is_leaf else None
        if g is None:
            return None
        if self._coalesced:
            return self._with_values(g)
        uniq, first = np.unique(self._host_linear(), return_index=True)
        dev = self.device
        rows = g.index_select(0, _C.tensor(first.astype(np.int64), device=dev))
        return SparseCOOTensor(_unravel(uniq, self._sparse_sizes(), dev), rows, self._size, True)

    @grad.setter
    def grad(self, value):
        if value is None:
            self._v.grad = None
            return
        if not (value.is_sparse and value._i._same(self._i)):
            raise RuntimeError(
                f"[grad] a sparse COO tensor's gradient must be sparse with the same indices, "
                f"got {_shape_str(value)}"
            )
        self._v.grad = value._v

    def detach(self):
        return SparseCOOTensor(self._i, self._v.detach(), self._size, self._coalesced)

    data = property(detach)

    def clone(self):
        return self._with_values(self._v.clone())

    def zero_(self):
        """Drops every entry in place (nnz becomes 0), as torch's zero_ on a sparse tensor."""
        self._i = _C.zeros(self.sparse_dim(), 0, dtype=_C.int64, device=self.device)
        self._v = _C.zeros(0, *self._v.shape[1:], dtype=self.dtype, device=self.device)
        self._coalesced = True
        return self

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            v = self._v.detach().clone()
            if self._v.requires_grad:
                v.requires_grad_(True)
            memo[id(self)] = SparseCOOTensor(self._i.clone(), v, self._size, self._coalesced)
        return memo[id(self)]

    def __hash__(self):
        return id(self)

    # ---- conversions --------------------------------------------------------------------
    def to(self, *args, **kwargs):
        v = self._v.to(*args, **kwargs)
        return SparseCOOTensor(self._i.to(v.device), v, self._size, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def double(self):
        return self._with_values(self._v.double())

    def float(self):
        return self._with_values(self._v.float())

    def coalesce(self):
        """Sorted, unique indices; the values of duplicate indices summed."""
        if self._coalesced:
            return self
        sizes = self._sparse_sizes()
        uniq, inv = np.unique(self._host_linear(), return_inverse=True)
        dev = self.device
        inv_t = _C.tensor(inv.reshape(-1).astype(np.int64), device=dev)
        values = _C.zeros(len(uniq), *self._v.shape[1:], dtype=self.dtype, device=dev)
        values = values.index_add(0, inv_t, self._v)
        return SparseCOOTensor(_unravel(uniq, sizes, dev), values, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=True):
        sizes = self._sparse_sizes()
        _, n = _row_major_strides(sizes)
        dense = self._size[self.sparse_dim() :]
        out = _C.zeros(n, *dense, dtype=self.dtype, device=self.device)
        out = out.index_add(0, _linear(self._i, sizes), self._v).reshape(tuple(self._size))
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(
                f"[to_sparse] sparse_dim {sparse_dim} differs from the tensor's "
                f"{self.sparse_dim()}: convert to dense first"
            )
        return self

    def to_sparse_coo(self):
        return self

    def _gather(self, dense):
        """dense's entries (rows, past the sparse dims) at this tensor's indices, [nnz, ...]."""
        if tuple(dense.shape) != tuple(self._size):
            raise RuntimeError(
                f"[sparse_mask] mask is {list(self._size)}, the dense tensor {list(dense.shape)}"
            )
        sizes = self._sparse_sizes()
        _, n = _row_major_strides(sizes)
        rows = dense.reshape(n, *self._size[self.sparse_dim() :])
        return rows.index_select(0, _linear(self._i, sizes))

    def _add_to_(self, dense, alpha=1):
        """dense += alpha * self, in place (duplicate indices accumulate)."""
        v = self._v if alpha == 1 else self._v * alpha
        dense.index_put_(tuple(self._i.unbind(0)), v.to(dense.dtype), accumulate=True)
        return dense

    # ---- shape --------------------------------------------------------------------------
    def transpose(self, dim0, dim1):
        n, sd = self.ndim, self.sparse_dim()
        d0, d1 = dim0 % n if n else dim0, dim1 % n if n else dim1
        if d0 < sd and d1 < sd:
            perm = list(range(sd))
            perm[d0], perm[d1] = perm[d1], perm[d0]
            size = list(self._size)
            size[d0], size[d1] = size[d1], size[d0]
            idx = self._i.index_select(0, _C.tensor(perm, device=self.device))
            return SparseCOOTensor(idx, self._v, size, d0 == d1 and self._coalesced)
        if d0 >= sd and d1 >= sd:
            size = list(self._size)
            size[d0], size[d1] = size[d1], size[d0]
            v = self._v.transpose(d0 - sd + 1, d1 - sd + 1)
            return SparseCOOTensor(self._i, v, size, self._coalesced)
        raise RuntimeError(
            f"[transpose] cannot swap a sparse dim with a dense dim of a sparse COO tensor "
            f"(dims {dim0}, {dim1}, sparse_dim={sd})"
        )

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D"
            )
        return self if self.ndim < 2 else self.transpose(0, 1)

    # ---- arithmetic ---------------------------------------------------------------------
    def __neg__(self):
        return self._with_values(-self._v)

    neg = __neg__

    def mul(self, other):
        if isinstance(other, Tensor) and other.is_sparse:
            return self._mul_sparse(other)
        if not isinstance(other, Tensor) or other.ndim == 0:
            return self._with_values(self._v * other)
        if tuple(other.shape) != tuple(self._size):
            raise RuntimeError(
                f"[mul] a sparse {list(self._size)} tensor times a dense "
                f"{list(other.shape)} tensor needs equal shapes"
            )
        return self._with_values(self._v * self._gather(other))

    __mul__ = __rmul__ = mul

    def _mul_sparse(self, other):
        """sparse * sparse: the entries both hold (a sparse tensor, coalesced)."""
        if tuple(other.shape) != tuple(self._size) or other.sparse_dim() != self.sparse_dim():
            raise RuntimeError(
                f"[mul] sparse tensors must have the same sizes and sparse_dim, got "
                f"{list(self._size)} (sparse_dim {self.sparse_dim()}) and {list(other.shape)} "
                f"(sparse_dim {other.sparse_dim()})"
            )
        a, b = self.coalesce(), other.coalesce()
        common, ia, ib = np.intersect1d(
            a._host_linear(), b._host_linear(), assume_unique=True, return_indices=True
        )
        dev = self.device

        def rows(x, i):
            return x._v.index_select(0, _C.tensor(i.astype(np.int64), device=dev))

        values = rows(a, ia) * rows(b, ib)
        return SparseCOOTensor(
            _unravel(common, self._sparse_sizes(), dev), values, self._size, True
        )

    def mul_(self, other):
        """In place, by a scalar or a 0-d tensor (clip_grad_norm_ on a sparse gradient)."""
        if isinstance(other, Tensor) and other.ndim > 0:
            raise RuntimeError(
                f"[mul_] a sparse COO tensor can be scaled in place only by a scalar or a 0-d "
                f"tensor, got {_shape_str(other)}"
            )
        self._v.mul_(other.to_dense() if isinstance(other, Tensor) else other)
        return self

    def abs(self):
        x = self.coalesce()  # |a + b|, not |a| + |b|, for duplicate entries
        return x._with_values(x._v.abs())

    def pow(self, exponent):
        if isinstance(exponent, Tensor) or not exponent > 0:
            raise RuntimeError(
                f"[pow] a sparse COO tensor takes only a positive scalar exponent (zero entries "
                f"stay zero), got {exponent!r}"
            )
        x = self.coalesce()
        return x._with_values(x._v.pow(exponent))

    __pow__ = pow

    def div(self, other):
        if isinstance(other, Tensor) and other.ndim > 0:
            raise RuntimeError(
                f"[div] a sparse COO tensor can only be divided by a scalar, got {_shape_str(other)}"
            )
        return self._with_values(self._v / other)

    __truediv__ = div

    def add(self, other, *, alpha=1):
        if not isinstance(other, Tensor):
            raise RuntimeError(
                f"[add] a sparse {list(self._size)} tensor plus a scalar is not supported "
                f"(it would make every element nonzero): add a dense tensor instead"
            )
        if tuple(other.shape) != tuple(self._size):
            raise RuntimeError(
                f"[add] sizes differ: sparse {list(self._size)} and "
                f"{'sparse' if other.is_sparse else 'dense'} {list(other.shape)}"
            )
        if not other.is_sparse:
            raise RuntimeError(
                f"add(sparse, dense) is not supported. Use add(dense, sparse) instead (sparse "
                f"{list(self._size)} {self.dtype}, dense {list(other.shape)} {other.dtype})"
            )
        if other.sparse_dim() != self.sparse_dim():
            raise RuntimeError(
                f"[add] sparse_dim differs: {self.sparse_dim()} and {other.sparse_dim()}"
            )
        v = other._v if alpha == 1 else other._v * alpha
        idx = _C.cat([self._i, other._i], 1)
        return SparseCOOTensor(idx, _C.cat([self._v, v.to(self.dtype)], 0), self._size).coalesce()

    def __add__(self, other):
        return self.add(other)

    def _added_to(self, dense, alpha=1):
        """dense + alpha * self, a dense tensor (torch's add(dense, sparse))."""
        if not isinstance(dense, Tensor) or tuple(dense.shape) != tuple(self._size):
            got = list(dense.shape) if isinstance(dense, Tensor) else type(dense).__name__
            raise RuntimeError(f"[add] sizes differ: dense {got} and sparse {list(self._size)}")
        return dense + (self if alpha == 1 else self * alpha).to_dense()

    def __radd__(self, other):  # dense + sparse (tried before the dense __add__, a subclass)
        return self._added_to(other)

    def sub(self, other, *, alpha=1):
        return self.add(other, alpha=-alpha)

    __sub__ = sub

    def __rsub__(self, other):
        return self._added_to(other, -1)

    def sum(self, dim=None, keepdim=False, dtype=None):
        """torch.sparse.sum: a dense 0-d tensor without dim; with dim, a sparse tensor over the
        other dims (dense when every sparse dim is summed)."""
        v = self._v if dtype is None else self._v.to(dtype)
        if dim is None:
            return v.sum()
        if keepdim:
            raise RuntimeError("[sum] keepdim=True is not supported for sparse COO tensors")
        dims = sorted({d % self.ndim for d in ([dim] if isinstance(dim, int) else dim)})
        sd = self.sparse_dim()
        dense_axes = [d - sd + 1 for d in dims if d >= sd]
        if dense_axes:
            v = v.sum(dense_axes)
        keep = [d for d in range(sd) if d not in dims]
        if not keep:
            return v.sum(0)
        size = [self._size[d] for d in range(self.ndim) if d not in dims]
        idx = self._i.index_select(0, _C.tensor(keep, device=self.device))
        return SparseCOOTensor(idx, v, size).coalesce()

    def mm(self, mat2):
        """sparse (n, m) @ dense (m, k) -> dense (n, k): out[row] += value * mat2[col]."""
        if isinstance(mat2, Tensor) and mat2.is_sparse:
            return self.mm(mat2.to_dense()).to_sparse()
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(
                f"[mm] expects a 2-D sparse tensor with sparse_dim 2, got {list(self._size)} "
                f"with sparse_dim {self.sparse_dim()}"
            )
        if mat2.ndim != 2 or mat2.shape[0] != self._size[1]:
            raise RuntimeError(
                f"[mm] mat1 and mat2 shapes cannot be multiplied "
                f"({self._size[0]}x{self._size[1]} sparse and {list(mat2.shape)} dense)"
            )
        if mat2.dtype != self.dtype:
            raise RuntimeError(
                f"[mm] expected mat1 and mat2 to have the same dtype, got {self.dtype} "
                f"(sparse) and {mat2.dtype}"
            )
        rows, cols = self._i[0], self._i[1]
        contrib = self._v.unsqueeze(1) * mat2.index_select(0, cols)
        out = _C.zeros(self._size[0], mat2.shape[1], dtype=self.dtype, device=self.device)
        return out.index_add(0, rows, contrib)

    def matmul(self, other):
        if not other.is_sparse and other.ndim == 1:
            return self.mm(other.unsqueeze(1)).squeeze(1)
        return self.mm(other)

    __matmul__ = matmul

    def __rmatmul__(self, other):  # dense @ sparse = (sparse^T @ dense^T)^T
        if other.ndim == 1:
            return self.t().mm(other.unsqueeze(1)).squeeze(1)
        return self.t().mm(other.t()).t()

    def softmax(self, dim, dtype=None):
        return _softmax(self, dim, dtype, log=False)

    def log_softmax(self, dim, dtype=None):
        return _softmax(self, dim, dtype, log=True)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __repr__(self):
        from .._tensor import _repr

        parts = [f"indices={_repr(self._i)}", f"values={_repr(self._v)}"]
        parts.append(f"size={tuple(self._size)}, nnz={self._nnz()}")
        if self.dtype not in (_C.float32, _C.int64, _C.bool):
            parts.append(f"dtype={self.dtype}")
        parts.append("layout=oneflow_like.sparse_coo")
        if self.grad_fn is not None:
            parts.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            parts.append("requires_grad=True")
        return "tensor(" + ",\n       ".join(parts) + ")"

    __str__ = __repr__


def _softmax(x, dim, dtype, log):
    """Softmax over the specified entries along `dim` (unspecified ones count as -inf)."""
    x = x.coalesce()
    v = x._v if dtype is None else x._v.to(dtype)
    n, sd = x.ndim, x.sparse_dim()
    d = dim % n
    if d >= sd:  # a dense dim: each entry's own values
        axis = d - sd + 1
        return x._with_values(v.log_softmax(axis) if log else v.softmax(axis))
    others = [k for k in range(sd) if k != d]
    idx = _host(x._i)
    key = idx[others] if others else np.zeros((1, idx.shape[1]), dtype=np.int64)
    _, group = np.unique(key, axis=1, return_inverse=True)
    group = group.reshape(-1).astype(np.int64)
    count = int(group.max()) + 1 if group.size else 0
    # shift each group by its maximum (a constant: softmax is invariant to it)
    vals = _host(v)
    shift = np.full((count,) + vals.shape[1:], -np.inf, dtype=vals.dtype)
    np.maximum.at(shift, group, vals)
    g = _C.tensor(group, device=x.device)
    shifted = v - _C.tensor(shift, device=x.device).index_select(0, g)
    e = shifted.exp()
    total = _C.zeros(count, *v.shape[1:], dtype=v.dtype, device=x.device).index_add(0, g, e)
    out = shifted - total.log().index_select(0, g) if log else e / total.index_select(0, g)
    return x._with_values(out)


# Tensor methods and properties this class does not implement raise instead of reading the
# empty placeholder.
_KEEP = {"__init__", "__doc__", "__module__", "__hash__", "__dict__", "__weakref__"}


def _unsupported_method(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"[{name}] is not supported on sparse COO tensors (got a sparse "
            f"{list(self.shape)} {self.dtype} tensor); call .to_dense() first"
        )

    method.__name__ = name
    return method


def _unsupported_property(name):
    return property(_unsupported_method(name))


for _name, _attr in list(Tensor.__dict__.items()):
    if _name in _KEEP or _name in SparseCOOTensor.__dict__:
        continue
    if _name.startswith("_") and not (_name.startswith("__") and _name.endswith("__")):
        continue  # private helpers of the runtime
    if isinstance(_attr, property):
        setattr(SparseCOOTensor, _name, _unsupported_property(_name))
    elif callable(_attr):
        setattr(SparseCOOTensor, _name, _unsupported_method(_name))
