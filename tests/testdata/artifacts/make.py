"""Writes the frozen artifacts of one op-set version: tests/testdata/artifacts/<V>/.

    PYTHONPATH=python python3 tests/testdata/artifacts/make.py V

Run once per op-set version, when that version is released; never rewrite an existing directory
(tests/python/test_artifact_frozen.py loads these files in every later commit). For each model
of tests/python/artifact_models.py: <model>_infer.oflx (eval mode, batch of 16) with the inputs
and outputs it must give, and <model>_train.oflx (SGD + momentum step) with the losses of 3 steps.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import oneflow_like as flow  # noqa: E402
from artifact_models import MODELS, batches, build, digits, train_graph  # noqa: E402

STEPS = 3


def main(version):
    out = os.path.join(HERE, str(version))
    if os.path.exists(out):
        sys.exit(f"{out} exists: frozen artifacts are never rewritten")
    os.makedirs(out)
    for name in MODELS:
        model = build(name)
        model.eval()
        x = flow.tensor(digits(16)[0])
        flow.export(model, (x,), os.path.join(out, f"{name}_infer.oflx"), target_version=version)
        g = flow.load_graph(os.path.join(out, f"{name}_infer.oflx"))
        np.savez(os.path.join(out, f"{name}_infer.npz"), x=x.numpy(), y=g(x).numpy())

        _, graph = train_graph(name)
        data = batches(STEPS, n=16)
        path = os.path.join(out, f"{name}_train.oflx")
        flow.export(graph, data[0], path, target_version=version)
        g = flow.load_graph(path)
        losses = [g(x, y).item() for x, y in data]
        np.savez(
            os.path.join(out, f"{name}_train.npz"),
            x=np.stack([b[0].numpy() for b in data]),
            y=np.stack([b[1].numpy() for b in data]),
            losses=np.array(losses),
        )
        print(name, "losses", losses)


if __name__ == "__main__":
    main(int(sys.argv[1]))
