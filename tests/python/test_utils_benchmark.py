"""torch.utils.benchmark's Timer / Measurement / Compare (flow.utils.benchmark): measurements
include the VM's work (each block ends with flow.sync), autorange meets its run time, statistics
and the comparison table are consistent; the API mirrors torch 1.13's."""
import inspect
import re

import pytest
import torch.utils.benchmark as tb

import oneflow_like as flow
from oneflow_like.utils import benchmark as fb


def test_signatures_follow_torch():
    for name in ("timeit", "blocked_autorange", "adaptive_autorange"):
        ours = list(inspect.signature(getattr(fb.Timer, name)).parameters)
        theirs = list(inspect.signature(getattr(tb.Timer, name)).parameters)
        assert ours == theirs, name
    ours = list(inspect.signature(fb.Timer).parameters)
    theirs = list(inspect.signature(tb.Timer).parameters)
    assert ours == theirs


def test_timeit_and_measurement_statistics():
    x = flow.randn(64, 64)
    t = fb.Timer("y = x @ x", globals={"x": x}, label="matmul", sub_label="64", description="f32")
    m = t.timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1
    assert m.times[0] == pytest.approx(m.raw_times[0] / 50)
    assert m.median == m.mean == m.times[0] > 0
    text = repr(m)
    assert "matmul: 64" in text and "1 measurement, 50 runs per measurement, 1 thread" in text


def test_blocked_autorange_covers_min_run_time_and_restores_threads():
    before = flow.get_num_threads()
    x = flow.randn(128, 128)
    m = fb.Timer("x.exp().sum()", globals={"x": x}, num_threads=1).blocked_autorange(
        min_run_time=0.05
    )
    assert sum(m.raw_times) >= 0.05 and len(m.times) >= 1
    lo, hi = sorted(m.times)[0], sorted(m.times)[-1]
    assert lo <= m.median <= hi and m.iqr >= 0
    assert flow.get_num_threads() == before
    seen = []
    fb.Timer("pass").blocked_autorange(callback=lambda n, t: seen.append((n, t)), min_run_time=0.01)
    assert seen and all(n >= 1 and t >= 0 for n, t in seen)


def test_timing_includes_the_asynchronous_work():
    # issuing a large reduction returns at once; the timed block must wait for the result
    x = flow.randn(2000, 2000)
    timed = fb.Timer("x.exp().sum()", globals={"x": x}).timeit(3).median
    import time

    t0 = time.perf_counter()
    for _ in range(3):
        x.exp().sum()
    flow.sync()
    whole = (time.perf_counter() - t0) / 3
    assert timed > 0.3 * whole


def test_adaptive_autorange_and_compare_table():
    results = []
    for n in (16, 64):
        x = flow.randn(n, n)
        for desc, stmt in (("matmul", "x @ x"), ("add", "x + x")):
            results.append(
                fb.Timer(
                    stmt, globals={"x": x}, label="ops", sub_label=f"n={n}", description=desc
                ).adaptive_autorange(max_run_time=0.2)
            )
    c = fb.Compare(results)
    c.trim_significant_figures()
    c.highlight_warnings()
    table = str(c)
    assert "ops" in table and "matmul" in table and "add" in table
    assert "n=16" in table and "n=64" in table
    assert re.search(r"Times are in \w+ \(\w+\)", table)
    with pytest.raises(NotImplementedError):
        fb.Timer("pass").repeat()
    with pytest.raises(ValueError, match="language"):
        fb.Timer("pass", language="c++")
