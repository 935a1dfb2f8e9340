"""Tensor printing as PyTorch 2.x prints (torch/_tensor_str.py's rules, written for NumPy data).

One formatter per tensor (two for complex: real and imaginary parts) decides from the finite
non-zero values (of the summarised data when the tensor is large) how every element prints:
- integer-valued floats: "1.", "-3." (int mode), unless the magnitudes span more than 1000x or
  exceed 1e8 (then scientific);
- other floats: `precision` digits after the point ("0.1000"), or scientific ("1.0000e-05") when
  the magnitudes span more than 1000x, exceed 1e8 or fall below 1e-4; `sci_mode` forces either;
- integers and bools: str(value);
every element right-aligned to the widest. Rows wrap at `linewidth`; more than `threshold`
elements print `edgeitems` at each edge of every dimension around "...". f16/bf16 print as f32.
Suffixes: device (not the CPU), dtype (not the default float, its complex, int64 or bool),
size= for empty or edge-less prints, grad_fn / requires_grad.
"""
import math

import numpy as np

PRINT_OPTS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """torch.set_printoptions: digits after the point, how many elements before summarising
    with '...', how many at each edge, the line width, scientific notation (None: automatic;
    like torch, every call sets it). `profile` ("default", "short", "full") sets the first four
    at once; the others given override it."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"[set_printoptions] profile must be one of {sorted(_PROFILES)}, got {profile!r}"
            )
        PRINT_OPTS.update(_PROFILES[profile])
    for k, v in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if v is not None:
            PRINT_OPTS[k] = v
    PRINT_OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options (torch._tensor_str.get_printoptions)."""
    return dict(PRINT_OPTS)


class _Formatter:
    def __init__(self, values):
        """values: a NumPy array (the elements that will print, or a summary of them)."""
        p = PRINT_OPTS["precision"]
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)]
            if not finite.size:
                return  # as torch: nothing to measure, and sci_mode is not applied either
            mags = np.abs(finite.astype(np.float64))
            lo, hi = mags.min(), mags.max()
            vals = finite.tolist()
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            if self.int_mode:
                if hi / lo > 1000.0 or hi > 1.0e8:
                    self.sci_mode = True
                    widths = (len(f"{v:.{p}e}") for v in vals)
                else:
                    widths = (len(f"{v:.0f}") + 1 for v in vals)
            elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
                self.sci_mode = True
                widths = (len(f"{v:.{p}e}") for v in vals)
            else:
                widths = (len(f"{v:.{p}f}") for v in vals)
            self.max_width = max(self.max_width, max(widths))
        if PRINT_OPTS["sci_mode"] is not None:
            self.sci_mode = bool(PRINT_OPTS["sci_mode"])

    def format(self, value):
        p = PRINT_OPTS["precision"]
        if self.floating:
            if self.sci_mode:
                s = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    s += "."
            else:
                s = f"{value:.{p}f}"
        else:
            s = f"{value}"
        return (self.max_width - len(s)) * " " + s


def _summarized(a):
    """The elements a summarised print shows (edgeitems at each edge of every dim)."""
    e = PRINT_OPTS["edgeitems"]
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return a[(slice(0, 0),) * a.ndim]
    rows = list(range(e)) + list(range(len(a) - e, len(a))) if a.shape[0] > 2 * e else range(len(a))
    return np.stack([_summarized(a[i]) for i in rows])


def _value(v, f1, f2):
    if f2 is None:
        return f1.format(v)
    real = f1.format(v.real)
    imag = (f2.format(v.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector(a, indent, summarize, f1, f2):
    e = PRINT_OPTS["edgeitems"]
    width = f1.max_width + 2 + (f2.max_width + 1 if f2 is not None else 0)
    per_line = max(1, int(math.floor((PRINT_OPTS["linewidth"] - indent) / width)))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [_value(v, f1, f2) for v in a[:e].tolist()] + [" ..."]
        data += [_value(v, f1, f2) for v in a[-e:].tolist()]
    else:
        data = [_value(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _value(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector(a, indent, summarize, f1, f2)
    e = PRINT_OPTS["edgeitems"]
    if summarize and a.shape[0] > 2 * e:
        slices = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."]
        slices += [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(len(a) - e, len(a))]
    else:
        slices = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def array_str(a, indent):
    """The bracketed body of a tensor's print, from its values as a NumPy array."""
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS["threshold"]
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or a.dtype.kind not in "fciub":
        a = a.astype(np.float32)  # f16, bf16, float8 print as f32 (torch's .float())
    shown = _summarized(a) if summarize else a
    if a.dtype.kind == "c":
        f1, f2 = _Formatter(shown.real.copy()), _Formatter(shown.imag.copy())
        return _nested(a, indent, summarize, f1, f2)
    return _nested(a, indent, summarize, _Formatter(shown), None)


def add_suffixes(body, suffixes, indent):
    out = [body]
    last = len(body) - body.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS["linewidth"]:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"
