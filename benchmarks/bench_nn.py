"""NN op figures, ours beside PyTorch (Debian's python3-torch, 2 threads) in the same run,
measured interleaved (median of repeats): conv2d N=32 C=64 56x56 K=64 3x3 pad 1 in ms (forward,
forward+backward), softmax 4096x4096 and layer_norm 8192x1024 (f32) in GB/s (one read of the
input and one write of the output), beside the machine's STREAM triad (27.7 GB/s on 2 threads);
and a 2-layer LSTM (T=32, B=32, 256 -> 256, f32) forward+backward in ms three ways in the same
run: the step loop of composed ops, the step loop with the fused gate kernels, and the whole
network as one rnn_seq op (kernels/cpu/rnn.cc; nn.LSTM's f32 CPU default).

    make build && PYTHONPATH=python /usr/bin/python3 benchmarks/bench_nn.py [--quick]
"""
import numpy as np

from _common import QUICK, import_torch, interleaved, per_call, ratio

import oneflow_like as flow  # noqa: E402  (after _common puts python/ on the path)

torch = import_torch(2)
STREAM_GBS = 27.7
REPEATS = 3 if QUICK else 7


def measure(ours_fn, torch_fn, calls):
    ours_fn()
    flow.sync()
    sides = {"ours": lambda: per_call(ours_fn, flow.sync, calls)}
    if torch_fn is not None:
        torch_fn()
        sides["torch"] = lambda: per_call(torch_fn, lambda: None, calls)
    return interleaved(sides, REPEATS)


def fmt(v, scale, unit):
    return f"{v * scale:9.2f} {unit}" if isinstance(v, float) else f"{'-':>9} {unit}"


def report(name, res, unit, work=None):
    if work is None:  # time in ms, lower is better
        o, t = res.get("ours"), res.get("torch")
        print(f"{name:<34} {fmt(o, 1e3, unit)} {fmt(t, 1e3, unit)}   ours/torch {ratio(o, t)}")
    else:  # throughput, higher is better
        o, t = res.get("ours"), res.get("torch")
        ob = work / o / 1e9 if isinstance(o, float) else None
        tb = work / t / 1e9 if isinstance(t, float) else None
        print(
            f"{name:<34} {fmt(ob, 1, unit)} {fmt(tb, 1, unit)}   torch/ours {ratio(t, o) if tb else '-'}"
            f"   (STREAM {STREAM_GBS} GB/s)"
        )


def main():
    rng = np.random.default_rng(0)
    print(f"{'case':<34} {'ours':>12} {'torch':>12}")

    x = rng.standard_normal((32, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    fx, fw = flow.tensor(x), flow.tensor(w, requires_grad=True)
    fxg = flow.tensor(x, requires_grad=True)
    tx = tw = txg = None
    if torch is not None:
        tx, tw = torch.from_numpy(x), torch.from_numpy(w).requires_grad_(True)
        txg = torch.from_numpy(x.copy()).requires_grad_(True)
    with flow.no_grad():
        res = measure(
            lambda: flow.conv2d(fx, fw, padding=1),
            None
            if torch is None
            else (lambda: _no_grad(lambda: torch.nn.functional.conv2d(tx, tw, padding=1))),
            3,
        )
    report("conv2d 32x64x56x56 K64 3x3 fwd", res, "ms")

    def ours_fb():
        flow.conv2d(fxg, fw, padding=1).sum().backward()
        fxg.grad = None
        fw.grad = None

    def torch_fb():
        torch.nn.functional.conv2d(txg, tw, padding=1).sum().backward()
        txg.grad = None
        tw.grad = None

    res = measure(ours_fb, torch_fb if torch is not None else None, 2)
    report("conv2d 32x64x56x56 K64 3x3 fwd+bwd", res, "ms")

    s = rng.standard_normal((4096, 4096), dtype=np.float32)
    fs = flow.tensor(s)
    ts = torch.from_numpy(s) if torch is not None else None
    res = measure(
        lambda: flow.softmax(fs, -1), None if torch is None else (lambda: torch.softmax(ts, -1)), 10
    )
    report("softmax 4096x4096 f32", res, "GB/s", work=2 * s.nbytes)

    ln = rng.standard_normal((8192, 1024), dtype=np.float32)
    g, b = np.ones(1024, np.float32), np.zeros(1024, np.float32)
    fl, fg, fb = flow.tensor(ln), flow.tensor(g), flow.tensor(b)
    tl = tg = tb = None
    if torch is not None:
        tl, tg, tb = torch.from_numpy(ln), torch.from_numpy(g), torch.from_numpy(b)
    res = measure(
        lambda: flow.layer_norm(fl, (1024,), fg, fb),
        None if torch is None else (lambda: torch.nn.functional.layer_norm(tl, (1024,), tg, tb)),
        10,
    )
    report("layer_norm 8192x1024 f32", res, "GB/s", work=2 * ln.nbytes)

    bench_lstm(rng)


def bench_lstm(rng):
    """nn.LSTM(256, 256, num_layers=2) on [32, 32, 256]: forward + backward per call."""
    from oneflow_like.nn.modules import rnn as rnn_mod

    x = rng.standard_normal((32, 32, 256), dtype=np.float32)
    ours = flow.nn.LSTM(256, 256, num_layers=2)
    fx = flow.tensor(x, requires_grad=True)

    def ours_fb():
        ours(fx)[0].sum().backward()
        fx.grad = None
        ours.zero_grad()

    torch_fb = None
    if torch is not None:
        tm = torch.nn.LSTM(256, 256, num_layers=2)
        tx = torch.from_numpy(x).requires_grad_(True)

        def torch_fb():
            tm(tx)[0].sum().backward()
            tx.grad = None
            tm.zero_grad()

    # composed: the step loop of plain ops; cells: the step loop with the fused cell kernels;
    # seq: the whole network as one rnn_seq op (the default for f32 on the CPU).
    for how in ("composed", "cells", "seq"):
        rnn_mod._USE_FUSED_CELLS = how != "composed"
        rnn_mod._USE_SEQ_OP = how == "seq"
        res = measure(ours_fb, torch_fb, 2)
        report(f"LSTM 2x256 T32B32 f+b {how}", res, "ms")
    rnn_mod._USE_FUSED_CELLS = rnn_mod._USE_SEQ_OP = True


def _no_grad(fn):
    with torch.no_grad():
        return fn()


if __name__ == "__main__":
    main()
