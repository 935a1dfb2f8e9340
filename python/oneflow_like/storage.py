"""torch.storage: the memory under tensors, as PyTorch 2.x shows it.

`t.untyped_storage()` is an UntypedStorage: the bytes of t's whole allocation (from its first
byte, not from t's offset), shared with t and every view of it, so writing through the storage
changes the tensors. `t.storage()` is the TypedStorage view of the same memory in t's dtype
(deprecated in torch 2.x, with its warning). Both are built on a 1-D tensor over the allocation
(`Tensor._storage_view`), so a storage lives as long as any tensor or storage holding it, and a
CUDA tensor's storage is on the GPU. Also: the legacy typed classes (flow.FloatStorage(3),
flow.LongStorage([1, 2])), Tensor.set_(storage, offset, size, stride), Tensor.nbytes/itemsize/
storage_type/is_set_to, flow.from_file and UntypedStorage.from_file/from_buffer (memory-mapped:
with shared=True writes go to the file), and pickling.
"""
import mmap as _mmap
import os as _os
import warnings as _warnings

import numpy as _np

import oneflow_like as flow

__all__ = ["UntypedStorage", "TypedStorage"]


def _bytes_of(t):
    """A 1-D uint8 tensor over the whole allocation under t (empty when t has none)."""
    if t.is_lazy:
        raise RuntimeError(
            f"untyped_storage: a traced (lazy) {tuple(t.shape)} {t.dtype} tensor has no storage"
        )
    if t._storage_numel() == 0:
        return flow.empty(0, dtype=flow.uint8, device=t.device)
    whole = t.detach()._storage_view()
    return whole if whole.dtype == flow.uint8 else whole.view(flow.uint8)


def _index(i, n, what):
    if not isinstance(i, int):
        raise TypeError(f"{what} indices must be integers, got {type(i).__name__}")
    if i < -n or i >= n:
        raise IndexError(f"{what}: index {i} out of range for storage of size {n}")
    return i + n if i < 0 else i


class _Common:
    """What both kinds share; `_t` is the 1-D tensor of elements (uint8 for UntypedStorage)."""

    @property
    def device(self):
        return self._t.device

    @property
    def is_cuda(self):
        return self._t.device.type == "cuda"

    is_sparse = False
    is_sparse_csr = False

    def _fill_from(self, args, dtype, device):
        """The constructor's forms: (n) n zeroed elements, (sequence) its values, () empty."""
        if len(args) == 1 and isinstance(args[0], int):
            self._t = flow.zeros(args[0], dtype=dtype, device=device)
        elif len(args) == 1:
            self._t = flow.tensor(list(args[0]), dtype=dtype, device=device)
        elif not args:
            self._t = flow.empty(0, dtype=dtype, device=device)
        else:
            raise TypeError(f"{type(self).__name__}(): expected a size or a sequence, got {args!r}")

    @classmethod
    def _from_tensor(cls, t):
        s = cls.__new__(cls)
        s._t = t
        return s

    def _wrap(self, t):
        return type(self)._from_tensor(t)

    def size(self):
        return self._t.numel()

    def resize_(self, size):
        """Grows or shrinks this storage object's memory (a new allocation: tensors made from the
        old one keep it), keeping the leading elements."""
        grown = flow.zeros(size, dtype=self._t.dtype, device=self.device)
        n = min(size, self.size())
        grown[:n] = self._t[:n]
        self._t = grown
        return self

    def get_device(self):
        return self._t.device.index if self.is_cuda else -1

    def data_ptr(self):
        return self._t.data_ptr() if self._t.numel() else 0

    def nbytes(self):
        return self._t.numel() * self._t.element_size()

    def __len__(self):
        return self.size()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self.size())
            if step != 1:
                raise RuntimeError(f"{type(self).__name__}: slices must have step 1, got {step}")
            return self._wrap(self._t[start:stop])
        return self._t[_index(i, self.size(), type(self).__name__)].item()

    def __setitem__(self, i, value):
        if isinstance(i, slice):
            self._t[i] = value
        else:
            self._t[_index(i, self.size(), type(self).__name__)] = value

    def tolist(self):
        return self._t.tolist()

    def fill_(self, value):
        self._t.fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        if source.nbytes() != self.nbytes():
            raise RuntimeError(
                f"{type(self).__name__}.copy_: size mismatch, {self.nbytes()} bytes vs "
                f"{source.nbytes()} bytes"
            )
        self._raw().copy_(source._raw())
        return self

    def clone(self):
        return self._wrap(self._t.clone())

    def to(self, *, device=None, non_blocking=False):
        return self._wrap(self._t.to(device)) if device is not None else self

    def cpu(self):
        return self if not self.is_cuda else self._wrap(self._t.cpu())

    def cuda(self, device=None, non_blocking=False):
        return self._wrap(self._t.cuda(device))

    def is_shared(self):
        return self._t.is_shared()

    def share_memory_(self):
        self._t.share_memory_()
        return self

    def is_pinned(self, device="cuda"):
        return self._t.is_pinned()

    def pin_memory(self, device="cuda"):
        """A copy in page-locked memory (the tensor's pin_memory: it needs CUDA, as torch's)."""
        return self._wrap(self._t.pin_memory())

    def _raw(self):
        return self._t.view(flow.uint8) if self._t.dtype != flow.uint8 else self._t

    def _as(self, dtype):
        """The values converted to dtype in a new legacy typed storage (an untyped storage's
        values are its bytes), as torch's storage.float() and friends."""
        if getattr(self, "dtype", flow.uint8) == dtype and isinstance(self, TypedStorage):
            return self
        return _legacy_class(dtype)._from_tensor(self._t.to(dtype))

    def bfloat16(self):
        return self._as(flow.bfloat16)

    def bool(self):
        return self._as(flow.bool)

    def byte(self):
        return self._as(flow.uint8)

    def char(self):
        return self._as(flow.int8)

    def short(self):
        return self._as(flow.int16)

    def int(self):
        return self._as(flow.int32)

    def long(self):
        return self._as(flow.int64)

    def half(self):
        return self._as(flow.float16)

    def float(self):
        return self._as(flow.float32)

    def double(self):
        return self._as(flow.float64)

    def complex_float(self):
        return self._as(flow.complex64)

    def complex_double(self):
        return self._as(flow.complex128)

    def __reduce__(self):
        return (type(self)._from_tensor, (self._t.clone(),))

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"{body}\n" if body else ""
        return f"{head}[{self._qualname()}({self._repr_fields()}) of size {self.size()}]"


