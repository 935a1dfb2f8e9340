"""In-place activations, LPPool1d/2d, LocalResponseNorm, pdist, gumbel_softmax and SyncBatchNorm:
against torch 1.13 in float64 (forward and input gradients) and eager == nn.Graph."""
import numpy as np
import pytest
from op_testing import copy_torch_weights, same_as_torch

import oneflow_like as flow
import oneflow_like.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
R = np.random.default_rng(0)


def eager_equals_graph(module, *arrays, tol=1e-5):
    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = module

        def build(self, *xs):
            return self.m(*xs)

    xs = [flow.tensor(a, dtype=flow.float32) for a in arrays]
    np.testing.assert_allclose(
        G()(*xs).detach().numpy(), module(*xs).detach().numpy(), rtol=tol, atol=tol
    )


INPLACE = [
    ("relu_", ()),
    ("elu_", (0.7,)),
    ("celu_", (1.3,)),
    ("selu_", ()),
    ("leaky_relu_", (0.2,)),
    ("hardtanh_", (-0.5, 0.6)),
    ("threshold_", (0.1, -2.0)),
    ("rrelu_", (0.1, 0.3, False)),
]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_activations_match_torch(name, args):
    def run(lib, fn):
        def f(x):
            y = x * 1.0  # in place on a non-leaf, as scripts do
            out = fn(y, *args)
            assert out is y
            return y

        return f

    tol = 1e-7 if name == "celu_" else 1e-10  # F.celu is elu(x / alpha) * alpha
    same_as_torch(
        run(flow, getattr(F, name)),
        run(torch, getattr(TF, name)),
        R.standard_normal((3, 5)),
        tol=tol,
    )
    leaf = flow.ones(3, requires_grad=True)
    with pytest.raises(Exception):
        getattr(F, name)(leaf, *args)  # a leaf that requires grad cannot change in place


@pytest.mark.parametrize(
    "p,k,stride,ceil",
    [(2, 3, None, False), (3, 2, 1, False), (1.5, 2, 2, True), (2, (2, 3), (1, 2), False)],
)
def test_lp_pool_matches_torch(p, k, stride, ceil):
    x = np.abs(R.standard_normal((2, 3, 7, 8))) + 0.1
    same_as_torch(flow.nn.LPPool2d(p, k, stride, ceil), torch.nn.LPPool2d(p, k, stride, ceil), x)
    if not isinstance(k, tuple):
        x1 = np.abs(R.standard_normal((2, 3, 9))) + 0.1
        same_as_torch(
            flow.nn.LPPool1d(p, k, stride, ceil), torch.nn.LPPool1d(p, k, stride, ceil), x1
        )
        same_as_torch(
            lambda t: F.lp_pool1d(t, p, k, stride, ceil),
            lambda t: TF.lp_pool1d(t, p, k, stride, ceil),
            x1,
        )
    assert repr(flow.nn.LPPool2d(p, k, stride, ceil)) == repr(torch.nn.LPPool2d(p, k, stride, ceil))
    eager_equals_graph(flow.nn.LPPool2d(p, k, stride, ceil), x)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 4), (1, 4, 2, 3, 2)])
def test_local_response_norm_matches_torch(size, shape):
    kw = dict(alpha=0.3, beta=0.7, k=1.5)
    x = R.standard_normal(shape)
    same_as_torch(flow.nn.LocalResponseNorm(size, **kw), torch.nn.LocalResponseNorm(size, **kw), x)
    assert repr(flow.nn.LocalResponseNorm(size, **kw)) == repr(
        torch.nn.LocalResponseNorm(size, **kw)
    )
    eager_equals_graph(flow.nn.LocalResponseNorm(size, **kw), x)


def test_local_response_norm_rejects_2d_like_torch():
    with pytest.raises(
        ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"
    ):
        F.local_response_norm(flow.ones(2, 3), 2)
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality\s+input"):
        TF.local_response_norm(torch.ones(2, 3), 2)  # torch 1.13's message has extra spaces


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), 0.5])
def test_pdist_matches_torch(p):
    x = R.standard_normal((5, 4))
    same_as_torch(lambda t: F.pdist(t, p), lambda t: TF.pdist(t, p), x)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(flow.ones(2, 2, 2))


def test_pdist_p0_counts_differing_coordinates():
    x = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 2.0], [1.0, 1.0, 5.0]])
    np.testing.assert_array_equal(
        F.pdist(flow.tensor(x), 0).detach().numpy(), TF.pdist(torch.tensor(x), 0).detach().numpy()
    )


