"""torch.utils.benchmark: Timer, Measurement and Compare, as PyTorch 2.x spells them.

    t = Timer("x @ y", globals={"x": x, "y": y}, num_threads=2, label="matmul", sub_label="256")
    m = t.blocked_autorange(min_run_time=0.2)       # Measurement: m.median, m.mean, m.iqr
    Compare([m1, m2]).print()                       # a table: label / sub_label x description

Our ops run asynchronously on the VM (like CUDA kernels under torch), so the clock is read after
flow.sync() at both ends of every timed block (as torch's timer synchronizes CUDA): a
measurement covers the work, not just its issue. num_threads sets the
intra-op thread count while timing (flow.set_num_threads) and restores it afterwards.
"""
import math
import statistics
import time
import timeit as _timeit

import oneflow_like as flow

__all__ = ["Timer", "Measurement", "Compare", "TaskSpec"]


class TaskSpec:
    """What a Measurement measured (the Timer's arguments)."""

    def __init__(
        self,
        stmt,
        setup,
        global_setup="",
        label=None,
        sub_label=None,
        description=None,
        env=None,
        num_threads=1,
    ):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return self.stmt if "\n" not in self.stmt else "stmt:\n" + self.stmt


def _unit(seconds):
    for scale, name in ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms")):
        if seconds < scale * 1000:
            return scale, name
    return 1.0, "s"


class Measurement:
    """Times of `number_per_run` statement runs each (raw_times, seconds); per-run statistics."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):  # label, sub_label, description, stmt, num_threads, title
        spec = self.__dict__.get("task_spec")
        if spec is not None and hasattr(spec, name):
            return getattr(spec, name)
        raise AttributeError(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def median(self):
        return statistics.median(self.times)

    def _quantiles(self):
        ts = sorted(self.times)
        if len(ts) < 2:
            return ts[0], ts[0]
        q = statistics.quantiles(ts, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def iqr(self):
        lo, hi = self._quantiles()
        return hi - lo

    @property
    def significant_figures(self):
        """Digits of the median the spread supports (torch's rule of thumb, 1 to 4)."""
        if len(self.times) < 2 or self.median == 0:
            return 1
        rel = self.iqr / self.median
        return int(min(max(1, math.floor(-math.log10(rel)) + 1 if rel > 0 else 4), 4))

    @property
    def has_warnings(self):
        return len(self.times) < 4 or (self.median > 0 and self.iqr / self.median > 0.1)

    def __repr__(self):
        scale, unit = _unit(self.median)
        lo, hi = self._quantiles()
        lines = [
            f"<oneflow_like.utils.benchmark.Measurement object at {hex(id(self))}>",
            self.task_spec.title,
        ]
        if self.task_spec.description:
            lines.append(f"  {self.task_spec.description}")
        lines.append(
            f"  {'Median' if len(self.times) > 1 else 'Mean'}: " f"{self.median / scale:.2f} {unit}"
        )
        if len(self.times) > 1:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({lo / scale:.2f} to {hi / scale:.2f})"
            )
        threads = self.task_spec.num_threads
        lines.append(
            f"  {len(self.times)} measurement{'s' if len(self.times) != 1 else ''}, "
            f"{self.number_per_run} runs per measurement, {threads} "
            f"thread{'s' if threads != 1 else ''}"
        )
        if self.has_warnings and len(self.times) > 1:
            lines.append(
                f"  WARNING: Interquartile range is {100 * self.iqr / self.median:.1f}% "
                "of the median measurement.\n           This could indicate system "
                "fluctuation."
            )
        return "\n".join(lines)


