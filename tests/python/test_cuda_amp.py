"""Mixed precision on CUDA: f16/bf16 matmuls run on cuBLAS in the low precision (f32
accumulation), and flow.autocast("cuda", ...) uses them for linear/matmul while the ops without
low-precision CUDA kernels compute in f32. Compared with float64 NumPy and with the f32 model.
Skips without a CUDA device; the GPU proof (tools/gpu/run.sh) runs this file."""

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like import nn
from test_ops_nn import np_conv2d  # the float64 NumPy conv of the op tables

pytestmark = pytest.mark.skipif(
    not flow.cuda.is_available(), reason="no CUDA device (the GPU proof, tools/gpu/run.sh, runs it)"
)


@pytest.mark.parametrize("dtype,tol", [(flow.float16, 2e-3), (flow.bfloat16, 1e-2)])
def test_low_precision_matmul_against_float64(dtype, tol):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (2, 48, 32)), rng.uniform(-1, 1, (32, 40))
    x, w = flow.tensor(a).to(dtype).to("cuda"), flow.tensor(b).to(dtype).to("cuda")
    got = flow.matmul(x, w)
    assert got.dtype == dtype and got.device.type == "cuda"
    # the reference from the same rounded inputs
    ra, rb = x.float().cpu().numpy().astype(np.float64), w.float().cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(got.float().cpu().numpy(), ra @ rb, rtol=tol, atol=tol)
    # with a bias (addmm) and through F.linear
    bias = flow.tensor(rng.uniform(-1, 1, 40)).to(dtype).to("cuda")
    lin = F.linear(x, w.t().contiguous(), bias)
    rbias = bias.float().cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(lin.float().cpu().numpy(), ra @ rb + rbias, rtol=tol, atol=tol)


def test_autocast_cuda_bf16_mlp_training_tracks_f32():
    def run(amp):
        flow.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda")
        opt = flow.optim.SGD(model.parameters(), lr=0.1)
        rng = np.random.default_rng(1)
        x = flow.tensor(rng.standard_normal((64, 64)).astype(np.float32)).to("cuda")
        y = flow.tensor(rng.integers(0, 10, 64)).to("cuda")
        losses = []
        for _ in range(20):
            with flow.autocast("cuda", dtype=flow.bfloat16, enabled=amp):
                out = model(x)
                if amp:
                    assert out.dtype == flow.bfloat16  # linear ran in bf16
                loss = F.cross_entropy(out, y)
            assert loss.dtype == flow.float32  # losses in f32, as PyTorch's lists say
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return np.array(losses)

    f32, bf16 = run(False), run(True)
    assert bf16[-1] < bf16[0] * 0.9  # it trains
    np.testing.assert_allclose(bf16, f32, rtol=0.1, atol=0.05)


@pytest.mark.parametrize("dtype,tol", [(flow.float16, 3e-3), (flow.bfloat16, 2e-2)])
@pytest.mark.parametrize("stride,padding,groups", [(1, 1, 1), (2, 0, 2)])
def test_low_precision_conv2d_forward_backward_against_float64(dtype, tol, stride, padding, groups):
    """conv2d on cuDNN in f16/bf16 (f32 accumulation): the output and both gradients equal the
    float64 reference computed from the same rounded inputs."""
    rng = np.random.default_rng(2)
    x = flow.tensor(rng.uniform(-1, 1, (2, 4, 9, 9))).to(dtype).to("cuda").requires_grad_()
    w = (
        flow.tensor(rng.uniform(-1, 1, (6, 4 // groups, 3, 3)))
        .to(dtype)
        .to("cuda")
        .requires_grad_()
    )
    y = F.conv2d(x, w, stride=stride, padding=padding, groups=groups)
    assert y.dtype == dtype and y.device.type == "cuda"
    rx = x.detach().float().cpu().numpy().astype(np.float64)
    rw = w.detach().float().cpu().numpy().astype(np.float64)
    ref = np_conv2d(rx, rw, stride=(stride,) * 2, padding=(padding,) * 2, groups=groups)
    np.testing.assert_allclose(y.float().cpu().numpy(), ref, rtol=tol, atol=tol * 4)
    g = rng.uniform(-1, 1, ref.shape)
    y.backward(flow.tensor(g).to(dtype).to("cuda"))
    rg = flow.tensor(g).to(dtype).float().numpy().astype(np.float64)
    # the gradients: the CPU's float64 conv2d (itself checked against NumPy in the op tables)
    x64 = flow.tensor(rx, requires_grad=True)
    w64 = flow.tensor(rw, requires_grad=True)
    F.conv2d(x64, w64, stride=stride, padding=padding, groups=groups).backward(flow.tensor(rg))
    gx, gw = x64.grad.numpy(), w64.grad.numpy()
    scale_x, scale_w = 1 + np.abs(gx).max(), 1 + np.abs(gw).max()
    np.testing.assert_allclose(x.grad.float().cpu().numpy() / scale_x, gx / scale_x, atol=tol * 2)
    np.testing.assert_allclose(w.grad.float().cpu().numpy() / scale_w, gw / scale_w, atol=tol * 2)


@pytest.mark.parametrize("dtype", [flow.float16, flow.bfloat16])
def test_autocast_cuda_cnn_with_gradscaler_tracks_f32(dtype):
    """A CNN (conv, BatchNorm, ReLU, max-pool, dropout-free head) trained under autocast on cuda
    with GradScaler: conv runs in the low precision, batch norm and the loss in f32, and the loss
    curve follows the f32 run."""

    def run(amp):
        flow.manual_seed(0)
        model = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(32, 10),
        ).to("cuda")
        opt = flow.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        scaler = flow.amp.GradScaler("cuda", enabled=amp and dtype == flow.float16)
        rng = np.random.default_rng(3)
        x = flow.tensor(rng.standard_normal((32, 3, 16, 16)).astype(np.float32)).to("cuda")
        y = flow.tensor(rng.integers(0, 10, 32)).to("cuda")
        losses = []
        for _ in range(25):
            with flow.autocast("cuda", dtype=dtype, enabled=amp):
                h = model[0](x)
                if amp:
                    assert h.dtype == dtype  # conv2d ran in the low precision
                loss = F.cross_entropy(model[1:](h), y)
            assert loss.dtype == flow.float32
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        return np.array(losses)

    f32, low = run(False), run(True)
    assert low[-1] < low[0] * 0.7  # it trains
    np.testing.assert_allclose(low, f32, rtol=0.15, atol=0.08)