def test_gumbel_softmax_distribution_and_straight_through():
    flow.manual_seed(0)
    logits = np.log(np.array([0.1, 0.2, 0.7]))
    L = flow.tensor(np.tile(logits, (20000, 1)))
    soft = F.gumbel_softmax(L, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-12)
    hard = F.gumbel_softmax(L, hard=True).detach().numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(-1) == 1).all()
    np.testing.assert_allclose(hard.mean(0), [0.1, 0.2, 0.7], atol=0.015)  # Gumbel-max sampling
    x = flow.tensor(R.standard_normal((4, 3, 2)), requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.7, hard=True, dim=1)
    assert (y.sum(1).detach().numpy() == 1).all()
    w = flow.tensor(R.standard_normal((4, 3, 2)))
    (y * w).sum().backward()
    g = x.grad.detach().numpy()
    assert np.isfinite(g).all() and np.abs(g).max() > 0
    np.testing.assert_allclose(g.sum(1), 0.0, atol=1e-12)  # the softmax gradient, straight through


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 2, 3)])
def test_sync_batch_norm_is_batch_norm_in_one_process(shape):
    # torch 1.13's SyncBatchNorm wants CUDA tensors: the reference is BatchNorm (what torch 2's
    # SyncBatchNorm computes on one CPU process), with the same state_dict keys
    ours = flow.nn.SyncBatchNorm(3).double()
    bn = {
        2: torch.nn.BatchNorm1d,
        3: torch.nn.BatchNorm1d,
        4: torch.nn.BatchNorm2d,
        5: torch.nn.BatchNorm3d,
    }[len(shape)](3).double()
    assert list(ours.state_dict()) == list(torch.nn.SyncBatchNorm(3).state_dict())
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(R.standard_normal(3)))
        bn.bias.copy_(torch.tensor(R.standard_normal(3)))
    copy_torch_weights(bn, ours)
    x = R.standard_normal(shape)
    same_as_torch(ours, bn, x)
    np.testing.assert_allclose(
        ours.running_var.detach().numpy(), bn.running_var.detach().numpy(), rtol=1e-12
    )
    ours.eval(), bn.eval()
    same_as_torch(ours, bn, x)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        ours(flow.ones(3, dtype=flow.float64))


def test_convert_sync_batchnorm_keeps_state():
    for lib in (flow, torch):
        m = lib.nn.Sequential(
            lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3), lib.nn.Sequential(lib.nn.BatchNorm1d(4))
        )
        m[1].running_mean.fill_(0.5)
        m.eval()
        s = lib.nn.SyncBatchNorm.convert_sync_batchnorm(m)
        assert type(s[1]) is lib.nn.SyncBatchNorm and type(s[2][0]) is lib.nn.SyncBatchNorm
        assert type(s[0]) is lib.nn.Conv2d
        assert s[1].weight is m[1].weight
        assert not s[1].training or lib is torch  # torch 2 keeps the mode, 1.13 does not
        assert s[1].running_mean.detach().numpy().tolist() == [0.5] * 3
    assert list(flow.nn.SyncBatchNorm.convert_sync_batchnorm(m).state_dict()) == list(
        s.state_dict()
    )
    eager_equals_graph(flow.nn.SyncBatchNorm(3).eval(), R.standard_normal((2, 3, 4)))


UNPOOL = [
    (1, (2, 3, 9), dict(kernel_size=2)),
    (1, (2, 3, 10), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 6, 7), dict(kernel_size=2)),
    (2, (1, 2, 7, 8), dict(kernel_size=3, stride=2, padding=1)),
    (3, (1, 2, 4, 5, 6), dict(kernel_size=2)),
]


