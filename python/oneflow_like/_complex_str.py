"""Printing complex tensors as torch 2.x does: each of the real and imaginary parts gets its own
formatter (integer mode, fixed point with `precision` digits, or scientific notation when the
nonzero finite magnitudes span more than 1000x, exceed 1e8 or fall below 1e-4; every element
padded to the widest), an element prints as real + sign + |imag| + 'j', lines wrap at
`linewidth`, and tensors of more than `threshold` elements are summarised to `edgeitems` at each
edge with '...' (the formatters then see only the elements shown). Works on the NumPy copy."""

import math

import numpy as np

_DEFAULTS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80)


def _opts(options):
    o = dict(_DEFAULTS)
    o.update({k: v for k, v in options.items() if k in _DEFAULTS})
    o["sci_mode"] = options.get("sci_mode")
    return o


class _PartFormatter:
    """The format of one part (real or imaginary) of every element printed."""

    def __init__(self, values, o):
        self.precision = o["precision"]
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size:
            lo, hi = np.abs(vals).min(), np.abs(vals).max()
            self.int_mode = bool(np.all(vals == np.ceil(vals)))
            wide = hi / lo > 1000.0 or hi > 1.0e8
            if self.int_mode:
                self.sci_mode = bool(wide)
                for v in vals:
                    s = f"{v:.{self.precision}e}" if self.sci_mode else f"{v:.0f}"
                    self.max_width = max(self.max_width, len(s) + (0 if self.sci_mode else 1))
            else:
                self.sci_mode = bool(wide or lo < 1.0e-4)
                spec = "e" if self.sci_mode else "f"
                for v in vals:
                    self.max_width = max(self.max_width, len(f"{v:.{self.precision}{spec}}"))
            if o["sci_mode"] is not None:  # (torch: not for a part with no such values)
                self.sci_mode = bool(o["sci_mode"])

    def format(self, v):
        v = float(v)
        if self.sci_mode:
            s = f"{v:{self.max_width}.{self.precision}e}"
        elif self.int_mode:
            s = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            s = f"{v:.{self.precision}f}"
        return " " * (self.max_width - len(s)) + s


def _element(z, fr, fi):
    re = fr.format(z.real)
    im = (fi.format(z.imag) + "j").lstrip()
    return re + im if im[0] in "+-" else re + "+" + im


def _summarized(a, e):
    """The elements that print when summarising (torch's get_summarized_data)."""
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty([0] * a.ndim, a.dtype)
    rows = (
        list(range(e)) + list(range(a.shape[0] - e, a.shape[0]))
        if a.shape[0] > 2 * e
        else range(a.shape[0])
    )
    return np.stack([_summarized(a[i], e) for i in rows])


def _vector(a, indent, summarize, fr, fi, o):
    e = o["edgeitems"]
    per_line = max(
        1, int(math.floor((o["linewidth"] - indent) / (fr.max_width + fi.max_width + 3)))
    )
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [_element(z, fr, fi) for z in a[:e]] + [" ..."]
        data += [_element(z, fr, fi) for z in a[-e:]]
    else:
        data = [_element(z, fr, fi) for z in a]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, fr, fi, o):
    if a.ndim == 0:
        return _element(a.item(), fr, fi)
    if a.ndim == 1:
        return _vector(a, indent, summarize, fr, fi, o)
    e = o["edgeitems"]
    if summarize and a.shape[0] > 2 * e:
        parts = [_nested(a[i], indent + 1, summarize, fr, fi, o) for i in range(e)] + ["..."]
        parts += [
            _nested(a[i], indent + 1, summarize, fr, fi, o)
            for i in range(a.shape[0] - e, a.shape[0])
        ]
    else:
        parts = [_nested(a[i], indent + 1, summarize, fr, fi, o) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def complex_body(a, options, indent=7):
    """The bracketed body of a complex ndarray as torch prints it after 'tensor('."""
    if a.size == 0:
        return "[]"
    o = _opts(options)
    summarize = a.size > o["threshold"]
    shown = _summarized(a, o["edgeitems"]) if summarize else a
    fr, fi = _PartFormatter(shown.real, o), _PartFormatter(shown.imag, o)
    return _nested(a, indent, summarize, fr, fi, o)


def add_suffixes(text, suffixes, indent, linewidth):
    """torch's _add_suffixes: ', suffix' on the last line, or on a new line when it would pass
    the line width; then ')'."""
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    out.append(")")
    return "".join(out)
