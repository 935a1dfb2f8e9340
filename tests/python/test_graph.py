"""nn.Graph: eager == lazy for the op families, whole training steps, caching and recompiles."""
import os

import numpy as np
import pytest

import oneflow_like as flow
from op_testing import FnGraph, TrainGraph, train_losses

RNG = np.random.default_rng()


def arr(*shape, low=-1.0, high=1.0):
    return flow.tensor(RNG.uniform(low, high, size=shape).astype(np.float32))


def has(name):
    return hasattr(flow, name) or hasattr(flow.Tensor, name)


# (name, fn, input factories): forward outputs must match eager execution.
CASES = [
    ("add_broadcast", lambda a, b: a + b, [lambda: arr(3, 4), lambda: arr(4)]),
    ("mul_div", lambda a, b: a * b / (b * b + 1), [lambda: arr(2, 3), lambda: arr(2, 3)]),
    ("scalars", lambda a: (2.0 - a) * 3.0 + 1.0 / (a * a + 1), [lambda: arr(5)]),
    ("exp_neg_relu", lambda a: flow.relu(-a).exp(), [lambda: arr(4, 4)]),
    ("sum_mean", lambda a: (a.sum(1), a.mean(0, keepdim=True), a.sum()), [lambda: arr(3, 5)]),
    ("views", lambda a: a.permute(1, 0).reshape(2, 6) * 2, [lambda: arr(3, 4)]),
    ("cast", lambda a: a.double().sum(0), [lambda: arr(3, 4)]),
    ("matmul", lambda a, b: flow.matmul(a, b), [lambda: arr(4, 8), lambda: arr(8, 3)]),
    ("batched_matmul", lambda a, b: a @ b, [lambda: arr(2, 4, 8), lambda: arr(8, 3)]),
]
OPTIONAL = [
    ("softmax", "softmax", lambda a: flow.softmax(a, 1), [lambda: arr(4, 7)]),
    ("log_softmax", "log_softmax", lambda a: flow.log_softmax(a, -1), [lambda: arr(4, 7)]),
    ("tanh_sigmoid", "sigmoid", lambda a: flow.tanh(a) + flow.sigmoid(a), [lambda: arr(6)]),
    (
        "maximum_where",
        "where",
        lambda a, b: flow.where(a > b, a, b),
        [lambda: arr(3, 3), lambda: arr(3, 3)],
    ),
    ("cat", "cat", lambda a, b: flow.cat([a, b], 0), [lambda: arr(2, 3), lambda: arr(1, 3)]),
    ("amax", "amax", lambda a: a.amax(1), [lambda: arr(3, 6)]),
]


def pos(*shape):
    return arr(*shape, low=0.1, high=2.0)


F = flow.nn.functional

