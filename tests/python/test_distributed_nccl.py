"""oneflow_like.distributed over NCCL (issue 16), world size 1 on one GPU (NCCL refuses two ranks
on one GPU, so one rank is what a one-GPU machine can run): every collective against NumPy on
the dtypes NCCL takes, on offset views (the neighbours must stay untouched), ordered with the
CUDA kernels around it; async work handles; batch_isend_irecv pairing a rank with itself; the
errors for CPU tensors, other devices, non-contiguous tensors, AVG of integers and wrong list
sizes; object collectives, new_group, "cpu:gloo,cuda:nccl"; DDP of a small MLP on cuda ==
single-process training; destroy_process_group then a new group. Skips (with the reason) without
a CUDA device or libnccl.so.2; OFL_REQUIRE_NCCL=1 (tools/gpu/run.sh) turns that into a failure.
"""
import datetime
import os
import socket
import time

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.distributed as dist
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F


def _unavailable():
    if not flow.cuda.is_available():
        return "no CUDA device"
    if not dist.is_nccl_available():
        return "NCCL is unavailable: " + flow._C._nccl_unavailable()
    return ""


WHY = _unavailable()
needs_nccl = pytest.mark.skipif(bool(WHY), reason=WHY or "NCCL available")
DEV = "cuda:0"
TIMEOUT = datetime.timedelta(seconds=60)

# name -> (flow dtype, the NumPy dtype its test values are made in)
DTYPES = {
    "float32": (flow.float32, np.float32),
    "float64": (flow.float64, np.float64),
    "float16": (flow.float16, np.float16),
    "bfloat16": (flow.bfloat16, np.float32),
    "int32": (flow.int32, np.int32),
    "int64": (flow.int64, np.int64),
    "int8": (flow.int8, np.int8),
    "uint8": (flow.uint8, np.uint8),
    "bool": (flow.bool, np.bool_),
}
FLOATS = {"float32", "float64", "float16", "bfloat16"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _init(backend="nccl", **kw):
    dist.init_process_group(
        backend,
        init_method=f"tcp://127.0.0.1:{free_port()}",
        rank=0,
        world_size=1,
        timeout=TIMEOUT,
        **kw,
    )


@pytest.fixture(scope="module")
def world():
    if dist.is_initialized():
        dist.destroy_process_group()
    _init()
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def values(name, shape, seed):
    """Values every dtype holds exactly (quarters in [-8, 8) for the floats)."""
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if name == "uint8":
        return rng.integers(0, 100, size=shape).astype(np.uint8)
    if name in FLOATS:
        return (rng.integers(-32, 32, size=shape) / 4).astype(DTYPES[name][1])
    return rng.integers(-100, 100, size=shape).astype(DTYPES[name][1])


def on_cuda(arr, name):
    t = flow.from_numpy(np.ascontiguousarray(arr))
    if name == "bfloat16":
        t = t.to(flow.bfloat16)
    return t.to(DEV)


def host(t):
    t = t.to("cpu")
    if t.dtype == flow.bfloat16:
        t = t.float()
    return t.numpy()


def inside(arr, name, pad=3):
    """`arr` as a CUDA view at an offset inside a larger tensor whose other elements are zero
    (returns (big, view))."""
    n = arr.size
    padded = np.zeros(n + 2 * pad, dtype=arr.dtype)
    padded[pad : pad + n] = arr.reshape(-1)
    big = on_cuda(padded, name)
    return big, big[pad : pad + n].view(*arr.shape)


def check_untouched(big, n, pad=3):
    out = host(big)
    assert not out[:pad].any() and not out[pad + n :].any(), "NCCL wrote outside the tensor"


def test_nccl_is_there_where_it_is_required():
    if os.environ.get("OFL_REQUIRE_NCCL") == "1":
        assert not WHY, f"OFL_REQUIRE_NCCL=1 but NCCL cannot run here: {WHY}"
    elif WHY:
        pytest.skip(WHY)


@needs_nccl
def test_backend_and_availability(world):
    assert dist.is_nccl_available()
    assert dist.get_backend() == "nccl"
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist._pg.nccl_version() >= 21400
    assert dist._pg.device() == 0


@needs_nccl
@pytest.mark.parametrize(
    "name,op",
    [
        (name, op)
        for name in DTYPES
        for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
        if op != "AVG" or name in FLOATS  # AVG of integers: test_errors_name_the_op
    ],
)
def test_all_reduce(world, name, op):
    arr = values(name, (3, 5), seed=1)
    big, view = inside(arr, name)
    dist.all_reduce(view, op=getattr(dist.ReduceOp, op))
    np.testing.assert_array_equal(host(view), arr.astype(host(view).dtype))
    check_untouched(big, arr.size)


@needs_nccl
@pytest.mark.parametrize("name", list(DTYPES))
def test_broadcast_reduce(world, name):
    arr = values(name, (7,), seed=2)
    big, view = inside(arr, name)
    dist.broadcast(view, src=0)
    dist.reduce(view, dst=0, op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(host(view), arr.astype(host(view).dtype))
    check_untouched(big, arr.size)


@needs_nccl
@pytest.mark.parametrize("name", list(DTYPES))
def test_all_gather_and_reduce_scatter(world, name):
    arr = values(name, (2, 3), seed=3)
    x = on_cuda(arr, name)
    # list forms (separate tensors: staged through one buffer)
    outs = [on_cuda(np.zeros_like(arr), name)]
    dist.all_gather(outs, x)
    np.testing.assert_array_equal(host(outs[0]), host(x))
    out = on_cuda(np.zeros_like(arr), name)
    dist.reduce_scatter(out, [x], op=dist.ReduceOp.SUM)
    np.testing.assert_array_equal(host(out), host(x))
    # tensor forms (one buffer: NCCL's own all-gather / reduce-scatter on it)
    big, gathered = inside(np.zeros_like(arr), name)
    dist.all_gather_into_tensor(gathered, x)
    np.testing.assert_array_equal(host(gathered), host(x))
    check_untouched(big, arr.size)
    big2, scattered = inside(np.zeros_like(arr), name)
    dist.reduce_scatter_tensor(scattered, x)
    np.testing.assert_array_equal(host(scattered), host(x))
    check_untouched(big2, arr.size)


@needs_nccl
@pytest.mark.parametrize("name", ["float32", "float16", "int64"])
def test_gather_scatter_and_batched_send_recv(world, name):
    arr = values(name, (4,), seed=4)
    x = on_cuda(arr, name)
    outs = [on_cuda(np.zeros_like(arr), name)]
    dist.gather(x, gather_list=outs, dst=0)
    np.testing.assert_array_equal(host(outs[0]), arr)
    got = on_cuda(np.zeros_like(arr), name)
    dist.scatter(got, scatter_list=[x], src=0)
    np.testing.assert_array_equal(host(got), arr)
    # ncclSend / ncclRecv: one group call may pair a rank with itself
    recv = on_cuda(np.zeros_like(arr), name)
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, x, 0), dist.P2POp(dist.irecv, recv, 0)])
    assert len(works) == 2
    for w in works:
        w.wait()
    np.testing.assert_array_equal(host(recv), arr)