class Timer:
    """torch.utils.benchmark.Timer for Python statements (language="python")."""

    def __init__(
        self,
        stmt="pass",
        setup="pass",
        global_setup="",
        timer=time.perf_counter,
        globals=None,
        label=None,
        sub_label=None,
        description=None,
        env=None,
        num_threads=1,
        language="python",
    ):
        if language not in ("python", "py"):
            raise ValueError(f"[Timer] only language='python' is supported, got {language!r}")
        if not isinstance(stmt, str) or not isinstance(setup, str):
            raise ValueError("[Timer] stmt and setup must be strings")
        if int(num_threads) < 1:
            raise ValueError(f"[Timer] num_threads must be >= 1, got {num_threads}")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", flow)
        self._globals.setdefault("flow", flow)
        if global_setup:
            exec(global_setup, self._globals)
        self._task_spec = TaskSpec(
            stmt, setup, global_setup, label, sub_label, description, env, int(num_threads)
        )

        def synced_timer():  # the clock is read once the VM finished what was issued
            flow.sync()
            return timer()

        self._timer = _timeit.Timer(
            stmt=stmt, setup=setup, timer=synced_timer, globals=self._globals
        )

    def _run(self, number):
        before = flow.get_num_threads()
        flow.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            flow.set_num_threads(before)

    def timeit(self, number=1000000):
        """One measurement of `number` runs (after one warm-up run)."""
        self._run(1)
        return Measurement(number, [self._run(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError(
            "[Timer.repeat] is deprecated in torch and not provided: use blocked_autorange"
        )

    def _estimate_number(self, min_block):
        """Runs per block so a block lasts at least `min_block` seconds (from one timed run)."""
        self._run(1)
        number = 1
        while True:
            t = self._run(number)
            if t >= min_block or number >= 10**9:
                return number
            number *= 10 if t < min_block / 10 else 2

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of N runs (N chosen so a block takes at least min_run_time / 100, and 1 ms),
        until min_run_time seconds of blocks were measured."""
        number = self._estimate_number(max(min_run_time / 100, 1e-3))
        times, total = [], 0.0
        while total < min_run_time or len(times) < 1:
            t = self._run(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None
    ):
        """Blocks until the IQR is below `threshold` of the median (and min_run_time passed), or
        max_run_time passed."""
        number = self._estimate_number(0.05)
        times, total = [], 0.0
        while True:
            t = self._run(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
            m = Measurement(number, times, self._task_spec)
            if total >= max_run_time:
                return m
            if len(times) > 3 and total >= min_run_time and m.iqr / m.median < threshold:
                return m


class Compare:
    """A table of Measurements: one table per label, rows by sub_label (and num_threads),
    columns by description; each cell the median in a shared unit."""

    def __init__(self, results):
        self._results = list(results)
        self._trim = False
        self._colorize = False
        self._warnings = False

    def extend_results(self, results):
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True

    def highlight_warnings(self):
        self._warnings = True

    def __str__(self):
        out = []
        labels = []
        for r in self._results:
            if r.task_spec.label not in labels:
                labels.append(r.task_spec.label)
        for label in labels:
            rs = [r for r in self._results if r.task_spec.label == label]
            cols = []
            rows = []
            for r in rs:
                if r.task_spec.description not in cols:
                    cols.append(r.task_spec.description)
                key = (r.task_spec.num_threads, r.task_spec.sub_label or r.task_spec.stmt)
                if key not in rows:
                    rows.append(key)
            scale, unit = _unit(min(r.median for r in rs))
            cells = {}
            for r in rs:
                key = (r.task_spec.num_threads, r.task_spec.sub_label or r.task_spec.stmt)
                v = r.median / scale
                digits = r.significant_figures if self._trim else 4
                text = f"{v:.{max(0, digits - len(str(int(v))))}f}" if v >= 1 else f"{v:.3g}"
                if self._warnings and r.has_warnings:
                    text += " (! {:.0f}%)".format(100 * r.iqr / r.median if r.median else 0)
                cells[(key, r.task_spec.description)] = text
            header = [""] + [c or "" for c in cols]
            body = []
            threads_seen = {k[0] for k in rows}
            for key in rows:
                name = key[1] if len(threads_seen) == 1 else f"{key[1]} ({key[0]} threads)"
                body.append([name] + [cells.get((key, c), "") for c in cols])
            widths = [max(len(str(x[i])) for x in [header] + body) for i in range(len(header))]
            title = f"[{'-' * 2} {label or ''} {'-' * 2}]"
            out.append(title)
            out.append(" | ".join(h.center(w) for h, w in zip(header, widths)))
            for row in body:
                out.append(
                    " | ".join(
                        str(x).rjust(w) if i else str(x).ljust(w)
                        for i, (x, w) in enumerate(zip(row, widths))
                    )
                )
            out.append(f"\nTimes are in {'microseconds' if unit == 'us' else unit} ({unit}).\n")
        return "\n".join(out)

    def print(self):
        print(str(self))
