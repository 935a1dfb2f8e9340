"""oneflow_like.distributed over Gloo (issue 16): each collective against NumPy on every dtype
with 2 and 4 processes on 127.0.0.1, DDP training == one process on the concatenated batch,
the launcher, and faults bounded in time (a dead peer, a mismatched world size, an occupied
port, shapes that differ between ranks). Workers run tests/python/dist_cases.py."""
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.distributed as dist
from oneflow_like.utils.data import DistributedSampler

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_cases.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**kw):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["OMP_NUM_THREADS"] = "1"
    env.update({k: str(v) for k, v in kw.items()})
    return env


def spawn(case, world, *args, port=None, sizes=None, timeout=90, env=None):
    """Runs `case` as `world` processes; returns [(returncode, stdout, stderr)] by rank."""
    port = port or free_port()
    procs = []
    for r in range(world):
        e = _env(
            RANK=r,
            WORLD_SIZE=(sizes or [world] * world)[r],
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=port,
            **(env or {}),
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, CASES, case, *args],
                env=e,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    out = []
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            o, e = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError(f"{case}: ranks still running after {timeout} s")
        out.append((p.returncode, o, e))
    return out


def ok(results):
    for r, (rc, o, e) in enumerate(results):
        assert rc == 0, f"rank {r} exited {rc}\n{o}\n{e}"


def result_line(text):
    return [l[len("RESULT ") :] for l in text.splitlines() if l.startswith("RESULT ")]


@pytest.mark.parametrize("world", [2, 4])
def test_collectives_match_numpy_on_every_dtype(world):
    ok(spawn("collectives", world))