@pytest.mark.parametrize("n,shape,kw", UNPOOL)
def test_max_pool_with_indices_and_max_unpool_match_torch(n, shape, kw):
    x = R.standard_normal(shape)
    pool_f = getattr(F, f"max_pool{n}d_with_indices")
    pool_t = getattr(TF, f"max_pool{n}d_with_indices")
    out, idx = pool_f(flow.tensor(x), **kw)
    rout, ridx = pool_t(torch.tensor(x), **kw)
    np.testing.assert_array_equal(idx.detach().numpy(), ridx.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), rout.detach().numpy(), rtol=1e-12)
    pooled = rout.detach().numpy()
    unpool_f = getattr(flow.nn, f"MaxUnpool{n}d")(**kw)
    unpool_t = getattr(torch.nn, f"MaxUnpool{n}d")(**kw)
    assert repr(unpool_f) == repr(unpool_t)
    try:
        unpool_t(torch.tensor(pooled), ridx)
        fits = True
    except RuntimeError as e:  # an index beyond the default output size (data dependent)
        assert "Found an invalid max index" in str(e)
        fits = False
    if fits:
        same_as_torch(lambda t: unpool_f(t, idx), lambda t: unpool_t(t, ridx), pooled)
    else:
        with pytest.raises(IndexError, match="out of range"):
            unpool_f(flow.tensor(pooled), idx).detach().numpy()  # errors surface at the sync
    size = tuple(x.shape)  # output_size recovers the exact input size
    same_as_torch(
        lambda t: getattr(F, f"max_unpool{n}d")(t, idx, output_size=size, **kw),
        lambda t: getattr(TF, f"max_unpool{n}d")(t, ridx, output_size=size, **kw),
        pooled,
    )


def test_max_unpool_eager_equals_graph():
    x = R.standard_normal((2, 3, 6, 8))
    _, idx = F.max_pool2d(flow.tensor(x, dtype=flow.float32), 2, return_indices=True)

    class M(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.pool, self.unpool = flow.nn.MaxPool2d(2, return_indices=True), flow.nn.MaxUnpool2d(
                2
            )

        def forward(self, x):
            return self.unpool(*self.pool(x))

    eager_equals_graph(M(), x)


ADAPTIVE = [
    (1, (2, 3, 9), 4),
    (1, (3, 10), 3),
    (2, (2, 3, 7, 9), (3, 4)),
    (2, (2, 5, 6), (None, 4)),
    (2, (1, 2, 5, 5), 5),
    (3, (1, 2, 5, 6, 7), (2, 3, 4)),
]


@pytest.mark.parametrize("n,shape,size", ADAPTIVE)
def test_adaptive_max_pool_matches_torch(n, shape, size):
    x = R.standard_normal(shape)
    ours = getattr(flow.nn, f"AdaptiveMaxPool{n}d")(size)
    ref = getattr(torch.nn, f"AdaptiveMaxPool{n}d")(size)
    assert repr(ours) == repr(ref)
    same_as_torch(ours, ref, x)
    out, idx = getattr(F, f"adaptive_max_pool{n}d")(flow.tensor(x), size, return_indices=True)
    rout, ridx = getattr(TF, f"adaptive_max_pool{n}d")(torch.tensor(x), size, return_indices=True)
    np.testing.assert_array_equal(idx.detach().numpy(), ridx.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), rout.detach().numpy(), rtol=1e-12)
    out2, idx2 = getattr(F, f"adaptive_max_pool{n}d_with_indices")(flow.tensor(x), size)
    np.testing.assert_array_equal(idx2.detach().numpy(), ridx.detach().numpy())
    eager_equals_graph(ours, x)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 3, 4, 5), (2, 1, 1, 3)])
def test_affine_grid_matches_torch(align, size):
    k = len(size) - 2
    theta = R.standard_normal((2, k, k + 1))
    same_as_torch(
        lambda t: F.affine_grid(t, size, align_corners=align),
        lambda t: TF.affine_grid(t, size, align_corners=align),
        theta,
    )
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(flow.ones(2, 3, 3), (2, 3, 4, 5))


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_matches_torch(mode, pad, align):
    x = R.standard_normal((2, 3, 5, 6))
    g = R.uniform(-1.3, 1.3, (2, 4, 7, 2))  # some samples fall outside the input
    kw = dict(mode=mode, padding_mode=pad, align_corners=align)
    if mode == "bilinear":  # gradients to the input and the grid
        same_as_torch(
            lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw), x, g
        )
    else:  # nearest: no gradient to the grid
        same_as_torch(
            lambda a: F.grid_sample(a, flow.tensor(g), **kw),
            lambda a: TF.grid_sample(a, torch.tensor(g), **kw),
            x,
        )


