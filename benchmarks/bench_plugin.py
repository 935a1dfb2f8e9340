"""Compiler plugins: coverage and step time of inference graphs through the OpenCL plugin (on
PoCL, which runs OpenCL on the same CPU cores) against our CPU backend.

    make build && bazel build //plugins/opencl:all && \\
    PYTHONPATH=python:tests/python /usr/bin/python3 benchmarks/bench_plugin.py [--quick]

One row per model (digits MLP 64-32-10 and CNN of tests/python/artifact_models.py, and the MLP
784-1024-1024-10 of bench_graph.py; inference, batch as listed). Columns:
  ops % / flops %: share of the graph's compute ops and FLOPs the plugin runs (plugin_report());
  partitions: dispatch ops; cpu fallbacks: ops left on the CPU (their opcodes);
  cpu ms / opencl ms: median milliseconds per step (output read back to NumPy), samples of the
      two graphs interleaved so load hits both; informative only: both run on the same cores.
"""
import os
import statistics
import sys
import time

import numpy as np

import oneflow_like as flow
import oneflow_like.nn as nn

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python")
)
from artifact_models import Infer, build, digits  # noqa: E402

QUICK = "--quick" in sys.argv
SAMPLES = 5 if QUICK else 15
LIB = "plugins/opencl/libofl_opencl_compiler.so"


def big_mlp():
    return nn.Sequential(
        nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def models():
    yield "digits mlp", build("mlp"), flow.tensor(digits(64)[0])
    yield "digits cnn", build("cnn"), flow.tensor(digits(64)[0])
    flow.manual_seed(0)
    yield "mlp 784-1024-1024-10", big_mlp(), flow.randn(128, 784)


def step_ms(g, x):
    t0 = time.perf_counter()
    g(x).detach().numpy()
    return (time.perf_counter() - t0) * 1e3


def main():
    lib = LIB if os.path.exists(LIB) else os.path.join("bazel-bin", LIB)
    lib = os.path.abspath(lib)
    print(
        f"{'model':24} {'batch':>5} {'ops %':>6} {'flops %':>7} {'parts':>5} "
        f"{'cpu ms':>8} {'opencl ms':>9}  cpu fallbacks"
    )
    for name, model, x in models():
        model.eval()
        cpu, ocl = Infer(model).use_plugins(), Infer(model).use_plugins(lib)
        want, got = cpu(x).detach().numpy(), ocl(x).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
        rep = ocl.plugin_report()
        plugin, rest = rep["backends"][0], rep["backends"][-1]
        ops = 100.0 * plugin["ops"] / max(1, plugin["ops"] + rest["ops"])
        flops = 100.0 * plugin["flops"] / max(1, plugin["flops"] + rest["flops"])
        tc, to = [], []
        for _ in range(SAMPLES):
            tc.append(step_ms(cpu, x))
            to.append(step_ms(ocl, x))
        fallbacks = sorted({f["opcode"] for f in rep["fallbacks"]})
        print(
            f"{name:24} {x.shape[0]:>5} {ops:6.1f} {flops:7.1f} {len(rep['partitions']):>5} "
            f"{statistics.median(tc):8.2f} {statistics.median(to):9.2f}  {', '.join(fallbacks) or '-'}"
        )


if __name__ == "__main__":
    main()
