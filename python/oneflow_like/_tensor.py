"""Python-level Tensor methods: printing, conversion to Python objects, autograd conveniences."""
import threading
import weakref

import numpy as np

from . import _C

Tensor = _C.Tensor


from ._tensor_str import get_printoptions, set_printoptions  # noqa: E402,F401


def _repr(self):
    """torch's tensor repr (_tensor_str.py): the values as torch formats them, then the suffixes
    torch adds (device, dtype, size, grad_fn / requires_grad)."""
    from . import _tensor_str, get_default_dtype

    if self.is_lazy:
        return f"tensor(<lazy>, shape={tuple(self.shape)}, dtype={self.dtype})"
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if self.device.type != "cpu":
        suffixes.append(f"device='{self.device}'")
    default = get_default_dtype()
    cdefault = _C.dtype.complex128 if default == _C.dtype.float64 else _C.dtype.complex64
    if self.numel() == 0:
        if self.ndim != 1:
            suffixes.append(f"size={tuple(self.shape)}")
        if self.dtype != default:
            suffixes.append(f"dtype={self.dtype}")
        body = "[]"
    else:
        if not _tensor_str.PRINT_OPTS["edgeitems"]:
            suffixes.append(f"size={tuple(self.shape)}")
        if self.dtype not in (default, cdefault, _C.int64, _C.bool):
            suffixes.append(f"dtype={self.dtype}")
        body = _tensor_str.array_str(self.detach().cpu().numpy(), indent)
    if self.grad_fn is not None:
        suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    return _tensor_str.add_suffixes(prefix + body, suffixes, indent)


def _item(self):
    if self.numel() != 1:
        raise ValueError(
            f"[item] only one-element tensors can be converted to Python scalars, got shape {tuple(self.shape)}"
        )
    return _C._to_numpy(self).reshape(()).item()


def _len(self):
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def _bool(self):
    if self.numel() != 1:
        raise ValueError(
            "[bool] the truth value of a tensor with more than one element is ambiguous"
        )
    return bool(self.item())


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from oneflow_like.autograd import _backward_inputs, _run_backward

    _run_backward(
        self._backward,
        gradient,
        bool(retain_graph) if retain_graph is not None else create_graph,
        create_graph,
        _backward_inputs(inputs),
    )


# Set while flow.compile traces a backward graph (_compile._BackwardGraph): its autograd.grad
# over the parameters must not run their (leaf) hooks on traced gradients; the engine runs them on
# the real gradients the compiled backward returns. Hooks on the trace's own intermediates run.
_hook_state = threading.local()


def _register_hook(self, hook):
    """hook(grad) -> None | new grad, run when this tensor's gradient is computed (a leaf's
    before it is accumulated into .grad); returns a handle whose remove() takes it out."""
    from oneflow_like.autograd.graph import _EngineHookHandle

    if not callable(hook):
        raise TypeError(f"register_hook: expected a callable, got {type(hook).__name__}")

    leaf = self.is_leaf

    def call(grad):
        if leaf and getattr(_hook_state, "tracing_backward", 0):
            return None
        return hook(grad)

    return _EngineHookHandle(_C._register_tensor_hook(self, call))


def _register_post_accumulate_grad_hook(self, hook):
    """hook(tensor), run after backward accumulated this leaf's .grad (optimizer-in-backward);
    returns a handle whose remove() takes it out."""
    from oneflow_like.autograd.graph import _EngineHookHandle

    if not callable(hook):
        raise TypeError(
            f"register_post_accumulate_grad_hook: expected a callable, got {type(hook).__name__}"
        )
    # The engine hands the hook a new Python object for this tensor: pass this one (a Parameter
    # keyed in an optimizer dict, say), held weakly so the hook does not keep it alive.
    ref = weakref.ref(self)

    def call(_):
        t = ref()
        if t is not None:
            hook(t)

    return _EngineHookHandle(_C._register_post_accumulate_grad_hook(self, call))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


def _array(self, dtype=None):
    a = self.numpy()
    return a.astype(dtype) if dtype is not None else a


# dtypes print under the package's name, as PyTorch's do (`dtype=oneflow_like.float64` in a repr).
_DTYPE_NAMES = {v: k for k, v in _C.dtype.__members__.items()}
_C.dtype.__repr__ = _C.dtype.__str__ = lambda self: "oneflow_like." + _DTYPE_NAMES[self]


