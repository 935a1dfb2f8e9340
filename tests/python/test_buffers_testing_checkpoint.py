"""flow.frombuffer, flow.empty_strided, flow.testing.assert_close and
flow.utils.checkpoint against PyTorch (Debian's torch 1.13) on the same inputs."""

import array
import re
import warnings

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
import torch.utils.checkpoint  # noqa: E402  (a submodule torch does not import itself)


# ---- frombuffer / empty_strided -----------------------------------------------------------------


def test_frombuffer_shares_memory_and_matches_torch():
    for m in (flow, torch):
        buf = bytearray(np.arange(8, dtype=np.float32).tobytes())
        t = m.frombuffer(buf, dtype=m.float32)
        assert t.dtype == m.float32 and tuple(t.shape) == (8,)
        np.testing.assert_array_equal(t.numpy(), np.arange(8, dtype=np.float32))
        t[1] = 42.0
        assert np.frombuffer(bytes(buf), dtype=np.float32)[1] == 42.0  # a view of the buffer
        part = m.frombuffer(buf, dtype=m.float32, count=3, offset=8)
        np.testing.assert_array_equal(part.numpy(), [2, 3, 4])
        ints = m.frombuffer(array.array("i", [5, 6, 7]), dtype=m.int32)
        assert ints.tolist() == [5, 6, 7]
    for bad in (
        dict(count=0),
        dict(offset=32),
        dict(offset=-1),
        dict(offset=2),  # 30 bytes left: not a multiple of 4
        dict(count=9),
    ):
        for m in (flow, torch):
            with pytest.raises(ValueError):
                m.frombuffer(bytearray(32), dtype=m.float32, **bad)
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        flow.frombuffer(bytearray(32), dtype=flow.float32, count=9)
    with pytest.warns(UserWarning, match="not writable"):
        ro = flow.frombuffer(b"\x01\x02", dtype=flow.uint8)
    assert ro.tolist() == [1, 2]


def test_empty_strided_matches_torch():
    for size, stride in [((2, 3), (1, 2)), ((4,), (3,)), ((2, 0, 3), (9, 3, 1)), ((), ())]:
        a = flow.empty_strided(size, stride)
        b = torch.empty_strided(size, stride)
        assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride(), (size, stride)
        assert a.dtype == flow.float32
    t = flow.empty_strided((2, 2), (1, 2), dtype=flow.float64, requires_grad=True)
    assert t.dtype == flow.float64 and t.requires_grad and not t.is_contiguous()
    for m in (flow, torch):
        with pytest.raises(RuntimeError):
            m.empty_strided((2, 3), (1,))
        with pytest.raises(RuntimeError):
            m.empty_strided((2, -1), (1, 1))


# ---- testing.assert_close -----------------------------------------------------------------------


def _message(m, actual, expected, **kw):
    with pytest.raises(AssertionError) as e:
        m.testing.assert_close(actual, expected, **kw)
    return str(e.value)


def test_assert_close_default_tolerances_follow_the_dtype():
    for dtype, rtol, atol in [
        ("float32", 1.3e-6, 1e-5),
        ("float64", 1e-7, 1e-7),
        ("float16", 1e-3, 1e-5),
    ]:
        for m in (flow, torch):
            d = getattr(m, dtype)
            base = m.tensor([1.0, 100.0], dtype=d)
            # Inside: atol + rtol * |expected| with a margin; outside: twice that.
            inside = base + m.tensor([0.5 * (atol + rtol), 0.5 * (atol + 100 * rtol)], dtype=d)
            m.testing.assert_close(inside.double(), base.double(), rtol=rtol, atol=atol)
        for m in (flow, torch):
            a = m.tensor([1.0, 2.0], dtype=getattr(m, "float64"))
            b = a + 1e-8
            m.testing.assert_close(a, b)  # float64: 1e-8 < 1e-7 + 1e-7 * 2
    for m in (flow, torch):
        m.testing.assert_close(m.tensor([1, 2]), m.tensor([1, 2]))
        with pytest.raises(AssertionError):
            m.testing.assert_close(m.tensor([1, 2]), m.tensor([1, 3]))  # integers: exact
        m.testing.assert_close(m.tensor([1.0, 1.0 + 1e-6]), m.tensor([1.0, 1.0]))
        with pytest.raises(AssertionError):
            m.testing.assert_close(m.tensor([1.0, 1.0 + 1e-4]), m.tensor([1.0, 1.0]))


