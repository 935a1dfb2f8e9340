"""torch.testing.assert_close: tensors (and numbers, sequences and mappings of them) close
within `atol + rtol * |expected|`, with PyTorch's default tolerances by dtype and its report of
the mismatched elements."""
import collections.abc
import math

import numpy as np

import oneflow_like as flow
from oneflow_like import _C

__all__ = ["assert_close", "make_tensor"]

# (rtol, atol) by dtype name, as torch.testing (integers and bool: exact).
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def _dtype_name(d):
    return str(d).split(".")[-1]


def _tolerances(dtype, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None:
        return rtol, atol
    return _TOLERANCES.get(_dtype_name(dtype), (0.0, 0.0))


def _fail(msg, default):
    if callable(msg):
        raise AssertionError(msg(default))
    raise AssertionError(default if msg is None else msg)


def _index_str(idx):
    return str(tuple(int(i) for i in idx))


def _compare_tensors(
    actual,
    expected,
    rtol,
    atol,
    equal_nan,
    check_device,
    check_dtype,
    check_stride,
    msg,
    path,
    scalars=False,
):
    where = f" at {path}" if path else ""
    if actual.shape != expected.shape:
        _fail(
            msg,
            f"The values for attribute 'shape' do not match{where}: "
            f"{actual.shape} != {expected.shape}.",
        )
    if check_device and actual.device != expected.device:
        _fail(
            msg,
            f"The values for attribute 'device' do not match{where}: "
            f"{actual.device} != {expected.device}.",
        )
    if check_dtype and actual.dtype != expected.dtype:
        _fail(
            msg,
            f"The values for attribute 'dtype' do not match{where}: "
            f"{actual.dtype} != {expected.dtype}.",
        )
    if check_stride and actual.stride() != expected.stride():
        _fail(
            msg,
            f"The values for attribute 'stride()' do not match{where}: "
            f"{actual.stride()} != {expected.stride()}.",
        )
    if rtol is None:  # the looser of the two dtypes' defaults (they match when check_dtype)
        (r1, a1), (r2, a2) = _tolerances(actual.dtype, None, None), _tolerances(
            expected.dtype, None, None
        )
        rtol, atol = max(r1, r2), max(a1, a2)
    a = actual.detach().to("cpu")
    e = expected.detach().to("cpu")
    floating = a.dtype.is_floating_point or e.dtype.is_floating_point
    an = a.double().numpy() if floating else a.to(flow.int64).numpy()
    en = e.double().numpy() if floating else e.to(flow.int64).numpy()
    if floating:
        close = np.isclose(an, en, rtol=rtol, atol=atol, equal_nan=equal_nan)
        close |= an == en  # equal infinities
    else:
        close = np.abs(an - en) <= atol + rtol * np.abs(en)
    if close.all():
        return
    bad = int((~close).sum())
    total = close.size
    equality = rtol == 0 and atol == 0
    allowed = (lambda tol: "") if equality else (lambda tol: f" (up to {tol} allowed)")
    kind = "Scalars" if scalars else "Tensor-likes"
    with np.errstate(all="ignore"):
        diff = np.abs(an - en)  # int64 for integers, as torch prints them
        rel = diff / np.abs(en)
    header = f"{kind} are not {'equal' if equality else 'close'}!{where}"
    if scalars:
        lines = [
            header,
            "",
            f"Expected {en.item()} but got {an.item()}.",
            f"Absolute difference: {diff.item()}{allowed(atol)}",
            f"Relative difference: {rel.item()}{allowed(rtol)}",
        ]
    else:
        # The mismatches only; the first greatest (NaN counts as greatest, as torch.max).
        masked = np.where(close, -1.0, np.nan_to_num(diff.astype(np.float64), nan=np.inf))
        masked_rel = np.where(close, -1.0, np.nan_to_num(rel, nan=np.inf))
        ia = np.unravel_index(int(np.argmax(masked)), an.shape)
        ir = np.unravel_index(int(np.argmax(masked_rel)), an.shape)
        lines = [
            header,
            "",
            f"Mismatched elements: {bad} / {total} ({bad / total:.1%})",
            f"Greatest absolute difference: {diff[ia].item()} at index {_index_str(ia)}"
            f"{allowed(atol)}",
            f"Greatest relative difference: {rel[ir].item()} at index {_index_str(ir)}"
            f"{allowed(rtol)}",
        ]
    _fail(msg, "\n".join(lines))


def _is_number(x):
    return isinstance(x, (bool, int, float, complex, np.number))


def _compare(actual, expected, path, kw):
    if (
        isinstance(actual, _C.Tensor)
        or isinstance(expected, _C.Tensor)
        or isinstance(actual, np.ndarray)
    ):
        if not (isinstance(actual, _C.Tensor) and isinstance(expected, _C.Tensor)):
            if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
                actual, expected = flow.from_numpy(actual), flow.from_numpy(expected)
            else:
                raise TypeError(
                    f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}."
                )
        return _compare_tensors(actual, expected, path=path, **kw)
    if _is_number(actual) and _is_number(expected):
        if kw["check_dtype"] and type(actual) is not type(expected):
            _fail(
                kw["msg"],
                f"The values for attribute 'type' do not match: "
                f"{type(actual)} != {type(expected)}.",
            )
        dtype = flow.float64 if isinstance(expected, float) else flow.int64
        if isinstance(actual, float) or isinstance(expected, float):
            dtype = flow.float64
        return _compare_tensors(
            flow.tensor(actual, dtype=dtype),
            flow.tensor(expected, dtype=dtype),
            path=path,
            scalars=True,
            **dict(kw, check_dtype=False),
        )
    if isinstance(actual, collections.abc.Mapping) and isinstance(
        expected, collections.abc.Mapping
    ):
        if set(actual) != set(expected):
            _fail(
                kw["msg"],
                f"The keys of the mappings do not match: {sorted(map(str, actual))} "
                f"!= {sorted(map(str, expected))}",
            )
        for k in expected:
            _compare(actual[k], expected[k], f"{path}[{k!r}]" if path else f"item [{k!r}]", kw)
        return None
    if (
        isinstance(actual, collections.abc.Sequence)
        and not isinstance(actual, str)
        and isinstance(expected, collections.abc.Sequence)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            _fail(
                kw["msg"],
                f"The length of the sequences mismatch: {len(actual)} != " f"{len(expected)}",
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]" if path else f"item [{i}]", kw)
        return None
    if actual == expected:
        return None
    raise TypeError(
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """torch.testing.assert_close; raises AssertionError with PyTorch's report when the inputs
    are not close, ValueError when only one of rtol/atol is given."""
    if (rtol is None) != (atol is None):
        _tolerances(None, rtol, atol)  # raises
    kw = dict(
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_stride=check_stride,
        msg=msg,
    )
    _compare(actual, expected, "", kw)


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
    memory_format=None,
):
    """torch.testing.make_tensor: uniform values in [low, high) (defaults by dtype: [-9, 9) for
    floats and signed integers, [0, 10) for uint8, {False, True} for bool)."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    name = _dtype_name(dtype)
    if name == "bool":
        t = flow.randint(0, 2, shape, device=device).to(flow.bool)
    elif dtype.is_floating_point:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        if lo > hi:
            raise ValueError(f"low ({lo}) must be <= high ({hi})")
        t = flow.rand(*shape, dtype=flow.float64, device=device).mul(hi - lo).add(lo).to(dtype)
        if exclude_zero:
            t = flow.where(t == 0, flow.full_like(t, max(abs(lo), abs(hi)) / 2 or 1.0), t)
    else:
        lo = (0 if name == "uint8" else -9) if low is None else int(math.ceil(low))
        hi = 10 if high is None else int(math.ceil(high))
        t = flow.randint(lo, hi, shape, dtype=dtype, device=device)
        if exclude_zero:
            t = flow.where(t == 0, flow.ones_like(t), t)
    if noncontiguous and t.numel() > 1:
        t = flow.repeat_interleave(t.reshape(-1), 2)[::2].reshape(t.shape)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- torch.testing's deprecated dtype lists, assert_allclose, make_non_contiguous ------------
# (issue 19). This runtime has no complex dtypes in these lists: they are torch's without them.


def _unique(*groups):
    out = []
    for g in groups:
        for d in g:
            if d not in out:
                out.append(d)
    return tuple(out)


def floating_types():
    return (flow.float32, flow.float64)


def floating_types_and_half():
    return floating_types() + (flow.float16,)


def floating_types_and(*dtypes):
    return _unique(floating_types(), dtypes)


def integral_types():
    return (flow.uint8, flow.int8, flow.int16, flow.int32, flow.int64)


def integral_types_and(*dtypes):
    return _unique(integral_types(), dtypes)


def all_types():
    return floating_types() + integral_types()


def all_types_and(*dtypes):
    return _unique(all_types(), dtypes)


def all_types_and_half():
    return all_types() + (flow.float16,)


def complex_types():
    return ()


def all_types_and_complex():
    return all_types() + complex_types()


def all_types_and_complex_and(*dtypes):
    return _unique(all_types_and_complex(), dtypes)


def floating_and_complex_types():
    return floating_types() + complex_types()


def floating_and_complex_types_and(*dtypes):
    return _unique(floating_and_complex_types(), dtypes)


def double_types():
    return (flow.float64,)


def empty_types():
    return ()


def get_all_int_dtypes():
    return [flow.uint8, flow.int8, flow.int16, flow.int32, flow.int64]


def get_all_fp_dtypes(include_half=True, include_bfloat16=True):
    out = [flow.float32, flow.float64]
    if include_half:
        out.append(flow.float16)
    if include_bfloat16:
        out.append(flow.bfloat16)
    return out


def get_all_complex_dtypes(include_complex32=False):
    return []


def get_all_dtypes(include_half=True, include_bfloat16=True, include_bool=True,
                   include_complex=True, include_complex32=False, include_qint=False):  # fmt: skip
    out = get_all_int_dtypes() + get_all_fp_dtypes(include_half, include_bfloat16)
    if include_bool:
        out.append(flow.bool)
    return out


def get_all_math_dtypes(device):
    """Integer and float dtypes that arithmetic supports on `device` (float16 only on CUDA)."""
    out = get_all_int_dtypes() + [flow.float32, flow.float64]
    return out + [flow.float16] if str(device).startswith("cuda") else out


def get_all_device_types():
    return ["cpu", "cuda"] if _C.cuda.is_available() else ["cpu"]


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated torch.testing.assert_allclose: assert_close without the dtype and device
    checks (expected is converted to actual's), nan == nan by default."""
    import warnings

    warnings.warn(
        "torch.testing.assert_allclose() is deprecated; use torch.testing.assert_close()",
        FutureWarning,
    )
    if not isinstance(actual, flow.Tensor):
        actual = flow.tensor(actual)
    if not isinstance(expected, flow.Tensor):
        expected = flow.tensor(expected, dtype=actual.dtype)
    expected = expected.to(actual.dtype).to(actual.device)
    if expected.shape != actual.shape:
        expected = expected.expand_as(actual)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, None, None)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, msg=msg or None)


def make_non_contiguous(tensor):
    """A non-contiguous tensor with `tensor`'s values (a strided view into a larger buffer);
    tensors of 0 or 1 elements come back as copies (they cannot be non-contiguous)."""
    if tensor.numel() <= 1:
        return tensor.clone()
    wide = flow.stack([tensor, tensor], dim=-1)  # (..., 2): every other element is one copy
    out = wide.select(-1, 0)
    return out
