"""flow.save / flow.load: tensors and nested containers in one self-describing file.

Layout (docs/serialization.md): 8-byte magic b"OFLSAVE\\0", uint64 little-endian header length,
UTF-8 JSON header, zero padding to a 64-byte boundary, then each tensor's raw little-endian bytes
(C order) at the header's offsets, relative to the start of the data section. No pickle: only
tensors, NumPy arrays, dict/OrderedDict, list, tuple, str, int, float, bool and None are stored.
"""
from collections import OrderedDict
import json
import os
import struct

import numpy as np

import oneflow_like as flow
from oneflow_like import _safetensors as _st

MAGIC = b"OFLSAVE\0"
VERSION = 1
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


def _host_array(t):
    a = t if isinstance(t, np.ndarray) else t.detach().cpu().numpy()
    return np.array(a, order="C", copy=False)  # (np.ascontiguousarray would make 0-d arrays 1-d)


def _pick_format(format, f):
    if format is None:
        return "safetensors" if _st.is_safetensors_path(f) else "oneflow_like"
    if format not in ("oneflow_like", "safetensors"):
        raise ValueError(f"format must be 'oneflow_like' or 'safetensors', got {format!r}")
    return format


def save(obj, f, format=None, metadata=None):
    """Writes `obj` (a tensor, or nested dicts/lists/tuples of tensors and plain values) to the
    path or binary file object `f`. A path ending in `.safetensors` (or format="safetensors")
    writes a safetensors file instead: a flat dict of str -> tensor, with optional str -> str
    `metadata`, readable by PyTorch, JAX and the safetensors tools."""
    if _pick_format(format, f) == "safetensors":
        return _st.save(obj, f, metadata)
    if metadata is not None:
        raise ValueError("flow.save: metadata= is only stored in safetensors files")
    tensors, seen = [], {}
    tree = _encode(obj, tensors, seen)
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
            entry["requires_grad"] = bool(t.requires_grad)
            entry["device"] = str(t.device)
        table.append(entry)
        chunks.append(le.tobytes())
        offset += le.nbytes
        pad = -offset % _ALIGN
        chunks.append(b"\0" * pad)
        offset += pad
    header = json.dumps(
        {"format": "oneflow_like", "version": VERSION, "tensors": table, "object": tree},
        separators=(",", ":"),
    ).encode("utf-8")
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


def load(f, map_location=None, format=None, weights_only=None):
    """Reads what save() wrote, or a safetensors file (by its `.safetensors` path, format=, or its
    contents). Tensors come back on the CPU (or on `map_location`: a device, a device string, or
    a callable tensor -> tensor), with their saved requires_grad. Nothing is unpickled, so
    `weights_only` (PyTorch's flag) changes nothing here."""
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
        return _st.load(data, source, map_location)
    if data[:8] != MAGIC:
        raise ValueError(
            f"flow.load: {source} is not a oneflow_like or safetensors file (bad magic)"
        )
    (n,) = struct.unpack("<Q", data[8:16])
    header = json.loads(data[16 : 16 + n].decode("utf-8"))
    if header.get("version", 0) > VERSION:
        raise ValueError(
            f"flow.load: file version {header['version']} is newer than this reader " f"({VERSION})"
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
        if map_location is not None:
            t = map_location(t) if callable(map_location) else t.to(map_location)
        if e.get("requires_grad"):
            t.requires_grad = True
        arrays.append(t)
    return _decode(header["object"], arrays)


__all__ = ["save", "load"]