def _deepcopy(self, memo):
    """copy.deepcopy as torch: a leaf tensor becomes an independent copy with the same dtype,
    device and requires_grad (its .grad deep-copied too); a non-leaf raises."""
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            f"protocol at the moment (got a non-leaf {tuple(self.shape)} {self.dtype} tensor)"
        )
    new = self.detach().clone()
    if self.requires_grad:
        new.requires_grad_(True)
    memo[id(self)] = new
    if self.grad is not None:
        new.grad = _deepcopy(self.grad, memo)
    return new


def _rebuild_pickled(data, state, cls=None):
    """Unpickles what _reduce_ex wrote: flow.load of the bytes, the Tensor subclass it was (as
    torch's _rebuild_from_type_v2: through as_subclass), then the instance attributes."""
    import io

    from .serialization import load

    t = load(io.BytesIO(data), weights_only=False)
    if cls is not None and type(t) is not cls:
        t = t.as_subclass(cls)
    if state:
        t.__dict__.update(state)
    return t


def _reduce_ex(self, protocol):
    """pickle (and everything built on it: multiprocessing outside its shared-memory queues,
    joblib, copy of objects holding tensors) as torch: the data, dtype, shape, device,
    requires_grad and Parameter-ness travel as flow.save's bytes, as torch pickles a storage with
    torch.save; a non-leaf comes back as a leaf (no history), instance attributes come back too."""
    import io

    from .serialization import save

    if self.is_lazy:
        raise RuntimeError(
            f"pickle: a traced (lazy) {tuple(self.shape)} {self.dtype} tensor has no data to pickle"
        )
    buf = io.BytesIO()
    save(self, buf)
    state = dict(getattr(self, "__dict__", None) or {})
    from .nn.modules.module import Parameter

    cls = type(self)
    if cls is Tensor or cls is Parameter:  # flow.save keeps Parameter-ness itself
        return (_rebuild_pickled, (buf.getvalue(), state))
    return (_rebuild_pickled, (buf.getvalue(), state, cls))


def _as_subclass(self, cls):
    """torch.Tensor.as_subclass: this tensor as an instance of the Tensor subclass `cls`, sharing
    its data and its autograd history (gradients flow through it to this tensor's inputs)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass: cls must be a subclass of Tensor, got {cls!r}")
    obj = Tensor.__new__(cls)  # not cls.__new__: a subclass's may call as_subclass itself
    Tensor.__init__(obj, self.detach())
    obj._rebind_(self, True, False)
    return obj


Tensor.__deepcopy__ = _deepcopy
Tensor.__reduce_ex__ = _reduce_ex
Tensor.as_subclass = _as_subclass
Tensor.cfloat = lambda self, memory_format=None: self.to(_C.dtype.complex64)
Tensor.cdouble = lambda self, memory_format=None: self.to(_C.dtype.complex128)
# Kinds of tensor this runtime has none of (torch's meta, quantized and nested tensors).
Tensor.is_meta = property(lambda self: False)
Tensor.is_quantized = property(lambda self: False)
Tensor.is_nested = property(lambda self: False)
Tensor.__repr__ = _repr
Tensor.__str__ = _repr
Tensor.item = _item
Tensor.tolist = lambda self: _C._to_numpy(self).tolist()  # fine when it requires grad, as torch
Tensor.__len__ = _len
Tensor.__bool__ = _bool
Tensor.__float__ = lambda self: float(self.item())
Tensor.__int__ = lambda self: int(self.item())
Tensor.__index__ = lambda self: int(self.item())
Tensor.__array__ = _array
Tensor.__iter__ = _iter
Tensor.backward = _backward
Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.__hash__ = lambda self: id(self)
Tensor.is_floating_point = lambda self: self.dtype.is_floating_point
Tensor.is_cuda = property(lambda self: self.device.type == "cuda")


def _returning_self(fn):
    def inplace(self, other):
        if fn(self, other) is NotImplemented:
            return NotImplemented
        return self  # `t += x` rebinds t to this: keep the same object (and class, e.g. Parameter)

    inplace.__name__ = fn.__name__
    return inplace


# The extension's in-place operators return a new wrapper of the same tensor; Python rebinds
# the left-hand name to what they return, which would turn an nn.Parameter into a plain Tensor.
for _name in (
    "__iadd__",
    "__isub__",
    "__imul__",
    "__itruediv__",
    "__ifloordiv__",
    "__imod__",
    "__ipow__",
    "__iand__",
    "__ior__",
    "__ixor__",
):
    if _name in Tensor.__dict__:
        setattr(Tensor, _name, _returning_self(Tensor.__dict__[_name]))


def _new_factory(name, fill):
    """Tensor.new_<name>(size, dtype=None, device=None, requires_grad=False): a new tensor with
    self's dtype and device unless given."""

    def method(self, *size, dtype=None, device=None, requires_grad=False):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        dtype = self.dtype if dtype is None else dtype
        device = self.device if device is None else device
        out = fill(size, dtype, device)
        if requires_grad:
            out.requires_grad = True
        return out

    method.__name__ = "new_" + name
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _new_factory("full", lambda s, dt, dv: _C.full(s, fill_value, dtype=dt, device=dv))(
        self, tuple(size), dtype=dtype, device=device, requires_grad=requires_grad
    )


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A copy of `data` (a list, NumPy array or tensor) with self's dtype and device unless
    given."""
    if isinstance(data, Tensor):
        data = data.detach().cpu().numpy()
    out = _C.tensor(data, dtype=self.dtype if dtype is None else dtype)
    out = out.to(self.device if device is None else device)
    if requires_grad:
        out.requires_grad = True
    return out


Tensor.new_zeros = _new_factory("zeros", lambda s, dt, dv: _C.zeros(*s, dtype=dt, device=dv))
Tensor.new_ones = _new_factory("ones", lambda s, dt, dv: _C.ones(*s, dtype=dt, device=dv))
Tensor.new_empty = _new_factory("empty", lambda s, dt, dv: _C.empty(*s, dtype=dt, device=dv))
Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor


class Size(tuple):
    """A tensor's shape (torch.Size): a tuple of ints that prints as Size([...])."""

    def __repr__(self):
        return f"oneflow_like.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, idx):
        out = tuple.__getitem__(self, idx)
        return Size(out) if isinstance(idx, slice) else out


