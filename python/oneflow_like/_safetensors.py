"""safetensors files for flow.save / flow.load, through the `safetensors` package (PyPI).

A safetensors file holds a flat dict of named tensors (plus optional str -> str metadata), so
weights move between PyTorch, JAX and us. bfloat16 has no NumPy dtype: its bytes are the upper
halves of the float32 values (exact, since the values came from bfloat16); the float8 types'
bytes travel as uint8.
"""
import os

import numpy as np

import oneflow_like as flow

# flow dtype -> (safetensors header code, dtype name safetensors' serializer takes, NumPy dtype).
_CODES = {
    flow.float64: ("F64", "float64", np.float64),
    flow.float32: ("F32", "float32", np.float32),
    flow.float16: ("F16", "float16", np.float16),
    flow.bfloat16: ("BF16", "bfloat16", np.uint16),
    flow.int64: ("I64", "int64", np.int64),
    flow.int32: ("I32", "int32", np.int32),
    flow.int8: ("I8", "int8", np.int8),
    flow.uint8: ("U8", "uint8", np.uint8),
    flow.bool: ("BOOL", "bool", np.bool_),
    flow.int16: ("I16", "int16", np.int16),
    flow.uint16: ("U16", "uint16", np.uint16),
    flow.uint32: ("U32", "uint32", np.uint32),
    flow.uint64: ("U64", "uint64", np.uint64),
    # float8: NumPy has no type; the bytes travel as uint8 (Tensor.view reinterprets them)
    flow.float8_e4m3fn: ("F8_E4M3", "float8_e4m3fn", np.uint8),
    flow.float8_e5m2: ("F8_E5M2", "float8_e5m2", np.uint8),
    flow.float8_e4m3fnuz: ("F8_E4M3FNUZ", "float8_e4m3fnuz", np.uint8),
    flow.float8_e5m2fnuz: ("F8_E5M2FNUZ", "float8_e5m2fnuz", np.uint8),
}
_FLOAT8 = (flow.float8_e4m3fn, flow.float8_e5m2, flow.float8_e4m3fnuz, flow.float8_e5m2fnuz)
_BY_CODE = {code: (dt, np_dt) for dt, (code, _, np_dt) in _CODES.items()}


def _package():
    try:
        import safetensors
    except ImportError as e:  # make deps installs it; a user's own environment may lack it
        raise ImportError(
            "safetensors files need the 'safetensors' package: pip install safetensors"
        ) from e
    return safetensors


def is_safetensors_path(f):
    return isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors")


def looks_like_safetensors(data):
    """safetensors files start with a little-endian u64 header length, then a JSON object."""
    return len(data) >= 9 and data[8:9] == b"{"


def _c_order(a):
    return np.require(a, requirements="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)


def _host_bytes(name, t):
    """C-order little-endian bytes of `t` and its safetensors dtype name."""
    if isinstance(t, np.ndarray):
        t = flow.from_numpy(_c_order(t))
    if not isinstance(t, flow.Tensor):
        raise TypeError(
            f"[flow.save] safetensors stores tensors only; {name!r} is a {type(t).__name__}"
        )
    if t.dtype not in _CODES:
        raise TypeError(f"[flow.save] safetensors: tensor {name!r} has unsupported dtype {t.dtype}")
    _, spec_name, np_dt = _CODES[t.dtype]
    t = t.detach().cpu()
    a = _c_order((t.contiguous().view(flow.uint8) if t.dtype in _FLOAT8 else t).numpy())
    if t.dtype == flow.bfloat16:  # numpy() widened it to float32: keep the upper 16 bits
        a = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return _c_order(a.astype(np.dtype(np_dt).newbyteorder("<"), copy=False)), spec_name


def save(obj, f, metadata=None):
    if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
        raise TypeError(
            "[flow.save] a safetensors file holds a flat dict of str -> tensor "
            f"(a state_dict); got {type(obj).__name__}"
        )
    if metadata is not None and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError("[flow.save] safetensors metadata must map str to str")
    st = _package()
    arrays, specs = [], {}
    for name, t in obj.items():
        a, spec_name = _host_bytes(name, t)
        arrays.append(a)  # keeps each buffer alive while the serializer reads data_ptr
        specs[name] = st.TensorSpec(
            dtype=spec_name, shape=list(a.shape), data_ptr=a.ctypes.data, data_len=a.nbytes
        )
    if isinstance(f, (str, os.PathLike)):
        tmp = os.fspath(f) + ".tmp"
        st.serialize_file(specs, tmp, metadata=metadata)
        os.replace(tmp, f)
    else:
        f.write(bytes(st.serialize(specs, metadata=metadata)))


def load(data, source):
    """The dict of tensors in safetensors bytes `data` (read from `source`, named in errors)."""
    st = _package()
    try:
        entries = st.deserialize(data)
    except Exception as e:  # the package raises SafetensorError for malformed files
        raise ValueError(f"flow.load: {source} is not a valid safetensors file: {e}") from None
    out = {}
    for name, e in entries:
        if e["dtype"] not in _BY_CODE:
            raise TypeError(
                f"flow.load: {source}: tensor {name!r} has dtype {e['dtype']}, "
                f"which oneflow_like does not support ({', '.join(sorted(_BY_CODE))})"
            )
        dt, np_dt = _BY_CODE[e["dtype"]]
        a = np.frombuffer(e["data"], dtype=np.dtype(np_dt).newbyteorder("<"))
        a = a.astype(np.dtype(np_dt), copy=True).reshape(e["shape"])
        if dt == flow.bfloat16:
            t = flow.from_numpy((a.astype(np.uint32) << 16).view(np.float32)).to(flow.bfloat16)
        elif dt in _FLOAT8:
            t = flow.from_numpy(a).view(dt)
        else:
            t = flow.from_numpy(a)
        out[name] = t
    return out
