"""flow.profiler: torch.profiler's API over the VM's trace recorder.

    with flow.profiler.profile(record_shapes=True) as prof:
        with flow.profiler.record_function("step"):
            y = model(x)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")  # chrome://tracing or ui.perfetto.dev

What is recorded (C++ side: oneflow_like/base/trace_recorder.h): each op's launch on the calling
thread ("cpu_op"), each VM instruction on its stream's track ("instruction", with a flow arrow
from the op that issued it), the thunks of a compiled graph nested in its LaunchLazyJob
("thunk"), the allocators' bytes in use (counters), and record_function ranges
("user_annotation"). Times are CLOCK_MONOTONIC, the clock of time.monotonic_ns(). With
with_stack=True each op call carries the Python stack that made it (torch's "file(line):
function" frames, innermost first): in the trace's args ("Call stack") and, for
key_averages(group_by_stack_n=N), as the rows' key.
"""
import enum
import functools
import gzip as _gzip
import json
import os
import socket
import threading
import time
import warnings

from .. import _C
from ._trace import Trace

__all__ = [
    "ProfilerActivity",
    "ProfilerAction",
    "profile",
    "record_function",
    "schedule",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule: after `skip_first` steps, cycles of `wait` idle steps, `warmup`
    steps recorded and discarded, and `active` recorded steps (the last one saves: on_trace_ready);
    `repeat` cycles (0: until the profiler stops)."""
    for name, v in (
        ("wait", wait),
        ("warmup", warmup),
        ("repeat", repeat),
        ("skip_first", skip_first),
    ):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"[profiler.schedule] {name} must be an int >= 0, got {v!r}")
    if not isinstance(active, int) or isinstance(active, bool) or active < 1:
        raise ValueError(f"[profiler.schedule] active must be an int >= 1, got {active!r}")

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"[profiler.schedule] step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready handler writing `dir_name/<worker>.<ms>.pt.trace.json[.gz]` (the names
    TensorBoard's profiler plugin reads)."""
    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"[profiler] dir_name must be a path, got {type(dir_name).__name__}")

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        if use_gzip:
            name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


# ---- Python-side ranges ------------------------------------------------------------------------
_lock = threading.Lock()
_active = None  # the profile that owns the recorder
_ranges = []  # (thread track, name, begin_ns, end_ns, args) of record_function while recording