# Lowered to HLO (oneflow_like/lazy/lowering/*.cc): forward eager == lazy, and no kernel calls.
LOWERED = [
    # unary family
    ("log", lambda a: flow.log(a), [lambda: pos(4, 5)]),
    (
        "log1p_sqrt_rsqrt",
        lambda a: (flow.log1p(a), flow.sqrt(a), flow.rsqrt(a)),
        [lambda: pos(4, 5)],
    ),
    (
        "sin_cos_tanh",
        lambda a: (flow.sin(a), flow.cos(a), flow.tanh(a)),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    (
        "sigmoid_abs_erf",
        lambda a: (flow.sigmoid(a), flow.abs(a), flow.erf(a)),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    (
        "gelu",
        lambda a: (F.gelu(a), F.gelu(a, approximate="tanh")),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    (
        "silu_softplus",
        lambda a: (F.silu(a), F.softplus(a), F.softplus(a, beta=2.0, threshold=1.0)),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    ("leaky_relu", lambda a: F.leaky_relu(a, 0.2), [lambda: arr(4, 5)]),
    ("pow_scalar", lambda a: (a**2, a**3, a**0.5, a**2.5, a**-1), [lambda: pos(3, 4)]),
    (
        "clamp",
        lambda a: (flow.clamp(a, -0.5, 0.5), flow.clamp(a, min=0.0), flow.clamp(a, max=0.1)),
        [lambda: arr(4, 5)],
    ),
    ("square_reciprocal", lambda a: (flow.square(a), flow.reciprocal(a)), [lambda: pos(4, 5)]),
    (
        "rounding_sign",
        lambda a: (flow.floor(a), flow.ceil(a), flow.round(a), flow.sign(a)),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    # binary family
    ("sub", lambda a, b: (a - b, b - a), [lambda: arr(3, 4), lambda: arr(4)]),
    (
        "maximum_minimum",
        lambda a, b: (flow.maximum(a, b), flow.minimum(a, b)),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    ("pow", lambda a, b: flow.pow(a, b), [lambda: pos(3, 4), lambda: arr(3, 4)]),
    (
        "compare",
        lambda a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b),
        [lambda: arr(3, 4), lambda: arr(4)],
    ),
    ("compare_scalar", lambda a: (a > 0.1, a <= 0.2, a == 0.0), [lambda: arr(3, 4)]),
    (
        "logical",
        lambda a, b: (
            flow.logical_and(a > 0, b > 0),
            flow.logical_or(a > 0, b > 0),
            flow.logical_xor(a > 0, b > 0),
        ),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    (
        "where",
        lambda a, b: (flow.where(a > b, a, b), flow.where(a > 0, a, 0.0)),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    # reductions
    ("amax_amin", lambda a: (a.amax(1), a.amin(0, keepdim=True), a.amax()), [lambda: arr(3, 6)]),
    (
        "logsumexp",
        lambda a: (flow.logsumexp(a, 1), flow.logsumexp(a, 0, keepdim=True)),
        [lambda: arr(3, 6)],
    ),
    # sums over leading dims of large tensors run as ones @ X on the GEMM
    (
        "column_sum",
        lambda a: (a.sum(0), a.reshape(4, 32, 80).sum((0, 1)), a.sum(0, keepdim=True)),
        [lambda: arr(128, 80)],
    ),
    # matmul
    ("matmul_2d", lambda a, b: flow.matmul(a, b), [lambda: arr(5, 8), lambda: arr(8, 3)]),
    (
        "matmul_transposed",
        lambda a, b: (flow.matmul(a.t(), b), flow.matmul(b.t(), a.t().t())),
        [lambda: arr(8, 5), lambda: arr(8, 3)],
    ),
    ("matmul_batched", lambda a, b: a @ b, [lambda: arr(2, 3, 4, 8), lambda: arr(3, 8, 5)]),
    ("matmul_batched_rhs2d", lambda a, b: a @ b, [lambda: arr(2, 4, 8), lambda: arr(8, 3)]),
    ("matmul_vector", lambda a, b: (a @ b, b @ a.t()), [lambda: arr(4, 8), lambda: arr(8)]),
    (
        "linear",
        lambda x, w, b: F.linear(x, w, b),
        [lambda: arr(6, 8), lambda: arr(5, 8), lambda: arr(5)],
    ),
    # ternary arithmetic (optimizer updates), index/shape ops, division family, creation ops
    (
        "addcmul_addcdiv_lerp",
        lambda t, a, b: (
            flow.addcmul(t, a, b, value=0.5),
            flow.addcdiv(t, a, b + 2.0, value=-1.5),
            flow.lerp(t, a, b.abs()),
            flow.lerp(t, a, 0.75),
        ),
        [lambda: arr(3, 4), lambda: arr(3, 4), lambda: arr(4)],
    ),
    (
        "masked_fill_tril_triu",
        lambda a, b: (a.masked_fill(b > 0, -1.0), flow.tril(a, -1), flow.triu(a, 1)),
        [lambda: arr(2, 4, 5), lambda: arr(4, 5)],
    ),
    (
        "remainder_fmod_floor_divide",
        lambda a, b: (flow.remainder(a, b), flow.fmod(a, b), flow.floor_divide(a, b), a % 0.3),
        [
            lambda: arr(3, 4, low=-5, high=5),
            lambda: arr(3, 4, low=0.5, high=2) * flow.tensor([1.0, -1.0, 1.0, -1.0]),
        ],
    ),
    (
        "logical_bitwise",
        lambda a, b: (
            flow.logical_not(a > 0),
            flow.bitwise_and(a > 0, b > 0),
            flow.bitwise_xor((a * 9).long(), (b * 9).long()),
            flow.bitwise_not((a * 9).int()),
        ),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    (
        "cat_flip",
        lambda a, b, c: (flow.cat([a, b, c], 1), flow.flip(b, [0, 1])),
        [lambda: arr(2, 3, 4), lambda: arr(2, 1, 4), lambda: arr(2, 5, 4)],
    ),
    (
        "arange_linspace_eye",
        lambda a: (a * flow.arange(4), a + flow.linspace(-1.0, 1.0, 4), flow.eye(4) @ a),
        [lambda: arr(4, 4)],
    ),
    # convolution (HLO convolution + a bias add; oneDNN runs it)
    (
        "conv2d",
        lambda x, w, b: (F.conv2d(x, w, b, 2, 1).relu(), F.conv2d(x, w, None, 1, 0, 2)),
        [lambda: arr(2, 4, 9, 9), lambda: arr(6, 4, 3, 3), lambda: arr(6)],
    ),
    (
        "conv2d_groups",
        lambda x, w: F.conv2d(x, w, None, (2, 1), (1, 0), 1, 2),
        [lambda: arr(2, 4, 8, 7), lambda: arr(6, 2, 3, 3)],
    ),
]


def _grad_graph(fn, n):
    """A graph returning d(sum(fn(inputs) * weights))/d inputs, and the same computed eagerly."""

    def loss_of(*xs):
        outs = fn(*xs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        total = None
        for k, o in enumerate(outs):
            term = (o * (1.0 + k)).sum()
            total = term if total is None else total + term
        return total

    def grads(*xs):
        xs = [x.detach().requires_grad_() for x in xs]
        loss = loss_of(*xs)
        loss.backward()
        return tuple(x.grad for x in xs[:n])

    return grads


# conv2d's gradients lower to HLO convolutions run as oneDNN backward_data / backward_weights
# (stride 1 dx runs as a forward convolution of dy with the reversed weights).
CONV_GRAD_CASES = [
    (
        "conv2d_grad",
        lambda x, w, b: F.conv2d(x, w, b, 2, 1).tanh(),
        [lambda: arr(2, 3, 9, 9), lambda: arr(4, 3, 3, 3), lambda: arr(4)],
    ),
    (
        "conv2d_grad_floor",
        lambda x, w: F.conv2d(x, w, None, 2, 0),
        [lambda: arr(2, 3, 8, 8), lambda: arr(4, 3, 3, 3)],
    ),
    (
        "conv2d_grad_dilation_groups",
        lambda x, w: F.conv2d(x, w, None, (2, 1), (2, 1), 2, 2),
        [lambda: arr(2, 4, 9, 8), lambda: arr(6, 2, 3, 3)],
    ),
    (
        "conv2d_grad_same",
        lambda x, w: F.conv2d(x, w, None, 1, 1),
        [lambda: arr(2, 3, 6, 6), lambda: arr(5, 3, 3, 3)],
    ),
]

# Differentiable lowerings: a graph computing loss.backward() returns the input grads.
GRAD_CASES = [
    ("tanh_sigmoid_grad", lambda a: (flow.tanh(a), flow.sigmoid(a)), [lambda: arr(4, 5)]),
    (
        "gelu_silu_grad",
        lambda a: (F.gelu(a), F.gelu(a, approximate="tanh"), F.silu(a)),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    (
        "softplus_leaky_grad",
        lambda a: (F.softplus(a), F.leaky_relu(a, 0.1)),
        [lambda: arr(4, 5, low=-3, high=3)],
    ),
    (
        "sqrt_rsqrt_log_grad",
        lambda a: (flow.sqrt(a), flow.rsqrt(a), flow.log(a), flow.reciprocal(a)),
        [lambda: pos(4, 5)],
    ),
    (
        "erf_exp_sin_grad",
        lambda a: (flow.erf(a), flow.exp(a), flow.sin(a), flow.cos(a)),
        [lambda: arr(4, 5)],
    ),
    ("pow_clamp_grad", lambda a: (a**3, a**2.5, flow.clamp(a, 0.5, 1.5)), [lambda: pos(4, 5)]),
    (
        "sub_max_min_grad",
        lambda a, b: (a - b, flow.maximum(a, b), flow.minimum(a, b)),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    (
        "where_grad",
        lambda a, b: flow.where(a > b, a * 2, b),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    (
        "addcmul_lerp_grad",
        lambda a, b: (
            flow.addcmul(a, b, a, value=0.5),
            flow.addcdiv(a, b, a.abs() + 1.0),
            flow.lerp(a, b, 0.3),
        ),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    (
        "masked_fill_tril_cat_flip_grad",
        lambda a, b: (
            a.masked_fill(b > 0, 0.5),
            flow.tril(a),
            flow.cat([a, b, a], 1),
            flow.flip(a, [1]),
        ),
        [lambda: arr(3, 4), lambda: arr(3, 4)],
    ),
    (
        "remainder_fmod_grad",
        lambda a, b: (flow.remainder(a, b), flow.fmod(a, b)),
        [lambda: arr(3, 4, low=-5, high=5), lambda: arr(3, 4, low=0.5, high=2)],
    ),
    ("amax_logsumexp_grad", lambda a: (a.amax(1), flow.logsumexp(a, 1)), [lambda: arr(3, 6)]),
    (
        "softmax_grad",
        lambda a: (flow.softmax(a, 1) * flow.arange(7).float(), flow.log_softmax(a, -1)),
        [lambda: arr(4, 7)],
    ),
    ("matmul_grad", lambda a, b: flow.matmul(a, b), [lambda: arr(5, 8), lambda: arr(8, 3)]),
    ("batched_matmul_grad", lambda a, b: a @ b, [lambda: arr(2, 4, 8), lambda: arr(2, 8, 3)]),
    (
        "linear_grad",
        lambda x, w, b: F.linear(x, w, b).tanh(),
        [lambda: arr(6, 8), lambda: arr(5, 8), lambda: arr(5)],
    ),
] + CONV_GRAD_CASES

# Backward of slicing views: autograd's as_strided_scatter into a box of zeros lowers to a pad.
VIEW_GRAD_CASES = [
    (
        "chunk_qkv",
        lambda a: tuple(c * (k + 1.0) for k, c in enumerate(a.chunk(3, -1))),
        [lambda: arr(2, 5, 12)],
    ),
    ("stepped_slices", lambda a: (a[:, 1:7:2] * 3.0, a[1:, ::3].exp(), a[2]), [lambda: arr(4, 9)]),
    ("select_narrow", lambda a: (a.select(1, 2), a.narrow(2, 1, 2).tanh()), [lambda: arr(3, 4, 5)]),
]


@pytest.mark.parametrize("name,fn,makers", VIEW_GRAD_CASES, ids=[c[0] for c in VIEW_GRAD_CASES])
def test_view_grads_lower_to_pads(name, fn, makers):
    g = run_both(_grad_graph(fn, len(makers)), makers)
    assert "ofl.kernel.as_strided_scatter" not in g.compiled.hlo_before, g.stats()[
        "kernel_call_ops"
    ]


@pytest.mark.parametrize("name,fn,makers", LOWERED, ids=[c[0] for c in LOWERED])
def test_lowered_eager_equals_lazy(name, fn, makers):
    g = run_both(fn, makers)
    assert g.stats()["kernel_call_ops"] == [], g.stats()["kernel_call_ops"]
    assert "ofl.kernel." not in g.compiled.hlo_before


@pytest.mark.parametrize("name,fn,makers", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_lowered_grads_eager_equals_lazy(name, fn, makers):
    run_both(_grad_graph(fn, len(makers)), makers)


@pytest.mark.parametrize("name,fn,makers", CONV_GRAD_CASES, ids=[c[0] for c in CONV_GRAD_CASES])
def test_conv_grads_are_hlo_convolutions_run_by_onednn(name, fn, makers):
    g = run_both(_grad_graph(fn, len(makers)), makers)
    assert not {"conv2d", "conv2d_grad_input", "conv2d_grad_weight"} & set(
        g.stats()["kernel_call_ops"]
    )
    thunks = g.compiled.thunks
    convs = [line for line in thunks.splitlines() if line.startswith("convolution")]
    assert convs and all(" onednn " in c for c in convs), thunks  # none left on the direct loop
    assert thunks.count("onednn backward_weights") == (
        2 if "groups" in name else 1
    ), thunks  # one per group
    # dx of a strided conv is a backward_data; of a stride-1 conv a forward conv of dy (reversed w)
    assert thunks.count("onednn backward_data") == (0 if name == "conv2d_grad_same" else 1), thunks


def test_matmul_transpose_folds_into_gemm():
    g = run_both(lambda a, b: flow.matmul(a.t(), b), [lambda: arr(64, 32), lambda: arr(64, 16)])
    assert "transpose" not in g.compiled.hlo_after
    # A linear layer's backward: W^T^T and (x^T dy)^T fold into the GEMMs' operand layouts.
    g = run_both(
        _grad_graph(lambda x, w: F.linear(x, w), 2), [lambda: arr(32, 48), lambda: arr(24, 48)]
    )
    assert "transpose" not in g.compiled.hlo_after, g.compiled.hlo_after


def test_large_fused_loop_runs_in_parallel_ranges():
    # Above the parallel threshold the fused loop is split into [begin, end) ranges.
    g = run_both(
        lambda a, b: ((a * b + 1).tanh() * 2 - a).sum(1),
        [lambda: arr(512, 1024), lambda: arr(512, 1024)],
    )
    assert "work=" in g.compiled.thunks or "n=" in g.compiled.thunks


def test_column_sum_uses_gemm():
    g = run_both(lambda a: (a.relu() * 2).sum(0), [lambda: arr(256, 128)])
    assert "gemm" in g.compiled.thunks


def test_softmax_family_lowers_with_the_kernels_edge_cases():
    # Lowered to reductions + fused loops; rows with +inf or only -inf are NaN as in the kernels
    # (and PyTorch), logsumexp keeps its finite shift (-inf rows stay -inf).
    v = np.array(
        [[1.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0, 1], [1000, 1000, -1000]],
        dtype=np.float32,
    )
    g = run_both(
        lambda x: (
            flow.softmax(x, -1),
            flow.log_softmax(x, 0),
            flow.logsumexp(x, 1),
            flow.softmax(x * 0.5, 0),
        ),
        [lambda: flow.tensor(v)],
    )
    assert g.stats()["kernel_call_ops"] == [], g.stats()["kernel_call_ops"]
    run_both(
        lambda x: (flow.softmax(x, 1), flow.log_softmax(x, -1)),
        [lambda: arr(3, 37, 5, low=-30, high=30)],
    )


@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
def test_layer_norm_lowers_forward_and_backward(affine):
    w_on, b_on = affine
    shape = (3, 5, 33)
    w = arr(33, low=0.5, high=1.5) if w_on else None
    b = arr(33) if b_on else None

    def fn(x, *params):
        it = iter(params)
        wt = next(it) if w_on else None
        bt = next(it) if b_on else None
        return F.layer_norm(x * 3.0 + 1.0, (33,), wt, bt, eps=1e-5)

    makers = [lambda: arr(*shape)] + ([lambda: w] if w_on else []) + ([lambda: b] if b_on else [])
    g = run_both(fn, makers)
    assert "layer_norm" not in g.stats()["kernel_call_ops"], g.stats()["kernel_call_ops"]
    g = run_both(_grad_graph(fn, len(makers)), makers)
    assert "layer_norm_grad" not in g.stats()["kernel_call_ops"], g.stats()["kernel_call_ops"]


def test_optimizer_updates_run_in_place():
    # Every SGD-momentum update (parameters and momentum buffers) writes over the old values:
    # the compiler accepts the donation because nothing reads an old value after its update.
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.Linear(16, 32), flow.nn.ReLU(), flow.nn.Linear(32, 4))
    opt = flow.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

    class Step(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = F.cross_entropy(self.m(x), y)
            loss.backward()
            return loss

    g = Step()
    x, y = arr(8, 16), flow.tensor(RNG.integers(0, 4, size=(8,)))
    g(x, y)
    done, total = g.stats()["in_place_assignments"]
    assert total >= 8 and done == total, g.stats()


def test_in_place_update_with_old_and_new_reads_matches_eager():
    # The graph reads w's old value, overwrites w, then reads the new value: whether or not the
    # compiler runs the update in place (refusal is tested on IR in compile_e2e_test.cc), every
    # output and w must match eager execution over several runs.
    w_e, w_g = flow.ones(64, 8), flow.ones(64, 8)

    class G(flow.nn.Graph):
        def build(self, x):
            old = (w_g * x).sum(0)  # reads old w
            w_g.mul_(0.5).add_(x)  # update
            later = (w_g.t() @ x).sum()  # reads new w
            return old * 2.0, later, (w_g * 3.0).sum(1)

    def eager(x):
        old = (w_e * x).sum(0)
        w_e.mul_(0.5).add_(x)
        later = (w_e.t() @ x).sum()
        return old * 2.0, later, (w_e * 3.0).sum(1)

    g = G()
    for _ in range(3):
        x = arr(64, 8)
        for e, l in zip(eager(x), g(x)):
            np.testing.assert_allclose(l.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(w_g.detach().numpy(), w_e.detach().numpy(), rtol=1e-6)


def test_sum_over_leading_and_trailing_dims_reduces_rows_first():
    # A conv bias gradient: [N, C, H, W] -> [C] as row sums over H*W, then a sum over N.
    g = run_both(lambda a: (a * 2).sum((0, 2, 3)), [lambda: arr(6, 5, 7, 9)])
    assert g.compiled.hlo_before.count(" reduce(") == 2, g.compiled.hlo_before
    run_both(
        lambda a: (a.sum((0, 3)), a.sum((1, 2, 3)), a.sum((0, 1, 3))), [lambda: arr(3, 4, 5, 6)]
    )


def test_buffer_assignment_figures():
    g = run_both(lambda a: ((a * 2).exp() + 1).sum(), [lambda: arr(64, 64)])
    c = g.compiled
    assert c.total_buffer_bytes >= c.arena_bytes >= c.lower_bound_bytes >= 0


def run_both(fn, makers):
    inputs = [m() for m in makers]
    eager = fn(*inputs)
    g = FnGraph(fn)
    lazy = g(*inputs)
    lazy2 = g(*inputs)  # cached replay
    assert g.recompile_reasons == ["first call"]
    eager = eager if isinstance(eager, tuple) else (eager,)
    lazy = lazy if isinstance(lazy, tuple) else (lazy,)
    lazy2 = lazy2 if isinstance(lazy2, tuple) else (lazy2,)
    for e, l, l2 in zip(eager, lazy, lazy2):
        assert tuple(e.shape) == tuple(l.shape) and e.dtype == l.dtype
        np.testing.assert_allclose(l.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(l2.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-5)
    return g


@pytest.mark.parametrize("name,fn,makers", CASES, ids=[c[0] for c in CASES])
def test_eager_equals_lazy(name, fn, makers):
    run_both(fn, makers)


@pytest.mark.parametrize("name,needs,fn,makers", OPTIONAL, ids=[c[0] for c in OPTIONAL])
def test_eager_equals_lazy_optional(name, needs, fn, makers):
    assert has(needs), f"op {needs} is missing"
    run_both(fn, makers)


def test_elementwise_chain_is_fused():
    g = run_both(
        lambda a, b: ((a * b + 1).relu() * 2).sum(), [lambda: arr(64, 64), lambda: arr(64, 64)]
    )
    after = g.compiled.hlo_after
    assert "fusion" in after
    assert g.stats()["kernel_call_ops"] == []


def _train(use_graph, steps=5, make_opt=None):
    rs = np.random.RandomState(1)
    w1 = flow.tensor(rs.randn(8, 16).astype(np.float32) * 0.3, requires_grad=True)
    b1 = flow.tensor(np.zeros(16, np.float32), requires_grad=True)
    w2 = flow.tensor(rs.randn(16, 1).astype(np.float32) * 0.3, requires_grad=True)
    opt = (make_opt or (lambda ps: flow.optim.SGD(ps, lr=0.05, momentum=0.9)))([w1, b1, w2])
    x = flow.tensor(rs.randn(32, 8).astype(np.float32))
    y = flow.tensor(rs.randn(32, 1).astype(np.float32))

    def loss_fn(x, y):
        h = (flow.matmul(x, w1) + b1).relu()
        d = flow.matmul(h, w2) - y
        return (d * d).mean()

    losses, _ = train_losses(loss_fn, opt, x, y, steps, use_graph)
    return losses, [p.detach().numpy() for p in (w1, b1, w2)]


def test_training_step_matches_eager():
    le, pe = _train(False)
    lg, pg = _train(True)
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)
    for a, b in zip(pg, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert le[-1] < le[0]


@pytest.mark.parametrize("name", ["adam", "adamw"])
def test_adam_training_step_matches_eager(name):
    cls = flow.optim.Adam if name == "adam" else flow.optim.AdamW
    make = lambda ps: cls(ps, lr=0.01, weight_decay=0.01)  # noqa: E731
    le, pe = _train(False, steps=6, make_opt=make)
    lg, pg = _train(True, steps=6, make_opt=make)
    np.testing.assert_allclose(lg, le, rtol=1e-4, atol=1e-6)
    for a, b in zip(pg, pe):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert le[-1] < le[0]


@pytest.mark.parametrize("name", ["sgd", "adamw"])
def test_changing_lr_does_not_recompile(name):
    def run(use_graph):
        rs = np.random.RandomState(2)
        w = flow.tensor(rs.randn(8, 4).astype(np.float32), requires_grad=True)
        opt = (
            flow.optim.SGD([w], lr=0.1, momentum=0.9)
            if name == "sgd"
            else flow.optim.AdamW([w], lr=0.01, weight_decay=0.1)
        )
        x = flow.tensor(rs.randn(16, 8).astype(np.float32))
        loss_fn = lambda x: (flow.matmul(x, w).tanh() ** 2).mean()  # noqa: E731

        class Train(flow.nn.Graph):
            def __init__(self):
                super().__init__()
                self.add_optimizer(opt)

            def build(self, x):
                loss = loss_fn(x)
                loss.backward()
                return loss

        g = Train()
        losses = []
        for step in range(5):
            opt.param_groups[0]["lr"] *= 0.7  # what an LR scheduler does between steps
            if use_graph:
                losses.append(g(x).item())
            else:
                opt.zero_grad()
                loss = loss_fn(x)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses, w.detach().numpy(), g.recompile_reasons

    le, we, _ = run(False)
    lg, wg, reasons = run(True)
    assert reasons == ["first call"]
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wg, we, rtol=1e-5, atol=1e-6)


def test_recompile_reasons_and_bad_inputs():
    g = FnGraph(lambda a: a * 2)
    g(arr(2, 3))
    g(arr(2, 3))
    g(arr(4, 3))
    assert g.recompile_reasons[0] == "first call"
    assert "argument 0 changed" in g.recompile_reasons[1] and "(4, 3)" in g.recompile_reasons[1]
    assert len(g.recompile_reasons) == 2


def test_eager_work_orders_against_graph_runs():
    # The graph reads a captured tensor that eager code keeps updating in place.
    w = flow.tensor(np.ones(4, np.float32))
    g = FnGraph(lambda x: x * w)
    x = flow.tensor(np.full(4, 2.0, np.float32))
    assert g(x).detach().numpy().tolist() == [2.0] * 4
    w.add_(1)
    assert g(x).detach().numpy().tolist() == [4.0] * 4


def test_lazy_tensor_cannot_be_read_during_trace():
    def bad(a):
        (a * 2).detach().numpy()
        return a

    with pytest.raises(ValueError, match="lazy"):
        FnGraph(bad)(arr(3))


def test_dump_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEFLOW_LIKE_DUMP_TO", str(tmp_path))
    FnGraph(lambda a: (a * 3).sum())(arr(5))
    names = os.listdir(tmp_path)
    assert any(n.endswith(".trace.txt") for n in names)


def test_dropout_in_graph_draws_fresh_masks_each_run():
    x = flow.ones(4096)
    x.requires_grad = True

    class Drop(flow.nn.Graph):
        def build(self, a):
            a = a.requires_grad_()
            y = flow.nn.functional.dropout(a, p=0.5, training=True)
            (g,) = flow.autograd.grad(y.sum(), [a])
            return y, g

    d = Drop()
    d(x.detach())  # compile first: tracing draws seeds too
    flow.manual_seed(3)
    y1, g1 = d(x.detach())
    y2, g2 = d(x.detach())
    m1, m2 = y1.detach().numpy() != 0, y2.detach().numpy() != 0
    assert 0.4 < m1.mean() < 0.6 and 0.4 < m2.mean() < 0.6
    assert (m1 != m2).any(), "the same dropout mask on every run"
    np.testing.assert_array_equal(g1.detach().numpy() != 0, m1)  # backward used the forward's mask
    flow.manual_seed(3)
    y3, _ = d(x.detach())
    np.testing.assert_array_equal(
        y3.detach().numpy(), y1.detach().numpy()
    )  # reproducible under manual_seed
    # Lowered to fused HLO (a counter hash of the element index and the run's seed parameter).
    assert "dropout" not in d.stats()["kernel_call_ops"], d.stats()["kernel_call_ops"]
    assert "rng_seed" in d.compiled.hlo_before


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9, 1.0])
def test_dropout_in_graph_keeps_one_minus_p_scaled(p):
    x = arr(64, 257, low=0.5, high=1.5)

    class Drop(flow.nn.Graph):
        def build(self, a):
            return flow.nn.functional.dropout(a, p=p, training=True) + 0.0

    d = Drop()
    kept = []
    for _ in range(4):
        y = d(x).detach().numpy()
        keep = y != 0
        # Kept elements are x / (1 - p) computed in float32 as the kernel does; the rest are 0.
        if p < 1.0:
            scale = np.float32(1.0 / (1.0 - p))
            np.testing.assert_array_equal(y[keep], x.detach().numpy()[keep] * scale)
        kept.append(keep.mean())
    n = x.numel()
    tol = 5 * np.sqrt(p * (1 - p) / n) + 1e-9
    assert abs(np.mean(kept) - (1 - p)) < tol, (np.mean(kept), 1 - p)
    # Neighbouring elements are independent (no stripes from the counter hash).
    if 0 < p < 1:
        m = (d(x).detach().numpy() != 0).ravel().astype(np.float64)
        corr = np.corrcoef(m[:-1], m[1:])[0, 1]
        assert abs(corr) < 0.05, corr


def _cnn_train(use_graph, steps=4):
    """The digits-style CNN (conv-bn-relu, conv-relu-pool, linear) trained a few SGD steps."""
    nn = flow.nn
    flow.manual_seed(3)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 16, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 2 * 2, 10),
    )
    opt = flow.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rs = np.random.RandomState(5)
    x = flow.tensor(rs.randn(16, 1, 8, 8).astype(np.float32))
    y = flow.tensor(rs.randint(0, 10, size=(16,)).astype(np.int64))
    return train_losses(lambda x, y: F.cross_entropy(model(x), y), opt, x, y, steps, use_graph)


def test_cnn_training_step_runs_convolutions_on_onednn():
    le, _ = _cnn_train(False)
    lg, g = _cnn_train(True)
    np.testing.assert_allclose(lg, le, rtol=1e-4, atol=1e-5)
    assert le[-1] < le[0]
    assert not {"conv2d", "conv2d_grad_input", "conv2d_grad_weight"} & set(
        g.stats()["kernel_call_ops"]
    ), g.stats()["kernel_call_ops"]
    thunks = g.compiled.thunks
    assert (
        thunks.count("onednn forward") >= 2 and thunks.count("onednn backward_weights") == 2
    ), thunks
    assert thunks.count("onednn backward_data") == 1, thunks  # the stride-2 conv's dx
