"""flow.profiler: the Chrome trace (JSON, tracks, flows, thunks, counters, escaping, gzip), the
schedule, key_averages().table() and the API's errors."""
import gzip
import json
import re

import pytest

import oneflow_like as flow
from oneflow_like.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def load_trace(prof, tmp_path, name="trace.json"):
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)


def track_names(trace):
    return {
        e["tid"]: e["args"]["name"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def _relu_in_helper(x):
    return flow.relu(x)  # the op's innermost frame


def _exp_in_helper(x):
    return flow.exp(x)


def spans(trace, cat=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and (cat is None or e["cat"] == cat)]


def test_trace_holds_every_op_on_its_stream_track(tmp_path):
    small = flow.randn(8, 8)
    big = flow.randn(256, 256)  # past the inline limit: runs on the compute stream's worker
    huge = flow.randn(1024, 1024)
    with profile(record_shapes=True) as prof:
        a = flow.relu(small)
        b = flow.matmul(a, a)
        c = flow.exp(big)
        d = (b + 1.0).sum()
        d.item()
        c.sum().item()
        for _ in range(3):  # dropped while in flight (ms of work): the release is an instruction
            flow.exp(huge)
        flow.sync()
    trace = load_trace(prof, tmp_path)
    names = track_names(trace)
    instr = spans(trace, "instruction")
    by_name = {}
    for e in instr:
        by_name.setdefault(e["name"], []).append(e)
    for op in ("relu", "matmul", "exp", "add_scalar", "sum"):
        assert op in by_name, f"{op} missing: {sorted(by_name)}"
        for e in by_name[op]:
            assert names[e["tid"]] == "cpu/compute"
            assert e["dur"] >= 0
    assert "release_tensor" in by_name and "instruction" not in by_name, sorted(by_name)
    # Shapes and dtypes of the inputs, with torch's keys.
    assert by_name["exp"][0]["args"]["Input Dims"] == [[256, 256]]
    assert by_name["matmul"][0]["args"]["Input type"] == ["float32", "float32"]
    # The launches sit on the Python thread's track.
    ops = spans(trace, "cpu_op")
    main = {e["tid"] for e in ops}
    assert len(main) == 1 and names[main.pop()].startswith("Python main thread")
    assert {"relu", "matmul", "exp", "add_scalar", "sum"} <= {e["name"] for e in ops}


def test_flow_arrows_join_each_launch_to_its_instruction(tmp_path):
    x = flow.randn(128, 256)
    with profile() as prof:
        for _ in range(3):
            x = flow.relu(x)
        x.sum().item()
    trace = load_trace(prof, tmp_path)
    names = track_names(trace)
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    assert len(starts) >= 4 and starts.keys() == ends.keys()
    ops = spans(trace, "cpu_op")
    instr = spans(trace, "instruction")
    for fid, s in starts.items():
        f = ends[fid]
        assert names[s["tid"]].startswith("Python main thread")
        assert names[f["tid"]] == "cpu/compute" and f["bp"] == "e"
        # The start lies inside a launch span; the end is where an instruction span begins.
        assert any(
            o["tid"] == s["tid"] and o["ts"] <= s["ts"] <= o["ts"] + o["dur"] + 1e-3 for o in ops
        )
        assert any(i["tid"] == f["tid"] and abs(i["ts"] - f["ts"]) < 1e-3 for i in instr)


def test_graph_step_has_its_thunks_nested_in_the_launch(tmp_path):
    lin = flow.nn.Linear(16, 8)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def build(self, x):
            return flow.relu(self.lin(x)).sum()

    g = G()
    x = flow.randn(4, 16)
    g(x).item()  # compile outside the trace
    with profile() as prof:
        g(x).item()
    trace = load_trace(prof, tmp_path)
    launches = [e for e in spans(trace, "instruction") if "G" in e["name"] or "Lazy" in e["name"]]
    thunks = spans(trace, "thunk")
    assert launches and thunks, [e["name"] for e in spans(trace)]
    launch = launches[0]
    # The LaunchLazyJob runs on the compute stream, in order with eager kernels.
    assert track_names(trace)[launch["tid"]] == "cpu/compute"
    for t in thunks:
        assert t["tid"] == launch["tid"]
        assert (
            launch["ts"] - 1e-3 <= t["ts"]
            and t["ts"] + t["dur"] <= launch["ts"] + launch["dur"] + 1e-3
        )
        assert t["args"]["kind"] in (
            "kernel",
            "gemm",
            "copy",
            "memset",
            "sequential",
            "library-call",
        )
    assert any(t["args"]["kind"] == "gemm" for t in thunks)
    graph_calls = [e for e in spans(trace, "cpu_op") if e["name"] == "nn.Graph G"]
    assert graph_calls, "the graph's launch is a span on the caller's thread"
    assert any(e["ph"] == "s" and e["tid"] == graph_calls[0]["tid"] for e in trace["traceEvents"])


def test_allocator_bytes_in_use_are_counter_events(tmp_path):
    with profile() as prof:  # profile_memory=False (the default, as torch): no counters
        flow.ones(1024, 1024).sum().item()
    assert not [e for e in load_trace(prof, tmp_path)["traceEvents"] if e["ph"] == "C"]
    with profile(profile_memory=True) as prof:
        t = flow.ones(1024, 1024)  # 4 MiB
        t.sum().item()
        del t
    trace = load_trace(prof, tmp_path)
    counters = [
        e for e in trace["traceEvents"] if e["ph"] == "C" and e["name"] == "bytes in use (cpu)"
    ]
    assert len(counters) >= 2
    values = [e["args"]["bytes"] for e in counters]
    assert max(values) - min(values) >= 4 * 1024 * 1024
    assert [e["ts"] for e in counters] == sorted(e["ts"] for e in counters)


def test_names_are_escaped_and_gzip_is_written(tmp_path):
    weird = 'we"ird\\name\n\t\x01 \u00fcn\u00ef \U0001f600'
    with profile() as prof:
        with record_function(weird):
            flow.ones(3).sum().item()
    for path, kwargs in ((tmp_path / "t.json.gz", {}), (tmp_path / "t2.json", {"gzip": True})):
        prof.export_chrome_trace(str(path), **kwargs)
        with gzip.open(path, "rt") as f:
            trace = json.load(f)
        assert weird in {e["name"] for e in spans(trace, "user_annotation")}
    plain = load_trace(prof, tmp_path)
    assert weird in {e["name"] for e in spans(plain, "user_annotation")}


def test_record_function_decorator_and_nesting_self_time():
    @record_function("outer_fn")
    def work(x):
        with record_function("inner"):
            return (x * 2).sum().item()

    with profile() as prof:
        for _ in range(3):
            work(flow.ones(16))
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["outer_fn"].count == 3 and rows["inner"].count == 3
    assert rows["outer_fn"].self_cpu_time_total <= rows["outer_fn"].cpu_time_total
    assert rows["outer_fn"].cpu_time_total >= rows["inner"].cpu_time_total


def test_schedule_semantics_match_torch():
    s = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    N, W, R, S = (
        ProfilerAction.NONE,
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE,
    )
    assert [s(i) for i in range(11)] == [N, N, W, R, S, N, W, R, S, N, N]
    s0 = schedule(wait=0, warmup=0, active=1)
    assert [s0(i) for i in range(3)] == [S, S, S]
    for bad in (
        dict(wait=-1, warmup=0, active=1),
        dict(wait=0, warmup=0, active=0),
        dict(wait=0, warmup=0, active=1, repeat=-2),
    ):
        with pytest.raises(ValueError):
            schedule(**bad)


def test_profile_with_schedule_saves_only_active_steps():
    saved = []

    def ready(p):
        saved.append(sorted({r.key for r in p.key_averages() if r.key.startswith("step")}))

    with profile(
        schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready
    ) as prof:
        for i in range(10):
            with record_function(f"step{i}"):
                flow.ones(4).sum().item()
            prof.step()
    assert saved == [["step2", "step3"], ["step6", "step7"]]


def test_table_and_key_averages():
    x = flow.randn(32, 32)
    with profile(record_shapes=True) as prof:
        for _ in range(5):
            y = flow.relu(x)
        flow.matmul(y, flow.randn(32, 4)).sum().item()
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=4)
    lines = table.splitlines()
    assert "Name" in lines[1] and "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert (
        len(
            [
                line
                for line in lines[3:]
                if line and not line.startswith("-") and not line.startswith("Self")
            ]
        )
        == 4
    )
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["relu"].count == 5 and rows["relu"].cpu_time_total > 0
    by_shape = prof.key_averages(group_by_input_shape=True).table(sort_by="count", row_limit=-1)
    assert "Input Shapes" in by_shape and "[[32, 32]]" in by_shape
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="bogus")


