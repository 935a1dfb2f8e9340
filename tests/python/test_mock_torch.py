"""mock_torch: `import torch` resolves to oneflow_like through an import hook, errors name both
the torch name and ours, disable() undoes everything; plus the namespaces scripts import."""
import os
import subprocess
import sys

import pytest

import oneflow_like as flow
from oneflow_like import mock_torch


@pytest.fixture
def mocked():
    with mock_torch.enable():
        yield
    assert not mock_torch.is_enabled()


def test_imports_resolve_to_oneflow_like(mocked):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader, TensorDataset

    assert torch.Tensor is flow.Tensor and torch.float32 is flow.float32
    assert nn.Linear is flow.nn.Linear and F.relu is flow.nn.functional.relu
    assert DataLoader is flow.utils.data.DataLoader and TensorDataset is not None
    assert StepLR is flow.optim.lr_scheduler.StepLR
    assert torch.nn is sys.modules["torch.nn"]  # attribute and import give the same view
    import torch.cuda  # a module-valued attribute (flow.cuda), not a file

    assert torch.cuda.is_available() == flow.cuda.is_available()
    x = torch.randn(2, 3, requires_grad=True)
    (x * x).sum().backward()
    assert isinstance(x.grad, torch.Tensor)


def test_writes_reach_oneflow_like(mocked):
    import torch.backends.cudnn as cudnn

    before = flow.backends.cudnn.benchmark
    cudnn.benchmark = not before
    try:
        assert flow.backends.cudnn.benchmark is (not before)
    finally:
        cudnn.benchmark = before


def test_missing_names_name_torch_and_oneflow_like(mocked):
    import torch
    import torch.nn as nn

    with pytest.raises(
        AttributeError,
        match=r"torch\.nn' has no attribute 'NoSuchLayer'.*" r"oneflow_like\.nn\.NoSuchLayer",
    ):
        nn.NoSuchLayer
    with pytest.raises(AttributeError, match=r"'torch' has no attribute 'no_such_op'"):
        torch.no_such_op
    with pytest.raises(
        ModuleNotFoundError, match=r"'torch\.no_such_module'.*" r"oneflow_like\.no_such_module"
    ):
        import torch.no_such_module  # noqa: F401
    with pytest.raises(
        ImportError,
        match=r"cannot import name 'NoSuchLayer' from 'torch\.nn' \(mock_torch: "
        r"oneflow_like\.nn\.NoSuchLayer does not exist",
    ):
        from torch.nn import NoSuchLayer  # noqa: F401
    assert not hasattr(nn, "NoSuchLayer")  # hasattr still sees an AttributeError


def test_disable_restores_sys_modules():
    sentinel = type(sys)("torch")
    sys.modules["torch"] = sentinel
    try:
        mock_torch.enable()
        import torch

        assert torch is not sentinel and torch.nn.Linear is flow.nn.Linear
        mock_torch.disable()
        assert sys.modules["torch"] is sentinel
        assert not any(isinstance(m, mock_torch._View) for m in sys.modules.values())
    finally:
        mock_torch.disable()
        sys.modules.pop("torch", None)


def test_command_line_runs_a_script_with_its_arguments(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import sys, torch\n"
        "import torch.nn.functional as F\n"
        "print(type(torch.ones(1)).__module__, F.relu(torch.tensor([-1.0, 2.0])).tolist(),"
        " sys.argv[1:], __name__)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-m", "oneflow_like.mock_torch", str(script), "--lr", "0.1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "oneflow_like._C",
        "[0.0,",
        "2.0]",
        "['--lr',",
        "'0.1']",
        "__main__",
    ]
    usage = subprocess.run(
        [sys.executable, "-m", "oneflow_like.mock_torch"], capture_output=True, text=True, env=env
    )
    assert usage.returncode == 2 and "usage:" in usage.stderr


def test_accelerator_backends_and_data_parallel():
    assert flow.accelerator.is_available() == flow.cuda.is_available()
    acc = flow.accelerator.current_accelerator()
    assert (acc is None) == (not flow.cuda.is_available())
    assert flow.backends.mps.is_available() is False
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert isinstance(getattr(flow.backends.cudnn, flag), bool)
    old = flow.backends.cuda.matmul.allow_tf32
    flow.backends.cudnn.allow_tf32 = True
    assert flow.backends.cuda.matmul.allow_tf32 is True
    flow.backends.cuda.matmul.allow_tf32 = old
    inner = flow.nn.Linear(3, 2)
    dp = flow.nn.DataParallel(inner)
    assert dp.module is inner and list(dp.state_dict()) == ["module.weight", "module.bias"]
    x = flow.randn(4, 3)
    assert dp(x).detach().numpy().tolist() == inner(x).detach().numpy().tolist()
    out = flow.nn.parallel.data_parallel(inner, x)
    assert out.shape == (4, 2)