@needs_nccl
def test_collectives_order_with_the_kernels_around_them(world):
    x = flow.arange(1000, dtype=flow.float32).to(DEV)
    t = x * 2  # a kernel producing the all-reduce's input
    for _ in range(3):
        dist.all_reduce(t, op=dist.ReduceOp.SUM, async_op=True)
    y = t + 1  # a kernel reading its result
    np.testing.assert_array_equal(y.numpy(), np.arange(1000, dtype=np.float32) * 2 + 1)


@needs_nccl
def test_async_work_and_barrier(world):
    t = flow.ones(1 << 16).to(DEV)
    work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
    assert work is not None
    assert work.wait(timeout=datetime.timedelta(seconds=30)) is True
    assert work.is_completed()
    assert work.wait() is True  # a second wait returns at once
    w2 = dist.broadcast(t, src=0, async_op=True)
    deadline = time.monotonic() + 30
    while not w2.is_completed():
        assert time.monotonic() < deadline, "is_completed() never became true"
        time.sleep(0.001)
    assert dist.barrier() is None
    assert dist.barrier(async_op=True).wait()
    np.testing.assert_array_equal(t.numpy(), np.ones(1 << 16, dtype=np.float32))


@needs_nccl
def test_errors_name_the_op(world):
    with pytest.raises(ValueError, match=r"\[all_reduce\] rank 0.*CUDA.*float32\[3\] on cpu"):
        dist.all_reduce(flow.ones(3))
    with pytest.raises(ValueError, match=r"\[broadcast\] rank 0.*on cpu"):
        dist.broadcast(flow.ones(3), src=0)
    with pytest.raises(ValueError, match=r"\[all_gather\] rank 0: needs world_size \(1\)"):
        dist.all_gather([flow.zeros(3).to(DEV)] * 2, flow.ones(3).to(DEV))
    with pytest.raises(ValueError, match=r"\[reduce_scatter\] rank 0: every input"):
        dist.reduce_scatter(flow.zeros(3).to(DEV), [flow.zeros(4).to(DEV)])
    with pytest.raises(TypeError, match=r"\[all_reduce\].*AVG needs a floating tensor.*int32"):
        dist.all_reduce(flow.ones(3, dtype=flow.int32).to(DEV), op=dist.ReduceOp.AVG)
    with pytest.raises(ValueError, match=r"\[all_reduce\] rank 0: tensors must be contiguous"):
        dist.all_reduce(flow.ones(3, 4).to(DEV).t())
    with pytest.raises(ValueError, match=r"\[send\] rank 0 cannot send to itself"):
        dist.send(flow.ones(3).to(DEV), dst=0)
    with pytest.raises(ValueError, match=r"\[broadcast\] rank 0: src rank 3 is out of range"):
        dist.broadcast(flow.ones(3).to(DEV), src=3)
    if flow.cuda.device_count() > 1:
        with pytest.raises(ValueError, match=r"runs on cuda:0.*got float32\[3\] on cuda:1"):
            dist.all_reduce(flow.ones(3).to("cuda:1"))
    # the group still works after refused calls
    t = flow.ones(3).to(DEV)
    dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), np.ones(3, dtype=np.float32))