def _map_file(filename, shared, nbytes):
    """A uint8 tensor over `filename` memory-mapped (MAP_SHARED when shared: writes reach the file
    and other processes; otherwise private copy-on-write, the file must hold nbytes)."""
    flags = _os.O_RDWR | (_os.O_CREAT if shared else 0)
    try:
        fd = _os.open(filename, flags if shared else _os.O_RDONLY)
    except OSError as e:
        raise RuntimeError(f"from_file: cannot open {filename!r}: {e.strerror}") from None
    try:
        size = _os.fstat(fd).st_size
        if size < nbytes:
            if not shared:
                raise RuntimeError(
                    f"from_file: {filename!r} holds {size} bytes, fewer than the {nbytes} asked "
                    "for (shared=False maps the file as it is)"
                )
            _os.ftruncate(fd, nbytes)
        if nbytes == 0:
            return flow.empty(0, dtype=flow.uint8)
        mm = _mmap.mmap(
            fd,
            nbytes,
            flags=_mmap.MAP_SHARED if shared else _mmap.MAP_PRIVATE,
            prot=_mmap.PROT_READ | _mmap.PROT_WRITE,
        )
    finally:
        _os.close(fd)
    return flow.from_numpy(_np.frombuffer(mm, dtype=_np.uint8))  # keeps the mapping alive


class UntypedStorage(_Common):
    """torch.UntypedStorage: bytes on a device. UntypedStorage(n, device=None) allocates n bytes
    (zeroed), UntypedStorage(sequence) holds the given byte values; `t.untyped_storage()` is the
    storage under an existing tensor."""

    def __init__(self, *args, device=None):
        self._fill_from(args, flow.uint8, device)

    def element_size(self):
        return 1

    def untyped(self):
        return self

    def type(self, dtype=None, non_blocking=False):
        return "torch.storage.UntypedStorage" if dtype is None else _as_type(self, dtype)

    def new(self):
        return UntypedStorage(0, device=self.device)

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        from ._buffers import frombuffer

        t = frombuffer(buffer, dtype=dtype or flow.uint8, count=count, offset=offset)
        return cls._from_tensor(t.clone().view(flow.uint8))

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        return cls._from_tensor(_map_file(filename, shared, nbytes))

    def _qualname(self):
        return "torch.storage.UntypedStorage"

    def _repr_fields(self):
        return f"device={self.device}"


def _itemsize(dtype):
    return flow.empty(0, dtype=dtype).element_size()


class TypedStorage(_Common):
    """torch.TypedStorage: a storage seen as elements of one dtype. TypedStorage(n, dtype=...)
    or TypedStorage(sequence, dtype=...), TypedStorage(wrap_storage=untyped, dtype=...); the
    legacy classes (FloatStorage, LongStorage, ...) fix the dtype."""

    _fixed_dtype = None

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed()
        if self._fixed_dtype is not None and dtype not in (None, self._fixed_dtype):
            raise RuntimeError(f"{type(self).__name__}: dtype is {self._fixed_dtype}, got {dtype}")
        dtype = self._fixed_dtype or dtype or flow.get_default_dtype()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage: wrap_storage= takes no positional arguments")
            self._t = _storage_elements(wrap_storage, dtype)
        else:
            self._fill_from(args, dtype, device)

    @property
    def dtype(self):
        return self._t.dtype

    def element_size(self):
        return self._t.element_size()

    def untyped(self):
        return UntypedStorage._from_tensor(self._raw())

    _untyped_storage = property(untyped)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return _legacy_name(self.dtype)
        return _as_type(self, dtype)

    def new(self):
        return type(self)._from_tensor(flow.empty(0, dtype=self.dtype, device=self.device))

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        from ._buffers import frombuffer

        dtype = cls._fixed_dtype or dtype
        if dtype is None:
            raise TypeError("TypedStorage.from_buffer: dtype= is required")
        return cls._from_tensor(frombuffer(buffer, dtype=dtype, count=count, offset=offset).clone())

    @classmethod
    def from_file(cls, filename, shared=False, size=0, *, dtype=None):
        dtype = cls._fixed_dtype or dtype or flow.get_default_dtype()
        raw = _map_file(filename, shared, size * _itemsize(dtype))
        return cls._from_tensor(raw.view(dtype) if raw.numel() else flow.empty(0, dtype=dtype))

    def pickle_storage_type(self):
        return _legacy_name(self.dtype).rpartition(".")[2]

    def _qualname(self):
        return "torch.storage.TypedStorage"

    def _repr_fields(self):
        return f"dtype={_torch_dtype(self.dtype)}, device={self.device}"


