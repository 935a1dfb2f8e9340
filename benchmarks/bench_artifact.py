"""Graph artifacts (.oflx): export time, file size vs flow.save of the same tensors, load time to
the first result, and first-call latency of a loaded artifact vs tracing + compiling the graph.

    PYTHONPATH=python python3 benchmarks/bench_artifact.py [--quick]

Models: the digits MLP and CNN of examples/train_digits.py (training step, SGD + momentum, batch
64) and a TransformerEncoderLayer(64, 4) inference graph. "First call" runs in a fresh process
(the import is not counted) with an empty kernel cache (ONEFLOW_LIKE_CACHE_DIR, so the C++ JIT runs
as on a new machine) or with a warm one; a loaded artifact exported with embed_kernels=True brings
its kernel library and skips the JIT. Targets (issue 12): loading + running the CNN >= 10x faster
than compiling it from Python; file <= 5% larger than its weights.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "examples")]
QUICK = "--quick" in sys.argv

SETUP = r"""
import sys, time
sys.path[:0] = [{root!r} + "/python", {root!r} + "/examples"]
import numpy as np
import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F
import train_digits as td

class TrainGraph(nn.Graph):
    def __init__(self, model, opt):
        super().__init__(); self.model = model; self.add_optimizer(opt)
    def build(self, x, y):
        loss = F.cross_entropy(self.model(x), y); loss.backward(); return loss

class InferGraph(nn.Graph):
    def __init__(self, model):
        super().__init__(); self.model = model
    def build(self, x):
        return self.model(x)

def make(name):
    flow.manual_seed(0)
    rng = np.random.default_rng(0)
    if name == "transformer":
        model = nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, dropout=0.0, batch_first=True)
        model.eval()
        return InferGraph(model), model, (flow.tensor(rng.standard_normal((16, 32, 64)).astype(np.float32)),)
    model = td.make_mlp() if name == "mlp" else td.SmallCNN()
    model.eval() if name == "mlp" else None  # the MLP's dropout would draw fresh masks per run
    opt = flow.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = flow.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    y = flow.tensor(rng.integers(0, 10, 64))
    return TrainGraph(model, opt), model, (x, y)
"""

COMPILE = (
    SETUP
    + r"""
graph, model, args = make({name!r})
t0 = time.perf_counter()
out = graph(*args)
first = out.detach().numpy()
print(time.perf_counter() - t0)
"""
)

LOAD = (
    SETUP
    + r"""
_, _, args = make({name!r})
t0 = time.perf_counter()
g = flow.load_graph({path!r})
first = g(*args).detach().numpy()
print(time.perf_counter() - t0)
"""
)


def fresh(code, cache):
    env = dict(os.environ, ONEFLOW_LIKE_CACHE_DIR=cache)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return float(r.stdout.strip().splitlines()[-1])


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    import oneflow_like as flow

    ns = {}
    exec(SETUP.format(root=ROOT), ns)
    reps = 1 if QUICK else 3
    tmp = tempfile.mkdtemp(prefix="bench_artifact_")
    print(
        f"{'model':<12} {'weights':>9} {'.oflx':>9} {'+%':>6} {'flow.save':>9} {'+kernels':>9} "
        f"{'export':>8} | first call, cold JIT: {'compile':>8} {'load':>7} {'load+k':>7} {'x':>6}"
        f" | warm JIT: {'compile':>8} {'load':>7} {'x':>6}"
    )
    for name in ("mlp", "cnn", "transformer"):
        graph, model, args = ns["make"](name)
        graph(*args)  # compiled (and run once) here; export reuses the compiled graph
        path, pathk, saved = (
            os.path.join(tmp, f"{name}{s}") for s in (".oflx", "_k.oflx", ".oflw")
        )
        t0 = time.perf_counter()
        flow.export(graph, args, path)
        export_s = time.perf_counter() - t0
        flow.export(graph, args, pathk, embed_kernels=True)
        info = flow.artifact.describe(path)
        weights = sum(t[5] for t in info["tensors"])
        flow.save(flow.load_graph(path).state_dict(), saved)
        size, sizek, save_size = (os.path.getsize(p) for p in (path, pathk, saved))
        cold = lambda code: median(  # noqa: E731
            [fresh(code, tempfile.mkdtemp(dir=tmp)) for _ in range(reps)]
        )
        warm_dir = tempfile.mkdtemp(dir=tmp)
        c_code = COMPILE.format(root=ROOT, name=name)
        l_code = LOAD.format(root=ROOT, name=name, path=path)
        lk_code = LOAD.format(root=ROOT, name=name, path=pathk)
        cc, lc, lkc = cold(c_code), cold(l_code), cold(lk_code)
        fresh(c_code, warm_dir)
        cw = median([fresh(c_code, warm_dir) for _ in range(reps)])
        lw = median([fresh(l_code, warm_dir) for _ in range(reps)])
        print(
            f"{name:<12} {weights:>9} {size:>9} {100 * (size - weights) / weights:>5.1f}% "
            f"{save_size:>9} {sizek:>9} {export_s * 1e3:>6.1f}ms | {'':>22}{cc:>7.3f}s "
            f"{lc:>6.3f}s {lkc:>6.3f}s {cc / lkc:>5.1f}x | {'':>10}{cw:>7.3f}s {lw:>6.3f}s "
            f"{cw / lw:>5.1f}x"
        )


if __name__ == "__main__":
    main()
