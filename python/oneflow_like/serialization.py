"""flow.save / flow.load: tensors and any picklable object in one self-describing file.

Layout (docs/serialization.md): 8-byte magic b"OFLSAVE\\0", uint64 little-endian header length,
UTF-8 JSON header, zero padding to a 64-byte boundary, then each tensor's raw little-endian bytes
(C order) at the header's offsets, relative to the start of the data section. Tensors, NumPy
arrays, dict/OrderedDict, list, tuple, str, int, float, bool and None are stored as JSON in the
header (version 1). Any other object (a whole nn.Module, an argparse Namespace, ...) is pickled
into the data section with its tensors still stored apart (version 2); loading such a file with
weights_only=True (the default, as in PyTorch 2.6) unpickles only allowlisted globals
(add_safe_globals / safe_globals).
"""
from collections import OrderedDict
import _compat_pickle
import contextlib
import inspect
import io
import json
import os
import pickle
import struct

import numpy as np

import oneflow_like as flow
from oneflow_like import _safetensors as _st

MAGIC = b"OFLSAVE\0"
VERSION = 2  # 1: JSON object tree only; 2: adds the pickled object ("pickle" in the header)
_ALIGN = 64


def _encode(obj, tensors, seen):
    """obj -> JSON-able tree; tensors appended to `tensors` (an alias is stored once)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, flow.Tensor) or isinstance(obj, np.ndarray):
        key = id(obj)
        if key not in seen:
            seen[key] = len(tensors)
            tensors.append(obj)
        return {"__tensor__": seen[key]}
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, OrderedDict) else "dict"
        return {
            "__"
            + kind
            + "__": [[_encode(k, tensors, seen), _encode(v, tensors, seen)] for k, v in obj.items()]
        }
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, tensors, seen) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, tensors, seen) for v in obj]
    raise TypeError(
        f"flow.save cannot store an object of type {type(obj).__name__} "
        "(tensors, NumPy arrays, dicts, lists, tuples, str, numbers, bool, None only)"
    )


def _decode(node, arrays):
    if isinstance(node, list):
        return [_decode(v, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    ((tag, value),) = node.items()
    if tag == "__tensor__":
        return arrays[value]
    if tag == "__tuple__":
        return tuple(_decode(v, arrays) for v in value)
    if tag in ("__dict__", "__odict__"):
        out = OrderedDict() if tag == "__odict__" else {}
        for k, v in value:
            k = _decode(k, arrays)
            out[tuple(k) if isinstance(k, list) else k] = _decode(v, arrays)
        return out
    raise ValueError(f"flow.load: unknown tag {tag!r} in file header")


# dtypes NumPy has no type for: their bytes are stored as the unsigned integer of their size and
# the entry's "flow_dtype" names the dtype to view them as again on load.
_RAW_DTYPES = {
    "bfloat16": "uint16",
    "float8_e4m3fn": "uint8",
    "float8_e5m2": "uint8",
    "float8_e4m3fnuz": "uint8",
    "float8_e5m2fnuz": "uint8",
}


def _raw_name(t):
    if isinstance(t, np.ndarray):
        return None
    name = str(t.dtype).rpartition(".")[2]
    return name if name in _RAW_DTYPES else None


def _host_array(t):
    if isinstance(t, np.ndarray):
        a = t
    else:
        t = t.detach().cpu()
        raw = _raw_name(t)
        a = (t.contiguous().view(getattr(flow, _RAW_DTYPES[raw])) if raw else t).numpy()
    return np.array(a, order="C", copy=False)  # (np.ascontiguousarray would make 0-d arrays 1-d)


def _pick_format(format, f):
    if format is None:
        return "safetensors" if _st.is_safetensors_path(f) else "oneflow_like"
    if format not in ("oneflow_like", "safetensors"):
        raise ValueError(f"format must be 'oneflow_like' or 'safetensors', got {format!r}")
    return format


def _parameter_class():
    from oneflow_like.nn import Parameter

    return Parameter


def _append_chunk(chunks, data, offset):
    """Appends `data` and zero padding to the next 64-byte boundary; returns the new offset."""
    chunks.append(data)
    offset += len(data)
    pad = -offset % _ALIGN
    chunks.append(b"\0" * pad)
    return offset + pad


class _Pickler(pickle.Pickler):
    """Pickles with tensors, arrays, dtypes and devices kept out of the stream."""

    def __init__(self, file, protocol, tensors, seen):
        super().__init__(file, protocol)
        self._tensors, self._seen = tensors, seen

    def persistent_id(self, obj):
        if isinstance(obj, (flow.Tensor, np.ndarray)):
            if id(obj) not in self._seen:
                self._seen[id(obj)] = len(self._tensors)
                self._tensors.append(obj)
            return ("tensor", self._seen[id(obj)])
        if isinstance(obj, flow.dtype):
            return ("dtype", str(obj).rpartition(".")[2])
        if isinstance(obj, flow.device):
            return ("device", str(obj))
        return None


def save(
    obj,
    f,
    pickle_module=None,
    pickle_protocol=2,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
    *,
    format=None,
    metadata=None,
):
    """Writes `obj` to the path or binary file object `f`: tensors, NumPy arrays and nested
    dicts/lists/tuples of them and plain values as JSON plus tensor bytes; any other picklable
    object (whole modules, optimizers, custom classes) pickled, its tensors stored apart.
    `pickle_module` (default: pickle) and `pickle_protocol` are PyTorch's. A path ending in
    `.safetensors` (or format="safetensors") writes a safetensors file instead: a flat dict of
    str -> tensor, with optional str -> str `metadata`, readable by PyTorch, JAX and the
    safetensors tools."""
    if _pick_format(format, f) == "safetensors":
        return _st.save(obj, f, metadata)
    if metadata is not None:
        raise ValueError("flow.save: metadata= is only stored in safetensors files")
    tensors, seen = [], {}
    blob = None
    try:
        tree = _encode(obj, tensors, seen)
    except TypeError:  # not a plain container tree: pickle it
        tensors, seen = [], {}
        buf = io.BytesIO()
        pickler = (pickle_module or pickle).Pickler
        if pickler is not pickle.Pickler:
            raise ValueError(
                f"flow.save: pickle_module {pickle_module!r} has its own Pickler; only the "
                "standard pickle module is supported"
            )
        _Pickler(buf, pickle_protocol, tensors, seen).dump(obj)
        blob = buf.getvalue()
    table, chunks, offset = [], [], 0
    for t in tensors:
        a = _host_array(t)
        le = a.astype(a.dtype.newbyteorder("<"), copy=False)
        entry = {
            "dtype": a.dtype.name,
            "shape": list(a.shape),
            "offset": offset,
            "nbytes": int(le.nbytes),
        }
        if isinstance(t, np.ndarray):
            entry["numpy"] = True
        else:
            if _raw_name(t):
                entry["flow_dtype"] = _raw_name(t)
            entry["requires_grad"] = bool(t.requires_grad)
            entry["device"] = str(t.device)
            if isinstance(t, _parameter_class()):
                entry["parameter"] = True
        table.append(entry)
        offset = _append_chunk(chunks, le.tobytes(), offset)
    head_obj = {"format": "oneflow_like", "version": 1, "tensors": table}
    if blob is None:
        head_obj["object"] = tree
    else:
        head_obj.update(version=2, pickle={"offset": offset, "nbytes": len(blob)})
        offset = _append_chunk(chunks, blob, offset)
    header = json.dumps(head_obj, separators=(",", ":")).encode("utf-8")
    head = MAGIC + struct.pack("<Q", len(header)) + header
    head += b"\0" * (-len(head) % _ALIGN)
    if isinstance(f, (str, os.PathLike)):
        tmp = os.fspath(f) + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(head)
            for c in chunks:
                fh.write(c)
        os.replace(tmp, f)
    else:
        f.write(head)
        for c in chunks:
            f.write(c)


# ---- load ------------------------------------------------------------------------------------

_SAFE_GLOBALS = {}  # "module.name" -> object, allowed by the weights_only unpickler
_SAFE_BUILTINS = {
    ("collections", "OrderedDict"),
    ("collections", "defaultdict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "slice"),
    ("builtins", "range"),
    ("builtins", "bytearray"),
    ("oneflow_like._tensor", "Size"),
}


def _global_name(obj):
    return f"{obj.__module__}.{getattr(obj, '__qualname__', obj.__name__)}"


def add_safe_globals(safe_globals):
    """Allows the classes/functions in `safe_globals` (objects, or (object, "module.name")
    pairs) in files loaded with weights_only=True, for the rest of the process."""
    for g in safe_globals:
        obj, name = g if isinstance(g, tuple) else (g, _global_name(g))
        _SAFE_GLOBALS[name] = obj


def get_safe_globals():
    return list(_SAFE_GLOBALS.values())


def clear_safe_globals():
    _SAFE_GLOBALS.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Within the `with` block, also allows `safe_globals` under weights_only=True."""
    saved = dict(_SAFE_GLOBALS)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _SAFE_GLOBALS.clear()
        _SAFE_GLOBALS.update(saved)