def test_nothing_is_recorded_outside_and_errors_are_clear(tmp_path):
    with profile() as prof:
        pass
    flow.ones(3).sum().item()  # after stop
    assert not flow._C._profiler_enabled()
    assert [e for e in spans(load_trace(prof, tmp_path), "cpu_op")] == []
    with pytest.raises(RuntimeError, match="no trace"):
        profile().key_averages()
    with pytest.raises(NotImplementedError, match="with_flops"):
        profile(with_flops=True)
    with profile() as prof:  # with_stack off: no stacks recorded, none to group by
        flow.relu(flow.ones(2))
    assert all(not e.stack for e in prof.events())
    with pytest.raises(ValueError, match="with_stack=True"):
        prof.key_averages(group_by_stack_n=2)
    with pytest.raises(ValueError, match="group_by_stack_n"):
        prof.key_averages(group_by_stack_n=-1)
    with pytest.raises(ValueError, match="activities"):
        profile(activities=["CPU"])
    with pytest.raises(TypeError):
        record_function(3)
    with profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with profile():
                pass


def test_each_python_thread_gets_its_own_track(tmp_path):
    import threading

    tids = []

    def work():
        tids.append(threading.get_native_id())
        with record_function("in_thread"):
            flow.relu(flow.ones(4)).sum().item()

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join(timeout=60)
        assert not t.is_alive()
        flow.ones(2).sum().item()
    trace = load_trace(prof, tmp_path)
    names = track_names(trace)
    ops_by_tid = {}
    for e in spans(trace, "cpu_op") + spans(trace, "user_annotation"):
        ops_by_tid.setdefault(e["tid"], set()).add(e["name"])
    assert {"relu", "in_thread"} <= ops_by_tid[tids[0]]
    assert "in_thread" not in ops_by_tid[threading.get_native_id()]
    assert f"(tid {tids[0]})" in names[tids[0]]


