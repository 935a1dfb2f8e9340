"""The rest of torch.distributed's API over Gloo (issue 16): all_to_all(_single) with uneven
splits, all_reduce_coalesced / all_gather_coalesced, gather_object / scatter_object_list,
monitored_barrier naming the ranks that never arrive, the stores (TCPStore, FileStore,
HashStore, PrefixStore) and init_process_group(store=...), new_subgroups(_by_enumeration),
DebugLevel and is_torchelastic_launched. Workers are tests/python/dist_cases.py, spawned on
127.0.0.1 by test_distributed.py's helpers."""
import datetime
import os
import subprocess
import sys
import threading
import time

import pytest

import oneflow_like.distributed as dist
from test_distributed import CASES, _env, ok, result_line, spawn


@pytest.mark.parametrize("world", [2, 4])
def test_all_to_all_coalesced_and_objects_match_numpy(world):
    """Every dtype: all_to_all_single with even and uneven splits (blocks of 0 rows included),
    all_to_all of lists of different shapes, the coalesced all-reduce / all-gather; async work;
    splits that do not pair up raise on every rank and leave the group usable; gather_object and
    scatter_object_list with nested objects (a class instance, sets, tuples)."""
    results = spawn("more_collectives", world)
    ok(results)
    for r, (_, out, _) in enumerate(results):
        (msg,) = [line for line in result_line(out) if line.startswith("pairing ")]
        assert "rank 0 sends 2 rows to rank 0, which expects 1" in msg, (r, msg)


@pytest.mark.parametrize(
    "world,missing,wait_all,named",
    [
        (2, "1", "0", "Rank 1 failed"),
        (4, "1,3", "1", "Ranks 1, 3 failed"),
        (4, "2,3", "0", "Rank 2 failed"),
    ],
)
def test_monitored_barrier_names_the_ranks_that_never_arrive(world, missing, wait_all, named):
    results = spawn("monitored_barrier", world, missing, wait_all, timeout=60)
    ok(results)
    skipped = [int(r) for r in missing.split(",")]
    (line,) = result_line(results[0][1])
    seconds, msg = line.split(" ", 1)
    assert f"[Rank 0]: {named} to pass monitoredBarrier in 1500 ms" in msg, msg
    assert 1.4 <= float(seconds) < 6.0, line  # bounded by the barrier's timeout, not the group's
    for r in range(1, world):
        if r in skipped:
            continue
        (line,) = result_line(results[r][1])
        assert f"[Rank {r}]: rank 0 reported" in line and named in line, line


def test_stores_across_processes_and_init_through_them(tmp_path):
    """TCPStore and a PrefixStore over a FileStore shared by 3 processes: set/get (waiting),
    add, compare_set electing one leader, check, delete_key, num_keys, a wait that times out
    naming its key; then init_process_group(store=...) over each and an all_reduce."""
    results = spawn("stores", 3, str(tmp_path / "store"), timeout=90)
    ok(results)
    assert all(result_line(o) == ["stores ok"] for _, o, _ in results)


def test_new_subgroups():
    ok(spawn("subgroups_more", 4))


def test_launcher_sets_torchelastic_run_id():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "oneflow_like.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            "0",
            "--rdzv-id",
            "job7",
            CASES,
            "elastic_env",
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert sorted(result_line(out.stdout)) == ["0 True job7", "1 True job7"], out.stdout


def test_is_torchelastic_launched(monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert dist.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "none")
    assert dist.is_torchelastic_launched() is True


def test_debug_level(monkeypatch):
    monkeypatch.delenv("ONEFLOW_LIKE_DISTRIBUTED_DEBUG", raising=False)
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() == dist.DebugLevel.DETAIL
    monkeypatch.setenv("ONEFLOW_LIKE_DISTRIBUTED_DEBUG", "INFO")  # ours wins
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.INFO
    dist.set_debug_level(dist.DebugLevel.OFF)
    assert dist.get_debug_level() == dist.DebugLevel.OFF
    monkeypatch.setenv("ONEFLOW_LIKE_DISTRIBUTED_DEBUG", "LOUD")
    with pytest.raises(
        ValueError, match="ONEFLOW_LIKE_DISTRIBUTED_DEBUG must be OFF, INFO or DETAIL"
    ):
        dist.set_debug_level_from_env()
    with pytest.raises(TypeError, match="DebugLevel"):
        dist.set_debug_level(2)
    monkeypatch.delenv("ONEFLOW_LIKE_DISTRIBUTED_DEBUG")
    monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() == dist.DebugLevel.OFF


def test_debug_level_detail_keeps_the_signature_check():
    """TORCH_DISTRIBUTED_DEBUG=DETAIL turns the ranks' shape check back on under
    ONEFLOW_LIKE_DIST_CHECK=0 (the case fails unless the mismatch is named)."""
    env = {"ONEFLOW_LIKE_DIST_CHECK": "0", "TORCH_DISTRIBUTED_DEBUG": "DETAIL"}
    ok(spawn("shape_mismatch", 2, env=env))


