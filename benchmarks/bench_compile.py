"""flow.compile on training steps: eager vs flow.compile vs nn.Graph vs PyTorch eager (CPU).

    make build && PYTHONPATH=python /usr/bin/python3 benchmarks/bench_compile.py [--quick] [--cuda]

--cuda runs our sides on the first CUDA device (PyTorch's column stays on the CPU, or "-" with
--no-torch).

One row per model, each trained with an ordinary loop (zero_grad, loss = loss_fn(model(x), y),
loss.backward(), optimizer.step() outside the model; SGD lr 0.01 momentum 0.9):
  MLP 784-1024-1024-10 at batch 256 (cross entropy);
  the digits CNN of examples/train_digits.py (conv32-BN-ReLU-conv64-ReLU-maxpool-dropout-FC128-FC10
      on 1x8x8) at batch 256 (cross entropy);
  TransformerEncoderLayer(d_model=256, nhead=8, batch_first=True), batch 32, seq 64, MSE loss to a
      random target, dropout off (eval-free dropout would make eager and compiled losses differ).
Columns:
  eager ms / compile ms / recompute ms / graph ms / torch ms: milliseconds per training step,
      median over samples of a few steps each followed by flow.sync(); the sides are interleaved
      so load hits them alike. "compile" is flow.compile as shipped: the forward graph also
      returns the leaf modules' arguments (residuals) and the backward graph starts from them;
      "recompute" is flow.compile with the backward graph recomputing the whole forward instead
      (TrainPath.save_residuals = False); "graph" is nn.Graph compiling the whole step (forward,
      backward, SGD) as one graph, flow.compile's ceiling, whose optimizer step stays eager;
  speedup: eager / compile;
  fwd ms / bwd ms / bwd rec ms: flow.compile's graphs alone: the forward graph run, the backward
      graph run with residuals, and without (recomputing the forward);
  |dloss|: after N steps from the same initial parameters, max |loss_compile - loss_eager| over
      the steps (the digits CNN trains with dropout off here so both draw the same numbers;
      the dropout's compiled path is checked in tests/python/test_compile_train.py).
"""
import copy
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import QUICK, Table, import_torch, interleaved  # noqa: E402

import oneflow_like as flow  # noqa: E402

torch = None if "--no-torch" in sys.argv else import_torch()
DEVICE = "cuda" if "--cuda" in sys.argv else "cpu"
SAMPLES = 5 if QUICK else 9
STEPS = 2 if QUICK else 3
N_CHECK = 5 if QUICK else 10
BUDGET_S = 10.0 if QUICK else 30.0


def _mlp(nn):
    return nn.Sequential(
        nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def _digits_cnn(nn, p=0.0):
    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 32, 3, padding=1),
                nn.BatchNorm2d(32),
                nn.ReLU(),
                nn.Conv2d(32, 64, 3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(2),
            )
            self.classifier = nn.Sequential(
                nn.Flatten(),
                nn.Dropout(p),
                nn.Linear(64 * 4 * 4, 128),
                nn.ReLU(),
                nn.Linear(128, 10),
            )

        def forward(self, x):
            return self.classifier(self.features(x.reshape(-1, 1, 8, 8)))

    return SmallCNN()


def _encoder(nn):
    return nn.TransformerEncoderLayer(d_model=256, nhead=8, dropout=0.0, batch_first=True)


MODELS = [
    ("MLP 784-1024-1024-10 b256", _mlp, (256, 784), "cls"),
    ("digits CNN b256", _digits_cnn, (256, 64), "cls"),
    ("TransformerEncoderLayer d256 h8 32x64", _encoder, (32, 64, 256), "reg"),
]


def _data(shape, kind):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    if kind == "cls":
        y = rng.integers(0, 10, size=(shape[0],), dtype=np.int64)
    else:
        y = rng.standard_normal(shape, dtype=np.float32)
    return x, y


