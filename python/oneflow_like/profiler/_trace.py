"""A recorded trace: spans joined with the op calls that issued them, key_averages() and the
Chrome trace-event JSON (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU)."""
import json
import os
import threading

_INSTRUCTION_ID_MASK = (1 << 39) - 1
_INLINE_BIT = 1 << 39


class Span:
    """One timed event: an op launch ("cpu_op"), an instruction, a thunk or a record_function
    range ("user_annotation"). Times in ns (CLOCK_MONOTONIC); durations in us like torch."""

    __slots__ = (
        "name",
        "category",
        "track",
        "begin_ns",
        "end_ns",
        "args",
        "call_id",
        "flow_id",
        "issue",
        "self_ns",
        "stack",
    )

    def __init__(
        self, name, category, track, begin_ns, end_ns, args, call_id=0, flow_id=0, stack=()
    ):
        self.name, self.category, self.track = name, category, track
        self.begin_ns, self.end_ns, self.args = begin_ns, max(end_ns, begin_ns), args
        self.call_id, self.flow_id = call_id, flow_id
        # with_stack: the Python frames that made the op call, innermost first ("file(line): fn")
        self.stack = stack
        self.issue = None  # (caller track, ns, calling Span or None) for instructions
        self.self_ns = self.end_ns - self.begin_ns

    @property
    def duration_us(self):
        return (self.end_ns - self.begin_ns) / 1000.0

    @property
    def input_shapes(self):
        return self.args.get("Input Dims", [])

    def __repr__(self):
        return f"<Span {self.category} {self.name!r} track={self.track} {self.duration_us:.3f}us>"


class FunctionEventAvg:
    """One row of key_averages(): totals in microseconds, as torch.autograd.profiler."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes
        self.stack = stack if stack is not None else []  # group_by_stack_n: the frames grouped
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0

    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))
    cuda_time = device_time

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key!r} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
            f"device_time_total={self.device_time_total:.3f}us>"
        )


_SORT_KEYS = (
    "cpu_time_total",
    "self_cpu_time_total",
    "cpu_time",
    "device_time_total",
    "self_device_time_total",
    "device_time",
    "cuda_time_total",
    "self_cuda_time_total",
    "cuda_time",
    "count",
)


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _trim_path(frame, width):
    """A frame's text cut from the left (the file name and line matter most) to `width`."""
    return frame if len(frame) <= width else "..." + frame[len(frame) - width + 3 :]


