"""The 3-d layers (conv3d, conv_transpose3d, max/avg/adaptive pool3d, BatchNorm3d) and RMSNorm:
forward and backward against float64 references (PyTorch's, python3-torch, for the 3-d ops;
NumPy for rms_norm, which torch 1.13 lacks), eager == lazy, errors, and CUDA == CPU."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import oneflow_like as flow
from op_testing import check_op, rand, same_as_torch


def _t(*arrays):
    return [torch.tensor(a) for a in arrays]


# ---- conv3d ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stride,padding,dilation,groups,bias",
    [
        (1, 0, 1, 1, True),
        (2, 1, 1, 1, False),
        ((1, 2, 1), (1, 0, 1), (2, 1, 1), 2, True),
    ],
)
def test_conv3d(stride, padding, dilation, groups, bias):
    x = rand((2, 4, 5, 4, 5))
    w = rand((4, 4 // groups, 2, 3, 2))
    b = rand((4,))

    def ref(a, ww, bb=None):
        return (
            TF.conv3d(
                *_t(a, ww),
                None if bb is None else torch.tensor(bb),
                stride,
                padding,
                dilation,
                groups,
            )
            .detach()
            .numpy()
        )

    if bias:
        check_op(
            lambda a, ww, bb: flow.conv3d(a, ww, bb, stride, padding, dilation, groups),
            ref,
            [x, w, b],
        )
    else:
        check_op(
            lambda a, ww: flow.conv3d(a, ww, None, stride, padding, dilation, groups), ref, [x, w]
        )


def test_conv3d_f32_onednn_matches_f64_and_torch_gradients():
    x, w, b = rand((2, 8, 6, 7, 6)), rand((16, 8, 3, 3, 3)), rand((16,))
    same_as_torch(
        lambda a, ww, bb: flow.conv3d(a, ww, bb, padding=1, stride=(1, 2, 1)),
        lambda a, ww, bb: TF.conv3d(a, ww, bb, padding=1, stride=(1, 2, 1)),
        x,
        w,
        b,
    )
    y32 = flow.conv3d(flow.tensor(x, dtype=flow.float32), flow.tensor(w, dtype=flow.float32))
    y64 = flow.conv3d(flow.tensor(x), flow.tensor(w))
    np.testing.assert_allclose(y32.detach().numpy(), y64.detach().numpy(), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_padding_same(n):
    shape = (2, 3) + (6, 5, 4)[:n]
    x, w = rand(shape), rand((4, 3) + (4, 3, 2)[:n])
    fl = getattr(flow.nn.functional, f"conv{n}d")
    th = getattr(TF, f"conv{n}d")
    for d in (1, 2):  # odd total padding (one more on the right) and even
        same_as_torch(
            lambda a, ww: fl(a, ww, padding="same", dilation=d),
            lambda a, ww: th(a, ww, padding="same", dilation=d),
            x,
            w,
        )
    with pytest.raises(ValueError, match="strided"):
        fl(flow.tensor(x), flow.tensor(w), padding="same", stride=2)


def test_conv_transpose3d_and_modules():
    x, w, b = rand((2, 4, 3, 4, 3)), rand((4, 3, 2, 3, 2)), rand((6,))
    same_as_torch(
        lambda a, ww, bb: flow.nn.functional.conv_transpose3d(
            a, ww, bb, stride=2, padding=1, output_padding=1, groups=2
        ),
        lambda a, ww, bb: TF.conv_transpose3d(
            a, ww, bb, stride=2, padding=1, output_padding=1, groups=2
        ),
        x,
        w,
        b,
    )
    m = flow.nn.Conv3d(4, 6, 3, padding=1, bias=True, dtype=flow.float64)
    tm = torch.nn.Conv3d(4, 6, 3, padding=1).double()
    m.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(
        m(flow.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-10
    )
    mt = flow.nn.ConvTranspose3d(4, 2, 2, stride=2, dtype=flow.float64)
    assert tuple(mt(flow.tensor(x)).shape) == (2, 2, 6, 8, 6)


def test_conv3d_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"\[conv3d\].*f32\[1,3,4,4\].*f32\[4,3,3,3,3\]"):
        flow.conv3d(flow.zeros(1, 3, 4, 4), flow.zeros(4, 3, 3, 3, 3))
    with pytest.raises(ValueError, match=r"\[conv3d\].*too small"):
        flow.conv3d(flow.zeros(1, 3, 2, 8, 8), flow.zeros(4, 3, 3, 3, 3))
    with pytest.raises(ValueError, match=r"\[conv3d\].*groups=2"):
        flow.conv3d(flow.zeros(1, 3, 4, 4, 4), flow.zeros(4, 3, 1, 1, 1), groups=2)
    with pytest.raises(ValueError, match=r"\[conv3d\] stride must have 1 or 3 values"):
        flow.conv3d(flow.zeros(1, 3, 4, 4, 4), flow.zeros(4, 3, 1, 1, 1), stride=(1, 2))


# ---- pooling ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kernel,stride,padding,dilation,ceil",
    [
        (2, None, 0, 1, False),
        (3, 2, 1, 1, True),
        ((2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 1), False),
    ],
)
def test_max_pool3d(kernel, stride, padding, dilation, ceil):
    x = rand((2, 3, 5, 6, 5))
    check_op(
        lambda a: flow.nn.functional.max_pool3d(a, kernel, stride, padding, dilation, ceil),
        lambda a: TF.max_pool3d(torch.tensor(a), kernel, stride, padding, dilation, ceil)
        .detach()
        .numpy(),
        [x],
    )
    y, i = flow.nn.functional.max_pool3d(
        flow.tensor(x), kernel, stride, padding, dilation, ceil, return_indices=True
    )
    _, ti = TF.max_pool3d(torch.tensor(x), kernel, stride, padding, dilation, ceil, True)
    np.testing.assert_array_equal(i.detach().numpy(), ti.detach().numpy())


@pytest.mark.parametrize(
    "kernel,stride,padding,ceil,include_pad,divisor",
    [
        (2, None, 0, False, True, None),
        (3, 2, 1, True, False, None),
        ((2, 3, 3), (2, 1, 2), (1, 1, 0), False, True, 5),
    ],
)
def test_avg_pool3d(kernel, stride, padding, ceil, include_pad, divisor):
    x = rand((2, 3, 5, 6, 5))
    args = (kernel, stride, padding, ceil, include_pad, divisor)
    check_op(
        lambda a: flow.nn.functional.avg_pool3d(a, *args),
        lambda a: TF.avg_pool3d(torch.tensor(a), *args).detach().numpy(),
        [x],
    )


@pytest.mark.parametrize("size", [(2, 3, 2), 1, (None, 2, 4)])
def test_adaptive_avg_pool3d(size):
    x = rand((2, 3, 5, 6, 4))
    check_op(
        lambda a: flow.nn.functional.adaptive_avg_pool3d(a, size),
        lambda a: TF.adaptive_avg_pool3d(torch.tensor(a), size).detach().numpy(),
        [x],
    )


def test_pool3d_modules_unbatched_and_errors():
    x = rand((3, 4, 6, 4))  # unbatched (C, D, H, W)
    for mf, mt in [
        (flow.nn.MaxPool3d(2), torch.nn.MaxPool3d(2)),
        (
            flow.nn.AvgPool3d(3, 1, 1, count_include_pad=False),
            torch.nn.AvgPool3d(3, 1, 1, False, False),
        ),
        (flow.nn.AdaptiveAvgPool3d((2, 3, 2)), torch.nn.AdaptiveAvgPool3d((2, 3, 2))),
    ]:
        np.testing.assert_allclose(
            mf(flow.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy(), atol=1e-12
        )
    y, i = flow.nn.MaxPool3d(2, return_indices=True)(flow.tensor(x))
    assert tuple(i.shape) == (3, 2, 3, 2) and i.dtype == flow.int64
    with pytest.raises(ValueError, match=r"\[max_pool3d\].*f32\[2,3\]"):
        flow.nn.functional.max_pool3d(flow.zeros(2, 3), 2)
    with pytest.raises(ValueError, match=r"\[avg_pool3d\].*too small"):
        flow.nn.functional.avg_pool3d(flow.zeros(1, 1, 1, 4, 4), 2)
    with pytest.raises(ValueError, match=r"\[max_pool3d\] kernel_size must have 1 or 3 values"):
        flow.nn.functional.max_pool3d(flow.zeros(1, 1, 4, 4, 4), (2, 2))


def test_batch_norm3d_and_instance_norm3d_match_torch():
    x = rand((3, 4, 3, 4, 2))
    bn, tbn = flow.nn.BatchNorm3d(4, dtype=flow.float64), torch.nn.BatchNorm3d(4).double()
    same_as_torch(bn, tbn, x)
    np.testing.assert_allclose(
        bn.running_var.detach().numpy(), tbn.running_var.detach().numpy(), atol=1e-12
    )
    bn.eval(), tbn.eval()
    same_as_torch(bn, tbn, x)
    with pytest.raises(ValueError, match="BatchNorm3d"):
        bn(flow.zeros(2, 4, 3, 3))
    inn = flow.nn.InstanceNorm3d(4, affine=True, dtype=flow.float64)
    tin = torch.nn.InstanceNorm3d(4, affine=True).double()
    same_as_torch(inn, tin, x)


def test_interpolate_trilinear_and_nearest_5d():
    x = rand((2, 3, 3, 4, 5))
    for kw in [
        dict(scale_factor=2, mode="trilinear", align_corners=False),
        dict(size=(5, 3, 7), mode="trilinear", align_corners=True),
        dict(scale_factor=(2, 1, 3), mode="nearest"),
    ]:
        same_as_torch(
            lambda a: flow.nn.functional.interpolate(a, **kw),
            lambda a: TF.interpolate(a, **kw),
            x,
        )


# ---- rms_norm --------------------------------------------------------------------------------


def np_rms_norm(x, shape, w=None, eps=None):
    eps = np.finfo(np.float32).eps if eps is None else eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y if w is None else y * w


@pytest.mark.parametrize("shape,affine", [((5,), True), ((3, 4), True), ((4,), False)])
def test_rms_norm(shape, affine):
    x = rand((2, 3) + shape if shape != (3, 4) else (2, 3, 4))
    w = rand(shape, 0.5, 1.5)
    if affine:
        check_op(
            lambda a, ww: flow.nn.functional.rms_norm(a, shape, ww, eps=1e-6),
            lambda a, ww: np_rms_norm(a, shape, ww, 1e-6),
            [x, w],
        )
    else:
        check_op(
            lambda a: flow.nn.functional.rms_norm(a, shape, eps=1e-6),
            lambda a: np_rms_norm(a, shape, None, 1e-6),
            [x],
        )


def test_rms_norm_module_default_eps_and_errors():
    m = flow.nn.RMSNorm(6)
    assert m.weight is not None and m.eps is None
    x = rand((4, 6)).astype(np.float32)
    y = m(flow.tensor(x))
    np.testing.assert_allclose(
        y.detach().numpy(), np_rms_norm(x.astype(np.float64), (6,)), rtol=1e-5
    )
    assert flow.nn.RMSNorm([2, 3], elementwise_affine=False).weight is None
    with pytest.raises(ValueError, match=r"\[rms_norm\] normalized_shape \[5\].*f32\[4,6\]"):
        flow.nn.functional.rms_norm(flow.zeros(4, 6), [5])
    with pytest.raises(ValueError, match=r"\[rms_norm\] expected weight of 6 elements"):
        flow.nn.functional.rms_norm(flow.zeros(4, 6), [6], flow.ones(5))


# ---- CUDA == CPU -----------------------------------------------------------------------------


@pytest.mark.skipif(not flow.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize(
    "name,fn,shapes",
    [
        (
            "conv3d",
            lambda x, w: flow.conv3d(x, w, None, (1, 2, 1), 1, 1, 2),
            [(2, 4, 5, 6, 5), (6, 2, 3, 2, 3)],
        ),
        (
            "max_pool3d",
            lambda x: flow.nn.functional.max_pool3d(x, 3, 2, 1, ceil_mode=True),
            [(2, 3, 5, 6, 7)],
        ),
        (
            "avg_pool3d",
            lambda x: flow.nn.functional.avg_pool3d(x, 3, 2, 1, False, False),
            [(2, 3, 5, 6, 7)],
        ),
        (
            "adaptive_avg_pool3d",
            lambda x: flow.nn.functional.adaptive_avg_pool3d(x, (2, 4, 3)),
            [(2, 3, 5, 6, 7)],
        ),
        ("rms_norm", lambda x, w: flow.nn.functional.rms_norm(x, [7], w), [(3, 5, 7), (7,)]),
    ],
)
def test_cuda_matches_cpu(name, fn, shapes):
    arrays = [rand(s) for s in shapes]
    for dt in (flow.float64, flow.float32):
        outs, grads = [], []
        for dev in ("cpu", "cuda"):
            ins = [flow.tensor(a, dtype=dt, device=dev, requires_grad=True) for a in arrays]
            y = fn(*ins)
            up = flow.tensor(np.linspace(-1, 1, y.numel()).reshape(y.shape), dtype=dt, device=dev)
            (y * up).sum().backward()
            outs.append(y.detach().cpu().detach().numpy())
            grads.append([t.grad.cpu().detach().numpy() for t in ins])
        tol = 1e-10 if dt == flow.float64 else 1e-4
        np.testing.assert_allclose(outs[1], outs[0], rtol=tol, atol=tol, err_msg=name)
        for g1, g0 in zip(grads[1], grads[0]):
            np.testing.assert_allclose(g1, g0, rtol=tol, atol=tol, err_msg=name)