def test_a_failing_op_raises_at_exit_and_the_trace_is_kept(tmp_path):
    import oneflow_like.nn.functional as F

    with pytest.raises(IndexError, match="out of range"):
        with profile() as prof:
            F.cross_entropy(flow.randn(4, 3), flow.tensor([0, 1, 7, 2]))
    assert "nll_loss" in {e["name"] for e in spans(load_trace(prof, tmp_path), "instruction")}
    assert not flow._C._profiler_enabled()
    flow.sync()  # reported once: nothing left to raise


def test_activities_filter_and_tensorboard_handler(tmp_path):
    with profile(
        activities=[ProfilerActivity.CUDA],
        on_trace_ready=tensorboard_trace_handler(str(tmp_path / "tb"), "w0"),
    ):
        flow.ones(8).sum().item()
    files = list((tmp_path / "tb").iterdir())
    assert (
        len(files) == 1
        and files[0].name.startswith("w0.")
        and files[0].name.endswith(".pt.trace.json")
    )
    trace = json.loads(files[0].read_text())
    assert spans(trace) == []  # CPU work filtered out: no CUDA device in this trace


@pytest.mark.skipif(not flow.cuda.is_available(), reason="no CUDA device")
def test_cuda_ops_are_on_cuda_tracks(tmp_path):
    x = flow.randn(64, 64)
    with profile() as prof:
        y = x.to("cuda")
        z = flow.relu(y).to("cpu")
        z.sum().item()
    trace = load_trace(prof, tmp_path)
    names = track_names(trace)
    tracks = {names[e["tid"]] for e in spans(trace, "instruction")}
    assert {"cuda:0/h2d", "cuda:0/compute"} <= tracks


def _frame(fn):
    """torch's text for a frame of `fn` in this file: "<path>(<line>): <name>" without the line."""
    return f"{__file__}(", f"): {fn.__name__}"