class record_function:
    """Labels a range of Python code in the trace and in key_averages(); a context manager or a
    decorator. Costs one flag check when no profiler records."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"[record_function] name must be a str, got {type(name).__name__}")
        if args is not None and not isinstance(args, str):
            raise TypeError(
                f"[record_function] args must be a str or None, got {type(args).__name__}"
            )
        self.name = name
        self.args = args
        self._begin = None

    def __enter__(self):
        self._begin = time.monotonic_ns() if _C._profiler_enabled() else None
        return self

    def __exit__(self, *exc):
        if self._begin is not None and _C._profiler_enabled():
            _ranges.append(
                (threading.get_native_id(), self.name, self._begin, time.monotonic_ns(), self.args)
            )
        self._begin = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


# ---- profile -----------------------------------------------------------------------------------
_ACTIONS = {
    # (previous, next): steps, as torch.profiler's action map
    (ProfilerAction.NONE, ProfilerAction.WARMUP): ("prepare",),
    (ProfilerAction.NONE, ProfilerAction.RECORD): ("prepare", "start"),
    (ProfilerAction.NONE, ProfilerAction.RECORD_AND_SAVE): ("prepare", "start"),
    (ProfilerAction.WARMUP, ProfilerAction.NONE): ("start", "stop"),
    (ProfilerAction.WARMUP, ProfilerAction.RECORD): ("start",),
    (ProfilerAction.WARMUP, ProfilerAction.RECORD_AND_SAVE): ("start",),
    (ProfilerAction.RECORD, ProfilerAction.NONE): ("stop", "ready"),
    (ProfilerAction.RECORD, ProfilerAction.WARMUP): ("stop", "ready"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE): ("stop", "ready"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.WARMUP): ("stop", "ready", "prepare"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.RECORD): ("stop", "ready", "prepare", "start"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.RECORD_AND_SAVE): (
        "stop",
        "ready",
        "prepare",
        "start",
    ),
    (ProfilerAction.WARMUP, None): ("start", "stop"),
    (ProfilerAction.RECORD, None): ("stop", "ready"),
    (ProfilerAction.RECORD_AND_SAVE, None): ("stop", "ready"),
}


class profile:
    """torch.profiler.profile. Use as a context manager (or start()/stop()); call step() at the
    end of each training step when a schedule is given."""

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
        experimental_config=None,
        acc_events=False,
    ):
        if activities is None:
            activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        activities = set(activities)
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise ValueError(
                    f"[profiler] activities must be ProfilerActivity values, got {a!r}"
                )
        if not activities:
            raise ValueError("[profiler] activities is empty: nothing to record")
        for name, v in (
            ("with_flops", with_flops),
            ("with_modules", with_modules),
        ):
            if v:
                raise NotImplementedError(
                    f"[profiler] {name}=True is not supported: events carry op names, shapes, "
                    "dtypes and (with_stack=True) Python stacks, not FLOP counts or module names"
                )
        if schedule is not None and not callable(schedule):
            raise TypeError("[profiler] schedule must be callable (see flow.profiler.schedule)")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("[profiler] on_trace_ready must be callable")
        self.activities = activities
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)  # allocator bytes in use as counter events
        # Each op call's Python stack (interned once per distinct stack; off: nothing is walked)
        self.with_stack = bool(with_stack)
        self.step_num = 0
        self.current_action = None
        self._recording = False  # the recorder runs for this profile (warmup or record)
        self._warmup = False
        self._trace = None
        self._started = False

    # -- lifecycle
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if self._started:
            raise RuntimeError("[profiler] start() called twice")
        self._started = True
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._transit(ProfilerAction.NONE, self.current_action)

    def stop(self):
        if not self._started:
            return
        self._started = False
        self._transit(self.current_action, None)

    def step(self):
        """Marks the end of a step: advances the schedule (starting, saving, stopping)."""
        if not self._started:
            raise RuntimeError("[profiler] step() outside of an active profile")
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)

    def _transit(self, prev, cur):
        for action in _ACTIONS.get((prev, cur), ()):
            getattr(self, "_" + action)()

    def _prepare(self):  # warmup: record and discard (first-use costs stay out of the trace)
        self._begin_recording()
        self._warmup = True

    def _start(self):
        if self._warmup:
            _, error = self._end_recording()
            self._warmup = False
            if error is not None:
                raise error
        if not self._recording:
            self._begin_recording()

    def _stop(self):
        if not self._recording:
            return
        warmup = self._warmup
        (events, tracks, dropped, stacks), error = self._end_recording()
        self._warmup = False
        if warmup:
            warnings.warn("[profiler] the schedule ended during warmup: nothing was recorded")
        else:
            self._trace = Trace(
                events, tracks, dropped, self._taken_ranges, self.activities, stacks
            )
        if error is not None:  # an op recorded here failed: raised as flow.sync() would, trace kept
            raise error

    def _ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _begin_recording(self):
        global _active
        with _lock:
            if _active is not None and _active is not self:
                raise RuntimeError(
                    "[profiler] another profiler is recording; profilers do not nest"
                )
            _active = self
        del _ranges[:]
        _C._profiler_start(self.record_shapes, self.profile_memory, self.with_stack)
        self._recording = True

    def _end_recording(self):
        """Drains the VM, stops and collects: (events, tracks, dropped, stacks), and the error of
        a failed op that the drain reported (None if none)."""
        global _active
        error = None
        try:
            _C._profiler_stop()
        except Exception as e:  # noqa: BLE001  (the user's op failed; recording stopped anyway)
            error = e
        finally:
            self._recording = False
            with _lock:
                _active = None
        self._taken_ranges = list(_ranges)
        del _ranges[:]
        return _C._profiler_collect(), error

    # -- results
    def _require_trace(self):
        if self._trace is None:
            raise RuntimeError(
                "[profiler] no trace yet: results exist after a recorded (active) step or stop()"
            )
        return self._trace

    def events(self):
        """Every span of the last recorded trace (op launches, instructions, thunks, ranges)."""
        return self._require_trace().spans

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Rows per op name (and input shapes, and the innermost `group_by_stack_n` frames of the
        Python stack that called the op: needs with_stack=True), as torch.profiler."""
        if (
            not isinstance(group_by_stack_n, int)
            or isinstance(group_by_stack_n, bool)
            or group_by_stack_n < 0
        ):
            raise ValueError(
                f"[profiler] group_by_stack_n must be an int >= 0, got {group_by_stack_n!r}"
            )
        if group_by_stack_n and not self.with_stack:
            raise ValueError(
                "[profiler] group_by_stack_n needs stacks: create the profile with "
                "with_stack=True"
            )
        return self._require_trace().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path, gzip=None):
        """Writes the trace-event JSON read by chrome://tracing and ui.perfetto.dev; gzip when
        `gzip=True` or the path ends with .gz."""
        trace = self._require_trace()
        path = os.fspath(path)
        if gzip is None:
            gzip = path.endswith(".gz")
        data = json.dumps(trace.chrome_trace(), separators=(",", ":"))
        if gzip:
            with _gzip.open(path, "wt", encoding="ascii") as f:
                f.write(data)
        else:
            with open(path, "w", encoding="ascii") as f:
                f.write(data)
        return path
