"""Worker side of the distributed tests (test_distributed.py, test_ddp.py): run as one process
per rank, `python dist_cases.py <case> [args]`, with RANK / WORLD_SIZE / MASTER_ADDR /
MASTER_PORT set (by the launcher or the test). A case fails by raising: the process then exits
non-zero with the traceback on stderr. Lines starting with "RESULT " go back to the test."""
import datetime
import os
import sys
import time

import numpy as np

import oneflow_like as flow
import oneflow_like.distributed as dist
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool"]
FLOATS = {"float32", "float64", "float16", "bfloat16"}


def _result(*parts):
    """One write per line: ranks share the launcher's stdout (unbuffered under `python -u`),
    and print() would write the parts separately, interleaving with the other ranks."""
    sys.stdout.write(" ".join(["RESULT"] + [str(p) for p in parts]) + "\n")
    sys.stdout.flush()


def _init(timeout=20.0):
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
    return dist.get_rank(), dist.get_world_size()


def _data(rank, dtype, shape=(3, 5)):
    """Rank r's input, reproducible on every rank (each rank can compute every rank's)."""
    rng = np.random.default_rng(100 + rank)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in FLOATS:
        # Multiples of 1/4 in [-4, 4]: sums and products are exact even in bfloat16.
        return (rng.integers(-16, 17, shape) / 4).astype(np.float32)
    if dtype == "uint8":
        return rng.integers(0, 4, shape).astype(np.uint8)
    return rng.integers(-3, 4, shape).astype(dtype)


def _t(a, dtype):
    return flow.tensor(a).to(getattr(flow, dtype))


def _np(t):
    return (
        t.float().detach().numpy()
        if t.dtype in (flow.float16, flow.bfloat16)
        else t.detach().numpy()
    )


def _close(got, want, what):
    want = np.asarray(want)
    if want.dtype == bool:
        ok = np.array_equal(got.astype(bool), want)
    else:
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2, atol=1e-2)
    assert ok, f"{what}: got {got} want {want}"


def case_collectives():
    rank, world = _init()
    for dtype in DTYPES:
        xs = [_data(r, dtype) for r in range(world)]
        stack = np.stack([x.astype(np.float64) for x in xs])
        ops = {"SUM": stack.sum(0), "MAX": stack.max(0), "MIN": stack.min(0)}
        if dtype in FLOATS:
            ops["AVG"] = stack.mean(0)
        if dtype not in ("int8", "uint8"):  # products overflow the small integers
            ops["PRODUCT"] = stack.prod(0)
        for op, want in ops.items():
            t = _t(xs[rank], dtype)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            if dtype == "bool":
                want = stack.any(0) if op in ("SUM", "MAX") else stack.all(0)
            _close(_np(t), want, f"all_reduce {op} {dtype}")
        root = world - 1
        t = _t(xs[rank], dtype)
        dist.broadcast(t, src=root)
        _close(_np(t), xs[root], f"broadcast {dtype}")
        outs = [flow.zeros(3, 5).to(getattr(flow, dtype)) for _ in range(world)]
        dist.all_gather(outs, _t(xs[rank], dtype))
        for r in range(world):
            _close(_np(outs[r]), xs[r], f"all_gather {dtype} from rank {r}")
        big = flow.zeros(world * 3, 5).to(getattr(flow, dtype))
        dist.all_gather_into_tensor(big, _t(xs[rank], dtype))
        _close(_np(big), np.concatenate(xs), f"all_gather_into_tensor {dtype}")
        # reduce_scatter: rank r sends block j = data(r) + j; block `rank` of the sum comes back
        ins = [_t(xs[rank] if dtype == "bool" else xs[rank] + j, dtype) for j in range(world)]
        out = flow.zeros(3, 5).to(getattr(flow, dtype))
        dist.reduce_scatter(out, ins, op=dist.ReduceOp.SUM)
        if dtype == "bool":
            want = stack.any(0)
        else:
            want = stack.sum(0) + world * rank
        _close(_np(out), want, f"reduce_scatter {dtype}")
        out = flow.zeros(3, 5).to(getattr(flow, dtype))
        dist.reduce_scatter_tensor(out, flow.cat(ins, dim=0), op=dist.ReduceOp.MAX)
        want = stack.any(0) if dtype == "bool" else stack.max(0) + rank
        _close(_np(out), want, f"reduce_scatter_tensor {dtype}")
        # reduce / gather / scatter to and from the last rank
        t = _t(xs[rank], dtype)
        dist.reduce(t, dst=root, op=dist.ReduceOp.MAX)
        want = (stack.any(0) if dtype == "bool" else stack.max(0)) if rank == root else xs[rank]
        _close(_np(t), want, f"reduce {dtype}")
        outs = (
            [flow.zeros(3, 5).to(getattr(flow, dtype)) for _ in range(world)]
            if rank == root
            else None
        )
        dist.gather(_t(xs[rank], dtype), outs, dst=root)
        for r in range(world if rank == root else 0):
            _close(_np(outs[r]), xs[r], f"gather {dtype} from rank {r}")
        got = flow.zeros(3, 5).to(getattr(flow, dtype))
        dist.scatter(got, [_t(x, dtype) for x in xs] if rank == root else None, src=root)
        _close(_np(got), xs[rank], f"scatter {dtype}")
        # send / recv around the ring
        if world > 1:
            nxt, prv = (rank + 1) % world, (rank - 1) % world
            got = flow.zeros(3, 5).to(getattr(flow, dtype))
            if rank % 2 == 0:
                dist.send(_t(xs[rank], dtype), dst=nxt)
                dist.recv(got, src=prv)
            else:
                dist.recv(got, src=prv)
                dist.send(_t(xs[rank], dtype), dst=nxt)
            _close(_np(got), xs[prv], f"send/recv {dtype}")
    # async: the work handle, and the result read through the VM without an explicit wait
    t = flow.full((1000,), float(rank + 1))
    y = t * 2
    work = dist.all_reduce(y, async_op=True)
    s = (y + 1).sum().item()  # ordered after the all-reduce by the VM
    assert work.wait(datetime.timedelta(seconds=30)) is True and work.is_completed()
    assert s == 1000 * (2 * world * (world + 1) / 2 + 1), s
    # async_op=False on a tensor a large kernel is still writing: the all-reduce is not ready
    # when issued (so it goes to the collective stream's worker, ordered after the matmul);
    # then one that is ready at once (run on this thread); the ops after each read the sums
    x = flow.full((384, 384), float(rank + 1))
    for _ in range(2):
        y = x @ x  # every element 384 (rank + 1)^2
        dist.all_reduce(y)
        want = 384.0 * sum((r + 1) ** 2 for r in range(world))
        assert float((y - want).abs().max().item()) == 0.0, "all_reduce after a matmul"
        dist.all_reduce(y)
        assert float((y - world * want).abs().max().item()) == 0.0, "all_reduce, ready at once"
    # picklable objects
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "pad": "x" * rank})
    assert objs == [{"rank": r, "pad": "x" * r} for r in range(world)], objs
    lst = [rank, f"from {rank}"] if rank == 1 else [None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [1, "from 1"], lst
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()


def _mlp():
    return nn.Sequential(
        nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3)
    )