class EventList(list):
    """key_averages()'s result: a list of FunctionEventAvg with torch's table()."""

    def __init__(self, rows, with_device, with_shapes, with_stack=False):
        super().__init__(rows)
        self._with_device = with_device
        self._with_shapes = with_shapes
        self._with_stack = with_stack

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_name_column_width=55,
        max_shapes_column_width=80,
        max_src_column_width=75,
        header=None,
        top_level_events_only=False,
    ):
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(
                f"[profiler] unknown sort_by {sort_by!r}; one of {', '.join(_SORT_KEYS)}"
            )
        if not isinstance(row_limit, int) or isinstance(row_limit, bool):
            raise TypeError(f"[profiler] row_limit must be an int, got {type(row_limit).__name__}")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        if row_limit >= 0:
            rows = rows[:row_limit]
        self_cpu_sum = sum(r.self_cpu_time_total for r in self) or 1.0
        cpu_sum = self_cpu_sum
        self_dev_sum = sum(r.self_device_time_total for r in self) or 1.0
        name_w = max([len("Name")] + [min(len(r.key), max_name_column_width) for r in rows]) + 2
        cols = [("Name", name_w)]
        cols += [
            (h, 13) for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")
        ]
        if self._with_device:
            cols += [(h, 13) for h in ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg")]
        cols.append(("# of Calls", 12))
        if self._with_shapes:
            cols.append(("Input Shapes", max_shapes_column_width))
        if self._with_stack:
            cols.append(("Source Location", max_src_column_width))
        sep = "  ".join("-" * w for _, w in cols)
        lines = []
        if header:
            lines.append("=" * len(sep))
            lines.append(header)
        lines += [
            sep,
            "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(cols)),
            sep,
        ]
        for r in rows:
            name = (
                r.key
                if len(r.key) <= max_name_column_width
                else r.key[: max_name_column_width - 3] + "..."
            )
            cells = [
                name.ljust(name_w),
                f"{100.0 * r.self_cpu_time_total / self_cpu_sum:.2f}%".rjust(13),
                _fmt_us(r.self_cpu_time_total).rjust(13),
                f"{100.0 * r.cpu_time_total / cpu_sum:.2f}%".rjust(13),
                _fmt_us(r.cpu_time_total).rjust(13),
                _fmt_us(r.cpu_time).rjust(13),
            ]
            if self._with_device:
                cells += [
                    _fmt_us(r.self_device_time_total).rjust(13),
                    f"{100.0 * r.self_device_time_total / self_dev_sum:.2f}%".rjust(13),
                    _fmt_us(r.device_time_total).rjust(13),
                    _fmt_us(r.device_time).rjust(13),
                ]
            cells.append(str(r.count).rjust(12))
            if self._with_shapes:
                cells.append(
                    str(r.input_shapes)[:max_shapes_column_width].rjust(max_shapes_column_width)
                )
            if self._with_stack:  # torch's layout: one frame per line, innermost on the row
                frames = [_trim_path(f, max_src_column_width) for f in r.stack] or [""]
                cells.append(frames[0].ljust(max_src_column_width))
                lines.append("  ".join(cells))
                blank = ["".ljust(w) for _, w in cols[:-1]]
                for f in frames[1:]:
                    lines.append("  ".join(blank + [f.ljust(max_src_column_width)]))
                continue
            lines.append("  ".join(cells))
        lines.append(sep)
        lines.append(f"Self CPU time total: {_fmt_us(sum(r.self_cpu_time_total for r in self))}")
        if self._with_device:
            lines.append(
                f"Self CUDA time total: {_fmt_us(sum(r.self_device_time_total for r in self))}"
            )
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.table()


class Trace:
    """The events of one recording: spans (with nesting and self times), flows and counters."""

    def __init__(self, events, tracks, dropped, ranges, activities, stacks=None):
        from . import ProfilerActivity

        self.pid = os.getpid()
        self.dropped = dropped
        self.track_names = {t: n for t, n in tracks}
        stacks = {k: tuple(v) for k, v in (stacks or {}).items()}
        main = threading.main_thread().native_id
        spans, flows, self.counters = [], {}, []
        parsed = {"": {}}
        for typ, track, b, e, flow, call, value, name, cat, args in events:
            if typ == 0:
                a = parsed.get(args)
                if a is None:
                    a = parsed[args] = json.loads("{" + args + "}")
                stack = stacks.get(value, ()) if value else ()
                spans.append(Span(name, cat, track, b, e, dict(a), call, flow, stack))
            elif typ == 1:
                flows[flow] = (track, b, call)
            else:
                self.counters.append((name, b, value))
        for tid, name, b, e, a in ranges:
            spans.append(Span(name, "user_annotation", tid, b, e, {"args": a} if a else {}))
        for s in spans:
            if s.track < (1 << 24) and s.track not in self.track_names:
                self.track_names[s.track] = f"thread (tid {s.track})"
        if main in self.track_names:
            self.track_names[main] = f"Python main thread (tid {main})"
        calls = {s.call_id: s for s in spans if s.call_id and s.category == "cpu_op"}
        for s in spans:
            if s.category != "instruction":
                continue
            # The issuing call: named on the span (inline runs) or by the flow start it ends.
            issue = flows.get(s.flow_id)
            caller = calls.get(s.call_id or (issue[2] if issue else 0))
            if caller is not None:  # the arrow starts where the issuing call starts
                s.issue = (caller.track, caller.begin_ns, caller)
            if caller is not None:
                s.name = s.name or caller.name
                s.args = {**caller.args, **s.args}
                s.stack = caller.stack
            s.name = s.name or "instruction"
            if not s.flow_id & _INLINE_BIT:
                s.args["instruction"] = s.flow_id & _INSTRUCTION_ID_MASK
            else:
                s.args["inline"] = True
        keep_cpu = ProfilerActivity.CPU in activities
        keep_dev = ProfilerActivity.CUDA in activities
        self.spans = [s for s in spans if (keep_dev if self.is_device_track(s.track) else keep_cpu)]
        if not keep_cpu:
            self.counters = [c for c in self.counters if "cuda" in c[0]]
        _compute_self_times(self.spans)

    def is_device_track(self, track):
        return track >= (1 << 24) and self.track_names.get(track, "").startswith("cuda")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        rows = {}
        with_device = False
        for s in self.spans:
            shapes = str(s.input_shapes) if group_by_input_shape else None
            stack = s.stack[:group_by_stack_n] if group_by_stack_n else ()
            key = (s.name, shapes, stack)
            r = rows.get(key)
            if r is None:
                r = rows[key] = FunctionEventAvg(
                    s.name, s.input_shapes if group_by_input_shape else None, list(stack)
                )
            # An instruction an op call issued adds its time to the op's row, not a call.
            if s.category != "instruction" or s.issue is None or s.issue[2] is None:
                r.count += 1
            if self.is_device_track(s.track):
                with_device = True
                r.device_time_total += s.duration_us
                r.self_device_time_total += s.self_ns / 1000.0
            else:
                r.cpu_time_total += s.duration_us
                r.self_cpu_time_total += s.self_ns / 1000.0
        return EventList(rows.values(), with_device, group_by_input_shape, group_by_stack_n > 0)

    def chrome_trace(self):
        """The trace as a JSON-able dict: one tid per VM stream and per recording thread."""
        times = [s.begin_ns for s in self.spans] + [c[1] for c in self.counters]
        base = min(times) if times else 0

        def us(ns):
            return round((ns - base) / 1000.0, 3)

        pid = self.pid
        out = []
        for s in self.spans:
            out.append(
                {
                    "ph": "X",
                    "cat": s.category,
                    "name": s.name,
                    "pid": pid,
                    "tid": s.track,
                    "ts": us(s.begin_ns),
                    "dur": round((s.end_ns - s.begin_ns) / 1000.0, 3),
                    "args": {**s.args, "Call stack": list(s.stack)} if s.stack else s.args,
                }
            )
        flow = 0
        for s in self.spans:
            if s.issue is None or s.issue[2] is None:
                continue
            flow += 1
            track, ts, _ = s.issue
            common = {"name": "issue", "cat": "flow", "id": flow, "pid": pid}
            out.append({"ph": "s", "tid": track, "ts": us(ts), **common})
            out.append({"ph": "f", "bp": "e", "tid": s.track, "ts": us(s.begin_ns), **common})
        for name, ts, value in self.counters:
            out.append(
                {
                    "ph": "C",
                    "name": name,
                    "pid": pid,
                    "tid": 0,
                    "ts": us(ts),
                    "args": {"bytes": value},
                }
            )
        out.sort(key=lambda e: e["ts"])
        meta = [
            {
                "ph": "M",
                "name": "process_name",
                "pid": pid,
                "tid": 0,
                "args": {"name": "oneflow_like"},
            }
        ]
        used = sorted({s.track for s in self.spans} | {s.issue[0] for s in self.spans if s.issue})
        for order, track in enumerate(used):
            name = self.track_names.get(track, f"track {track}")
            sort = order if track < (1 << 24) else 1000 + order
            meta.append(
                {"ph": "M", "name": "thread_name", "pid": pid, "tid": track, "args": {"name": name}}
            )
            meta.append(
                {
                    "ph": "M",
                    "name": "thread_sort_index",
                    "pid": pid,
                    "tid": track,
                    "args": {"sort_index": sort},
                }
            )
        return {
            "traceEvents": meta + out,
            "displayTimeUnit": "ms",
            "otherData": {"producer": "oneflow_like.profiler", "dropped_events": self.dropped},
        }


def _compute_self_times(spans):
    """self = duration minus the spans directly nested in it on the same track."""
    by_track = {}
    for s in spans:
        by_track.setdefault(s.track, []).append(s)
    for lst in by_track.values():
        lst.sort(key=lambda s: (s.begin_ns, -s.end_ns))
        stack = []
        for s in lst:
            while stack and stack[-1].end_ns <= s.begin_ns:
                stack.pop()
            if stack and s.end_ns <= stack[-1].end_ns:
                stack[-1].self_ns -= s.end_ns - s.begin_ns
            stack.append(s)
