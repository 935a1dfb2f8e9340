"""nn.Graph on CUDA: a graph whose tensors live on a GPU compiles through the compiler's GPU backend
(fused loops through NVRTC, cuBLAS GEMMs, CUDA-graph command buffers, the op library's CUDA kernels
for what has no HLO there, e.g. convolutions through cuDNN) and runs as one LaunchLazyJob
instruction on the device's compute stream. Each test compares with eager CUDA or a float64
NumPy reference. Skips without a CUDA device; the GPU proof (tools/gpu/run.sh) runs this file."""

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like import nn

pytestmark = pytest.mark.skipif(
    not flow.cuda.is_available(), reason="no CUDA device (the GPU proof, tools/gpu/run.sh, runs it)"
)


def _mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def _cnn():
    # No conv bias before BatchNorm: its gradient is zero up to rounding, and any optimizer that
    # normalises steps (Adam) would turn that noise into different updates in the two modes.
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * 4 * 4, 10),
    )


def _data(shape, n=32, seed=0):
    rng = np.random.default_rng(seed)
    x = flow.tensor(rng.standard_normal((n,) + shape).astype(np.float32)).to("cuda")
    y = flow.tensor(rng.integers(0, 10, n)).to("cuda")
    return x, y


def _train(make_model, make_opt, x, y, steps, graph):
    """(losses, parameters as NumPy, the step callable) after `steps` training steps on cuda."""
    flow.manual_seed(0)
    model = make_model().to("cuda")
    opt = make_opt(model.parameters())
    if graph:

        class TrainGraph(nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = model
                self.add_optimizer(opt)

            def build(self, x, y):
                loss = F.cross_entropy(self.model(x), y)
                loss.backward()
                return loss

        step = TrainGraph()
    else:

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

    losses = [float(step(x, y).item()) for _ in range(steps)]
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], step


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: flow.optim.Adam(ps, lr=1e-2),
        lambda ps: flow.optim.SGD(ps, lr=0.1, momentum=0.9),
    ],
    ids=["adam", "sgd_momentum"],
)
def test_mlp_training_graph_equals_eager(make_opt):
    x, y = _data((64,))
    eager_losses, eager_params, _ = _train(_mlp, make_opt, x, y, 6, graph=False)
    graph_losses, graph_params, g = _train(_mlp, make_opt, x, y, 6, graph=True)
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-4, atol=1e-5)
    for a, b in zip(graph_params, eager_params):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert graph_losses[-1] < graph_losses[0]
    c = g._last_entry.compiled
    assert c.device == "cuda:0"
    assert c.device_fallback == "", c.device_fallback
    assert "gemm" in c.thunks.lower(), c.thunks  # the GPU backend's thunks, not the CPU's


def test_cnn_training_graph_equals_eager():
    x, y = _data((1, 8, 8))
    sgd = lambda ps: flow.optim.SGD(ps, lr=0.05, momentum=0.9)
    eager_losses, eager_params, _ = _train(_cnn, sgd, x, y, 4, graph=False)
    graph_losses, graph_params, g = _train(_cnn, sgd, x, y, 4, graph=True)
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-3, atol=1e-4)
    for a, b in zip(graph_params, eager_params):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    c = g._last_entry.compiled
    assert c.device == "cuda:0"
    assert "conv2d" in c.kernel_call_ops  # cuDNN through the op's CUDA kernel


def test_inference_graph_matches_eager_and_float64_reference():
    flow.manual_seed(1)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4)).to("cuda")
    model.eval()

    class Infer(nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model

        def build(self, x):
            return F.softmax(self.model(x), dim=1)

    g = Infer()
    w1, b1, w2, b2 = [p.detach().cpu().numpy().astype(np.float64) for p in model.parameters()]
    for seed in range(3):  # new input buffers each call: command buffers re-capture or replay
        x, _ = _data((16,), n=8, seed=seed)
        got = g(x)
        assert got.device.type == "cuda"
        with flow.no_grad():
            eager = F.softmax(model(x), dim=1)
        np.testing.assert_allclose(got.cpu().numpy(), eager.cpu().numpy(), rtol=1e-5, atol=1e-6)
        h = np.tanh(x.cpu().numpy().astype(np.float64) @ w1.T + b1) @ w2.T + b2
        ref = np.exp(h - h.max(1, keepdims=True))
        ref /= ref.sum(1, keepdims=True)
        np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=1e-4, atol=1e-6)


def test_float64_graph_against_numpy():
    rng = np.random.default_rng(3)
    w = flow.tensor(rng.standard_normal((5, 3)), dtype=flow.float64, device="cuda")

    class Fn(nn.Graph):
        def build(self, x):
            t = (x @ w).tanh()
            return t.pow(2).sum(), t.mean(dim=0), F.log_softmax(t, dim=1)

    xn = rng.standard_normal((7, 5))
    s, m, ls = Fn()(flow.tensor(xn, dtype=flow.float64, device="cuda"))
    t = np.tanh(xn @ w.cpu().numpy())
    np.testing.assert_allclose(s.item(), (t**2).sum(), rtol=1e-12)
    np.testing.assert_allclose(m.cpu().numpy(), t.mean(0), rtol=1e-12)
    ref = t - t.max(1, keepdims=True)
    ref -= np.log(np.exp(ref).sum(1, keepdims=True))
    np.testing.assert_allclose(ls.cpu().numpy(), ref, rtol=1e-12, atol=1e-14)


def test_dropout_graph_draws_fresh_masks():
    class Drop(nn.Graph):
        def build(self, x):
            return F.dropout(x, p=0.5, training=True)

    g = Drop()
    x = flow.ones(4096, device="cuda")
    a, b = g(x).cpu().numpy(), g(x).cpu().numpy()
    assert not np.array_equal(a, b)
    for r in (a, b):
        assert set(np.unique(r)) <= {0.0, 2.0}
        assert 0.4 < (r == 0).mean() < 0.6


def test_mixed_devices_are_a_clear_error():
    model = nn.Linear(4, 2).to("cuda")

    class Fwd(nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model

        def build(self, x):
            return self.model(x)

    with pytest.raises(Exception, match="device"):
        Fwd()(flow.ones(3, 4))  # the input on the CPU, the weights on cuda
