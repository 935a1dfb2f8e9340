"""flow.func.vmap with batching rules against its per-sample loop, a hand-batched computation and
torch 1.13's functorch (when importable): per-sample gradients of an MLP (784-256-10) and a small
CNN at batch 64 and 256, of a small LSTM (16->32, 20 steps) and a small Transformer encoder layer
(d 32, 4 heads, 16 tokens) at batch 64, and jacrev of a 100->100 function. Milliseconds per call
(median of interleaved repeats) and the speed-up of vmap over the loop. Then the trace cache:
vmap(grad(f)) of the MLP at batch 8 called 100 times, recording the function on every call
(the cache off) against recording it once, and the same for the LSTM and a small function.

    make build && PYTHONPATH=python OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 benchmarks/bench_vmap.py [--quick]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import QUICK, import_torch, interleaved, per_call  # noqa: E402

import oneflow_like as flow  # noqa: E402
import oneflow_like.nn.functional as F  # noqa: E402
from oneflow_like import _vmap_rules  # noqa: E402
from oneflow_like.func import functional_call, grad, jacrev, vmap  # noqa: E402

torch = import_torch()
try:
    import functorch
except ImportError:
    functorch = None


def mlp_loss(F_, p, x, y):
    h = F_.relu(F_.linear(x, p["w1"], p["b1"]))
    return F_.cross_entropy(F_.linear(h, p["w2"], p["b2"]).unsqueeze(0), y.unsqueeze(0))


def cnn_loss(F_, p, x, y):
    h = F_.relu(F_.conv2d(x.unsqueeze(0), p["c1"], p["cb1"], padding=1))
    h = F_.max_pool2d(h, 2)
    h = F_.relu(F_.conv2d(h, p["c2"], p["cb2"], padding=1))
    h = F_.max_pool2d(h, 2).flatten(1)
    return F_.cross_entropy(F_.linear(h, p["w"], p["b"]), y.unsqueeze(0))


def mlp_params(lib, g):
    return {
        "w1": g(256, 784) * 0.05,
        "b1": g(256) * 0.05,
        "w2": g(10, 256) * 0.05,
        "b2": g(10) * 0.05,
    }


def cnn_params(lib, g):
    return {
        "c1": g(8, 1, 3, 3) * 0.3,
        "cb1": g(8) * 0.1,
        "c2": g(16, 8, 3, 3) * 0.1,
        "cb2": g(16) * 0.1,
        "w": g(10, 16 * 7 * 7) * 0.05,
        "b": g(10) * 0.05,
    }


def manual_mlp(p, x, y):
    """Per-sample gradients written out batched by hand (the target vmap's rules reach)."""
    h_pre = x @ p["w1"].t() + p["b1"]
    h = h_pre.relu()
    o = h @ p["w2"].t() + p["b2"]
    g_o = o.softmax(-1) - F.one_hot(y, 10).to(o.dtype)
    g_h = (g_o @ p["w2"]) * (h_pre > 0).to(o.dtype)
    return {
        "w1": g_h.unsqueeze(2) * x.unsqueeze(1),
        "b1": g_h,
        "w2": g_o.unsqueeze(2) * h.unsqueeze(1),
        "b2": g_o,
    }


def manual_cnn(p, x, y):
    """The CNN's per-sample gradients batched by hand: every sample gets its own copy of the
    weights (expanded leaves), the convolutions run as one grouped convolution (groups = batch),
    the classifier as one bmm, and one backward pass of the summed losses."""
    B = x.shape[0]
    w = {
        k: v.unsqueeze(0).expand((B,) + tuple(v.shape)).detach().requires_grad_()
        for k, v in p.items()
    }
    h = x.reshape(1, B, 28, 28)
    h = F.conv2d(h, w["c1"].reshape(B * 8, 1, 3, 3), w["cb1"].reshape(-1), padding=1, groups=B)
    h = F.max_pool2d(F.relu(h), 2)
    h = F.conv2d(h, w["c2"].reshape(B * 16, 8, 3, 3), w["cb2"].reshape(-1), padding=1, groups=B)
    h = F.max_pool2d(F.relu(h), 2).reshape(B, 1, 16 * 7 * 7)
    logits = (flow.bmm(h, w["w"].transpose(1, 2)) + w["b"].unsqueeze(1)).reshape(B, 10)
    loss = F.cross_entropy(logits, y, reduction="sum")
    return dict(zip(w, flow.autograd.grad(loss, list(w.values()))))


def seq_case(kind, B):
    """(flow module, torch module or None, inputs, targets, loss(F_, module_call, x, y)) of a small
    sequence model with the same weights on both sides."""
    flow.manual_seed(0)
    if kind == "lstm":
        m = flow.nn.LSTM(16, 32, batch_first=True)
        x = flow.randn(B, 20, 16)
        tm = torch.nn.LSTM(16, 32, batch_first=True) if torch is not None else None
    else:
        m = flow.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        x = flow.randn(B, 16, 32)
        tm = (
            torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
            if torch is not None
            else None
        )
    if tm is not None:
        with torch.no_grad():
            for (_, tp), (_, p) in zip(tm.named_parameters(), m.named_parameters()):
                tp.copy_(torch.from_numpy(p.detach().numpy()))
    return m, tm, x, flow.randn(*x.shape[:1], *((32,) if kind == "lstm" else x.shape[1:]))


def seq_loss(kind, out, y):
    if kind == "lstm":
        return ((out[0][:, -1] - y) ** 2).mean()
    return ((out - y) ** 2).mean()


def vmap_and_loop(f, args, sync):
    """The measurements of the vmapped f with its batching rules and as its per-sample loop."""

    def run_vmap():
        _vmap_rules.enabled = True
        return per_call(lambda: sync(f(*args)), lambda: None, 2)

    def run_loop():
        _vmap_rules.enabled = False
        try:
            return per_call(lambda: sync(f(*args)), lambda: None, 1)
        finally:
            _vmap_rules.enabled = True

    return run_vmap, run_loop


def fn100(x, W):
    return (W @ x).tanh() * x


def main():
    rows = []
    repeats = 3 if QUICK else 7

    def sync(out):
        # one element of every output: the VM has then run everything (reading a whole
        # non-contiguous result would add a copy that only some sides pay)
        for v in out.values():
            v[(0,) * v.dim()].item()

    for model, loss, params, manual, shape in (
        ("MLP 784-256-10", mlp_loss, mlp_params, manual_mlp, (784,)),
        ("CNN 2 conv+2 pool", cnn_loss, cnn_params, manual_cnn, (1, 28, 28)),
    ):
        flow.manual_seed(0)
        p = params(flow, flow.randn)
        for B in (64, 256):
            x = flow.randn(B, *shape)
            y = flow.randint(0, 10, (B,))
            f = vmap(grad(lambda p_, x_, y_: loss(F, p_, x_, y_)), in_dims=(None, 0, 0))
            run_vmap, run_loop = vmap_and_loop(f, (p, x, y), sync)

            def run_manual():
                return per_call(lambda: sync(manual(p, x, y)), lambda: None, 2)

            run_torch = None
            if torch is not None and functorch is not None:
                tp = {k: torch.from_numpy(v.numpy()) for k, v in p.items()}
                tx, ty = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())
                tf = functorch.vmap(
                    functorch.grad(lambda p_, x_, y_: loss(torch.nn.functional, p_, x_, y_)),
                    in_dims=(None, 0, 0),
                )

                def run_torch():
                    return per_call(lambda: tf(tp, tx, ty), lambda: None, 2)

            r = interleaved(
                {"vmap": run_vmap, "loop": run_loop, "manual": run_manual, "functorch": run_torch},
                repeats,
            )
            rows.append((f"per-sample grads, {model}, batch {B}", r))
    for kind, label in (("lstm", "LSTM 16->32, 20 steps"), ("tf", "Transformer layer d32")):
        B = 64
        m, tm, x, y = seq_case(kind, B)
        p = {k: v.detach() for k, v in m.named_parameters()}
        f = vmap(
            grad(
                lambda p_, x_, y_: seq_loss(
                    kind, functional_call(m, p_, (x_.unsqueeze(0),)), y_.unsqueeze(0)
                )
            ),
            in_dims=(None, 0, 0),
        )
        run_vmap, run_loop = vmap_and_loop(f, (p, x, y), sync)

        run_torch = None
        if tm is not None and functorch is not None:
            tp = {k: v.detach() for k, v in tm.named_parameters()}
            tx, ty = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())
            call = torch.nn.utils.stateless.functional_call
            tf = functorch.vmap(
                functorch.grad(
                    lambda p_, x_, y_: seq_loss(
                        kind, call(tm, p_, (x_.unsqueeze(0),)), y_.unsqueeze(0)
                    )
                ),
                in_dims=(None, 0, 0),
            )

            def run_torch():
                return per_call(lambda: tf(tp, tx, ty), lambda: None, 2)

        r = interleaved({"vmap": run_vmap, "loop": run_loop, "functorch": run_torch}, repeats)
        rows.append((f"per-sample grads, {label}, batch {B}", r))
    rows += complex_rows(repeats)
    W = flow.randn(100, 100) * 0.1
    x = flow.randn(100)
    jf = jacrev(fn100)

    def jac_vmap():
        _vmap_rules.enabled = True
        return per_call(lambda: jf(x, W)[0, 0].item(), lambda: None, 2)

    def jac_loop():
        _vmap_rules.enabled = False
        try:
            return per_call(lambda: jf(x, W)[0, 0].item(), lambda: None, 1)
        finally:
            _vmap_rules.enabled = True

    def jac_manual():
        def j():
            pre = W @ x
            t = pre.tanh()
            return ((1 - t * t) * x).unsqueeze(1) * W + flow.diag(t)

        return per_call(lambda: j()[0, 0].item(), lambda: None, 2)

    jt = None
    if torch is not None and functorch is not None:
        tW, tx = torch.from_numpy(W.numpy()), torch.from_numpy(x.numpy())
        tj = functorch.jacrev(lambda a, b: (b @ a).tanh() * a)

        def jt():
            return per_call(lambda: tj(tx, tW), lambda: None, 2)

    r = interleaved(
        {"vmap": jac_vmap, "loop": jac_loop, "manual": jac_manual, "functorch": jt}, repeats
    )
    rows.append(("jacrev, 100 -> 100", r))

    def ms(v):
        return f"{v * 1e3:9.2f}" if isinstance(v, float) else "        -"

    print(
        f"{'case':46s} {'vmap ms':>9s} {'loop ms':>9s} {'manual ms':>9s} {'functorch':>9s} {'loop/vmap':>9s}"
    )
    for name, r in rows:
        sp = r["loop"] / r["vmap"] if isinstance(r.get("vmap"), float) else float("nan")
        print(
            f"{name:46s} {ms(r.get('vmap'))} {ms(r.get('loop'))} {ms(r.get('manual'))} "
            f"{ms(r.get('functorch'))} {sp:8.1f}x"
        )
    for label, f, args in cache_cases():
        cached, uncached = cache_gain(f, args, 100)
        print(
            f"trace cache, vmap(grad({label})), batch 8, 100 calls: recorded every call "
            f"{uncached * 1e3:.2f} ms/call, recorded once {cached * 1e3:.2f} ms/call, "
            f"{uncached / cached:.1f}x"
        )