def test_spatial_transformer_eager_equals_graph_and_errors():
    class STN(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.loc = flow.nn.Linear(2 * 5 * 6, 6)

        def forward(self, x):
            theta = self.loc(x.flatten(1)).reshape(-1, 2, 3)
            grid = F.affine_grid(theta, tuple(x.shape), align_corners=False)
            return F.grid_sample(x, grid, align_corners=False)

    eager_equals_graph(STN(), R.standard_normal((3, 2, 5, 6)))
    with pytest.raises(
        ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"
    ):
        F.grid_sample(flow.ones(1, 1, 2, 2), flow.zeros(1, 1, 1, 2), padding_mode="wrap")


LAZY = [
    ("LazyLinear", "Linear", (3,), {}, (4, 6)),
    ("LazyConv1d", "Conv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", "Conv2d", (4, 3), {"groups": 2}, (2, 6, 5, 5)),
    ("LazyConv3d", "Conv3d", (2, 2), {}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (4, 3), {}, (2, 3, 4, 4)),
    ("LazyConvTranspose3d", "ConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", "BatchNorm1d", (), {}, (4, 3, 5)),
    ("LazyBatchNorm2d", "BatchNorm2d", (), {"momentum": 0.3}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", "BatchNorm3d", (), {}, (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("lazy,target,args,kw,shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_modules_materialize_like_torch(lazy, target, args, kw, shape):
    ours = getattr(flow.nn, lazy)(*args, **kw)
    ref = getattr(torch.nn, lazy)(*args, **kw)
    assert all(isinstance(p, flow.nn.parameter.UninitializedParameter) for p in ours.parameters())
    assert ours.has_uninitialized_params()
    x = R.standard_normal(shape)
    ours(flow.tensor(x, dtype=flow.float32))
    ref(torch.tensor(x, dtype=torch.float32))
    assert type(ours) is getattr(flow.nn, target) and type(ref) is getattr(torch.nn, target)
    assert repr(ours) == repr(ref)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in ref.state_dict().items()
    }
    ours.double(), ref.double()
    copy_torch_weights(ref, ours)
    same_as_torch(ours, ref, x)
    eager_equals_graph(ours.float(), x)
    fresh = getattr(flow.nn, lazy)(*args, **kw)  # load_state_dict materializes from the shapes
    fresh.load_state_dict(ours.state_dict())
    assert type(fresh) is getattr(flow.nn, target) and repr(fresh) == repr(ref)


def _log_probs(T, N, C):
    return R.standard_normal((T, N, C))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_loss_matches_torch(reduction, blank):
    x = _log_probs(12, 3, 5)
    tg = np.array([[1, 2, 2, 4], [3, 1, 4, 4], [2, 2, 2, 2]])
    tg[tg == blank] = (blank + 1) % 5
    il, tl = [12, 10, 7], [3, 4, 2]
    # torch's gradient assumes log_softmax outputs: compare through log_softmax, as used
    same_as_torch(
        lambda t: flow.nn.CTCLoss(blank, reduction)(t.log_softmax(2), flow.tensor(tg), il, tl),
        lambda t: torch.nn.CTCLoss(blank, reduction)(t.log_softmax(2), torch.tensor(tg), il, tl),
        x,
        tol=1e-8,
    )
    flat = np.concatenate([tg[n, : tl[n]] for n in range(3)])  # 1-D concatenated targets
    same_as_torch(
        lambda t: F.ctc_loss(
            t.log_softmax(2), flow.tensor(flat), flow.tensor(il), flow.tensor(tl), blank, reduction
        ),
        lambda t: TF.ctc_loss(
            t.log_softmax(2),
            torch.tensor(flat),
            torch.tensor(il),
            torch.tensor(tl),
            blank,
            reduction,
        ),
        x,
        tol=1e-8,
    )


def test_ctc_loss_unbatched_empty_target_and_impossible_alignment():
    x = _log_probs(6, 1, 4)[:, 0]
    same_as_torch(
        lambda t: F.ctc_loss(t.log_softmax(1), flow.tensor([1, 2]), [6], [2], reduction="none"),
        lambda t: TF.ctc_loss(t.log_softmax(1), torch.tensor([1, 2]), [6], [2], reduction="none"),
        x,
        tol=1e-8,
    )
    x = _log_probs(4, 2, 4)
    tg = np.array([[1, 1, 1], [2, 3, 0]])
    for zi in (False, True):  # sample 0 needs 6 frames for 1 1 1 but has 4
        ours, ref = (
            lib_f.ctc_loss(
                lib.tensor(x).log_softmax(2),
                lib.tensor(tg),
                [4, 4],
                [3, 0],
                reduction="none",
                zero_infinity=zi,
            )
            for lib, lib_f in ((flow, F), (torch, TF))
        )
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    assert repr(flow.nn.CTCLoss(reduction="sum")) == repr(torch.nn.CTCLoss(reduction="sum"))
