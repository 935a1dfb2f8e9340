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


def _signature_args(fn, name):
    """The argument names in a pybind11 docstring's first line `name(a: T, *, b: T = d) -> R`."""
    line = fn.__doc__.splitlines()[0]
    assert line.startswith(name + "(") and ") -> " in line, line
    inner = line[len(name) + 1 : line.rindex(") -> ")]
    return [p.split(":")[0].strip() for p in inner.split(", ")] if inner else []


# ---- the creation table (oneflow_like/opdefs/creation.def) --------------------------------------
CREATION_APIS = {
    "arange": "arange",
    "empty": "size",
    "empty_like": "like",
    "eye": "eye",
    "fill_": "fill",
    "full": "full",
    "full_like": "full_like",
    "linspace": "linspace",
    "ones": "size",
    "ones_like": "like",
    "zero_": "zero",
    "zeros": "size",
    "zeros_like": "like",
}
CREATION_SIGS = {  # where the name is bound (flow._C or flow.Tensor) and its arguments
    "size": ("fn", ["*args", "dtype", "device", "requires_grad"]),
    "full": ("fn", ["size", "fill_value", "dtype", "device", "requires_grad"]),
    "like": ("fn", ["input", "dtype", "device", "requires_grad"]),
    "full_like": ("fn", ["input", "fill_value", "dtype", "device", "requires_grad"]),
    "arange": ("fn", ["start", "end", "step", "*", "dtype", "device", "requires_grad"]),
    "linspace": ("fn", ["start", "end", "steps", "*", "dtype", "device", "requires_grad"]),
    "eye": ("fn", ["n", "m", "*", "dtype", "device", "requires_grad"]),
    "fill": ("method", ["self", "arg0"]),
    "zero": ("method", ["self"]),
}