def complex_rows(repeats):
    """Per-sample gradients of real losses of complex inputs at batch 256 (an FFT power spectrum,
    det and eigvals of 4x4 matrices), vmap against its loop and functorch."""
    import numpy as np

    r = np.random.default_rng(0)
    z = r.standard_normal((256, 64)) + 1j * r.standard_normal((256, 64))
    a = r.standard_normal((256, 4, 4)) + 1j * r.standard_normal((256, 4, 4))
    cases = [
        ("fft power + |z|, [64]", z, lambda L, v: (L.fft.fft(v).abs() ** 2).sum() + v.abs().sum()),
        ("|det| + |eigvals|, 4x4", a, lambda L, m: L.linalg.det(m).abs() + L.linalg.eigvals(m).abs().sum()),
    ]  # fmt: skip
    rows = []
    for label, arr, loss in cases:
        f = vmap(grad(lambda v, loss=loss: loss(flow, v)))
        run_vmap, run_loop = vmap_and_loop(f, (flow.tensor(arr),), sync_any)
        run_torch = None
        if torch is not None and functorch is not None:
            tf = functorch.vmap(functorch.grad(lambda v, loss=loss: loss(torch, v)))
            ta = torch.from_numpy(arr)

            def run_torch(tf=tf, ta=ta):
                return per_call(lambda: tf(ta), lambda: None, 2)

        res = interleaved({"vmap": run_vmap, "loop": run_loop, "functorch": run_torch}, repeats)
        rows.append((f"complex per-sample grads, {label}, batch 256", res))
    return rows