def _torch_dtype(dtype):
    return "torch." + str(dtype).rpartition(".")[2]


_warned = []


def _warn_typed():
    if not _warned:
        _warned.append(True)
        _warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
            "be the only storage class. This should only matter to you if you are using storages "
            "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
            "of tensor.storage()",
            UserWarning,
            stacklevel=3,
        )


_LEGACY = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
_BY_DTYPE = {}
for _name, _dt in _LEGACY.items():
    _cls = type(
        _name,
        (TypedStorage,),
        {"_fixed_dtype": getattr(flow, _dt), "__module__": "oneflow_like", "__qualname__": _name},
    )
    _BY_DTYPE[getattr(flow, _dt)] = _cls
    globals()[_name] = _cls
    __all__.append(_name)
del _name, _dt, _cls


def _legacy_class(dtype):
    return _BY_DTYPE[dtype]


def _legacy_name(dtype):
    return "torch." + _legacy_class(dtype).__name__


def _as_type(storage, dtype):
    """storage.type(T): T a legacy class, its name ('torch.FloatStorage') or a dtype."""
    if isinstance(dtype, str):
        cls = globals().get(dtype.rpartition(".")[2])
        if cls is None:
            raise ValueError(f"storage.type: unknown storage type {dtype!r}")
        dtype = cls._fixed_dtype
    elif isinstance(dtype, type) and issubclass(dtype, TypedStorage):
        dtype = dtype._fixed_dtype
    return storage._as(dtype)


# ---- Tensor methods and torch-level functions ----


def _untyped_storage(self):
    return UntypedStorage._from_tensor(_bytes_of(self))


def _typed_storage(self):
    return TypedStorage._from_tensor(_storage_elements(_untyped_storage(self), self.dtype))


def _storage(self):
    _warn_typed()
    return _typed_storage(self)


def _storage_type(self):
    return _legacy_class(self.dtype)


def _is_set_to(self, tensor):
    """True when both tensors are the same view of the same memory (storage, offset, sizes and
    strides), as torch's."""
    if self.is_lazy or tensor.is_lazy:
        return False
    if self._storage_numel() == 0 or tensor._storage_numel() == 0:
        return False
    a, b = self.detach()._storage_view(), tensor.detach()._storage_view()
    return (
        a.data_ptr() == b.data_ptr()
        and self.dtype == tensor.dtype
        and self.storage_offset() == tensor.storage_offset()
        and tuple(self.shape) == tuple(tensor.shape)
        and self.stride() == tensor.stride()
    )


def _storage_elements(storage, dtype):
    """A 1-D tensor of `dtype` elements over a storage's memory (for Tensor.set_)."""
    raw = storage.untyped()._t
    if raw.numel() % _itemsize(dtype):
        raise RuntimeError(
            f"a storage of {raw.numel()} bytes is not a whole number of {dtype} elements "
            f"({_itemsize(dtype)} bytes each)"
        )
    return raw.view(dtype) if raw.numel() else flow.empty(0, dtype=dtype, device=raw.device)


def from_file(
    filename,
    shared=None,
    size=0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """torch.from_file: a 1-D tensor of `size` elements over the file, memory-mapped. shared=True
    writes changes to the file (creating or growing it as needed); otherwise the file must hold
    size elements and changes stay private."""
    dtype = dtype or flow.get_default_dtype()
    raw = _map_file(filename, bool(shared), size * _itemsize(dtype))
    t = raw.view(dtype) if raw.numel() else flow.empty(0, dtype=dtype)
    if device is not None and flow.device(device).type != "cpu":
        t = t.to(device)
    return t.requires_grad_(requires_grad) if requires_grad else t


flow.Tensor.untyped_storage = _untyped_storage
flow.Tensor.storage = _storage
flow.Tensor._typed_storage = _typed_storage
flow.Tensor.storage_type = _storage_type
flow.Tensor.is_set_to = _is_set_to
flow.Tensor.nbytes = property(lambda self: self.numel() * self.element_size())
flow.Tensor.itemsize = property(lambda self: self.element_size())