def test_every_creation_api_is_declared_once_with_the_table_defaults():
    table = flow._C._creation_table()
    apis = {a["name"]: a for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and {n: a["sig"] for n, a in apis.items()} == (
        CREATION_APIS
    )
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"]) == 5
    out = {"dtype": flow.float32, "device": "cpu"}
    assert ops["full"]["attrs"] == {"shape": [], "value": 0.0, **out}
    assert ops["fill_"]["attrs"] == ops["full"]["attrs"] and ops["fill_"]["out"] == "target"
    assert ops["arange"]["attrs"] == {"shape": [], "start": 0.0, "step": 1.0, **out}
    assert ops["linspace"]["attrs"] == {"shape": [], "start": 0.0, "end": 0.0, **out}
    assert ops["eye"]["attrs"] == {"shape": [], **out}
    assert all(o["out"] == "fresh" for n, o in ops.items() if n != "fill_")
    for name, api in apis.items():
        where, args = CREATION_SIGS[api["sig"]]
        fn = getattr(flow._C if where == "fn" else flow.Tensor, name)
        assert _signature_args(fn, name) == args
        if where == "fn":  # (the *_like functions: wrapped to accept memory_format=, issue 19)
            assert getattr(getattr(flow, name), "__wrapped__", getattr(flow, name)) is fn
    # the defaults are the structs': dtype=None is float32 (int64 for an all-integer arange),
    # device=None the CPU, zeros / empty / zero_ fill FullAttrs' value, arange's step is 1
    full = ops["full"]["attrs"]
    fills = {"zero": full["value"], "one": 1.0}
    for name, api in apis.items():
        if api["sig"] == "size":
            t = getattr(flow, name)(2, 3)
        elif api["sig"] == "like":
            t = getattr(flow, name)(flow.full((2, 3), 7.0, dtype=flow.float64))
            assert t.dtype == flow.float64
        elif api["sig"] == "zero":
            t = flow.full((2, 3), 7.0)
            assert getattr(t, name)() is not None
        else:
            assert api["fill"] == "arg"
            continue
        assert t.shape == (2, 3) and t.device.type == full["device"]
        np.testing.assert_array_equal(t.numpy(), np.full((2, 3), fills[api["fill"]]))
    assert flow.zeros(2).dtype == full["dtype"] and flow.full((2,), 1.5).dtype == full["dtype"]
    a = ops["arange"]["attrs"]
    assert f"step: object = {a['step']:g}, *" in flow._C.arange.__doc__
    assert flow.arange(3).dtype == flow.int64 and flow.arange(3.0).dtype == a["dtype"]
    np.testing.assert_array_equal(flow.arange(3).numpy(), np.arange(a["start"], 3, a["step"]))
    assert flow.linspace(0, 1, 3).dtype == ops["linspace"]["attrs"]["dtype"]
    assert flow.eye(2).dtype == ops["eye"]["attrs"]["dtype"]
    t = flow.zeros(2)
    assert t.fill_(2.5) is not None and t.tolist() == [2.5, 2.5]


def test_creation_api_errors_name_the_op():
    with pytest.raises(TypeError, match=r"linspace\(\): incompatible function arguments"):
        flow._C.linspace(0, 1, "3")
    with pytest.raises(TypeError, match=r"full\(\): incompatible function arguments"):
        flow.full((2,), "x")
    with pytest.raises(TypeError, match=r"fill_\(\): incompatible function arguments"):
        flow.zeros(2).fill_("x")
    with pytest.raises(ValueError, match=r"\[full\] negative dimension -1 in shape"):
        flow.zeros(2, -1)
    with pytest.raises(ValueError, match=r"\[eye\] n must be non-negative"):
        flow.eye(-1)


# ---- the random table (oneflow_like/opdefs/random.def) ------------------------------------------
RANDOM_APIS = {
    "bernoulli": "bernoulli",
    "normal": "normal",
    "normal_": "fill_normal",
    "rand": "size",
    "rand_like": "like",
    "randint": "randint",
    "randint_like": "randint_like",
    "randn": "size",
    "randn_like": "like",
    "random_": "fill_random",
    "randperm": "randperm",
    "uniform_": "fill_uniform",
}
_DRAW = ["dtype", "device", "requires_grad"]
RANDOM_SIGS = {  # where the name is bound (flow._C, flow.Tensor or both) and its arguments
    "size": ("fn", ["*args"] + _DRAW + ["generator"]),
    "like": ("fn", ["input", "*"] + _DRAW),
    "randint": ("fn", ["*args", "size"] + _DRAW + ["generator"]),
    "randint_like": ("fn", ["input", "low", "high", "*", "dtype", "device"]),
    "randperm": ("fn", ["n", "*"] + _DRAW + ["generator"]),
    "normal": ("fn", ["mean", "std", "size", "*"] + _DRAW + ["generator"]),
    "bernoulli": ("both", ["*", "generator"]),
    "fill_uniform": ("method", ["self", "from", "to", "*", "generator"]),
    "fill_normal": ("method", ["self", "mean", "std", "*", "generator"]),
    "fill_random": ("method", ["self", "from", "to", "*", "generator"]),
}


def test_every_random_api_is_declared_once_with_the_table_defaults():
    table = flow._C._random_table()
    apis = {a["name"]: a for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and {n: a["sig"] for n, a in apis.items()} == (
        RANDOM_APIS
    )
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"]) == 8
    # Every op carries its seed (drawn at dispatch); the output's description comes first.
    out = {"shape": [], "dtype": flow.float32, "device": "cpu", "seed": 0}
    ints = {**out, "dtype": flow.int64}
    assert ops["uniform"]["attrs"] == {**out, "low": 0.0, "high": 1.0}
    assert ops["normal"]["attrs"] == {**out, "mean": 0.0, "std": 1.0}
    assert ops["randint"]["attrs"] == {**ints, "low": 0, "high": 0}
    assert ops["randperm"]["attrs"] == ints and ops["bernoulli"]["attrs"] == {"seed": 0}
    for name, op in ops.items():  # an in-place op takes its out-of-place op's attributes
        if name.endswith("_"):
            assert op["out"] == "target" and ops[name[:-1]]["attrs"] == op["attrs"]
        else:
            assert op["out"] == ("input" if name == "bernoulli" else "fresh")
    for name, api in apis.items():
        assert api["attrs"] in {f"{o.capitalize()}Attrs" for o in ops}
        where, args = RANDOM_SIGS[api["sig"]]
        if where in ("fn", "both"):
            fn = getattr(flow._C, name)
            assert _signature_args(fn, name) == (["input"] if where == "both" else []) + args
            # (rand_like, ...: wrapped to accept memory_format=, issue 19)
            assert getattr(getattr(flow, name), "__wrapped__", getattr(flow, name)) is fn
        if where in ("method", "both"):
            fn = getattr(flow.Tensor, name)
            assert _signature_args(fn, name) == (["self"] if where == "both" else []) + args
    # the defaults are the structs'
    u, n, r = ops["uniform_"]["attrs"], ops["normal_"]["attrs"], ops["randint_"]["attrs"]
    assert f"from: float = {u['low']}, to: float = {u['high']}, *" in flow.Tensor.uniform_.__doc__
    assert f"mean: float = {n['mean']}, std: float = {n['std']}, *" in flow.Tensor.normal_.__doc__
    assert flow.rand(2).dtype == u["dtype"] and flow.randn(2).dtype == n["dtype"]
    assert flow.rand(2).device.type == u["device"]
    assert flow.randint(5, (2,)).dtype == r["dtype"] and flow.randperm(3).dtype == r["dtype"]
    assert flow.normal(0.0, 1.0, (2,)).dtype == n["dtype"]
    for draw in (flow.randint(3, (1000,)), flow.randint_like(flow.zeros(1000), 3)):
        assert set(np.unique(draw.numpy())) == set(range(r["low"], 3))
    x = flow.zeros(1000)
    assert set(np.unique(x.random_(4).numpy())) == set(range(r["low"], 4))
    a = x.uniform_().numpy()
    assert a.min() >= u["low"] and a.max() < u["high"]


def test_random_api_errors_name_the_op():
    with pytest.raises(TypeError, match=r"\[rand\] expects a floating point dtype"):
        flow.rand(2, dtype=flow.int64)
    with pytest.raises(TypeError, match=r"\[randint\] expects randint\(low=0, high, size\)"):
        flow.randint(3)
    with pytest.raises(TypeError, match=r"randperm\(\): incompatible function arguments"):
        flow.randperm("3")
    with pytest.raises(ValueError, match=r"\[uniform_\] expects low <= high"):
        flow.zeros(3).uniform_(2.0, 1.0)
    with pytest.raises(TypeError, match=r"\[bernoulli\] expects floating point probabilities"):
        flow.bernoulli(flow.tensor([1, 0]))
    with pytest.raises(ValueError, match=r"\[random\] negative dimension -2 in shape"):
        flow.rand(3, -2)
