"""NN ops (conv, pool, norm, softmax, loss, embedding, dropout, attention): forward and backward
against float64 NumPy references, train/eval behaviour, seeded dropout, and errors."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import DEVICE, check_op, rand, RNG

# ---- NumPy references ---------------------------------------------------------------------------


def np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def np_log_softmax(x, dim):
    m = x.max(axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


def np_conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    oh = (h + 2 * padding[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    out = np.zeros((n, k, oh, ow))
    kg = k // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(r):
            for j in range(s):
                hi, wj = i * dilation[0], j * dilation[1]
                patch = xs[
                    :,
                    :,
                    hi : hi + stride[0] * (oh - 1) + 1 : stride[0],
                    wj : wj + stride[1] * (ow - 1) + 1 : stride[1],
                ]
                out[:, g * kg : (g + 1) * kg] += np.einsum(
                    "nchw,kc->nkhw", patch, w[g * kg : (g + 1) * kg, :, i, j]
                )
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def np_pool_out(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def np_max_pool2d(x, k, s, p, d=(1, 1), ceil=False):
    n, c, h, w = x.shape
    oh, ow = np_pool_out(h, k[0], s[0], p[0], d[0], ceil), np_pool_out(
        w, k[1], s[1], p[1], d[1], ceil
    )
    out = np.full((n, c, oh, ow), -np.inf)
    for a in range(oh):
        for b in range(ow):
            for i in range(k[0]):
                for j in range(k[1]):
                    hh, ww = a * s[0] - p[0] + i * d[0], b * s[1] - p[1] + j * d[1]
                    if 0 <= hh < h and 0 <= ww < w:
                        out[:, :, a, b] = np.maximum(out[:, :, a, b], x[:, :, hh, ww])
    return out


def np_avg_pool2d(x, k, s, p, ceil=False, include_pad=True):
    n, c, h, w = x.shape
    oh, ow = np_pool_out(h, k[0], s[0], p[0], 1, ceil), np_pool_out(w, k[1], s[1], p[1], 1, ceil)
    out = np.zeros((n, c, oh, ow))
    for a in range(oh):
        for b in range(ow):
            h0, w0 = a * s[0] - p[0], b * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            div = size if include_pad else (h1 - h0) * (w1 - w0)
            out[:, :, a, b] = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3)) / div
    return out


def np_adaptive_avg_pool2d(x, os):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + tuple(os))
    for a in range(os[0]):
        for b in range(os[1]):
            h0, h1 = a * h // os[0], -(-(a + 1) * h // os[0])
            w0, w1 = b * w // os[1], -(-(b + 1) * w // os[1])
            out[:, :, a, b] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


def np_norm(x, axes, eps):
    m = x.mean(axis=axes, keepdims=True)
    v = x.var(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


def np_nll(logp, t, w=None, ignore=-100, reduction="mean", ls=0.0):
    c = logp.shape[1]
    lp = np.moveaxis(logp, 1, -1).reshape(-1, c)
    tt = t.reshape(-1)
    w = np.ones(c) if w is None else w
    valid = tt != ignore
    safe = np.where(valid, tt, 0)
    nll = -lp[np.arange(len(tt)), safe] * w[safe] * valid
    smooth = -(lp * w).sum(1) * valid
    loss = (1 - ls) * nll + ls / c * smooth
    if reduction == "none":
        return loss.reshape(t.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (w[safe] * valid).sum()


# ---- softmax ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,dim", [((4, 7), 1), ((4, 7), 0), ((2, 3, 5), 1), ((3, 40), -1), ((6,), 0)]
)
def test_softmax_log_softmax(shape, dim):
    x = rand(shape, -3, 3)
    check_op(lambda t: flow.softmax(t, dim), lambda a: np_softmax(a, dim), [x])
    check_op(lambda t: flow.log_softmax(t, dim), lambda a: np_log_softmax(a, dim), [x])
    check_op(lambda t: t.softmax(dim), lambda a: np_softmax(a, dim), [x], backward=False)
    check_op(lambda t: t.log_softmax(dim), lambda a: np_log_softmax(a, dim), [x], backward=False)


def test_softmax_large_rows_and_stability():
    x = rand((3, 1000), -50, 50)
    x[0, :] += 1000.0  # no overflow: max-subtracted
    out = flow.softmax(flow.tensor(x, dtype=flow.float32), 1).detach().numpy()
    np.testing.assert_allclose(out, np_softmax(x, 1), atol=1e-6, rtol=1e-4)
    out = flow.log_softmax(flow.tensor(x, dtype=flow.float32), 1).detach().numpy()
    np.testing.assert_allclose(out, np_log_softmax(x, 1), atol=1e-3, rtol=1e-5)


# ---- the softmax table (oneflow_like/opdefs/softmax.def) ----------------------------------------
# Its APIs are tested above (test_softmax_log_softmax: functions and Tensor methods).
SOFTMAX_APIS = {"softmax": "dim", "log_softmax": "dim"}


def test_every_softmax_api_is_tested_and_declared_once():
    table = flow._C._softmax_table()
    apis = {a["name"]: a["sig"] for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == SOFTMAX_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    for name in SOFTMAX_APIS:  # the backward op takes the forward op's attributes
        assert ops[name]["attrs"] == {"dim": -1} and ops[name]["save"] == "outputs"
        grad = ops[name + "_grad"]
        assert grad["attrs"] == ops[name]["attrs"]
        assert grad["grad"] == "NoGrad" and grad["save"] == "none"
    d = ops["softmax"]["attrs"]["dim"]
    for name in SOFTMAX_APIS:  # in _C, _C.nn_functional and as a Tensor method
        fn = getattr(flow._C, name)
        assert fn.__doc__ == getattr(flow._C.nn_functional, name).__doc__
        assert fn.__doc__.startswith(f"{name}(input: ") and f"dim: int = {d})" in fn.__doc__
        method = getattr(flow.Tensor, name)
        assert method.__doc__.startswith(f"{name}(self: ") and f"dim: int = {d})" in method.__doc__
        # A bad argument's error names the op.
        with pytest.raises(IndexError, match=rf"\[{name}\] dim 2 out of range"):
            fn(flow.zeros(2, 3), 2)
        with pytest.raises(TypeError, match=rf"\[{name}\] expected a floating point tensor"):
            method(flow.zeros(2, 3, dtype=flow.int64))
    # The default dim runs.
    x = np.array([[0.5, -1.0, 2.0, 0.0, 3.0], [1.0, 1.0, -2.0, 0.25, -0.5]])
    xt = flow.tensor(x, dtype=flow.float64)
    np.testing.assert_allclose(flow.softmax(xt).detach().numpy(), np_softmax(x, d), rtol=1e-10)
    np.testing.assert_allclose(xt.log_softmax().detach().numpy(), np_log_softmax(x, d), rtol=1e-10)


# ---- losses -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy(reduction, weighted, ls):
    x = rand((5, 4), -2, 2)
    t = np.array([0, 3, -100, 1, 2])  # one ignored target
    w = rand((4,), 0.5, 1.5) if weighted else None
    tt = flow.tensor(t)
    wt = None if w is None else flow.tensor(w, dtype=flow.float64)

    def fn(a):
        ww = None if wt is None else wt.to(a.dtype).to(a.device)
        return flow.cross_entropy(
            a,
            tt.to(a.device),
            weight=ww,
            ignore_index=-100,
            reduction=reduction,
            label_smoothing=ls,
        )

    check_op(fn, lambda a: np_nll(np_log_softmax(a, 1), t, w, -100, reduction, ls), [x])


def test_cross_entropy_spatial_and_probabilities():
    x = rand((2, 3, 2, 2))
    t = RNG.integers(0, 3, size=(2, 2, 2))
    check_op(
        lambda a: flow.cross_entropy(a, flow.tensor(t, device=a.device)),
        lambda a: np_nll(np_log_softmax(a, 1), t),
        [x],
    )
    p = np_softmax(rand((4, 3)), 1)
    xp = rand((4, 3))
    check_op(
        lambda a: flow.cross_entropy(a, flow.tensor(p, dtype=a.dtype, device=a.device)),
        lambda a: -(np_log_softmax(a, 1) * p).sum(1).mean(),
        [xp],
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    x = rand((6, 5))
    t = np.array([4, 0, 1, 1, 7, 2])
    w = rand((5,), 0.5, 2.0)
    check_op(
        lambda a: flow.nll_loss(
            a,
            flow.tensor(t, device=a.device),
            weight=flow.tensor(w, dtype=a.dtype, device=a.device),
            ignore_index=7,
            reduction=reduction,
        ),
        lambda a: np_nll(a, t, w, 7, reduction),
        [x],
    )


def test_nll_target_out_of_range_fails_at_sync():
    with pytest.raises(Exception, match=r"\[nll_loss\] target 9 out of range for 5 classes"):
        flow.nll_loss(flow.zeros(2, 5), flow.tensor([1, 9])).detach().numpy()
    assert flow.nll_loss(flow.zeros(2, 5), flow.tensor([1, 2])).detach().numpy() == 0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    red = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    check_op(
        lambda a, b: flow.mse_loss(a, b, reduction=reduction),
        lambda a, b: red((a - b) ** 2),
        [rand((3, 4)), rand((3, 4))],
    )


@pytest.mark.parametrize("with_pw,with_w", [(False, False), (True, False), (True, True)])
def test_bce_with_logits(with_pw, with_w):
    x, y = rand((4, 3), -4, 4), rand((4, 3), 0, 1)
    pw, w = rand((3,), 0.5, 3), rand((4, 3), 0.5, 1.5)

    def ref(a, b, p=None, ww=None):
        lw = 1 + ((p if p is not None else 1) - 1) * b
        loss = (1 - b) * a + lw * np.log1p(np.exp(-a))
        return (loss * (ww if ww is not None else 1)).mean()

    if with_w:
        check_op(
            lambda a, b, p, ww: flow.binary_cross_entropy_with_logits(
                a, b, weight=ww, pos_weight=p
            ),
            ref,
            [x, y, pw, w],
        )
    elif with_pw:
        check_op(
            lambda a, b, p: flow.binary_cross_entropy_with_logits(a, b, pos_weight=p),
            ref,
            [x, y, pw],
        )
    else:
        check_op(lambda a, b: flow.binary_cross_entropy_with_logits(a, b), ref, [x, y])
    big = (
        flow.binary_cross_entropy_with_logits(
            flow.tensor([100.0, -100.0]), flow.tensor([0.0, 1.0]), reduction="none"
        )
        .detach()
        .numpy()
    )
    np.testing.assert_allclose(big, [100.0, 100.0], rtol=1e-6)  # no overflow


# ---- the loss table (oneflow_like/opdefs/loss.def) ----------------------------------------------
# Its APIs are tested above (cross_entropy, nll_loss, mse_loss, binary_cross_entropy_with_logits).
LOSS_APIS = {
    "binary_cross_entropy_with_logits": "logits",
    "cross_entropy": "nll_smoothing",
    "mse_loss": "pointwise",
    "nll_loss": "nll",
}


def test_every_loss_api_is_tested_and_declared_once():
    table = flow._C._loss_table()
    apis = {a["name"]: a["sig"] for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == LOSS_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    nll = {"reduction": 1, "ignore_index": -100, "label_smoothing": 0.0, "has_weight": False}
    assert ops["nll_loss"]["attrs"] == ops["nll_loss_grad"]["attrs"] == nll
    bce = ops["binary_cross_entropy_with_logits"]
    assert bce["attrs"] == ops["bce_with_logits_grad"]["attrs"] == {}  # reduced after the op
    assert ops["nll_loss"]["out"] == "nll" and bce["out"] == "elementwise"
    for op in table["ops"]:
        assert op["save"] == ("none" if op["grad"] == "NoGrad" else "inputs")
    # The signatures carry the table's defaults (reduction code 1 is 'mean').
    red = {0: "none", 1: "mean", 2: "sum"}[nll["reduction"]]
    nll_args = (
        f"weight: object = None, ignore_index: int = {nll['ignore_index']}, "
        f"reduction: str = '{red}'"
    )
    sigs = {
        "nll_smoothing": f"{nll_args}, label_smoothing: float = {nll['label_smoothing']})",
        "nll": nll_args + ")",
        "pointwise": f"reduction: str = '{red}')",
        "logits": f"weight: object = None, reduction: str = '{red}', pos_weight: object = None)",
    }
    for name, sig in LOSS_APIS.items():  # defined in _C and _C.nn_functional
        fn = getattr(flow._C, name)
        assert fn.__doc__ == getattr(flow._C.nn_functional, name).__doc__
        assert fn.__doc__.startswith(f"{name}(input: ") and sigs[sig] in fn.__doc__, fn.__doc__
    # A bad argument's error names the op.
    x, t = flow.zeros(2, 3), flow.tensor([0, 1])
    with pytest.raises(ValueError, match=r"\[nll_loss\] reduction must be 'none', 'mean' or 'sum'"):
        flow._C.nll_loss(x, t, reduction="avg")
    with pytest.raises(ValueError, match=r"\[cross_entropy\] label_smoothing must be in \[0, 1\]"):
        flow._C.cross_entropy(x, t, label_smoothing=2.0)
    with pytest.raises(ValueError, match=r"\[mse_loss\] reduction must be"):
        flow._C.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match=r"\[binary_cross_entropy_with_logits\] reduction must be"):
        flow._C.binary_cross_entropy_with_logits(x, x, reduction="avg")
    # The defaults run: a mean over the targets.
    assert flow._C.nll_loss(x, t).shape == () and flow._C.mse_loss(x, x).shape == ()


# ---- convolution --------------------------------------------------------------------------------


# nn.Graph lowers these to HLO convolutions (oneflow_like/lazy/lowering/conv.cc).
CONV_OPS = ("conv2d", "conv2d_grad_input", "conv2d_grad_weight")


@pytest.mark.parametrize(
    "stride,padding,dilation,groups,bias",
    [
        (1, 0, 1, 1, True),
        (2, 1, 1, 1, False),
        (1, 2, 2, 1, True),
        (1, 1, 1, 2, True),
        ((2, 1), (1, 0), 1, 4, False),
    ],
)
def test_conv2d(stride, padding, dilation, groups, bias):
    pair = lambda v: (v, v) if isinstance(v, int) else v
    x = rand((2, 4, 6, 5))
    w = rand((4, 4 // groups, 3, 3))
    b = rand((4,))
    ref = lambda a, ww, bb=None: np_conv2d(
        a, ww, bb, pair(stride), pair(padding), pair(dilation), groups
    )
    if bias:
        check_op(
            lambda a, ww, bb: flow.conv2d(a, ww, bb, stride, padding, dilation, groups),
            ref,
            [x, w, b],
            lowered_ops=CONV_OPS,
        )
    else:
        check_op(
            lambda a, ww: flow.conv2d(a, ww, None, stride, padding, dilation, groups),
            ref,
            [x, w],
            lowered_ops=CONV_OPS,
        )


def test_conv2d_pointwise_and_larger_f32():
    x, w = rand((2, 8, 4, 4)), rand((6, 8, 1, 1))
    check_op(lambda a, ww: flow.conv2d(a, ww), lambda a, ww: np_conv2d(a, ww), [x, w])
    x, w, b = rand((4, 16, 12, 12)), rand((32, 16, 3, 3)), rand((32,))
    check_op(
        lambda a, ww, bb: flow.conv2d(a, ww, bb, padding=1),
        lambda a, ww, bb: np_conv2d(a, ww, bb, padding=(1, 1)),
        [x, w, b],
        atol=1e-4,
        backward=False,
    )
    # f32 backward (oneDNN) against the f64 one
    xs = [
        flow.tensor(v, dtype=dt, requires_grad=True)
        for dt in (flow.float32, flow.float64)
        for v in (x, w)
    ]
    g = rand((4, 32, 12, 12))
    for xt, wt in (xs[:2], xs[2:]):
        flow.conv2d(xt, wt, padding=1).backward(flow.tensor(g, dtype=xt.dtype))
    np.testing.assert_allclose(
        xs[0].grad.detach().numpy(), xs[2].grad.detach().numpy(), atol=1e-3, rtol=1e-4
    )
    np.testing.assert_allclose(
        xs[1].grad.detach().numpy(), xs[3].grad.detach().numpy(), atol=1e-3, rtol=1e-4
    )


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 2, 2)])
def test_conv1d(stride, padding, dilation, groups):
    x, w, b = rand((2, 4, 9)), rand((6, 4 // groups, 3)), rand((6,))

    def ref(a, ww, bb):
        return np_conv2d(
            a[:, :, None], ww[:, :, None], bb, (1, stride), (0, padding), (1, dilation), groups
        )[:, :, 0]

    check_op(
        lambda a, ww, bb: flow.conv1d(a, ww, bb, stride, padding, dilation, groups),
        ref,
        [x, w, b],
        lowered_ops=CONV_OPS,
    )


def test_conv_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"\[conv2d\].*f32\[1,3,8,8\].*f32\[4,2,3,3\]"):
        flow.conv2d(flow.zeros(1, 3, 8, 8), flow.zeros(4, 2, 3, 3))
    with pytest.raises(ValueError, match=r"\[conv2d\].*too small"):
        flow.conv2d(flow.zeros(1, 3, 2, 2), flow.zeros(4, 3, 3, 3))
    with pytest.raises(ValueError, match=r"\[conv1d\]"):
        flow.conv1d(flow.zeros(1, 3, 8, 8), flow.zeros(4, 3, 3))


# ---- pooling ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k,s,p,d,ceil",
    [
        ((2, 2), (2, 2), (0, 0), (1, 1), False),
        ((3, 3), (2, 2), (1, 1), (1, 1), False),
        ((3, 2), (1, 2), (1, 0), (2, 1), False),
        ((3, 3), (2, 2), (0, 0), (1, 1), True),
    ],
)
def test_max_pool2d(k, s, p, d, ceil):
    x = (
        RNG.permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 10.0
    )  # distinct values: a unique argmax
    check_op(
        lambda a: flow.max_pool2d(a, k, s, p, d, ceil),
        lambda a: np_max_pool2d(a, k, s, p, d, ceil),
        [x],
    )


def test_max_pool2d_indices_and_3d_input():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    y, idx = flow.max_pool2d(flow.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(idx.detach().numpy().reshape(-1), [5, 7, 13, 15])
    assert flow.max_pool2d(flow.tensor(x[0]), 2).shape == (1, 2, 2)


@pytest.mark.parametrize(
    "k,s,p,ceil,inc",
    [
        ((2, 2), (2, 2), (0, 0), False, True),
        ((3, 3), (2, 2), (1, 1), False, True),
        ((3, 3), (2, 2), (1, 1), False, False),
        ((3, 2), (2, 1), (1, 1), True, False),
    ],
)
def test_avg_pool2d(k, s, p, ceil, inc):
    x = rand((2, 2, 7, 6))
    check_op(
        lambda a: flow.avg_pool2d(a, k, s, p, ceil, inc),
        lambda a: np_avg_pool2d(a, k, s, p, ceil, inc),
        [x],
    )


def test_pool1d():
    x = RNG.permutation(2 * 3 * 9).reshape(2, 3, 9) / 10.0
    check_op(
        lambda a: flow.max_pool1d(a, 3, 2, 1),
        lambda a: np_max_pool2d(a[:, :, None], (1, 3), (1, 2), (0, 1))[:, :, 0],
        [x],
    )
    check_op(
        lambda a: flow.avg_pool1d(a, 2, 1, 1, False, False),
        lambda a: np_avg_pool2d(a[:, :, None], (1, 2), (1, 1), (0, 1), False, False)[:, :, 0],
        [x],
    )
    assert flow.max_pool1d(flow.zeros(3, 8), 2).shape == (3, 4)


@pytest.mark.parametrize("os", [(1, 1), (3, 2), (5, 7), (4, 4)])
def test_adaptive_avg_pool2d(os):
    check_op(
        lambda a: flow.adaptive_avg_pool2d(a, os),
        lambda a: np_adaptive_avg_pool2d(a, os),
        [rand((2, 2, 5, 7))],
    )


# ---- normalization ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 4, 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_training(shape, affine):
    c = shape[1]
    axes = tuple(i for i in range(len(shape)) if i != 1)
    cs = (1, c) + (1,) * (len(shape) - 2)
    x, w, b = rand(shape), rand((c,), 0.5, 1.5), rand((c,))

    def ref(a, ww=None, bb=None):
        y = np_norm(a, axes, 1e-5)
        return y if ww is None else y * ww.reshape(cs) + bb.reshape(cs)

    if affine:
        check_op(
            lambda a, ww, bb: flow.batch_norm(a, None, None, ww, bb, training=True), ref, [x, w, b]
        )
    else:
        check_op(lambda a: flow.batch_norm(a, None, None, training=True), ref, [x])


def test_batch_norm_running_stats_and_eval():
    x = rand((8, 3, 2, 2), -2, 3)
    rm, rv = flow.zeros(3, device=DEVICE), flow.ones(3, device=DEVICE)
    flow.batch_norm(
        flow.tensor(x, dtype=flow.float32, device=DEVICE), rm, rv, training=True, momentum=0.1
    )
    axes = (0, 2, 3)
    np.testing.assert_allclose(rm.detach().numpy(), 0.1 * x.mean(axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        rv.detach().numpy(), 0.9 + 0.1 * x.var(axes, ddof=1), rtol=1e-5, atol=1e-6
    )
    rmv, rvv = rand((3,)), rand((3,), 0.5, 2)
    w, b = rand((3,)), rand((3,))
    cs = (1, 3, 1, 1)
    ref = lambda a, ww, bb: (a - rmv.reshape(cs)) / np.sqrt(rvv.reshape(cs) + 1e-5) * ww.reshape(
        cs
    ) + bb.reshape(cs)
    check_op(
        lambda a, ww, bb: flow.batch_norm(
            a,
            flow.tensor(rmv, dtype=a.dtype, device=a.device),
            flow.tensor(rvv, dtype=a.dtype, device=a.device),
            ww,
            bb,
            training=False,
        ),
        ref,
        [x, w, b],
    )


@pytest.mark.parametrize("shape,norm", [((3, 8), (8,)), ((2, 3, 4), (3, 4)), ((2, 2, 5), (5,))])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(shape, norm, affine):
    axes = tuple(range(len(shape) - len(norm), len(shape)))
    x, w, b = rand(shape), rand(norm, 0.5, 1.5), rand(norm)
    if affine:
        check_op(
            lambda a, ww, bb: flow.layer_norm(a, norm, ww, bb),
            lambda a, ww, bb: np_norm(a, axes, 1e-5) * ww + bb,
            [x, w, b],
        )
    else:
        check_op(lambda a: flow.layer_norm(a, norm), lambda a: np_norm(a, axes, 1e-5), [x])
    # weight only
    check_op(
        lambda a, ww: flow.layer_norm(a, norm, ww),
        lambda a, ww: np_norm(a, axes, 1e-5) * ww,
        [x, w],
    )


@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((3, 4), 2)])
def test_group_norm(shape, groups):
    n, c = shape[:2]
    cs = (1, c) + (1,) * (len(shape) - 2)

    def ref(a, ww, bb):
        g = a.reshape(n, groups, -1)
        return np_norm(g, (2,), 1e-5).reshape(a.shape) * ww.reshape(cs) + bb.reshape(cs)

    def spread():
        # Groups of two nearly equal values are ill-conditioned in float32 (the output is their
        # difference over sqrt(difference^2 + eps)): ((3, 4), 2) failed rtol 1e-4 once with
        # unseeded inputs (a group 2.5e-4 apart). Draw groups whose values stand apart.
        while True:
            a = rand(shape)
            if a.reshape(n, groups, -1).std(axis=2).min() > 0.05:
                return a

    check_op(
        lambda a, ww, bb: flow.group_norm(a, groups, ww, bb),
        ref,
        [spread(), rand((c,), 0.5, 1.5), rand((c,))],
    )
    check_op(
        lambda a: flow.group_norm(a, groups),
        lambda a: ref(a, np.ones(c), np.zeros(c)),
        [spread()],
    )


def test_norm_errors():
    with pytest.raises(ValueError, match=r"\[layer_norm\].*\[5\].*f32\[2,4\]"):
        flow.layer_norm(flow.zeros(2, 4), (5,))
    with pytest.raises(ValueError, match=r"\[group_norm\].*not divisible"):
        flow.group_norm(flow.zeros(2, 6, 3), 4)
    with pytest.raises(ValueError, match=r"\[batch_norm\].*more than 1 value"):
        flow.batch_norm(flow.zeros(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=r"\[layer_norm\] expected bias of 4 elements"):
        flow.layer_norm(flow.zeros(2, 4), (4,), flow.ones(4), flow.zeros(3))
    with pytest.raises(ValueError, match=r"\[batch_norm\] expected running_var of 3 elements"):
        flow.batch_norm(flow.zeros(2, 3), flow.zeros(3), flow.ones(2))
    with pytest.raises(ValueError, match=r"\[rms_norm\] expected weight of 4 elements"):
        flow.nn.functional.rms_norm(flow.zeros(2, 4), (4,), flow.ones(4, dtype=flow.float64))
    with pytest.raises(TypeError, match=r"\[group_norm\]"):
        flow.group_norm(flow.zeros(2, 4, dtype=flow.int64), 2)


# ---- the norm table (oneflow_like/opdefs/norm.def) ----------------------------------------------
# Its APIs are tested above (batch_norm, layer_norm, group_norm) and in test_ops_nn3d.py (rms_norm).
NORM_APIS = ["batch_norm", "group_norm", "layer_norm", "rms_norm"]


def test_every_norm_api_is_tested_and_declared_once():
    table = flow._C._norm_table()
    assert sorted(a["name"] for a in table["apis"]) == NORM_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    for name, op in ops.items():  # a forward op's backward op takes the same attributes
        if op["grad"] != "NoGrad":
            assert ops[name + "_grad"]["attrs"] == op["attrs"] and op["save"] == "stats"
    assert ops["layer_norm"]["attrs"] == {
        "groups": 1,
        "channels_per_group": 0,
        "inner": 1,
        "eps": 1e-5,
        "has_weight": False,
        "has_bias": False,
    }
    assert ops["batch_norm"]["attrs"] == {"training": False, "eps": 1e-5}
    assert ops["rms_norm"]["params"] == "weight" and ops["group_norm"]["out"] == "rows"
    for name in NORM_APIS:  # defined in _C and _C.nn_functional (which nn/functional.py wraps)
        assert getattr(flow._C, name).__doc__ == getattr(flow._C.nn_functional, name).__doc__
    assert "eps: float = 1e-05" in flow._C.layer_norm.__doc__


# ---- the conv table (oneflow_like/opdefs/conv.def) ----------------------------------------------


def test_every_conv_api_is_declared_once_with_the_table_defaults():
    table = flow._C._conv_table()
    assert [(a["name"], a["nd"]) for a in table["apis"]] == [
        ("conv1d", 1),
        ("conv2d", 2),
        ("conv3d", 3),
    ]
    ops = {o["name"]: o for o in table["ops"]}
    assert ops["conv2d"]["attrs"] == {"stride": [1], "padding": [0], "dilation": [1], "groups": 1}
    assert ops["conv3d"]["save"] == "inputs" and ops["conv3d_grad_weight"]["grad"] == "NoGrad"
    assert ops["conv2d_grad_input"]["attrs"]["input_shape"] == []
    # cuDNN takes f16/bf16 for every conv op (forward and backward); the CPU computes them in f32
    assert {o["lowp"] for o in ops.values()} == {"cuda"}
    for name in ("conv1d", "conv2d", "conv3d"):
        doc = getattr(flow._C, name).__doc__
        assert doc == getattr(flow._C.nn_functional, name).__doc__
        assert (
            "stride: object = 1, padding: object = 0, dilation: object = 1, groups: int = 1" in doc
        )
    with pytest.raises(ValueError, match=r"\[conv3d\] padding mode 'same' is not supported"):
        flow._C.conv3d(flow.zeros(1, 1, 2, 2, 2), flow.zeros(1, 1, 1, 1, 1), padding="same")


# ---- the pool table (oneflow_like/opdefs/pool.def) ----------------------------------------------
# Its APIs are tested above (max/avg_pool1d/2d, adaptive_avg_pool2d) and in test_ops_nn3d.py (3d).
POOL_APIS = {
    "adaptive_avg_pool2d": "adaptive",
    "adaptive_avg_pool3d": "adaptive",
    "avg_pool1d": "avg",
    "avg_pool2d": "avg_divisor",
    "avg_pool3d": "avg_divisor",
    "max_pool1d": "max",
    "max_pool2d": "max_indices",
    "max_pool3d": "max_indices",
}


def test_every_pool_api_is_tested_and_declared_once():
    table = flow._C._pool_table()
    apis = {a["name"]: a["sig"] for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == POOL_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    for name, op in ops.items():  # a backward op takes its forward op's attributes + input_shape
        assert name.endswith(f"{op['nd']}d") or name.endswith(f"{op['nd']}d_grad")
        if op["grad"] != "NoGrad":
            assert ops[name + "_grad"]["attrs"] == {**op["attrs"], "input_shape": []}
    window = {
        "kernel": [],
        "stride": [],
        "padding": [0],
        "dilation": [1],
        "ceil_mode": False,
        "count_include_pad": True,
        "divisor_override": 0,
    }
    for nd in (2, 3):
        assert (
            ops[f"max_pool{nd}d"]["attrs"] == window and ops[f"max_pool{nd}d"]["save"] == "indices"
        )
        assert ops[f"avg_pool{nd}d"]["attrs"] == window and ops[f"avg_pool{nd}d"]["kind"] == "avg"
        assert ops[f"adaptive_avg_pool{nd}d"]["attrs"] == {"output_size": []}
        assert ops[f"adaptive_avg_pool{nd}d"]["save"] == "inputs"
    # The signatures carry the table's defaults (an empty stride is None, divisor_override 0 None).
    d = ops["max_pool2d"]["attrs"]
    stride = d["stride"][0] if d["stride"] else None
    divisor = d["divisor_override"] or None
    head = f"kernel_size: object, stride: object = {stride}, padding: object = {d['padding'][0]}"
    max_args = f"{head}, dilation: object = {d['dilation'][0]}, ceil_mode: bool = {d['ceil_mode']}"
    avg_args = (
        f"{head}, ceil_mode: bool = {d['ceil_mode']}, "
        f"count_include_pad: bool = {d['count_include_pad']}"
    )
    sigs = {
        "max": max_args + ")",
        "max_indices": max_args + ", return_indices: bool = False)",
        "avg": avg_args + ")",
        "avg_divisor": avg_args + f", divisor_override: object = {divisor})",
        "adaptive": "output_size: object)",
    }
    for name, sig in POOL_APIS.items():  # defined in _C and _C.nn_functional
        fn, nd = getattr(flow._C, name), int(name[-2])
        assert fn.__doc__ == getattr(flow._C.nn_functional, name).__doc__
        assert fn.__doc__.startswith(f"{name}(input: ") and sigs[sig] in fn.__doc__, fn.__doc__
        # A bad argument's error names the op: the input's rank, then the window's length.
        with pytest.raises(ValueError, match=rf"\[{name}\] expected a \d-d"):
            fn(flow.zeros(2), 2)
        what = "output_size" if sig == "adaptive" else "kernel_size"
        with pytest.raises(ValueError, match=rf"\[{name}\] {what} must have 1 "):
            fn(flow.zeros(*[2] * (nd + 2)), (1,) * (nd + 1))


# ---- embedding, dropout, attention --------------------------------------------------------------


def test_embedding():
    idx = np.array([[1, 3, 0], [3, 3, 2]])
    w = rand((5, 4))
    check_op(
        lambda ww: flow.embedding(flow.tensor(idx, device=ww.device), ww), lambda ww: ww[idx], [w]
    )
    wt = flow.tensor(w, requires_grad=True)
    flow.embedding(flow.tensor(idx), wt, padding_idx=3).sum().backward()
    g = wt.grad.detach().numpy()
    np.testing.assert_allclose(g[:, 0], [1, 1, 1, 0, 0])  # row 3 (padding) gets no gradient


def test_embedding_out_of_range_raises_at_sync_and_runtime_survives():
    w = flow.zeros(10, 3)
    out = flow.embedding(flow.tensor([1, 12]), w)  # enqueued; the kernel fails
    with pytest.raises(Exception, match=r"\[embedding\] index 12 out of range for 10 rows"):
        out.detach().numpy()
    ok = flow.embedding(flow.tensor([1, 9]), flow.ones(10, 3))
    np.testing.assert_allclose(ok.detach().numpy(), np.ones((2, 3)))


def test_dropout_statistics_and_determinism():
    x = flow.ones(200, 500)
    flow.manual_seed(123)
    a = flow.dropout(x, 0.3).detach().numpy()
    flow.manual_seed(123)
    b = flow.dropout(x, 0.3).detach().numpy()
    np.testing.assert_array_equal(a, b)
    c = flow.dropout(x, 0.3).detach().numpy()
    assert not np.array_equal(a, c)
    kept = a != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(a[kept], 1 / 0.7, rtol=1e-6)
    np.testing.assert_array_equal(
        flow.dropout(x, 0.3, training=False).detach().numpy(), x.detach().numpy()
    )
    assert (flow.dropout(x, 1.0).detach().numpy() == 0).all()
    # backward uses the same mask
    xt = flow.tensor(rand((50, 40)), requires_grad=True)
    y = flow.dropout(xt, 0.5)
    y.backward(flow.ones(50, 40, dtype=xt.dtype))
    np.testing.assert_allclose(xt.grad.detach().numpy(), (y.detach().numpy() != 0) * 2.0)
    with pytest.raises(ValueError, match=r"\[dropout\]"):
        flow.dropout(x, 1.5)


def np_sdpa(q, k, v, mask=None, causal=False):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return np_softmax(s, -1) @ v


# The default runs the fused op (_scaled_dot_product_flash_attention; a kernel call in the
# graph); "math" forces the composite, "gqa" groups 4 query heads on 2 key/value heads.
@pytest.mark.parametrize("kind", ["plain", "causal", "bool", "float", "gqa", "math"])
def test_scaled_dot_product_attention(kind):
    q, k, v = rand((2, 3, 4)), rand((2, 5, 4)), rand((2, 5, 3))
    if kind == "causal":
        q = rand((2, 5, 4))
    if kind == "gqa":
        q, k, v = rand((1, 4, 3, 4)), rand((1, 2, 5, 4)), rand((1, 2, 5, 3))
        fn = lambda a, b, c: flow.scaled_dot_product_attention(a, b, c, enable_gqa=True)
        ref = lambda a, b, c: np_sdpa(a, np.repeat(b, 2, axis=1), np.repeat(c, 2, axis=1))
        return check_op(fn, ref, [q, k, v])
    if kind == "math":

        def fn(a, b, c):
            with flow.nn.attention.sdpa_kernel(flow.nn.attention.SDPBackend.MATH):
                return flow.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True)

        q = rand((2, 5, 4))
        return check_op(fn, lambda a, b, c: np_sdpa(a, b, c, causal=True), [q, k, v])
    bmask = RNG.random((3, 5)) > 0.3
    bmask[:, 0] = True
    fmask = rand((3, 5))
    if kind == "bool":
        fn = lambda a, b, c: flow.scaled_dot_product_attention(
            a, b, c, attn_mask=flow.tensor(bmask, device=a.device)
        )
        ref = lambda a, b, c: np_sdpa(a, b, c, bmask)
    elif kind == "float":
        fn = lambda a, b, c: flow.scaled_dot_product_attention(
            a, b, c, attn_mask=flow.tensor(fmask, dtype=a.dtype, device=a.device)
        )
        ref = lambda a, b, c: np_sdpa(a, b, c, fmask)
    else:
        causal = kind == "causal"
        fn = lambda a, b, c: flow.scaled_dot_product_attention(a, b, c, is_causal=causal)
        ref = lambda a, b, c: np_sdpa(a, b, c, causal=causal)
    check_op(fn, ref, [q, k, v])


# ---- the nn_misc table (oneflow_like/opdefs/nn_misc.def) ----------------------------------------
# Its APIs are tested above (embedding, dropout, scaled_dot_product_attention).
NN_MISC_APIS = {
    "dropout": "dropout",
    "embedding": "embedding",
    "scaled_dot_product_attention": "attention",
    "_scaled_dot_product_flash_attention": "flash",
}


def test_every_nn_misc_api_is_tested_and_declared_once():
    table = flow._C._nn_misc_table()
    apis = {a["name"]: a["sig"] for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == NN_MISC_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    assert ops["embedding"]["attrs"] == {"padding_idx": -1} and ops["embedding"]["save"] == "inputs"
    # The backward op takes the forward op's attributes plus the weight's rows.
    assert ops["embedding_grad"]["attrs"] == {**ops["embedding"]["attrs"], "num_rows": 0}
    # dropout's gradient is dropout with the same seed: it saves nothing.
    assert ops["dropout"]["attrs"] == {"p": 0.5, "seed": 0} and ops["dropout"]["save"] == "none"
    assert ops["attn_bias"]["attrs"] == {"L": 0, "S": 0, "is_causal": False}
    for name in ("embedding_grad", "attn_bias", "_scaled_dot_product_flash_attention_backward"):
        assert (ops[name]["grad"], ops[name]["save"]) == ("NoGrad", "none")
    # The fused attention saves its operands and (out, lse); its backward takes its attributes.
    flash = ops["_scaled_dot_product_flash_attention"]
    assert (flash["out"], flash["save"]) == ("attn", "both")
    assert flash["attrs"] == {"scale": 1.0, "is_causal": False, "dropout_p": 0.0, "seed": 0}
    assert ops["_scaled_dot_product_flash_attention_backward"]["attrs"] == flash["attrs"]
    # The signatures carry the table's defaults (padding_idx -1 is None).
    first = {"embedding": "input", "dropout": "input", "attention": "query", "flash": "query"}
    args = {
        "embedding": "padding_idx: object = None)",
        "dropout": f"p: float = {ops['dropout']['attrs']['p']}, training: bool = True)",
        "attention": (
            "attn_mask: object = None, dropout_p: float = 0.0, "
            f"is_causal: bool = {ops['attn_bias']['attrs']['is_causal']}, scale: object = None, "
            "enable_gqa: bool = False)"
        ),
        "flash": "dropout_p: float = 0.0, is_causal: bool = False, scale: object = None)",
    }
    for name, sig in NN_MISC_APIS.items():  # defined in _C and _C.nn_functional
        fn = getattr(flow._C, name)
        assert fn.__doc__ == getattr(flow._C.nn_functional, name).__doc__
        assert (
            fn.__doc__.startswith(f"{name}({first[sig]}: ") and args[sig] in fn.__doc__
        ), fn.__doc__
    # A bad argument's error names the op.
    w = flow.zeros(3, 2)
    with pytest.raises(TypeError, match=r"\[embedding\] expected integer indices"):
        flow._C.embedding(flow.zeros(2), w)
    with pytest.raises(IndexError, match=r"\[embedding\] padding_idx 5 out of range for 3 rows"):
        flow._C.embedding(flow.tensor([0]), w, padding_idx=5)
    with pytest.raises(ValueError, match=r"\[dropout\] probability must be in \[0, 1\], got 1.5"):
        flow._C.dropout(flow.zeros(3), 1.5)
    with pytest.raises(ValueError, match=r"\[scaled_dot_product_attention\] expected query"):
        flow._C.scaled_dot_product_attention(flow.zeros(3), flow.zeros(3), flow.zeros(3))


def test_nn_functional_namespace():
    for name in ["batch_norm", "embedding", "conv2d", "cross_entropy", "softmax"]:
        assert hasattr(flow._C.nn_functional, name)