def test_launcher_runs_the_collectives_and_sets_torchrun_env():
    port = free_port()
    run = [sys.executable, "-m", "oneflow_like.distributed.run", "--nproc-per-node", "2"]
    r = subprocess.run(
        run + ["--master-port", str(port), CASES, "launcher_env"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    lines = sorted(result_line(r.stdout))
    assert lines == [
        f"RANK={i} LOCAL_RANK={i} WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 "
        f"MASTER_PORT={port}"
        for i in range(2)
    ], (r.stdout, r.stderr)


def test_two_launchers_as_two_nodes_form_one_group():
    port = free_port()
    run = [sys.executable, "-m", "oneflow_like.distributed.run", "--nproc-per-node", "1"]
    nodes = [
        subprocess.Popen(
            run
            + ["--nnodes", "2", "--node-rank", str(n), "--master-port", str(port)]
            + [CASES, "init_only"],
            env=_env(TEST_TIMEOUT=20),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (1, 0)  # the node of rank 0 starts last: the others wait for its store
    ]
    for p in nodes:
        o, e = p.communicate(timeout=60)
        assert p.returncode == 0 and result_line(o) == ["ok"], e


def test_launcher_stops_the_others_when_a_worker_dies():
    start = time.monotonic()
    run = [sys.executable, "-m", "oneflow_like.distributed.run", "--nproc-per-node", "2"]
    r = subprocess.run(
        run + ["--master-port", "0", "--grace", "2", CASES, "launcher_env", "fail"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 7, (r.returncode, r.stderr)
    assert "worker rank 1" in r.stderr and "exit code 7" in r.stderr, r.stderr
    assert time.monotonic() - start < 30  # rank 0 sleeps 60 s unless stopped


TORCH_DDP_SCRIPT = """
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
torch.manual_seed(dist.get_rank())
model = DDP(nn.Linear(4, 2))
g = torch.Generator().manual_seed(0)
ds = TensorDataset(torch.randn(32, 4, generator=g), torch.randn(32, 2, generator=g))
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=4, sampler=sampler)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
import sys
sys.stdout.write(f"RESULT {float(model.module.weight.sum())}\\n")  # one write: ranks share stdout
dist.destroy_process_group()
"""


def test_a_pytorch_ddp_script_runs_unchanged_under_mock_torch(tmp_path):
    script = tmp_path / "ddp.py"
    script.write_text(TORCH_DDP_SCRIPT)
    run = [sys.executable, "-m", "oneflow_like.distributed.run", "--nproc-per-node", "2"]
    r = subprocess.run(
        run + ["--master-port", "0", "-m", "oneflow_like.mock_torch", str(script)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    weights = result_line(r.stdout)
    assert len(weights) == 2 and weights[0] == weights[1], weights  # the ranks stay in step


def test_ddp_equals_single_process_training_on_the_whole_batch():
    ok(spawn("ddp", 2))


def test_ddp_around_a_compiled_model_equals_single_process():
    ok(spawn("ddp_compiled", 2))


def test_ddp_with_small_buckets_and_four_ranks():
    ok(spawn("ddp", 4, "0.0005"))


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_graph_ddp_equals_single_process_and_eager_ddp(opt):
    res = spawn("ddp_graph", 2, opt)
    ok(res)
    assert result_line(res[0][1]) == ["buckets 1"]


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_graph_ddp_with_small_buckets_and_four_ranks(opt):
    res = spawn("ddp_graph", 4, opt, "0.0005")
    ok(res)
    assert result_line(res[0][1]) == ["buckets 3"]


def test_graph_ddp_broadcasts_buffers_like_eager_ddp():
    ok(spawn("ddp_graph_buffers", 2))


def test_collectives_called_in_graph_build_run_in_the_compiled_graph():
    ok(spawn("graph_collectives", 2))


@pytest.mark.parametrize("world", [2, 4])
def test_subgroups_match_numpy_over_their_members(world):
    ok(spawn("subgroups", world))


def test_groups_with_local_synchronization_need_only_their_members():
    ok(spawn("local_sync_groups", 4))


def test_ddp_on_sub_groups_eager_and_graph():
    ok(spawn("ddp_subgroup", 4))


def test_ddp_bucket_reductions_are_issued_during_backward():
    ok(spawn("ddp_overlap", 2))


def test_ddp_names_parameters_without_gradient():
    ok(spawn("ddp_unused", 2))


def test_shape_mismatch_between_ranks_is_named():
    res = spawn("shape_mismatch", 2)
    ok(res)
    assert "float32[4]" in result_line(res[0][1])[0]


def test_a_signature_changed_later_is_named_without_a_gloo_abort():
    res = spawn("signature_changes_later", 3, timeout=60)
    ok(res)
    for rc, o, e in res:
        (line,) = result_line(o)
        elapsed, msg = line.split(" ", 1)
        # 3 s group timeout, then at most timeout / 2 waiting for the others' signatures
        assert float(elapsed) < 8, line
        assert "rank 2: all_reduce of int32[256]" in msg, msg
        assert "Found after the Gloo call failed" in msg, msg


def test_a_rank_that_dies_makes_the_others_raise_within_the_timeout():
    start = time.monotonic()
    res = spawn("peer_dies", 3, env={"TEST_TIMEOUT": 5})
    assert time.monotonic() - start < 45
    for r in (0, 1):
        rc, o, e = res[r]
        assert rc == 0, f"rank {r}: {rc}\n{o}\n{e}"
        (line,) = result_line(o)
        elapsed, msg = line.split(" ", 1)
        assert float(elapsed) < 15, line
        assert "[all_reduce]" in msg and f"rank {r} of 3" in msg and "float32[1000]" in msg, msg
    assert res[2][0] == 3


def test_ddp_backward_raises_when_a_peer_died():
    res = spawn("ddp_peer_dies", 2, timeout=60)
    rc, o, e = res[0]
    assert rc == 0, f"{rc}\n{o}\n{e}"
    (line,) = result_line(o)
    elapsed, msg = line.split(" ", 1)
    assert float(elapsed) < 15 and "[all_reduce] rank 0 of 2" in msg, line


def test_a_rank_that_stalls_makes_the_others_time_out():
    res = spawn("peer_stalls", 2, timeout=60)
    rc, o, e = res[0]
    assert rc == 0, f"{rc}\n{o}\n{e}"
    (line,) = result_line(o)
    elapsed, msg = line.split(" ", 1)
    assert 1.5 < float(elapsed) < 6, line
    assert "[all_reduce] rank 0 of 2 (float32[10])" in msg and "timeout (2000 ms)" in msg, msg


def test_mismatched_world_size_fails_clearly():
    res = spawn("init_only", 2, sizes=[2, 3], env={"TEST_TIMEOUT": 10}, timeout=60)
    for rc, o, e in res:
        assert rc != 0
        assert "world_size mismatch" in e, e


def test_a_missing_rank_is_named_after_the_timeout():
    res = spawn("init_only", 1, sizes=[2], env={"TEST_TIMEOUT": 1}, timeout=30)
    rc, o, e = res[0]
    assert rc != 0 and "rank 1 did not join within the timeout (1000 ms" in e, e


def test_occupied_port_fails_clearly():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = spawn("init_only", 1, port=port, env={"TEST_TIMEOUT": 3}, timeout=30)
    rc, o, e = res[0]
    assert rc != 0 and f"cannot listen on 127.0.0.1:{port}" in e, e


def test_world_size_one_runs_in_process():
    port = free_port()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        t = flow.arange(6).float()
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        np.testing.assert_array_equal(t.detach().numpy(), np.arange(6))
        outs = [flow.zeros(6)]
        dist.all_gather(outs, t)
        np.testing.assert_array_equal(outs[0].detach().numpy(), np.arange(6))
        with pytest.raises(RuntimeError, match="twice"):
            dist.init_process_group(
                "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1
            )
        with pytest.raises(ValueError, match="contiguous"):
            dist.all_reduce(flow.zeros(4, 4).t())
        with pytest.raises(TypeError, match="AVG needs a floating"):
            dist.all_reduce(flow.zeros(4, dtype=flow.int32), op=dist.ReduceOp.AVG)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="not been initialized"):
        dist.get_rank()
    # a second group on the same port after the first was destroyed
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    t = flow.ones(3)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    dist.destroy_process_group()
    np.testing.assert_array_equal(t.detach().numpy(), np.ones(3))


def test_nccl_without_cuda_is_a_clear_error():
    if flow.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="backend='nccl' needs a CUDA device"):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)


def test_env_init_names_the_missing_variable(monkeypatch):
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        dist.init_process_group("gloo")


@pytest.mark.parametrize(
    "n,world,drop_last", [(10, 3, False), (10, 3, True), (2, 4, False), (12, 4, False)]
)
def test_distributed_sampler_partitions_the_dataset(n, world, drop_last):
    ds = list(range(n))
    parts = []
    for r in range(world):
        s = DistributedSampler(
            ds, num_replicas=world, rank=r, shuffle=True, seed=3, drop_last=drop_last
        )
        s.set_epoch(5)
        parts.append(list(s))
        assert len(parts[-1]) == len(s)
    assert len({len(p) for p in parts}) == 1  # the same count on every rank
    flat = sum(parts, [])
    if drop_last:
        assert len(flat) == (n // world) * world and len(set(flat)) == len(flat)
    else:
        assert set(flat) == set(range(n)) and len(flat) == -(-n // world) * world
    # the same epoch gives the same order; another epoch another one
    s = DistributedSampler(ds, num_replicas=world, rank=0, seed=3, drop_last=drop_last)
    s.set_epoch(5)
    assert list(s) == parts[0]
    s.set_epoch(6)
    if n >= 10:
        assert list(s) != parts[0]
    unshuffled = list(DistributedSampler(ds, num_replicas=world, rank=1, shuffle=False))
    assert unshuffled[:2] == [1, 1 + world][: len(unshuffled)]
    with pytest.raises(ValueError, match="invalid rank"):
        DistributedSampler(ds, num_replicas=2, rank=2)