def _sgd_step(lib, model, fwd, kind):
    """One training step of `model` called through `fwd`, with `lib` flow or torch."""
    F = lib.nn.functional
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = F.cross_entropy if kind == "cls" else F.mse_loss

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(fwd(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _graph_step(model, kind):
    F = flow.nn.functional
    opt = flow.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = F.cross_entropy if kind == "cls" else F.mse_loss

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = loss_fn(self.model(x), y)
            loss.backward()
            return loss

    return Train()


def _torch_step(build, kind, flow_model):
    model = build(torch.nn)
    with torch.no_grad():  # the same initial parameters as ours
        for p, q in zip(flow_model.parameters(), model.parameters()):
            q.copy_(torch.from_numpy(p.detach().cpu().numpy()))
    return _sgd_step(torch, model, model, kind)


def _timer(step, x, y, sync):
    def run():
        t0 = time.perf_counter()
        for _ in range(STEPS):
            step(x, y)
        sync()
        return (time.perf_counter() - t0) / STEPS

    return run


def _split_ms(compiled, x, y, kind):
    """Milliseconds of the forward graph and of the backward graph of one compiled step."""
    F = flow.nn.functional
    loss_fn = F.cross_entropy if kind == "cls" else F.mse_loss
    fwd = bwd = 0.0
    for _ in range(STEPS):
        flow.sync()
        t0 = time.perf_counter()
        out = compiled(x)
        flow.sync()
        t1 = time.perf_counter()
        loss = loss_fn(out, y)
        g = flow.autograd.grad(loss, out)[0]
        flow.sync()
        t2 = time.perf_counter()
        out.backward(g)
        flow.sync()
        t3 = time.perf_counter()
        fwd += t1 - t0
        bwd += t3 - t2
    compiled.zero_grad()
    return 1e3 * fwd / STEPS, 1e3 * bwd / STEPS


def main():
    table = Table(
        f"Training step, flow.compile ({DEVICE}, ms per step; lower is better)",
        [
            "model",
            "eager ms",
            "compile ms",
            "recompute ms",
            "graph ms",
            "torch ms",
            "speedup",
            "fwd ms",
            "bwd ms",
            "bwd rec ms",
            f"|dloss| {N_CHECK} steps",
        ],
        note="speedup = eager / compile; graph = nn.Graph with the optimizer inside (see docstring)",
    )
    for name, build, shape, kind in MODELS:
        xn, yn = _data(shape, kind)
        x, y = flow.tensor(xn, device=DEVICE), flow.tensor(yn, device=DEVICE)
        flow.manual_seed(0)
        base = build(flow.nn).to(DEVICE)
        # losses over N_CHECK steps: compiled vs eager, from the same parameters
        m_c, m_e = copy.deepcopy(base), copy.deepcopy(base)
        compiled = flow.compile(m_c)
        sc, se = _sgd_step(flow, m_c, compiled, kind), _sgd_step(flow, m_e, m_e, kind)
        dloss = max(abs(sc(x, y).item() - se(x, y).item()) for _ in range(N_CHECK))
        e = compiled.explain()
        assert e["compiled_backward_calls"] == N_CHECK and e["eager_calls"] == 0, e
        # timing
        m_graph, m_r = copy.deepcopy(base), copy.deepcopy(base)
        recompute = flow.compile(m_r)
        recompute._compiled.train.save_residuals = False
        sides = {
            "eager": _timer(_sgd_step(flow, m_e, m_e, kind), x, y, flow.sync),
            "compile": _timer(sc, x, y, flow.sync),
            "recompute": _timer(_sgd_step(flow, m_r, recompute, kind), x, y, flow.sync),
            "graph": _timer(_graph_step(m_graph, kind), x, y, flow.sync),
        }
        if torch is not None:
            tx, ty = torch.from_numpy(xn), torch.from_numpy(yn)
            sides["torch"] = _timer(_torch_step(build, kind, base), tx, ty, lambda: None)
        for f in sides.values():  # compile and warm up outside the samples
            f()
        t = interleaved(sides, SAMPLES, BUDGET_S)
        fwd_ms, bwd_ms = _split_ms(compiled, x, y, kind)
        _, bwd_rec_ms = _split_ms(recompute, x, y, kind)

        def ms(k):
            v = t.get(k)
            return f"{1e3 * v:.2f}" if isinstance(v, float) else ("-" if v is None else str(v))

        sp = t["eager"] / t["compile"] if isinstance(t.get("compile"), float) else None
        table.add(
            name,
            ms("eager"),
            ms("compile"),
            ms("recompute"),
            ms("graph"),
            ms("torch"),
            f"{sp:.2f}x" if sp else "-",
            f"{fwd_ms:.2f}",
            f"{bwd_ms:.2f}",
            f"{bwd_rec_ms:.2f}",
            f"{dloss:.1e}",
        )
    table.print()


if __name__ == "__main__":
    main()