_shape_of = Tensor.shape.fget


def _size_method(self, dim=None):
    shape = _shape_of(self)
    return Size(shape) if dim is None else shape[dim]


Tensor.shape = property(lambda self: Size(_shape_of(self)))
Tensor.size = _size_method


class layout:
    """torch.layout: how a tensor stores its elements (flow.strided: dense; flow.sparse_coo:
    coordinate-format sparse, see oneflow_like.sparse)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "oneflow_like." + self._name

    def __reduce__(self):
        return self._name  # pickles as the module-level singleton


strided = layout("strided")
sparse_coo = layout("sparse_coo")

Tensor.layout = property(lambda self: strided)
Tensor.is_sparse = False
Tensor.is_sparse_csr = False
Tensor.to_dense = (
    lambda self, dtype=None, *, masked_grad=True: self if dtype is None else self.to(dtype)
)

# A leaf's gradient may be a sparse COO tensor (nn.Embedding(sparse=True)): it is kept on the
# Python object (nn.Parameter and other subclasses have a __dict__), the dense one in the runtime.
# A leaf given both (a dense and a sparse use) reads back their dense sum, as torch accumulates.
_dense_grad = Tensor.grad


def _grad_get(self):
    if type(self) is not Tensor:
        sg = self.__dict__.get("_sparse_grad")
        if sg is not None:
            dg = _dense_grad.fget(self)
            if dg is None:
                return sg
            del self.__dict__["_sparse_grad"]
            _dense_grad.fset(self, dg + sg.to_dense())
    return _dense_grad.fget(self)


def _grad_set(self, value):
    if value is not None and value.is_sparse:
        if type(self) is Tensor:
            raise RuntimeError(
                f"[grad] a sparse gradient can only be kept on an nn.Parameter (or another Tensor "
                f"subclass), got a plain {tuple(self.shape)} {self.dtype} tensor"
            )
        _dense_grad.fset(self, None)
        self.__dict__["_sparse_grad"] = value
        return
    if type(self) is not Tensor:
        self.__dict__.pop("_sparse_grad", None)
    _dense_grad.fset(self, value)


Tensor.grad = property(_grad_get, _grad_set)
