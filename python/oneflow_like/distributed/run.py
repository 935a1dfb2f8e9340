"""Launcher: python -m oneflow_like.distributed.run --nproc-per-node N [--nnodes M --node-rank K
--master-addr HOST --master-port PORT] script.py args...  (or -m module args...)

Starts N workers on this node with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, and TORCHELASTIC_RUN_ID = --rdzv-id with
TORCHELASTIC_RESTART_COUNT / TORCHELASTIC_MAX_RESTARTS = 0, so dist.is_torchelastic_launched() is
True in the workers). If a worker fails, the others are
stopped (SIGTERM, then SIGKILL after --grace seconds) and the launcher exits non-zero naming the
rank; Ctrl-C / SIGTERM are passed on to the workers.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time


def _parser():
    p = argparse.ArgumentParser(prog="python -m oneflow_like.distributed.run", allow_abbrev=False)
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument(
        "--master-port",
        "--master_port",
        type=int,
        default=29500,
        help="0 picks a free port (single node only)",
    )
    p.add_argument(
        "--rdzv-id", "--rdzv_id", default="none", help="the job id (TORCHELASTIC_RUN_ID)"
    )
    p.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    return p


def _free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _describe(code):
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _stop(procs, grace):
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv=None):
    a = _parser().parse_args(argv)
    if a.nproc_per_node < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
        raise SystemExit(
            "[run] need --nproc-per-node >= 1, --nnodes >= 1, 0 <= --node-rank < --nnodes"
        )
    port = a.master_port
    if port == 0:
        if a.nnodes > 1:
            raise SystemExit("[run] --master-port 0 only works on one node")
        port = _free_port(a.master_addr)
    world = a.nnodes * a.nproc_per_node
    cmd = [sys.executable, "-u"] + (["-m", a.script] if a.module else [a.script]) + a.args
    procs, ranks = [], []
    for local in range(a.nproc_per_node):
        rank = a.node_rank * a.nproc_per_node + local
        env = dict(os.environ)
        env.update(
            RANK=str(rank),
            LOCAL_RANK=str(local),
            WORLD_SIZE=str(world),
            LOCAL_WORLD_SIZE=str(a.nproc_per_node),
            GROUP_RANK=str(a.node_rank),
            MASTER_ADDR=a.master_addr,
            MASTER_PORT=str(port),
            TORCHELASTIC_RUN_ID=a.rdzv_id,
            TORCHELASTIC_RESTART_COUNT="0",
            TORCHELASTIC_MAX_RESTARTS="0",
        )
        procs.append(subprocess.Popen(cmd, env=env))
        ranks.append(rank)

    def forward(signum, _frame):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    failed = None
    try:
        while True:
            codes = [p.poll() for p in procs]
            bad = [(r, c) for r, c in zip(ranks, codes) if c not in (None, 0)]
            if bad:
                failed = bad[0]
                break
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.05)
    finally:
        if failed is not None:
            _stop(procs, a.grace)
        for s, h in old.items():
            signal.signal(s, h)
    rank, code = failed
    others = [r for r in ranks if r != rank]
    print(
        f"[run] worker rank {rank} (local rank {rank - a.node_rank * a.nproc_per_node}) failed with "
        f"{_describe(code)}; stopped the other workers (ranks {others})",
        file=sys.stderr,
        flush=True,
    )
    return code if code > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