@needs_nccl
def test_object_collectives_and_new_group(world):
    objs = [None]
    dist.all_gather_object(objs, {"rank": 0, "data": [1, 2, 3]})
    assert objs == [{"rank": 0, "data": [1, 2, 3]}]
    lst = ["a", 7, (1.5,)]
    dist.broadcast_object_list(lst, src=0)
    assert lst == ["a", 7, (1.5,)]
    g = dist.new_group([0])
    assert dist.get_rank(g) == 0 and dist.get_backend(g) == "nccl"
    t = flow.full((5,), 3.0).to(DEV)
    dist.all_reduce(t, op=dist.ReduceOp.SUM, group=g)
    np.testing.assert_array_equal(t.numpy(), np.full(5, 3.0, dtype=np.float32))
    dist.destroy_process_group(g)


@needs_nccl
def test_ddp_on_cuda_equals_single_process_training(world):
    def make():
        flow.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(DEV)

    ref, mine = make(), make()
    # one bucket per parameter: several NCCL all-reduces per step
    ddp = nn.parallel.DistributedDataParallel(mine, bucket_cap_mb=1e-4)
    opt_ref = flow.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = flow.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    flow.manual_seed(1)
    for _ in range(5):
        x = flow.randn(32, 8).to(DEV)
        y = flow.randint(0, 4, (32,)).to(DEV)
        for model, o in ((ref, opt_ref), (ddp, opt)):
            loss = F.cross_entropy(model(x), y)
            o.zero_grad()
            loss.backward()
            o.step()
    for (n, a), (_, b) in zip(ref.named_parameters(), mine.named_parameters()):
        assert b.device.type == "cuda"
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-6, err_msg=n)


@needs_nccl
def test_local_rank_picks_the_device(monkeypatch):
    n = flow.cuda.device_count()
    monkeypatch.setenv("LOCAL_RANK", str(n))
    assert dist._nccl_device("init_process_group", None, 5) == 0
    assert dist._nccl_device("init_process_group", "cuda:0", 5) == 0
    with pytest.raises(ValueError, match="not a CUDA device of this machine"):
        dist._nccl_device("init_process_group", n, 0)


@needs_nccl
def test_destroy_then_new_groups():
    if dist.is_initialized():
        dist.destroy_process_group()
    _init()
    t = flow.full((4,), 2.0).to(DEV)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="not been initialized"):
        dist.all_reduce(t)
    # a new NCCL group after the first was destroyed
    _init()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    np.testing.assert_array_equal(t.numpy(), np.full(4, 2.0, dtype=np.float32))
    dist.destroy_process_group()
    # both backends, routed by the tensor's device
    _init("cpu:gloo,cuda:nccl")
    assert dist.get_backend() == "cpu:gloo,cuda:nccl"
    c, g = flow.full((3,), 5.0), flow.full((3,), 6.0).to(DEV)
    dist.all_reduce(c, op=dist.ReduceOp.MAX)
    dist.all_reduce(g, op=dist.ReduceOp.MIN)
    dist.barrier()
    np.testing.assert_array_equal(c.numpy(), np.full(3, 5.0, dtype=np.float32))
    np.testing.assert_array_equal(g.numpy(), np.full(3, 6.0, dtype=np.float32))
    dist.destroy_process_group()
    assert not dist.is_initialized()


@needs_nccl
def test_a_missing_peer_fails_within_the_timeout():
    if dist.is_initialized():
        dist.destroy_process_group()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"rank 1 did not join within the timeout"):
        dist.init_process_group(
            "nccl",
            init_method=f"tcp://127.0.0.1:{free_port()}",
            rank=0,
            world_size=2,
            timeout=datetime.timedelta(seconds=2),
        )
    assert time.monotonic() - t0 < 30
    assert not dist.is_initialized()
