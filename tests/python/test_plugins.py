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
    want = Infer(model).use_plugins()(x).numpy()
    g = Infer(model).use_plugins(_lib(OPENCL))
    got = g(x).numpy()
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
        g(flow.tensor(digits(16, 16)[0])).numpy(),
        Infer(g.model).use_plugins()(flow.tensor(digits(16, 16)[0])).numpy(),
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
    np.testing.assert_allclose(g(x).numpy(), want, rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL", "invoke")
    with pytest.raises(Exception, match=r"TestVendor \(libofl_test_plugin.so\).*deliberate invoke"):
        g(x).numpy()
    monkeypatch.delenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL")
    np.testing.assert_allclose(g(x).numpy(), want, rtol=1e-5, atol=1e-6)  # same graph, again
    assert float((flow.ones(3) + 1).sum().numpy()) == 6.0  # eager still works