class _Unpickler(pickle.Unpickler):
    """Unpickles with tensors from the file's table; with weights_only, only allowlisted
    globals may be named."""

    def __init__(self, file, arrays, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._arrays, self._weights_only = arrays, weights_only

    def persistent_load(self, pid):
        kind, value = pid
        if kind == "tensor":
            return self._arrays[value]
        if kind == "dtype":
            return getattr(flow, value)
        if kind == "device":
            return flow.device(value)
        raise pickle.UnpicklingError(f"flow.load: unknown persistent id {pid!r}")

    def find_class(self, module, name):
        # Protocol 2 streams name Python 2 modules (__builtin__.set): compare Python 3 names.
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if not self._weights_only or (module, name) in _SAFE_BUILTINS:
            return super().find_class(module, name)
        full = f"{module}.{name}"
        if full in _SAFE_GLOBALS:
            return _SAFE_GLOBALS[full]
        raise pickle.UnpicklingError(
            f"Weights only load failed: unsupported global {full} is not allowed by default. "
            f"If you trust the file, allow it with "
            f"oneflow_like.serialization.add_safe_globals([{name}]) or within "
            f"`with oneflow_like.serialization.safe_globals([{name}]):`, or load with "
            f"weights_only=False (which runs any code the file names)."
        )


def _positional_arity(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    return sum(1 for p in params if p.kind in kinds)


def _place(t, saved_device, map_location):
    """Moves a loaded (CPU) tensor where PyTorch's map_location says: None -> the device it
    was saved from; a device or string -> there; a dict -> dict[saved] (else saved); a
    callable -> fn(tensor, saved_location) (or fn(tensor)), None meaning the saved device."""
    target = saved_device
    if callable(map_location) and not isinstance(map_location, flow.device):
        args = (t, saved_device) if _positional_arity(map_location) >= 2 else (t,)
        out = map_location(*args)
        if out is not None:
            return out
    elif isinstance(map_location, dict):
        target = map_location.get(saved_device, saved_device)
    elif map_location is not None:
        target = map_location
    target = flow.device(target) if isinstance(target, str) else target
    if target.type == "cuda" and not flow.cuda.is_available():
        raise RuntimeError(
            f"flow.load: attempting to deserialize a tensor saved on {saved_device}, but "
            "oneflow_like.cuda.is_available() is False. On a CPU-only machine, pass "
            "map_location='cpu' (or map_location=oneflow_like.device('cpu'))."
        )
    return t if target.type == "cpu" else t.to(target)


def load(
    f,
    map_location=None,
    pickle_module=None,
    *,
    weights_only=None,
    mmap=None,
    format=None,
    **pickle_load_args,
):
    """Reads what save() wrote, or a safetensors file (by its `.safetensors` path, format=, or
    its contents). Tensors come back with their saved requires_grad (nn.Parameters as
    Parameters) on the device `map_location` names (see _place; None: where they were saved).
    A pickled object is unpickled only from allowlisted globals unless weights_only=False
    (None means True, PyTorch 2.6's default); plain container files never run code."""
    weights_only = True if weights_only is None else bool(weights_only)
    if isinstance(f, (str, os.PathLike)):
        source = repr(os.fspath(f))
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        source = "the file object"
        data = f.read()
    if data[:8] != MAGIC and (
        _pick_format(format, f) == "safetensors" or _st.looks_like_safetensors(data)
    ):
        out = _st.load(data, source)
        return {k: _place(t, "cpu", map_location) for k, t in out.items()}
    if data[:8] != MAGIC:
        raise ValueError(
            f"flow.load: {source} is not a oneflow_like or safetensors file (bad magic)"
        )
    (n,) = struct.unpack("<Q", data[8:16])
    header = json.loads(data[16 : 16 + n].decode("utf-8"))
    if header.get("version", 0) > VERSION:
        raise ValueError(
            f"flow.load: file version {header['version']} is newer than this reader ({VERSION})"
        )
    base = 16 + n + (-(16 + n) % _ALIGN)
    arrays = []
    for e in header["tensors"]:
        start = base + e["offset"]
        if start + e["nbytes"] > len(data):
            raise ValueError("flow.load: file is truncated")
        dt = np.dtype(e["dtype"]).newbyteorder("<")
        a = np.frombuffer(data, dtype=dt, count=e["nbytes"] // max(dt.itemsize, 1), offset=start)
        a = a.astype(dt.newbyteorder("="), copy=True).reshape(e["shape"])
        if e.get("numpy"):
            arrays.append(a)
            continue
        t = flow.from_numpy(a)
        if "flow_dtype" in e:
            if e["flow_dtype"] not in _RAW_DTYPES:
                raise ValueError(f"flow.load: unknown stored dtype {e['flow_dtype']!r}")
            t = t.view(getattr(flow, e["flow_dtype"]))
        t = _place(t, e.get("device", "cpu"), map_location)
        if e.get("parameter"):
            t = _parameter_class()(t, bool(e.get("requires_grad")))
        elif e.get("requires_grad"):
            t.requires_grad = True
        arrays.append(t)
    if "pickle" not in header:
        return _decode(header["object"], arrays)
    start = base + header["pickle"]["offset"]
    blob = data[start : start + header["pickle"]["nbytes"]]
    if len(blob) != header["pickle"]["nbytes"]:
        raise ValueError("flow.load: file is truncated")
    return _Unpickler(io.BytesIO(blob), arrays, weights_only, **pickle_load_args).load()


__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]


# ---- torch.serialization's location helpers ---------------------------------------------------


class SourceChangeWarning(Warning):
    """torch's warning that a pickled module's source changed since it was saved."""


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory for the duration of the `with` block (removed afterwards)."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _device_of(obj):
    return obj.device if isinstance(obj, flow.Tensor) else getattr(obj, "device", None)


def _cpu_tag(obj):
    d = _device_of(obj)
    return "cpu" if d is not None and d.type == "cpu" else None


def _cuda_tag(obj):
    d = _device_of(obj)
    if d is not None and d.type == "cuda":
        return f"cuda:{d.index or 0}"
    return None


def _cpu_deserialize(obj, location):
    return obj if location == "cpu" else None


def _cuda_deserialize(obj, location):
    if not location.startswith("cuda"):
        return None
    if not flow.cuda.is_available():
        raise RuntimeError(
            f"Attempting to deserialize object on a CUDA device ({location}) but "
            "oneflow_like.cuda.is_available() is False. If you are running on a CPU-only "
            "machine, please use flow.load with map_location='cpu' to map your storages to "
            "the CPU."
        )
    return obj.to(flow.device(location)) if isinstance(obj, flow.Tensor) else obj.cuda(location)


# (priority, tagger, deserializer), lowest priority first, as torch's _package_registry
_package_registry = []


def register_package(priority, tagger, deserializer):
    """Registers how objects of a device kind are tagged when saved (tagger(obj) -> a location
    string or None) and restored (deserializer(obj, location) -> the object there, or None)."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


register_package(10, _cpu_tag, _cpu_deserialize)
register_package(20, _cuda_tag, _cuda_deserialize)


def location_tag(storage):
    """The location string ('cpu', 'cuda:0', ...) of a tensor or storage."""
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError(f"don't know how to determine data location of {type(storage).__name__}")


def default_restore_location(storage, location):
    """The tensor or storage moved to `location` by the first registered deserializer that
    accepts it."""
    for _, _, fn in _package_registry:
        result = fn(storage, location)
        if result is not None:
            return result
    raise RuntimeError(
        f"don't know how to restore data location of {type(storage).__name__} (tagged with "
        f"{location})"
    )


def normalize_storage_type(storage_type):
    """The package-level class of a storage type (flow.FloatStorage for FloatStorage)."""
    return getattr(flow, storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor type of a storage's dtype (flow.FloatTensor for a float32 storage)."""
    name = type(storage).__name__
    if name in ("TypedStorage", "UntypedStorage"):
        name = flow.storage._legacy_class(getattr(storage, "dtype", flow.uint8)).__name__
    return getattr(flow, name.replace("Storage", "Tensor"))


class StorageType:
    """A storage type by name (torch's StorageType('FloatStorage')): its dtype."""

    def __init__(self, name):
        self._dtype = getattr(flow, name)._fixed_dtype

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self._dtype})"
