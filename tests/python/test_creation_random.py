"""Creation ops against NumPy; random ops' statistics and reproducibility under manual_seed."""
import numpy as np
import pytest

import oneflow_like as flow


@pytest.mark.parametrize(
    "args,kw,ref",
    [
        ((5,), {}, np.arange(5)),
        ((2, 9, 3), {}, np.arange(2, 9, 3)),
        ((1.0, 2.0, 0.25), {}, np.arange(1, 2, 0.25)),
        ((5, 0, -2), {}, np.arange(5, 0, -2)),
        ((0, 1, 0.1), {"dtype": flow.float64}, np.arange(0, 1, 0.1)),
        ((3,), {"dtype": flow.float32}, np.arange(3, dtype=np.float32)),
    ],
)
def test_arange(args, kw, ref):
    t = flow.arange(*args, **kw)
    assert tuple(t.shape) == ref.shape
    if "dtype" not in kw:
        assert t.dtype == (flow.int64 if ref.dtype.kind == "i" else flow.float32)
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6)


def test_linspace_eye():
    np.testing.assert_allclose(flow.linspace(-1, 2, 7).numpy(), np.linspace(-1, 2, 7), rtol=1e-6)
    np.testing.assert_allclose(flow.linspace(0, 1, 1).numpy(), [0])
    assert flow.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_array_equal(
        flow.linspace(3, 9, 4, dtype=flow.float64).numpy(), np.linspace(3, 9, 4)
    )
    np.testing.assert_array_equal(flow.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(flow.eye(2, 4, dtype=flow.int64).numpy(), np.eye(2, 4))


def test_creation_errors():
    with pytest.raises(ValueError, match=r"\[arange\] step must be nonzero"):
        flow.arange(0, 3, 0)
    with pytest.raises(ValueError, match=r"\[arange\]"):
        flow.arange(3, 0, 1)
    with pytest.raises(ValueError, match=r"\[linspace\]"):
        flow.linspace(0, 1, -1)
    with pytest.raises(TypeError, match=r"\[randn\]"):
        flow.randn(2, dtype=flow.int64)
    with pytest.raises(ValueError, match=r"\[randint\]"):
        flow.randint(3, 3, (2,))


N = 200_000


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
def test_rand_randn_statistics(dtype):
    u = flow.rand(N, dtype=dtype).numpy()
    assert u.dtype == (np.float32 if dtype == flow.float32 else np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    n = flow.randn(400, 500, dtype=dtype).numpy()
    assert n.shape == (400, 500)
    assert abs(n.mean()) < 0.01 and abs(n.var() - 1) < 0.02
    assert abs(np.mean(np.abs(n) < 1) - 0.6827) < 0.01
    m = flow.normal(2.0, 3.0, (N,)).numpy()
    assert abs(m.mean() - 2) < 0.05 and abs(m.std() - 3) < 0.05


def test_randint_randperm():
    r = flow.randint(-3, 4, (N,)).numpy()
    assert r.dtype == np.int64 and r.min() == -3 and r.max() == 3
    counts = np.bincount(r + 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.01)
    assert flow.randint(5, (2, 3)).shape == (2, 3)
    p = flow.randperm(1000).numpy()
    assert p.dtype == np.int64
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    assert flow.randperm(0).shape == (0,)


def test_inplace_fills_and_bernoulli():
    x = flow.zeros(N)
    x.uniform_(-2, 3)
    a = x.numpy()
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.03
    x.normal_(1.0, 0.5)
    a = x.numpy()
    assert abs(a.mean() - 1) < 0.01 and abs(a.std() - 0.5) < 0.01
    x.random_(0, 10)
    a = x.numpy()
    assert set(np.unique(a)) == set(range(10))
    # on a strided view: only the view's elements change
    y = flow.zeros(4, 6)
    y[:, ::2].uniform_(1, 2)
    b = y.numpy()
    assert np.all(b[:, 1::2] == 0) and np.all(b[:, ::2] >= 1)
    p = flow.full((N,), 0.3)
    s = flow.bernoulli(p).numpy()
    assert set(np.unique(s)) <= {0.0, 1.0} and abs(s.mean() - 0.3) < 0.01
    with pytest.raises(ValueError, match=r"requires grad"):
        flow.zeros(3, requires_grad=True).uniform_()
    with flow.no_grad():
        flow.zeros(3, requires_grad=True).normal_()


def test_manual_seed_reproducible():
    def draw():
        return [
            flow.rand(5).numpy(),
            flow.randn(3, 2).numpy(),
            flow.randint(0, 100, (4,)).numpy(),
            flow.randperm(7).numpy(),
            flow.zeros(6).uniform_().numpy(),
        ]

    flow.manual_seed(1234)
    first = draw()
    flow.manual_seed(1234)
    second = draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    flow.manual_seed(4321)
    third = draw()
    assert not np.array_equal(first[0], third[0])
    # consecutive draws differ
    assert not np.array_equal(flow.rand(5).numpy(), flow.rand(5).numpy())


def test_random_requires_grad_and_generator_kw():
    t = flow.randn(3, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert flow.rand(2, generator=None).shape == (2,)
    assert flow.rand_like(t).shape == (3,) and flow.randn_like(t).dtype == flow.float32
