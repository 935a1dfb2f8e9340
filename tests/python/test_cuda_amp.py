"""Mixed precision on CUDA: f16/bf16 matmuls run on cuBLAS in the low precision (f32
accumulation), and flow.autocast("cuda", ...) uses them for linear/matmul while the ops without
low-precision CUDA kernels compute in f32. Compared with float64 NumPy and with the f32 model.
Skips without a CUDA device; the GPU proof (tools/gpu/run.sh) runs this file."""

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like import nn

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