def test_with_stack_puts_the_python_stack_on_each_op_and_groups_by_it(tmp_path):
    small, big = flow.randn(4), flow.randn(256, 256)  # one runs inline, one on the worker

    def caller():
        a = _relu_in_helper(small)
        b = _exp_in_helper(big)
        c = _relu_in_helper(small)
        return a, b, c

    with profile(with_stack=True) as prof:
        caller()
        flow.sync()
    trace = load_trace(prof, tmp_path)
    ops = {e["name"]: e for e in spans(trace, "cpu_op")}
    for op, helper in (("relu", _relu_in_helper), ("exp", _exp_in_helper)):
        stack = ops[op]["args"]["Call stack"]
        head, tail = _frame(helper)
        # innermost first, as torch.profiler's FunctionEvent.stack: helper, caller, this test
        assert stack[0].startswith(head) and stack[0].endswith(tail), stack
        assert stack[1].endswith("): caller") and __file__ in stack[1], stack
        assert any(
            f.endswith(
                "): " + test_with_stack_puts_the_python_stack_on_each_op_and_groups_by_it.__name__
            )
            for f in stack
        )
        assert not any("oneflow_like/profiler/" in f for f in stack), stack
    # the line is the call's line in the helper
    line = int(re.search(r"\((\d+)\): _relu_in_helper$", ops["relu"]["args"]["Call stack"][0])[1])
    assert line == _relu_in_helper.__code__.co_firstlineno + 1
    # The instruction an op issued carries the op's stack too.
    instr = {e["name"]: e for e in spans(trace, "instruction")}
    assert instr["exp"]["args"]["Call stack"] == ops["exp"]["args"]["Call stack"]
    # Grouping: both relu calls share their innermost 1 and 2 frames (helper, caller), not 3.
    by1 = [r for r in prof.key_averages(group_by_stack_n=1) if r.key == "relu"]
    assert len(by1) == 1 and by1[0].count == 2 and len(by1[0].stack) == 1
    assert by1[0].stack[0].endswith("): _relu_in_helper")
    by3 = [r for r in prof.key_averages(group_by_stack_n=3) if r.key == "relu"]
    assert sorted(r.count for r in by3) == [1, 1]  # the caller's lines differ
    table = prof.key_averages(group_by_stack_n=2).table(sort_by="count", row_limit=-1)
    assert "Source Location" in table and "_relu_in_helper" in table and "caller" in table
    # Without grouping: one row per op, as before.
    assert [r.count for r in prof.key_averages() if r.key == "relu"] == [2]


def test_stacks_in_nested_python_code_and_record_function_wrappers(tmp_path):
    @record_function("wrapped")
    def step(x):
        return flow.relu(x)

    x = flow.ones(3)
    with profile(with_stack=True) as prof:
        step(x)
        for _ in range(3):
            flow.relu(x)  # one stack, interned once
    relus = [s for s in prof.events() if s.name == "relu" and s.category == "cpu_op"]
    assert len(relus) == 4
    assert relus[0].stack[0].endswith("): step")  # the decorator's wrapper frame is left out
    assert (
        relus[0]
        .stack[1]
        .endswith("): " + test_stacks_in_nested_python_code_and_record_function_wrappers.__name__)
    )
    assert len({s.stack for s in relus[1:]}) == 1 and relus[1].stack is relus[2].stack


def test_collectives_have_a_track_named_collectives(tmp_path):
    import socket

    import oneflow_like.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        t = flow.ones(5)
        with profile() as prof:
            dist.all_reduce(t)
            flow.relu(t).numpy()
    finally:
        dist.destroy_process_group()
    trace = load_trace(prof, tmp_path)
    names = track_names(trace)
    by_track = {}
    for e in spans(trace, "instruction"):
        by_track.setdefault(names[e["tid"]], []).append(e["name"])
    # The collective ran as an instruction on the collective stream's track (the VM stream
    # "cpu/collective"), named "collectives"; the eager op on cpu/compute.
    assert by_track.get("collectives") and all("all_reduce" in n for n in by_track["collectives"])
    assert "relu" in by_track["cpu/compute"], by_track
    assert not any("cpu/collective" in n for n in names.values()), names
