"""Compiler plugins end to end (compiler/plugin, plugins/opencl): digits MLP and CNN inference
graphs through the OpenCL plugin on PoCL equal the CPU backend; coverage reports; a plugin that
fails in compile or invoke raises a Python exception naming it and the runtime stays usable."""
import os

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
from artifact_models import Infer, build, digits


def _lib(rel):
    for base in ("", "bazel-bin/"):
        if os.path.exists(base + rel):
            return os.path.abspath(base + rel)
    pytest.skip(f"{rel} is not built")


OPENCL = "plugins/opencl/libofl_opencl_compiler.so"
TEST_PLUGIN = "compiler/plugin/libofl_test_plugin.so"


def _cpu_and_plugin(name, n=16):
    model = build(name)
    model.eval()
    x = flow.tensor(digits(n)[0])
    want = Infer(model).use_plugins()(x).detach().numpy()
    g = Infer(model).use_plugins(_lib(OPENCL))
    got = g(x).detach().numpy()
    return want, got, g


def test_mlp_inference_through_opencl_equals_cpu():
    want, got, g = _cpu_and_plugin("mlp")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    report = g.plugin_report()
    opencl, cpu = report["backends"][0], report["backends"][-1]
    assert opencl["name"].startswith("OpenCL") and cpu["name"] == "cpu"
    assert opencl["ops"] > 0 and opencl["flops"] > 0
    assert cpu["ops"] == 0, report["text"]  # the whole MLP runs as OpenCL kernels
    assert len(report["partitions"]) == 1
    assert "dispatch" in g.compiled.thunks
    np.testing.assert_allclose(
        g(flow.tensor(digits(16, 16)[0])).detach().numpy(),
        Infer(g.model).use_plugins()(flow.tensor(digits(16, 16)[0])).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


def test_cnn_inference_through_opencl_equals_cpu_and_reports_fallbacks():
    want, got, g = _cpu_and_plugin("cnn")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    report = g.plugin_report()
    assert report["backends"][0]["ops"] > 0
    reasons = {f["opcode"]: f["reason"] for f in report["fallbacks"]}
    assert "convolution" in reasons, report["text"]
    assert "not supported by the OpenCL plugin" in reasons["convolution"]


def test_plugins_from_environment_and_dump(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEFLOW_LIKE_PLUGINS", _lib(OPENCL))
    model = build("mlp")
    g = Infer(model).debug(0, dump_to=str(tmp_path))
    g(flow.tensor(digits(8)[0]))
    assert g.plugin_report()["backends"][0]["name"].startswith("OpenCL")
    text = (tmp_path / "Infer.plugin_report.txt").read_text()
    assert "plugin coverage" in text and "partition" in text


def test_refused_plugin_names_library_and_symbol():
    g = Infer(build("mlp")).use_plugins(_lib("compiler/plugin/libofl_test_plugin_no_compile.so"))
    with pytest.raises(
        Exception, match="libofl_test_plugin_no_compile.so.*OflCompilerPluginCompile"
    ):
        g(flow.tensor(digits(4)[0]))
    g = Infer(build("mlp")).use_plugins(_lib("compiler/plugin/libofl_test_plugin_v2.so"))
    with pytest.raises(Exception, match="2.0.0"):
        g(flow.tensor(digits(4)[0]))


class TanhNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return flow.tanh(self.fc(x))


def test_plugin_errors_raise_naming_the_plugin_and_runtime_stays_usable(monkeypatch):
    model = TanhNet()
    x = flow.tensor(digits(4)[0])
    want = np.tanh(model.fc(x).detach().numpy())
    monkeypatch.setenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL", "compile")
    with pytest.raises(
        Exception, match=r"TestVendor \(libofl_test_plugin.so\).*deliberate compile"
    ):
        Infer(model).use_plugins(_lib(TEST_PLUGIN))(x)
    monkeypatch.delenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL")
    g = Infer(model).use_plugins(_lib(TEST_PLUGIN))
    np.testing.assert_allclose(g(x).detach().numpy(), want, rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL", "invoke")
    with pytest.raises(Exception, match=r"TestVendor \(libofl_test_plugin.so\).*deliberate invoke"):
        g(x).detach().numpy()
    monkeypatch.delenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL")
    np.testing.assert_allclose(
        g(x).detach().numpy(), want, rtol=1e-5, atol=1e-6
    )  # same graph, again
    assert float((flow.ones(3) + 1).sum().detach().numpy()) == 6.0  # eager still works


def test_aot_apply_plugin_then_load_with_and_without_the_dispatch_library(tmp_path, capfd):
    import shutil

    from oneflow_like.apply_plugin import main

    model = build("mlp")
    model.eval()
    x = flow.tensor(digits(16)[0])
    src, dst = tmp_path / "mlp.oflx", tmp_path / "mlp_opencl.oflx"
    flow.export(model, (x,), str(src))
    want = flow.load_graph(str(src))(x).detach().numpy()
    assert main([str(src), "--plugin", _lib(OPENCL), "-o", str(dst)]) == 0
    assert "partition" in capfd.readouterr().out
    g = flow.load_graph(str(dst))
    assert g.opset_version == 3
    np.testing.assert_allclose(g(x).detach().numpy(), want, rtol=1e-5, atol=1e-5)
    assert "dispatch %dispatch" in g._art.graph.thunks
    assert "cpu fallback" not in g._art.graph.thunks

    # Compiled with a copy of the plugin in a folder without its dispatch library: loading
    # finds none, runs the stored original partition on the CPU and says so.
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    shutil.copy(_lib(OPENCL), lonely / "libofl_opencl_compiler.so")
    dst2 = tmp_path / "mlp_nodispatch.oflx"
    assert (
        main([str(src), "--plugin", str(lonely / "libofl_opencl_compiler.so"), "-o", str(dst2)])
        == 0
    )
    capfd.readouterr()
    g2 = flow.load_graph(str(dst2))
    assert "running the partition's original HLO on the CPU" in capfd.readouterr().err
    assert "cpu fallback" in g2._art.graph.thunks
    np.testing.assert_allclose(g2(x).detach().numpy(), want, rtol=1e-5, atol=1e-5)


def test_mlp_training_steps_through_opencl_equal_cpu():
    from artifact_models import batches, train_graph

    data = batches(3, n=16)
    runs = []
    for plugins in ((), (_lib(OPENCL),)):
        model, g = train_graph("mlp")
        g.use_plugins(*plugins)
        runs.append(
            ([g(x, y).item() for x, y in data], [p.detach().numpy() for p in model.parameters()])
        )
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5)
    for got, want in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    report = g.plugin_report()
    assert report["backends"][0]["flops"] > 0.99 * sum(b["flops"] for b in report["backends"])
