"""Frozen artifacts (tests/testdata/artifacts/<op-set>/, written by make.py when each op-set was
current) must keep loading and giving their recorded results, and the versioned op set must stay
add-only. These tests enforce docs/compatibility.md."""
import glob
import os
import re

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import _C, artifact

HERE = os.path.dirname(os.path.abspath(__file__))
FROZEN = os.path.join(HERE, "..", "testdata", "artifacts")
VERSIONS = sorted(int(d) for d in os.listdir(FROZEN) if d.isdigit())
FILES = sorted(glob.glob(os.path.join(FROZEN, "*", "*.oflx")))


def test_every_released_opset_is_frozen_and_readable():
    # The promise: this build reads every op-set from 1 (none has been retired yet) and
    # each op-set has its frozen models.
    assert artifact.OPSET_MIN == 1
    assert VERSIONS == list(range(1, artifact.OPSET_CURRENT + 1))
    for v in VERSIONS:
        names = sorted(
            os.path.basename(f) for f in glob.glob(os.path.join(FROZEN, str(v), "*.oflx"))
        )
        assert names == sorted(
            f"{m}_{k}.oflx" for m in ("mlp", "cnn", "transformer") for k in ("infer", "train")
        )


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, FROZEN))
def test_frozen_artifact_gives_its_recorded_results(path):
    expected = np.load(path[: -len(".oflx")] + ".npz")
    g = flow.load_graph(path)
    assert g.opset_version == int(os.path.basename(os.path.dirname(path)))
    if path.endswith("_infer.oflx"):
        out = g(flow.tensor(expected["x"]))
        np.testing.assert_allclose(out.numpy(), expected["y"], rtol=1e-5, atol=1e-6)
    else:
        for x, y, loss in zip(expected["x"], expected["y"], expected["losses"]):
            assert g(flow.tensor(x), flow.tensor(y)).item() == pytest.approx(loss, rel=1e-5)


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, FROZEN))
def test_rewriting_at_its_version_gives_the_same_bytes(tmp_path, path):
    version = artifact.describe(path)["opset_version"]
    out = str(tmp_path / "again.oflx")
    _C._artifact_rewrite(path, out, version)
    assert open(out, "rb").read() == open(path, "rb").read()


def _rows(text):
    rows = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"(\S+) wire=(\d+) opset=\[(\d+),(\w+)\] attrs=(.*)", line)
        assert m, line
        rows[int(m.group(2))] = (m.group(1), int(m.group(3)), m.group(4), m.group(5))
    return rows


def test_opset_table_is_add_only():
    """Every row of the golden table keeps its wire code, name, first op-set and attributes; a
    range still open then may only have closed at or after the golden's op-set."""
    with open(os.path.join(FROZEN, "opset_table.txt")) as f:
        golden_text = f.read()
    golden_opset = int(re.search(r"# op-set (\d+)", golden_text).group(1))
    assert golden_opset <= artifact.OPSET_CURRENT
    current = _rows(_C._artifact_opset_table())
    assert len(current) == len(_C._artifact_opset_table().splitlines()), "duplicate wire code"
    for wire, (name, lo, hi, attrs) in _rows(golden_text).items():
        assert wire in current, f"wire code {wire} ({name}) was removed"
        cname, clo, chi, cattrs = current[wire]
        assert (cname, clo) == (name, lo), f"wire code {wire} changed: {name} -> {cname}"
        assert cattrs == attrs, f"{name}: attributes changed: {attrs} -> {cattrs}"
        if hi != "current":
            assert chi == hi, f"{name}: closed range changed"
        elif chi != "current":
            assert int(chi) >= golden_opset, f"{name}: range closed before op-set {golden_opset}"


@pytest.mark.parametrize("target", range(artifact.OPSET_MIN, artifact.OPSET_CURRENT + 1))
def test_every_supported_target_version_exports_the_frozen_models(tmp_path, target):
    from artifact_models import MODELS, build, digits

    for name in MODELS:
        model = build(name)
        model.eval()
        x = flow.tensor(digits(4)[0])
        path = str(tmp_path / f"{name}.oflx")
        flow.export(model, (x,), path, target_version=target)
        assert flow.load_graph(path).opset_version == target