def test_assert_close_messages_match_torch():
    for args in [
        ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0]),
        ([[0.0, 1.0], [5.0, 5.0]], [[0.0, 1.5], [4.0, 5.0]]),
    ]:
        ours = _message(flow, flow.tensor(args[0]), flow.tensor(args[1]))
        theirs = _message(torch, torch.tensor(args[0]), torch.tensor(args[1]))
        for line in (
            "Mismatched elements",
            "Greatest absolute difference",
            "Greatest relative difference",
        ):
            want = re.search(line + r".*", theirs).group(0)
            got = re.search(line + r".*", ours).group(0)
            assert got == want, (got, want)
        assert ours.startswith("Tensor-likes are not close!")
    ours = _message(flow, flow.tensor([1.0]), flow.tensor([1.0, 2.0]))
    assert "attribute 'shape'" in ours
    ours = _message(flow, flow.tensor([1.0]), flow.tensor([1.0], dtype=flow.float64))
    assert "attribute 'dtype'" in ours and "float32" in ours
    flow.testing.assert_close(
        flow.tensor([1.0]), flow.tensor([1.0], dtype=flow.float64), check_dtype=False
    )
    assert _message(flow, flow.tensor([1.0]), flow.tensor([2.0]), msg="custom") == "custom"
    for m in (flow, torch):
        with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
            m.testing.assert_close(m.ones(1), m.ones(1), rtol=1e-3)
        nan = m.tensor([float("nan")])
        with pytest.raises(AssertionError):
            m.testing.assert_close(nan, nan)
        m.testing.assert_close(nan, nan, equal_nan=True)
        m.testing.assert_close(
            {"a": [m.ones(2), 1.0]}, {"a": [m.ones(2), 1.0]}
        )  # nested containers
        with pytest.raises(AssertionError):
            m.testing.assert_close([m.ones(2)], [m.zeros(2)])
        m.testing.assert_close(1.0, 1.0 + 1e-9)
        with pytest.raises(AssertionError):
            m.testing.assert_close(1.0, 1.1)


# ---- utils.checkpoint ---------------------------------------------------------------------------


def _block(m):
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(6, 8), m.nn.Tanh(), m.nn.Dropout(0.5), m.nn.Linear(8, 3))
    net.train()
    return net


def _grads(m, use_checkpoint, reentrant):
    net = _block(m)
    with m.no_grad():  # the same weights in both frameworks
        for p, w in zip(net.parameters(), _WEIGHTS):
            p.copy_(m.tensor(w))
    x = m.tensor(_X, requires_grad=True)
    m.manual_seed(5)
    if use_checkpoint:
        y = (
            checkpoint(net, x, use_reentrant=reentrant)
            if m is flow
            else torch.utils.checkpoint.checkpoint(net, x, use_reentrant=reentrant)
        )
    else:
        y = net(x)
    (y**2).sum().backward()
    return y.detach().numpy(), x.grad.numpy(), [p.grad.numpy() for p in net.parameters()]


_rng = np.random.default_rng(1)
_X = _rng.standard_normal((4, 6)).astype(np.float32)
_WEIGHTS = [
    p.detach().numpy()
    for p in torch.nn.Sequential(
        torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 3)
    ).parameters()
]


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_gives_the_gradients_of_the_plain_run(reentrant):
    # The dropout mask is drawn again in backward from the saved RNG state, so the checkpointed
    # gradients equal those of the plain run bit for bit.
    y0, gx0, gp0 = _grads(flow, False, reentrant)
    y1, gx1, gp1 = _grads(flow, True, reentrant)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(gx0, gx1)
    for a, b in zip(gp0, gp1):
        np.testing.assert_array_equal(a, b)
    # torch behaves the same (its own RNG, so only the equalities are compared).
    t0, tx0, tp0 = _grads(torch, False, reentrant)
    t1, tx1, tp1 = _grads(torch, True, reentrant)
    np.testing.assert_allclose(tx0, tx1, rtol=1e-6)


def test_checkpoint_rng_and_modes():
    net = flow.nn.Sequential(flow.nn.Linear(3, 3), flow.nn.Dropout(0.5))
    flow.manual_seed(2)
    x = flow.randn(5, 3)
    before = flow.get_rng_state()
    y = checkpoint(net, x, use_reentrant=False)
    after = flow.get_rng_state()
    y.sum().backward()  # recomputes with a forked RNG: the stream is where forward left it
    np.testing.assert_array_equal(flow.get_rng_state().numpy(), after.numpy())
    assert not np.array_equal(before.numpy(), after.numpy())
    # use_reentrant=False: parameters get gradients although the input does not require grad,
    # and keyword arguments pass through.
    assert net[0].weight.grad is not None
    lin = flow.nn.Linear(3, 2)
    out = checkpoint(lambda a, scale=1.0: lin(a) * scale, x, use_reentrant=False, scale=2.0)
    out.sum().backward()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), 2 * np.tile(x.numpy().sum(0), (2, 1)), rtol=1e-5
    )
    for m, ck in ((flow, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            ck(lambda a, s=1: a, m.ones(2, requires_grad=True), use_reentrant=True, s=2)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            ck(lambda a: a * 2, m.ones(2), use_reentrant=True)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(lambda a: a * 2, flow.ones(2, requires_grad=True))
    seq = flow.nn.Sequential(*[flow.nn.Linear(4, 4) for _ in range(4)])
    z = flow.randn(2, 4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = seq(z)
        got = checkpoint_sequential(seq, 2, z, use_reentrant=False)
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    got.sum().backward()
    assert z.grad is not None and all(p.grad is not None for p in seq.parameters())