def _exercise(store, setter=None):
    """The operations every store has, as torch's stores behave. `setter` (default `store`)
    sets the key a wait waits for, from another thread (a TCPStore client runs one request at
    a time, so that thread needs a client of its own)."""
    store.set("k", "v")
    assert store.get("k") == b"v"
    store.set("b", b"\x00\xff")
    assert store.get("b") == b"\x00\xff"
    assert store.add("n", 5) == 5 and store.add("n", -2) == 3
    assert store.get("n") == b"3"  # counters are decimal text
    assert store.compare_set("cs", "", "first") == b"first"
    assert store.compare_set("cs", "wrong", "x") == b"first"
    assert store.compare_set("cs", "first", "second") == b"second"
    assert store.compare_set("unset", "expected", "x") == b"expected"
    assert store.check(["k", "n"]) and not store.check(["k", "unset"])
    assert store.num_keys() >= 4
    before = store.num_keys()
    assert store.delete_key("cs") is True and store.delete_key("cs") is False
    assert store.num_keys() == before - 1
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="missing"):
        store.wait(["k", "missing"], datetime.timedelta(seconds=0.2))
    assert time.monotonic() - start < 3
    # a wait another thread satisfies
    t = threading.Timer(0.1, lambda: (setter or store).set("late", "1"))
    t.start()
    store.wait(["late"], datetime.timedelta(seconds=10))
    t.join()
    store.set_timeout(datetime.timedelta(seconds=0.2))
    with pytest.raises(dist.DistStoreError):
        store.get("never")
    assert store.get("k") == b"v"  # still usable after a timeout


def test_hash_store():
    _exercise(dist.HashStore())


def test_file_store(tmp_path):
    _exercise(dist.FileStore(str(tmp_path / "fs")))
    # a second handle on the same file sees the first one's keys
    a, b = dist.FileStore(str(tmp_path / "shared")), dist.FileStore(str(tmp_path / "shared"))
    a.set("x", "1")
    assert b.get("x") == b"1" and b.add("c", 2) == 2 and a.add("c", 1) == 3


def test_file_store_last_of_world_size_removes_the_file(tmp_path):
    import gc

    path = str(tmp_path / "ws2")
    a, b = dist.FileStore(path, 2), dist.FileStore(path, 2)
    a.set("k", "v")
    assert a.num_keys() == b.num_keys() == 1
    del a
    gc.collect()
    assert os.path.exists(path) and b.get("k") == b"v" and b.num_keys() == 1  # one user left
    del b
    gc.collect()
    assert not os.path.exists(path)
    keep = str(tmp_path / "unsized")
    c = dist.FileStore(keep)  # world_size=-1: the caller removes the file, as torch
    c.set("k", "v")
    del c
    gc.collect()
    assert os.path.exists(keep)


def test_tcp_store_in_process():
    server = dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=datetime.timedelta(seconds=10))
    assert server.port > 0 and server.host == "127.0.0.1"
    client = dist.TCPStore("127.0.0.1", server.port, timeout=datetime.timedelta(seconds=10))
    _exercise(client, setter=server)
    assert server.get("k") == b"v"
    with pytest.raises(ValueError, match="port 0"):
        dist.TCPStore("127.0.0.1", 0, is_master=False)


def test_tcp_store_master_waits_for_workers():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="1 of world_size 2 connected"):
        dist.TCPStore("127.0.0.1", port, 2, True, timeout=datetime.timedelta(seconds=0.5))
    assert time.monotonic() - start < 5


def test_prefix_store():
    base = dist.HashStore()
    p = dist.PrefixStore("job", base)
    _exercise(p)
    assert base.get("job/k") == b"v"
    assert p.underlying_store is base
    nested = dist.PrefixStore("inner", p)
    nested.set("a", "1")
    assert base.get("job/inner/a") == b"1"


def test_init_process_group_store_errors():
    store = dist.HashStore()
    with pytest.raises(ValueError, match="rank and world_size"):
        dist.init_process_group("gloo", store=store)
    with pytest.raises(ValueError, match="both init_method and store"):
        dist.init_process_group("gloo", init_method="env://", store=store, rank=0, world_size=1)
    with pytest.raises(TypeError, match="store must be"):
        dist.init_process_group("gloo", store={}, rank=0, world_size=1)


def test_world_of_one_through_hash_store():
    """init_process_group(store=HashStore()) with one rank; every new collective at world size
    1 (the monitored barrier included), and get_backend."""
    import numpy as np

    import oneflow_like as flow

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1, timeout=10)
    try:
        assert dist.get_backend() == "gloo"
        x = flow.arange(6).float().reshape(3, 2)
        out = flow.zeros(3, 2)
        dist.all_to_all_single(out, x)
        np.testing.assert_array_equal(out.numpy(), x.numpy())
        ts = [flow.ones(2), flow.full((3,), 2.0)]
        dist.all_reduce_coalesced(ts)
        assert ts[1].numpy().tolist() == [2.0] * 3
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=1))
        got = [None]
        dist.gather_object({"a": (1, 2)}, got, dst=0)
        assert got == [{"a": (1, 2)}]
        out = [None]
        dist.scatter_object_list(out, [[1, {2}]], src=0)
        assert out == [[1, {2}]]
        with pytest.raises(ValueError, match="timeout must be positive"):
            dist.monitored_barrier(timeout=0)
    finally:
        dist.destroy_process_group()