def _batches(steps, world, per_rank):
    rng = np.random.default_rng(7)
    return [
        (
            rng.standard_normal((world * per_rank, 6)).astype(np.float32),
            rng.integers(0, 3, world * per_rank),
        )
        for _ in range(steps)
    ]


def _steps_like_one_process(model, module, rank, world):
    """5 SGD steps of the DDP `model` (wrapping `module`) on each rank's slice, beside one
    process on the whole batch from rank 0's parameters; the parameters must agree. Returns both
    optimizers and the reference model."""
    opt = flow.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    flow.manual_seed(1234)
    ref = _mlp()
    ref.load_state_dict(module.state_dict())
    ref_opt = flow.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    per = 4
    for x, y in _batches(5, world, per):
        xs = flow.tensor(x[rank * per : (rank + 1) * per])
        ys = flow.tensor(y[rank * per : (rank + 1) * per])
        loss = F.cross_entropy(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ref_loss = F.cross_entropy(ref(flow.tensor(x)), flow.tensor(y))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
    for (n, p), (_, q) in zip(module.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(
            p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
    return opt, ref, ref_opt


def case_ddp(bucket_cap_mb="25"):
    """Several DDP steps on each rank's slice == one process on the whole batch."""
    rank, world = _init()
    flow.manual_seed(1234 + rank)  # different inits: DDP must broadcast rank 0's
    model = nn.parallel.DistributedDataParallel(_mlp(), bucket_cap_mb=float(bucket_cap_mb))
    if float(bucket_cap_mb) < 0.001:
        assert len(model._buckets) > 1, len(model._buckets)
    opt, ref, ref_opt = _steps_like_one_process(model, model.module, rank, world)
    per = 4
    # gradients are views of the buckets: writing a bucket changes every .grad in it
    for b in model._buckets:
        b.flat.fill_(7.0)
        for _, p in b.params:
            assert np.all(p.grad.detach().numpy() == 7.0), p.grad
    # no_sync: two local backward passes, then a synced one == the sum over all three
    opt.zero_grad()
    ref_opt.zero_grad()
    x, y = _batches(1, world, 3 * per)[0]
    chunks = [(x[i::3], y[i::3]) for i in range(3)]
    for i, (cx, cy) in enumerate(chunks):
        lx, ly = cx[rank * per : (rank + 1) * per], cy[rank * per : (rank + 1) * per]
        ctx = model.no_sync() if i < 2 else _nullcontext()
        with ctx:
            F.cross_entropy(model(flow.tensor(lx)), flow.tensor(ly)).backward()
        F.cross_entropy(ref(flow.tensor(cx)), flow.tensor(cy)).backward()
    for (n, p), (_, q) in zip(model.module.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(
            p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
    dist.destroy_process_group()


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _Partly(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 2)

    def forward(self, x):
        return self.used(x)


def case_ddp_unused():
    rank, world = _init()
    m = _Partly()
    m.register_buffer("stat", flow.full((2,), float(rank + 10)))
    model = nn.parallel.DistributedDataParallel(m)
    assert np.all(m.stat.detach().numpy() == 10), m.stat  # rank 0's buffers at construction
    x = flow.randn(3, 4)
    try:
        model(x).sum().backward()
    except RuntimeError as e:
        assert "unused.weight" in str(e) and "unused.bias" in str(e), str(e)
        assert "find_unused_parameters=True" in str(e), str(e)
    else:
        raise AssertionError("a parameter without gradient was not reported")
    model = nn.parallel.DistributedDataParallel(_Partly(), find_unused_parameters=True)
    x = flow.full((3, 4), float(rank + 1))
    model(x).sum().backward()
    assert np.all(model.module.unused.weight.grad.detach().numpy() == 0)
    # d(sum)/dW = column sums of x, averaged over ranks
    want = np.full((2, 4), 3 * (world + 1) / 2)
    np.testing.assert_allclose(model.module.used.weight.grad.detach().numpy(), want)
    dist.destroy_process_group()


def case_ddp_overlap():
    """Instruction log through the profiler: the first bucket's all-reduce is issued before
    backward has issued its last gradient kernel, so the collective stream can run it while the
    compute stream computes the rest (the VM numbers instructions in issue order)."""
    rank, world = _init()
    widths = [512, 512, 512, 512]
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers), bucket_cap_mb=1.1)
    assert len(model._buckets) == 3, len(model._buckets)  # one 1 MB weight (+ bias) per bucket
    x = flow.randn(64, 512)
    model(x).sum().backward()  # warm-up
    with flow.profiler.profile() as prof:
        model(x).sum().backward()
    spans = [e for e in prof.events() if e.category == "instruction" and "instruction" in e.args]
    names = {e.track: prof._require_trace().track_names.get(e.track, "") for e in spans}
    reduces = sorted(e.args["instruction"] for e in spans if e.name == "all_reduce")
    compute = [e.args["instruction"] for e in spans if names[e.track].endswith("/compute")]
    assert len(reduces) == 3, [e.name for e in spans]
    assert reduces[0] < max(compute), (reduces, sorted(compute)[-5:])
    _result(reduces, max(compute))
    dist.destroy_process_group()


def case_shape_mismatch():
    rank, world = _init()
    t = flow.ones(4 + rank)
    try:
        dist.all_reduce(t)
    except ValueError as e:
        msg = str(e)
        assert (
            "rank 0: all_reduce of float32[4]" in msg and "rank 1: all_reduce of float32[5]" in msg
        ), msg
        _result(msg)
    else:
        raise AssertionError("mismatched shapes were not caught")
    flow.sync()  # raised once: the VM does not raise it again
    dist.all_reduce(flow.ones(3))  # the group still works afterwards
    dist.destroy_process_group()


def case_signature_changes_later():
    """A loop of one collective exchanges its signature once; a rank that later passes another
    dtype (same byte count) makes every rank raise the named mismatch, found after Gloo timed
    out (Note [Signature checks]), within the bounded wait, never a Gloo abort."""
    rank, world = _init(timeout=3.0)
    pg = dist._pg
    for _ in range(6):
        t = flow.ones(256)
        dist.all_reduce(t)
        assert float(t.detach().numpy()[0]) == world
    assert pg._signature_exchanges() == 1, pg._signature_exchanges()
    for i in range(4):  # alternating signatures: each one changes, so each is exchanged
        dist.all_reduce(flow.ones(8 + i % 2))
    assert pg._signature_exchanges() == 5, pg._signature_exchanges()
    dist.all_reduce(flow.ones(256))  # agreed again: the next float32[256] skips the exchange
    odd = rank == world - 1
    t = flow.ones(256, dtype=flow.int32 if odd else flow.float32)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        flow.sync()
    except ValueError as e:
        msg = str(e)
        # every rank names the odd one; the others' entries may read "did not report" when a
        # rank's timeout fired more than the 1 s grace later (a loaded machine)
        assert f"rank {world - 1}: all_reduce of int32[256]" in msg, msg
        assert "all_reduce of float32[256]" in msg, msg
        _result(f"{time.monotonic() - start:.2f}", msg)
    else:
        raise AssertionError("the changed dtype was not caught")


def case_peer_dies():
    rank, world = _init(timeout=float(os.environ.get("TEST_TIMEOUT", "5")))
    t = flow.ones(1000)
    dist.all_reduce(t)
    if rank == world - 1:
        os._exit(3)  # dies between steps, without any goodbye
    start = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(t)
    except RuntimeError as e:
        _result(f"{time.monotonic() - start:.2f}", str(e).replace("\n", " "))
        os._exit(0)  # skip the exit-time drain of a broken group
    raise AssertionError("no error after a peer died")


def case_ddp_peer_dies():
    """A rank dies between DDP steps: the others' loss.backward() raises (the bucket wait)."""
    rank, world = _init(timeout=5.0)
    model = nn.parallel.DistributedDataParallel(_mlp())
    x, y = flow.randn(4, 6), flow.tensor([0, 1, 2, 0])
    F.cross_entropy(model(x), y).backward()
    if rank == world - 1:
        os._exit(3)
    start = time.monotonic()
    try:
        for _ in range(3):
            F.cross_entropy(model(x), y).backward()
    except RuntimeError as e:
        _result(f"{time.monotonic() - start:.2f}", str(e).replace("\n", " "))
        os._exit(0)
    raise AssertionError("DDP went on after a peer died")


def case_peer_stalls():
    """The last rank stays alive but never joins the collective: the others time out."""
    rank, world = _init(timeout=2.0)
    if rank == world - 1:
        time.sleep(4)
        os._exit(0)
    start = time.monotonic()
    try:
        dist.all_reduce(flow.ones(10))
    except RuntimeError as e:
        _result(f"{time.monotonic() - start:.2f}", str(e).replace("\n", " "))
        os._exit(0)
    raise AssertionError("no error while a peer stalled")


def case_init_only():
    _init(timeout=float(os.environ.get("TEST_TIMEOUT", "5")))
    dist.barrier()
    _result("ok")
    dist.destroy_process_group()


def case_launcher_env(mode=""):
    keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
    _result(" ".join(f"{k}={os.environ[k]}" for k in keys))
    if mode == "fail" and os.environ["RANK"] == "1":
        sys.exit(7)
    if mode == "fail":
        time.sleep(60)  # the launcher must stop this one


class _TrainStep(nn.Graph):
    def __init__(self, model, opt):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        return loss


def _make_opt(kind, params):
    if kind == "sgd":
        return flow.optim.SGD(params, lr=0.1, momentum=0.9)
    return flow.optim.Adam(params, lr=0.01)


def _assert_first_all_reduce_overlaps(hlo):
    """In the compiled schedule (the entry computation's instruction order), the first bucket's
    all-reduce starts before gradient work of the earlier layers and is waited for after it."""
    lines = hlo[hlo.index("ENTRY") :].splitlines()
    start = next(k for k, l in enumerate(lines) if "dist_all_reduce_async_start" in l)
    name = lines[start].split("=")[0].strip()
    done = next(
        k for k, l in enumerate(lines) if "dist_all_reduce_async_done" in l and name + ")" in l
    )
    between = [l for l in lines[start + 1 : done] if "dist_all_reduce" not in l]
    work = [l for l in between if "fusion(" in l or " dot(" in l or "custom-call(" in l]
    assert start < done and work, "\n".join(lines[start : done + 1])


def case_ddp_graph(opt_kind="sgd", bucket_cap_mb="25"):
    """nn.Graph over DDP (the bucket all-reduces compiled into the graph) == one process on the
    whole batch, and == eager DDP, for several steps."""
    rank, world = _init()
    cap = float(bucket_cap_mb)
    flow.manual_seed(1234 + rank)  # different inits: DDP must broadcast rank 0's
    model = nn.parallel.DistributedDataParallel(_mlp(), bucket_cap_mb=cap)
    eager = nn.parallel.DistributedDataParallel(_mlp(), bucket_cap_mb=cap)
    eager.module.load_state_dict(model.module.state_dict())
    ref = _mlp()
    ref.load_state_dict(model.module.state_dict())
    opt = _make_opt(opt_kind, model.parameters())
    eager_opt = _make_opt(opt_kind, eager.parameters())
    ref_opt = _make_opt(opt_kind, ref.parameters())
    step = _TrainStep(model, opt)
    per = 4
    for x, y in _batches(4, world, per):
        xs = flow.tensor(x[rank * per : (rank + 1) * per])
        ys = flow.tensor(y[rank * per : (rank + 1) * per])
        loss = step(xs, ys)
        eager_loss = F.cross_entropy(eager(xs), ys)
        eager_opt.zero_grad()
        eager_loss.backward()
        eager_opt.step()
        np.testing.assert_allclose(
            loss.detach().numpy(), eager_loss.detach().numpy(), rtol=1e-5, atol=1e-6
        )
        ref_loss = F.cross_entropy(ref(flow.tensor(x)), flow.tensor(y))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
    hlo = step.compiled.hlo_after
    assert hlo.count("dist_all_reduce_async_start") == len(model._buckets), hlo
    assert hlo.count("dist_all_reduce_async_done") == len(model._buckets), hlo
    if cap < 0.001:
        assert len(model._buckets) > 1, len(model._buckets)
        _assert_first_all_reduce_overlaps(hlo)
    named = zip(model.module.named_parameters(), eager.module.named_parameters(), ref.parameters())
    for (n, p), (_, e), q in named:
        np.testing.assert_allclose(
            p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
        np.testing.assert_allclose(
            p.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=n
        )
    _result("buckets", len(model._buckets))
    dist.destroy_process_group()


class _AllReduceGraph(nn.Graph):
    def build(self, x):
        y = x * 2
        dist.all_reduce(y, op=dist.ReduceOp.MAX)
        z = x + 1
        work = dist.broadcast(z, 1, async_op=True)
        work.wait()
        return y, z


def case_graph_collectives():
    """dist.all_reduce / dist.broadcast called in build() run inside the compiled graph."""
    rank, world = _init()
    g = _AllReduceGraph()
    for it in range(3):
        x = _data(rank + it, "float32")
        y, z = g(flow.tensor(x))
        want_y = np.max([_data(r + it, "float32") * 2 for r in range(world)], axis=0)
        _close(y.detach().numpy(), want_y, "graph all_reduce max")
        _close(z.detach().numpy(), _data(1 + it, "float32") + 1, "graph broadcast")
    assert "ofl.kernel.dist_broadcast" in g.compiled.hlo_after
    # an eager collective between graph runs keeps working (its own tags)
    t = flow.ones(4)
    dist.all_reduce(t)
    _close(t.detach().numpy(), np.full(4, world), "eager after graph")
    dist.destroy_process_group()


def case_subgroups():
    """new_group sub-groups: every collective on a group == NumPy over its members only; the
    rank helpers; non-members get -1 / None; the default group still works in between."""
    rank, world = _init()
    if world == 2:
        layouts = [[0, 1], [1]]
    else:
        layouts = [[0, 2], [1, 3], [1, 2, 3]]
    groups = [dist.new_group(ranks) for ranks in layouts]
    for ranks, g in zip(layouts, groups):
        if rank not in ranks:
            assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
            assert dist.all_reduce(flow.ones(3), group=g) is None
            continue
        n, me = len(ranks), ranks.index(rank)
        assert dist.get_rank(g) == me and dist.get_world_size(g) == n
        assert dist.get_group_rank(g, rank) == me and dist.get_global_rank(g, me) == rank
        for dtype in ("float32", "int64", "float16"):
            t = _t(_data(rank, dtype), dtype)
            dist.all_reduce(t, group=g)
            _close(_np(t), sum(_data(r, dtype).astype(np.float64) for r in ranks), f"{ranks} sum")
            t = _t(_data(rank, dtype), dtype)
            dist.broadcast(t, ranks[-1], group=g)  # src is a global rank, as in torch
            _close(_np(t), _data(ranks[-1], dtype), f"{ranks} broadcast")
            outs = [_t(np.zeros((3, 5)), dtype) for _ in ranks]
            dist.all_gather(outs, _t(_data(rank, dtype), dtype), group=g)
            for o, r in zip(outs, ranks):
                _close(_np(o), _data(r, dtype), f"{ranks} all_gather")
            big = [_data(r, dtype, (n * 2, 3)) for r in ranks]
            out = _t(np.zeros((2, 3)), dtype)
            dist.reduce_scatter_tensor(out, _t(_data(rank, dtype, (n * 2, 3)), dtype), group=g)
            want = sum(b.astype(np.float64) for b in big)[me * 2 : me * 2 + 2]
            _close(_np(out), want, f"{ranks} reduce_scatter")
        objs = [None] * n
        dist.all_gather_object(objs, {"rank": rank}, group=g)
        assert objs == [{"rank": r} for r in ranks], objs
        dist.barrier(group=g)
    t = flow.ones(2)
    dist.all_reduce(t)
    _close(t.detach().numpy(), np.full(2, world), "default group after sub-groups")
    dist.destroy_process_group(groups[0])
    dist.destroy_process_group()


def case_local_sync_groups():
    """new_group(use_local_synchronization=True): only the members call it; ranks 0 and 1 make
    two such groups, ranks 2 and 3 one, and counted groups made by every rank afterwards still
    agree (their keys are not shifted by the local calls)."""
    rank, world = _init()
    assert world == 4
    mine = [0, 1] if rank < 2 else [2, 3]
    local = [
        dist.new_group(mine, use_local_synchronization=True) for _ in range(2 if rank < 2 else 1)
    ]
    counted = dist.new_group([0, 3])
    for i, g in enumerate(local):
        t = flow.tensor([float(rank + 10 * i)])
        dist.all_reduce(t, group=g)
        _close(t.detach().numpy(), [sum(r + 10 * i for r in mine)], f"local group {i} of {mine}")
        assert dist.get_world_size(g) == 2 and dist.get_rank(g) == mine.index(rank)
    t = flow.tensor([float(rank)])
    dist.all_reduce(t, group=counted)
    if rank in (0, 3):
        _close(t.detach().numpy(), [3.0], "counted group [0, 3]")
    other = dist.new_group([1, 2], use_local_synchronization=True)  # a non-member may call it
    assert (dist.get_rank(other) == -1) == (rank not in (1, 2))
    dist.barrier()
    dist.destroy_process_group()
    _result("ok")


def case_reduce_scatter_bandwidth(sizes="1048576,16777216"):
    """rank 0 prints reduce_scatter_tensor's fastest time per total input size (bench)."""
    rank, world = _init(timeout=120)
    for total in [int(v) for v in sizes.split(",")]:
        inp = flow.ones(total // 4)
        out = flow.zeros(total // 4 // world)
        dist.reduce_scatter_tensor(out, inp)
        best = float("inf")
        for _ in range(max(3, min(50, (64 << 20) // total))):
            t0 = time.perf_counter()
            dist.reduce_scatter_tensor(out, inp)
            best = min(best, time.perf_counter() - t0)
        if rank == 0:
            _result(total, f"{best:.6f}")
    dist.destroy_process_group()


def case_ddp_subgroup():
    """4 ranks as two DDP jobs on sub-groups [0, 1] and [2, 3] (eager, then nn.Graph): each ==
    one process on its group's concatenated batch; the groups' data differ."""
    rank, world = _init()
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    g = groups[rank // 2]
    me = dist.get_rank(g)
    flow.manual_seed(10 + rank)  # different inits: DDP broadcasts the group's first rank's
    eager = nn.parallel.DistributedDataParallel(_mlp(), process_group=g)
    graph_model = nn.parallel.DistributedDataParallel(_mlp(), process_group=g)
    graph_model.module.load_state_dict(eager.module.state_dict())
    ref = _mlp()
    ref.load_state_dict(eager.module.state_dict())
    opt = _make_opt("sgd", eager.parameters())
    step = _TrainStep(graph_model, _make_opt("sgd", graph_model.parameters()))
    ref_opt = _make_opt("sgd", ref.parameters())
    per = 4
    for x, y in _batches(3 + rank // 2, 2, per)[rank // 2 :]:  # group 1 trains on other data
        xs = flow.tensor(x[me * per : (me + 1) * per])
        ys = flow.tensor(y[me * per : (me + 1) * per])
        loss = F.cross_entropy(eager(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step(xs, ys)
        ref_loss = F.cross_entropy(ref(flow.tensor(x)), flow.tensor(y))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
    for (n, p), q, r in zip(
        eager.module.named_parameters(), graph_model.module.parameters(), ref.parameters()
    ):
        np.testing.assert_allclose(
            p.detach().numpy(), r.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
        np.testing.assert_allclose(
            q.detach().numpy(), r.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
    dist.destroy_process_group()


def case_ddp_graph_buffers():
    """Buffers (BatchNorm running stats) in nn.Graph over DDP: broadcast from rank 0 at each
    forward, then updated locally, == eager DDP on every rank, even after the ranks' buffers
    were made to differ between steps."""
    rank, world = _init()

    def bn_mlp():
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 3))

    flow.manual_seed(5 + rank)
    graph_model = nn.parallel.DistributedDataParallel(bn_mlp())
    eager = nn.parallel.DistributedDataParallel(bn_mlp())
    eager.module.load_state_dict(graph_model.module.state_dict())
    step = _TrainStep(graph_model, _make_opt("sgd", graph_model.parameters()))
    opt = _make_opt("sgd", eager.parameters())
    per = 4
    for x, y in _batches(3, world, per):
        for m in (graph_model.module, eager.module):
            with flow.no_grad():
                m[1].running_mean.add_(float(rank))  # rank 0's must win at the next forward
        xs = flow.tensor(x[rank * per : (rank + 1) * per])
        ys = flow.tensor(y[rank * per : (rank + 1) * per])
        step(xs, ys)
        loss = F.cross_entropy(eager(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert "ofl.kernel.dist_broadcast" in step.compiled.hlo_after
    for (n, a), b in zip(
        graph_model.module.state_dict().items(), eager.module.state_dict().values()
    ):
        np.testing.assert_allclose(
            a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
    dist.destroy_process_group()


# ---- The rest of torch.distributed's API (test_distributed_more.py) ----


def _uneven(src, dst):
    """Rows rank `src` sends rank `dst` in the uneven all_to_all_single (0, 1 or 2)."""
    return (src + dst) % 3


def case_more_collectives():
    """all_to_all_single (even and uneven splits, zero-row blocks included), all_to_all of lists,
    all_reduce_coalesced and all_gather_coalesced against NumPy on every dtype; async work."""
    rank, world = _init()
    for dtype in DTYPES:
        fdt = getattr(flow, dtype)
        # even: block j of rank r's input goes to rank j
        xs = [_data(r, dtype, (2 * world, 3)) for r in range(world)]
        out = flow.zeros(2 * world, 3).to(fdt)
        dist.all_to_all_single(out, _t(xs[rank], dtype))
        want = np.concatenate([xs[j][2 * rank : 2 * rank + 2] for j in range(world)])
        _close(_np(out), want, f"all_to_all_single even {dtype}")
        # uneven: rank s sends (s + d) % 3 rows to rank d
        ins = [
            _data(10 + r, dtype, (sum(_uneven(r, d) for d in range(world)), 2))
            for r in range(world)
        ]
        in_splits = [_uneven(rank, d) for d in range(world)]
        out_splits = [_uneven(s, rank) for s in range(world)]
        out = flow.zeros(sum(out_splits), 2).to(fdt)
        dist.all_to_all_single(out, _t(ins[rank], dtype), out_splits, in_splits)
        pieces = []
        for s in range(world):
            at = sum(_uneven(s, d) for d in range(rank))
            pieces.append(ins[s][at : at + _uneven(s, rank)])
        _close(_np(out), np.concatenate(pieces), f"all_to_all_single uneven {dtype}")

        # all_to_all of lists: rank r's j-th input is shaped (j + 1, r + 1)
        def piece(r, j):
            return _data(100 + 10 * r + j, dtype, (j + 1, r + 1))

        outs = [flow.zeros(rank + 1, j + 1).to(fdt) for j in range(world)]
        dist.all_to_all(outs, [_t(piece(rank, j), dtype) for j in range(world)])
        for j in range(world):
            _close(_np(outs[j]), piece(j, rank), f"all_to_all {dtype} from rank {j}")
        # coalesced: three shapes in one collective
        shapes = [(3, 5), (4,), (2, 2)]
        data = [
            [_data(20 + r + 7 * i, dtype, sh) for i, sh in enumerate(shapes)] for r in range(world)
        ]
        ts = [_t(a, dtype) for a in data[rank]]
        op = dist.ReduceOp.MAX if dtype == "bool" else dist.ReduceOp.SUM
        dist.all_reduce_coalesced(ts, op=op)
        for i in range(len(shapes)):
            stack = np.stack([data[r][i].astype(np.float64) for r in range(world)])
            want = stack.any(0) if dtype == "bool" else stack.sum(0)
            _close(_np(ts[i]), want, f"all_reduce_coalesced {dtype} tensor {i}")
        lists = [[flow.zeros(*sh).to(fdt) for sh in shapes] for _ in range(world)]
        dist.all_gather_coalesced(lists, [_t(a, dtype) for a in data[rank]])
        for r in range(world):
            for i in range(len(shapes)):
                _close(_np(lists[r][i]), data[r][i], f"all_gather_coalesced {dtype} [{r}][{i}]")
    # async all_to_all_single: the work handle, and the output read through the VM
    x = flow.arange(world * 4).float().reshape(world * 4, 1) + 100 * rank
    y = x * 2
    out = flow.zeros(world * 4, 1)
    work = dist.all_to_all_single(out, y, async_op=True)
    total = (out + 0).sum().item()
    assert work.wait(datetime.timedelta(seconds=30)) is True and work.is_completed()
    want = sum(2 * (np.arange(4 * rank, 4 * rank + 4) + 100 * j).sum() for j in range(world))
    assert total == want, (total, want)
    _more_errors(rank, world)
    _objects(rank, world)
    dist.destroy_process_group()


def _more_errors(rank, world):
    # splits that do not pair up: every rank raises the same message, and the group goes on
    in_splits = [1] * world
    out_splits = [1] * world
    if rank == 0:
        in_splits = [2] + [1] * (world - 2) + [0]
    try:
        dist.all_to_all_single(flow.zeros(world), flow.zeros(sum(in_splits)), out_splits, in_splits)
    except ValueError as e:
        msg = str(e)
        assert "do not pair up" in msg and f"rank 0 sends 0 rows to rank {world - 1}" in msg, msg
        _result("pairing", msg)
    else:
        raise AssertionError("unpaired splits were not caught")
    flow.sync()
    t = flow.ones(2)
    dist.all_reduce(t)
    assert t.detach().numpy().tolist() == [world, world]
    # local mistakes, named before anything is sent
    for call, needle in [
        (
            lambda: dist.all_to_all_single(
                flow.zeros(world), flow.zeros(world), [1] * world, [2] * world
            ),
            "must sum to dim 0",
        ),
        (
            lambda: dist.all_to_all_single(flow.zeros(world + 1), flow.zeros(world + 1)),
            "divisible by world_size",
        ),
        (lambda: dist.all_to_all_single(flow.zeros(world), flow.zeros(world).int()), "one dtype"),
        (
            lambda: dist.all_to_all_single(flow.zeros(world), flow.zeros(world), [1], [1]),
            "needs world_size",
        ),
        (lambda: dist.all_to_all([flow.zeros(1)], [flow.zeros(1)] * world), "needs world_size"),
        (lambda: dist.all_reduce_coalesced([flow.zeros(1), flow.zeros(1).int()]), "one dtype"),
        (lambda: dist.gather_object(1, [None], dst=rank), "object_gather_list"),
    ]:
        try:
            call()
        except (ValueError, RuntimeError) as e:
            assert needle in str(e), (needle, str(e))
        else:
            raise AssertionError(f"no error ({needle})")


class _Point:
    def __init__(self, x, tags):
        self.x, self.tags = x, tags

    def __eq__(self, other):
        return isinstance(other, _Point) and (self.x, self.tags) == (other.x, other.tags)


def _nested(r):
    return {"rank": r, "items": [(r, "x" * (r * 7)), {"set": {r, r + 1}}], "p": _Point(r, [r] * r)}


def _objects(rank, world):
    dst = world - 1
    got = [None] * world if rank == dst else None
    dist.gather_object(_nested(rank), got, dst=dst)
    if rank == dst:
        assert got == [_nested(r) for r in range(world)], got
    src = 1
    out = [None]
    dist.scatter_object_list(
        out, [_nested(10 + r) for r in range(world)] if rank == src else None, src=src
    )
    assert out == [_nested(10 + rank)], out


def case_monitored_barrier(missing="", wait_all="0"):
    """Everyone passes one monitored_barrier; then the ranks in `missing` skip the next one:
    rank 0 names them (bounded by the barrier's 1.5 s timeout), the others that came raise."""
    rank, world = _init(timeout=30.0)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=20))
    skip = [int(r) for r in missing.split(",") if r]
    if rank in skip:
        time.sleep(2.5)  # alive (connected) while rank 0 waits for it in vain
        os._exit(0)
    start = time.monotonic()
    try:
        dist.monitored_barrier(
            timeout=datetime.timedelta(seconds=1.5), wait_all_ranks=wait_all == "1"
        )
    except RuntimeError as e:
        _result(f"{time.monotonic() - start:.2f}", str(e).replace("\n", " "))
        if rank == 0:
            time.sleep(1.0)  # rank 0 serves the store the others read the answer from
        os._exit(0)  # the group is broken: skip the exit-time drain
    raise AssertionError("monitored_barrier passed without the missing ranks")


def case_stores(file_name):
    """TCPStore and FileStore operations across processes, then init_process_group(store=...)
    over each (a PrefixStore over the FileStore)."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    port = int(os.environ["MASTER_PORT"])
    tcp = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=datetime.timedelta(seconds=20))
    assert tcp.port == port and tcp.host == "127.0.0.1"
    fs = dist.FileStore(file_name, world)
    for store in (tcp, dist.PrefixStore("job", fs)):
        kind = type(store).__name__
        store.set(f"from/{rank}", f"hello {rank}")
        for r in range(world):  # get waits for the other ranks' sets
            assert store.get(f"from/{r}") == f"hello {r}".encode(), kind
        n = store.add("count", rank + 1)
        assert 1 <= n <= world * (world + 1) // 2
        # compare_set: exactly one rank becomes the leader, all see the same one
        store.compare_set("leader", "", str(rank))
        leader = store.get("leader")
        store.set(f"leader/{rank}", leader)
        store.wait([f"leader/{r}" for r in range(world)])
        leaders = {store.get(f"leader/{r}") for r in range(world)}
        assert len(leaders) == 1, (kind, leaders)
        assert store.compare_set("leader", "not it", "x") == leader

        def sync(tag):
            store.set(f"{tag}/{rank}", "1")
            store.wait([f"{tag}/{r}" for r in range(world)], datetime.timedelta(seconds=20))

        sync("done")
        assert store.get("count") == str(world * (world + 1) // 2).encode(), kind
        assert store.check(["count", "leader"]) and not store.check(["count", "never"])
        sync("checked")
        if rank == 0:
            assert store.delete_key("leader") and not store.delete_key("leader")
            assert store.num_keys() >= 2 * world + 1
        start = time.monotonic()
        try:
            store.wait(["never"], datetime.timedelta(seconds=0.3))
        except dist.DistStoreError as e:
            assert "never" in str(e), str(e)
        else:
            raise AssertionError(f"{kind}: wait for a missing key returned")
        assert time.monotonic() - start < 5
        sync("end")
    # the default group meets through each store
    for store in (tcp, dist.PrefixStore("pg", fs)):
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=20)
        t = flow.full((3,), float(rank + 1))
        dist.all_reduce(t)
        assert t.detach().numpy().tolist() == [world * (world + 1) / 2] * 3
        dist.destroy_process_group()
    _result("stores ok")


def case_subgroups_more():
    rank, world = _init()
    cur, groups = dist.new_subgroups(group_size=2)
    assert [g.ranks for g in groups] == [[r, r + 1] for r in range(0, world, 2)]
    assert cur.ranks == [rank - rank % 2, rank - rank % 2 + 1]
    t = flow.full((2,), float(rank))
    dist.all_reduce(t, group=cur)
    assert t.detach().numpy().tolist() == [2.0 * (rank - rank % 2) + 1] * 2
    enum = [[0, world - 1], list(range(1, world - 1))]
    cur, groups = dist.new_subgroups_by_enumeration(enum)
    assert [g.ranks for g in groups] == [sorted(e) for e in enum]
    assert rank in cur.ranks and dist.get_backend(cur) == "gloo"
    t = flow.full((1,), float(rank))
    dist.all_reduce(t, group=cur)
    assert t.item() == sum(cur.ranks)
    for bad, needle in [
        (lambda: dist.new_subgroups_by_enumeration([[0, 1], [1]]), "rank 1 has appeared"),
        (lambda: dist.new_subgroups(group_size=3), "divisible"),
        (lambda: dist.new_subgroups(group_size=0), "positive"),
    ]:
        try:
            bad()
        except ValueError as e:
            assert needle in str(e), str(e)
        else:
            raise AssertionError(needle)
    dist.barrier()
    dist.destroy_process_group()


def case_elastic_env():
    _result(os.environ["RANK"], dist.is_torchelastic_launched(), os.environ["TORCHELASTIC_RUN_ID"])


def case_ddp_compiled():
    """DDP around flow.compile(model): the compiled backward's gradients reach DDP's all-reduce
    hooks through the autograd engine; several steps == one process on the whole batch."""
    rank, world = _init()
    flow.manual_seed(1234 + rank)  # different inits: DDP must broadcast rank 0's
    compiled = flow.compile(_mlp())
    model = nn.parallel.DistributedDataParallel(compiled)
    _steps_like_one_process(model, compiled._orig_mod, rank, world)
    e = compiled.explain()
    assert e["compiled_backward_calls"] == 5 and e["eager_calls"] == 0, e
    dist.destroy_process_group()


if __name__ == "__main__":
    globals()["case_" + sys.argv[1]](*sys.argv[2:])
