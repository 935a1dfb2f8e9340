"""Shared helpers for benchmarks/bench_*.py: PyTorch set-up, median timing, and table printing.

Every benchmark compares with PyTorch (Debian's python3-torch, CPU) in the same run. The machine
is shared, so the two sides are measured interleaved (ours, theirs, ours, theirs, ...) and the
median of the repeats is reported: a burst of load then hits both columns alike.
"""
import os
import statistics
import sys
import time

# PyTorch's OpenMP threads spin between parallel regions unless told otherwise; set before import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_HERE = os.path.dirname(os.path.abspath(__file__))
_PY = os.path.join(os.path.dirname(_HERE), "python")
if _PY not in sys.path and os.path.isdir(os.path.join(_PY, "oneflow_like")):
    sys.path.insert(0, _PY)

QUICK = "--quick" in sys.argv


def import_torch(num_threads=2):
    """PyTorch with `num_threads` intra-op threads, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(num_threads)
    return torch


def describe_missing(exc):
    """One line for a row whose op or module our runtime does not have (yet)."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    msg = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    return "missing: " + (msg if len(msg) <= 90 else msg[:87] + "...")


def per_call(fn, sync, calls):
    """Seconds per call of `fn`, measured over `calls` calls followed by one `sync`."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls


def interleaved(sides, repeats, budget_s=None):
    """Runs each side's measurement `repeats` times, alternating between sides.

    `sides` maps a name to a zero-argument function returning seconds (or None to leave the side
    out). Returns {name: median seconds}. A side whose function raises is dropped and the
    exception is returned in its place. `budget_s` stops early (after at least 3 repeats) once
    that much wall time has gone.
    """
    samples = {k: [] for k, f in sides.items() if f is not None}
    errors = {}
    start = time.perf_counter()
    for r in range(repeats):
        for k in list(samples):
            try:
                samples[k].append(sides[k]())
            except Exception as e:  # noqa: BLE001 - reported in the table
                errors[k] = e
                del samples[k]
        if budget_s is not None and r >= 2 and time.perf_counter() - start > budget_s:
            break
    out = {k: statistics.median(v) for k, v in samples.items() if v}
    out.update(errors)
    return out


def ratio(ours, theirs):
    """ours / theirs as text (lower is better; <= 1.00 meets a 'no slower than PyTorch' target)."""
    if not isinstance(ours, float) or not isinstance(theirs, float) or theirs <= 0:
        return "-"
    return f"{ours / theirs:.2f}x"


class Table:
    """A plain-text table printed once all rows are in (columns sized to their contents)."""

    def __init__(self, title, headers, note=None):
        self.title, self.headers, self.note, self.rows = title, headers, note, []

    def add(self, *cells):
        """Adds a row; a cell reading "missing: <error>" shows as "missing" and its message goes
        at the end of the row, so long errors do not push the columns apart."""
        row, tail = [], []
        for c in map(str, cells):
            if c.startswith("missing:"):
                row.append("missing")
                tail.append(c)
            else:
                row.append(c)
        self.rows.append(row + (["  ".join(dict.fromkeys(tail))] if tail else []))
        print("  .. " + " | ".join(map(str, cells)), file=sys.stderr, flush=True)

    def print(self, file=None):
        file = file or sys.stdout
        widths = [len(h) for h in self.headers]
        for row in self.rows:
            for i, c in enumerate(row[: len(widths)]):
                widths[i] = max(widths[i], len(c))

        def line(cells):
            parts = []
            for i, c in enumerate(cells):
                if i >= len(widths):
                    parts.append(c)
                elif i == 0:
                    parts.append(c.ljust(widths[i]))
                else:
                    parts.append(c.rjust(widths[i]))
            return "  ".join(parts).rstrip()

        print(self.title, file=file)
        print(line(self.headers), file=file)
        print("  ".join("-" * w for w in widths), file=file)
        for row in self.rows:
            print(line(row), file=file)
        if self.note:
            print(self.note, file=file)
        print(file=file, flush=True)