def cache_cases():
    """(label, vmap(grad(loss)), inputs) at batch 8: a small function's, the MLP's and the
    LSTM's."""
    flow.manual_seed(0)
    p = mlp_params(flow, flow.randn)
    x, y = flow.randn(8, 784), flow.randint(0, 10, (8,))
    mlp = vmap(grad(lambda p_, x_, y_: mlp_loss(F, p_, x_, y_)), in_dims=(None, 0, 0))
    m, _, xs, ys = seq_case("lstm", 8)
    ps = {k: v.detach() for k, v in m.named_parameters()}
    lstm = vmap(
        grad(
            lambda p_, x_, y_: seq_loss(
                "lstm", functional_call(m, p_, (x_.unsqueeze(0),)), y_.unsqueeze(0)
            )
        ),
        in_dims=(None, 0, 0),
    )
    w, a = flow.randn(4, 4), flow.randn(8, 4)
    small = vmap(grad(lambda w_, a_: (a_ @ w_).tanh().sum()), in_dims=(None, 0))
    return [
        ("(a @ w).tanh().sum(), 4x4", small, (w, a)),
        ("MLP loss", mlp, (p, x, y)),
        ("LSTM loss", lstm, (ps, xs, ys)),
    ]


def sync_any(out):
    out = next(iter(out.values())) if isinstance(out, dict) else out
    out.sum().item()


def cache_gain(f, args, calls):
    """Seconds per call of f (a vmap) with and without the trace cache (median of 5)."""

    def side(enabled):
        def run():
            _vmap_rules.cache_enabled = enabled
            try:
                out = []
                return per_call(
                    lambda: out.append(f(*args)),
                    lambda: sync_any(out[-1]),
                    calls,
                )
            finally:
                _vmap_rules.cache_enabled = True

        return run

    r = interleaved({"cached": side(True), "uncached": side(False)}, 5)
    return r["cached"], r["uncached"]


if __name__ == "__main__":
    main()
