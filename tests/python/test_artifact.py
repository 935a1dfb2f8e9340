"""Export / load of .oflx graph artifacts: inference and training, the versioned op set in both
directions, and clear errors for bad files (python/oneflow_like/artifact, compiler/artifact)."""
import os
import struct

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
from oneflow_like import artifact
from artifact_models import TrainGraph, batches, build, digits, train_graph


def _same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_module_export_runs_like_its_graph(tmp_path, name):
    model = build(name)
    model.eval()
    x = flow.tensor(digits(16)[0])
    path = str(tmp_path / f"{name}.oflx")
    flow.export(model, (x,), path)
    g = flow.load_graph(path)
    assert not g.training and len(g.input_names) == 1
    out = g(x)
    np.testing.assert_allclose(
        out.detach().numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    x2 = flow.tensor(digits(16, offset=16)[0])
    np.testing.assert_allclose(
        g(x2).detach().numpy(), model(x2).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    names = dict(g.named_parameters())
    for n, p in model.named_parameters():
        _same(names[f"model.{n}"], p)


@pytest.mark.parametrize("name,adam", [("mlp", False), ("cnn", True), ("transformer", False)])
def test_training_graph_steps_like_the_original(tmp_path, name, adam):
    model, graph = train_graph(name, adam=adam)
    data = batches(5)
    for x, y in data[:2]:
        graph(x, y)
    path = str(tmp_path / "train.oflx")
    flow.export(graph, data[0], path)
    g = flow.load_graph(path)
    assert g.training and g.input_names == ["x", "y"]
    roles = {rec[0]: rec[1] for rec in g.info["tensors"]}
    assert "optimizer" in roles.values()
    for x, y in data[2:]:
        assert graph(x, y).item() == g(x, y).item()
    loaded = g.state_dict()
    for n, p in model.named_parameters():
        _same(loaded[f"model.{n}"], p)


def test_graph_exported_before_its_first_run(tmp_path):
    _, graph = train_graph("mlp")
    data = batches(3)
    path = str(tmp_path / "fresh.oflx")
    flow.export(graph, data[0], path)
    g = flow.load_graph(path)
    for x, y in data:
        assert graph(x, y).item() == g(x, y).item()


def test_export_is_deterministic(tmp_path):
    model = build("cnn")
    model.eval()
    x = flow.tensor(digits(8)[0])
    a, b = str(tmp_path / "a.oflx"), str(tmp_path / "b.oflx")
    flow.export(model, (x,), a)
    flow.export(model, (x,), b)
    assert open(a, "rb").read() == open(b, "rb").read()


def test_tensors_are_aligned(tmp_path):
    model = build("mlp")
    path = str(tmp_path / "m.oflx")
    flow.export(model, (flow.tensor(digits(4)[0]),), path)
    d = artifact.describe(path)
    assert d["data_offset"] % 64 == 0
    assert all(rec[4] % 64 == 0 for rec in d["tensors"])
    weights = sum(rec[5] for rec in d["tensors"])
    assert d["file_size"] >= d["data_offset"] + weights


# ---- the versioned op set: op-set 2 added kernel dilation (convolution_v2) ----------------------
class Dilated(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=2, dilation=2)

    def forward(self, x):
        return self.conv(x.reshape(-1, 1, 8, 8)).sum((1, 2, 3))


def test_downgrade_past_a_feature_names_op_attribute_and_version(tmp_path):
    flow.manual_seed(0)
    model, x = Dilated(), flow.tensor(digits(4)[0])
    path = str(tmp_path / "dilated.oflx")
    with pytest.raises(ValueError) as e:
        flow.export(model, (x,), path, target_version=1)
    msg = str(e.value)
    assert path in msg and "[convolution]" in msg and "rhs_dilate" in msg and "op-set 2" in msg
    flow.export(model, (x,), path)  # the current op set has it
    np.testing.assert_allclose(
        flow.load_graph(path)(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-5
    )


def test_old_opset_export_upgrades_on_load(tmp_path):
    model = build("cnn")
    model.eval()
    x = flow.tensor(digits(8)[0])
    old, new = str(tmp_path / "v1.oflx"), str(tmp_path / "v2.oflx")
    flow.export(model, (x,), old, target_version=1)
    flow.export(model, (x,), new)
    assert artifact.describe(old)["opset_version"] == 1
    assert artifact.describe(new)["opset_version"] == artifact.OPSET_CURRENT
    _same(flow.load_graph(old)(x), flow.load_graph(new)(x))


def test_target_version_from_the_future(tmp_path):
    with pytest.raises(ValueError, match="newer than this build"):
        flow.export(build("mlp"), (flow.tensor(digits(4)[0]),), str(tmp_path / "f.oflx"), 99)


def test_cli(tmp_path, capsys):
    from oneflow_like.artifact.__main__ import main

    model = build("cnn")
    model.eval()
    x = flow.tensor(digits(4)[0])
    path, v1, v2 = (str(tmp_path / n) for n in ("m.oflx", "v1.oflx", "v2.oflx"))
    flow.export(model, (x,), path)
    assert main(["info", path]) == 0
    out = capsys.readouterr().out
    assert (
        f"op-set version:  {artifact.OPSET_CURRENT}" in out
        and "tensor model.1.weight: float32[4,1,3,3]" in out
    )
    assert main(["print", path]) == 0
    assert "convolution(" in capsys.readouterr().out
    assert main(["downgrade", path, v1, "--to", "1"]) == 0
    assert main(["upgrade", v1, v2]) == 0
    assert main(["verify", v2]) == 0
    assert artifact.describe(v1)["opset_version"] == 1
    assert open(v2, "rb").read() == open(path, "rb").read()
    _same(flow.load_graph(v1)(x), flow.load_graph(path)(x))

    flow.manual_seed(0)
    dilated = str(tmp_path / "d.oflx")
    flow.export(Dilated(), (x,), dilated)
    capsys.readouterr()
    assert main(["downgrade", dilated, v1, "--to", "1"]) == 1
    err = capsys.readouterr().err
    assert dilated in err and "rhs_dilate" in err and "op-set 2" in err


def test_embedded_kernels_skip_the_jit(tmp_path, monkeypatch):
    model, graph = train_graph("mlp")
    data = batches(2)
    path = str(tmp_path / "k.oflx")
    flow.export(graph, data[0], path, embed_kernels=True)
    ((name, nbytes),) = artifact.describe(path)["kernels"]
    assert name.startswith("k_") and name.endswith(".so") and nbytes > 0
    cache = tmp_path / "cache"
    monkeypatch.setenv("ONEFLOW_LIKE_CACHE_DIR", str(cache))
    g = flow.load_graph(path)
    assert os.listdir(cache) == [name]  # installed before the compile, which finds it there
    for x, y in data:
        assert graph(x, y).item() == g(x, y).item()


def test_training_graph_with_dropout_draws_like_the_original(tmp_path):
    flow.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 10))
    graph = TrainGraph(model, flow.optim.SGD(model.parameters(), lr=0.1))
    data = batches(3)
    path = str(tmp_path / "dropout.oflx")
    flow.export(graph, data[0], path)
    g = flow.load_graph(path)
    assert g.info["random"] or g.info["rng_seed_parameter"]
    for k, (x, y) in enumerate(data):
        flow.manual_seed(100 + k)
        a = graph(x, y).item()
        flow.manual_seed(100 + k)
        assert g(x, y).item() == a
