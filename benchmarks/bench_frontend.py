"""Front-end overhead and training-step time, ours beside PyTorch in the same run.

    make build && PYTHONPATH=python /usr/bin/python3 benchmarks/bench_frontend.py [--quick]

Table 1: microseconds per call from Python for tiny ops (1-element add, relu, sum, 4x4 matmul),
without and with autograd (inputs with requires_grad=True, so every call records a graph node),
and a tiny graph forward+backward ((a*b+c).relu().sum()).backward() on 4-element tensors.
Each sample is N calls followed by one sync (flow.sync(); PyTorch's CPU ops are synchronous);
the figure is the median over the samples.

Table 2: milliseconds per training step (zero_grad, forward, loss, backward, optimizer step and a
sync through loss.item()) of an MLP 784-1024-1024-10 at batch 128 (SGD momentum), a small CNN at
batch 64 on 1x28x28 and a TransformerEncoderLayer (d_model 256, 4 heads, seq 128, batch 8,
batch_first). Each sample is a few consecutive steps followed by a full sync (flow.sync(): our
backward/optimizer kernels can still be running when loss.item() returns); the figure is the
median over the samples, after warm-up.

The ratio column is ours / PyTorch: lower is better, and <= 1.00x meets the front-end issue's
targets (per-op time no worse than PyTorch's, training steps no slower). PyTorch runs with
torch.set_num_threads(2) and OMP_WAIT_POLICY=PASSIVE (set before torch is imported). A case
whose op or module our runtime does not have yet prints "missing: <error>" instead.
The whole script takes about 1-2 minutes (--quick: well under one).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (
    QUICK,
    Table,
    describe_missing,
    import_torch,
    interleaved,
    per_call,
    ratio,
)  # noqa: E402

import numpy as np  # noqa: E402

torch = import_torch(2)  # before our runtime, so both start from the same environment
import oneflow_like as flow  # noqa: E402

REPEATS = 5 if QUICK else 11
CALLS = 500 if QUICK else 2000
STEP_BUDGET_S = 4.0 if QUICK else 20.0  # wall time per model for both sides together
MAX_SAMPLES = 4 if QUICK else 15  # samples per model and side
STEPS_PER_SAMPLE = 2 if QUICK else 3
WARMUP_STEPS = 2 if QUICK else 3


# --------------------------------------------------------------------------------------------
# Table 1: tiny ops
# --------------------------------------------------------------------------------------------


def _tiny_cases():
    """(name, calls per sample, make(lib, requires_grad) -> fn) for each tiny-op case."""

    def add(lib, rg):
        a, b = lib.ones(1, requires_grad=rg), lib.ones(1, requires_grad=rg)
        return lambda: lib.add(a, b)

    def relu(lib, rg):
        a = lib.ones(1, requires_grad=rg)
        return lambda: lib.relu(a)

    def sum_(lib, rg):
        a = lib.ones(1, requires_grad=rg)
        return lambda: lib.sum(a)

    def matmul(lib, rg):
        a, b = lib.ones(4, 4, requires_grad=rg), lib.ones(4, 4, requires_grad=rg)
        return lambda: lib.matmul(a, b)

    def graph(lib, rg):
        a, b, c = (lib.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True) for _ in range(3))

        def run():
            ((a * b + c).relu().sum()).backward()

        return run

    cases = []
    for name, make in (
        ("add, 1 element", add),
        ("relu, 1 element", relu),
        ("sum, 1 element", sum_),
        ("matmul, 4x4 @ 4x4", matmul),
    ):
        cases.append((name, CALLS, lambda lib, m=make: m(lib, False)))
        cases.append((name + ", requires_grad", CALLS, lambda lib, m=make: m(lib, True)))
    cases.append(
        ("tiny graph fwd+bwd, 4 elements", max(CALLS // 4, 100), lambda lib: graph(lib, True))
    )
    return cases


def bench_tiny_ops():
    table = Table(
        "Per-op time from Python (us per call, median)",
        ["case", "ours us", "torch us", "ours/torch"],
    )
    for name, calls, make in _tiny_cases():
        sides = {}
        try:
            fn = make(flow)
            fn()
            flow.sync()
            sides["ours"] = lambda fn=fn: per_call(fn, flow.sync, calls)
        except Exception as e:  # noqa: BLE001
            sides["ours"] = None
            ours_err = e
        if torch is not None:
            tfn = make(torch)
            tfn()
            sides["torch"] = lambda tfn=tfn: per_call(tfn, lambda: None, calls)
        res = interleaved(sides, REPEATS)
        ours, theirs = res.get("ours"), res.get("torch")
        if sides["ours"] is None:
            ours = ours_err
        table.add(name, _cell(ours, 1e6, 2), _cell(theirs, 1e6, 2), ratio(ours, theirs))
    return table


# --------------------------------------------------------------------------------------------
# Table 2: training steps
# --------------------------------------------------------------------------------------------


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 5 * 5, 10),
    )


def _transformer(lib):
    return lib.nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)


def _classification_data(rng, x_shape, classes=10):
    return (
        rng.standard_normal(x_shape, dtype=np.float32),
        rng.integers(0, classes, size=(x_shape[0],), dtype=np.int64),
    )


def _regression_data(rng, x_shape):
    return rng.standard_normal(x_shape, dtype=np.float32), rng.standard_normal(
        x_shape, dtype=np.float32
    )


MODELS = [
    # name, build(lib) -> module, data(rng), loss name in nn.functional
    (
        "MLP 784-1024-1024-10, batch 128",
        _mlp,
        lambda rng: _classification_data(rng, (128, 784)),
        "cross_entropy",
    ),
    (
        "CNN 2 conv + linear, batch 64, 1x28x28",
        _cnn,
        lambda rng: _classification_data(rng, (64, 1, 28, 28)),
        "cross_entropy",
    ),
    (
        "TransformerEncoderLayer d256 h4, 8x128",
        _transformer,
        lambda rng: _regression_data(rng, (8, 128, 256)),
        "mse_loss",
    ),
]


def make_step(lib, build, arrays, loss_name):
    """A closure running one training step on `lib` and returning the loss as a Python float."""
    lib.manual_seed(0)
    model = build(lib)
    model.train()
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = (lib.from_numpy(a.copy()) for a in arrays)
    loss_fn = getattr(lib.nn.functional, loss_name)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def bench_training():
    table = Table(
        "Training step (ms per step: zero_grad, forward, backward, SGD step, loss.item(); median)",
        ["model", "ours ms", "torch ms", "ours/torch", "loss ours / torch (last step)"],
    )
    for name, build, data, loss_name in MODELS:
        arrays = data(np.random.default_rng(0))
        sides, last = {}, {}
        ours = None
        try:
            step = make_step(flow, build, arrays, loss_name)
            _warm_up(step, last, "ours")
            sides["ours"] = _timed_step(step, last, "ours", flow.sync)
        except Exception as e:  # noqa: BLE001
            ours = e
        if torch is not None:
            tstep = make_step(torch, build, arrays, loss_name)
            _warm_up(tstep, last, "torch")
            sides["torch"] = _timed_step(tstep, last, "torch", lambda: None)
        res = interleaved(sides, MAX_SAMPLES, budget_s=STEP_BUDGET_S)
        if ours is None:
            ours = res.get("ours")
        theirs = res.get("torch")
        losses = f"{last.get('ours', float('nan')):.4f} / {last.get('torch', float('nan')):.4f}"
        table.add(name, _cell(ours, 1e3, 1), _cell(theirs, 1e3, 1), ratio(ours, theirs), losses)
    return table


def _warm_up(step, last, key, max_s=10.0):
    """WARMUP_STEPS steps, fewer when they are slow (keeps the whole script within minutes)."""
    t0 = time.perf_counter()
    for _ in range(WARMUP_STEPS):
        last[key] = step()
        if time.perf_counter() - t0 > max_s:
            break


def _timed_step(step, last, key, sync):
    """One sample: STEPS_PER_SAMPLE consecutive steps and a full sync, seconds per step.

    loss.item() waits only for the loss; our backward and optimizer kernels may still be running
    on the VM's worker when it returns (the next step's forward would wait for them). The final
    flow.sync() counts that work in our column instead of letting it overlap PyTorch's steps."""

    def run():
        t0 = time.perf_counter()
        for _ in range(STEPS_PER_SAMPLE):
            last[key] = step()
        sync()
        return (time.perf_counter() - t0) / STEPS_PER_SAMPLE

    return run


def _cell(v, scale, digits):
    if v is None:
        return "-"
    if isinstance(v, BaseException):
        return describe_missing(v)
    return f"{v * scale:.{digits}f}"


def main():
    tv = torch.__version__ if torch is not None else "not installed (ours only)"
    print(
        f"oneflow_like vs PyTorch {tv}; torch threads {torch.get_num_threads() if torch else '-'}, "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; {os.cpu_count()} CPUs; "
        f"{'quick' if QUICK else 'full'} run; load average {os.getloadavg()[0]:.2f}\n",
        flush=True,
    )
    tables = [bench_tiny_ops(), bench_training()]
    for t in tables:
        t.print()
    print(
        f"load average at the end {os.getloadavg()[0]:.2f} (ours and PyTorch are measured interleaved, "
        f"so load hits both columns)"
    )


if __name__ == "__main__":
    main()
