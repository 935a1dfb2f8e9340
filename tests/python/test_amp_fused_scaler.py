"""The fused GradScaler ops (oneflow_like/opdefs/amp.def; kernels/cpu/amp.cc, kernels/cuda/amp.*):
flow._amp_foreach_non_finite_check_and_unscale_ and flow._amp_update_scale_ against float64 NumPy
references (every float dtype, inf/nan/-inf at any position, zero and odd sizes, strided grads,
empty lists), their errors, torch's update rule over many steps, and GradScaler running on them
(grouped per device and dtype). torch 1.13 has no CPU kernels for these two ops; GradScaler's
schedule against torch 1.13's class is test_amp.py::test_grad_scaler_matches_torch. The CUDA
kernels are checked against the CPU where a device exists (skipped, visibly, without one)."""
import numpy as np
import pytest

import oneflow_like as flow

DTYPES = {
    "float16": (flow.float16, np.float16),
    "bfloat16": (flow.bfloat16, None),
    "float32": (flow.float32, np.float32),
    "float64": (flow.float64, np.float64),
}
SIZES = [0, 1, 15, 1037, 70001]


def bf16_round(x):
    """float32 values rounded to bf16 (nearest even, NaN kept) and widened back to float32."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), r)


def stored(x, name):
    """float64 values as the dtype stores them (back in float64)."""
    if name == "bfloat16":
        return bf16_round(x).astype(np.float64)
    return np.asarray(x).astype(DTYPES[name][1]).astype(np.float64)


def grad(values, name):
    if name == "float64":
        return flow.tensor(np.asarray(values, dtype=np.float64))
    return flow.tensor(np.asarray(values, dtype=np.float32)).to(DTYPES[name][0])


def expected_unscaled(x, name, inv):
    """The kernels' result: f16/bf16/f32 multiply in float32 and round once; f64 in double."""
    if name == "float64":
        return x * np.float64(np.float32(inv))
    prod = x.astype(np.float32) * np.float32(inv)
    return stored(prod, name)


def flags(v=0.0):
    return flow.full((), v, dtype=flow.float32)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_unscale_matches_reference(name, n):
    inv_value = 1.0 / 1024.0 * 3.0
    x = stored(np.random.default_rng(n).standard_normal(n) * 1e3, name)
    g = grad(x, name)
    found, inv = flags(), flow.full((), inv_value, dtype=flow.float32)
    flow._amp_foreach_non_finite_check_and_unscale_([g], found, inv)
    assert g.dtype == DTYPES[name][0] and tuple(g.shape) == (n,)
    got = g.double().numpy()
    np.testing.assert_array_equal(got, expected_unscaled(x, name, inv_value))
    # and within the dtype's rounding of the exact float64 product
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-7, "float64": 1e-15}[name]
    np.testing.assert_allclose(got, x * np.float64(np.float32(inv_value)), rtol=tol, atol=1e-6)
    assert found.item() == 0.0


@pytest.mark.parametrize("name", sorted(DTYPES))
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("n,where", [(1, 0), (17, 16), (1037, 0), (1037, 518), (70001, 70000)])
def test_found_inf_at_any_position(name, bad, n, where):
    x = stored(np.random.default_rng(2).standard_normal(n), name)
    x[where] = bad
    clean = grad(np.ones(5), name)
    g = grad(x, name)
    found = flags()
    flow._amp_foreach_non_finite_check_and_unscale_(
        [clean, g, clean], found, flow.full((), 0.5, dtype=flow.float32)
    )
    assert found.item() == 1.0
    got = g.double().numpy()
    want = expected_unscaled(x, name, 0.5)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    # a tensor listed twice is unscaled twice (torch loops over the list), never raced
    np.testing.assert_array_equal(clean.double().numpy(), np.full(5, 0.25))


def test_found_inf_is_only_ever_raised_and_finite_overflow_is_not_reported():
    found = flags(1.0)
    g = flow.ones(8)
    flow._amp_foreach_non_finite_check_and_unscale_([g], found, flow.full((), 2.0))
    assert found.item() == 1.0  # not reset by a clean list
    np.testing.assert_array_equal(g.numpy(), np.full(8, 2.0, np.float32))
    # a finite value that overflows when scaled up is not an inf of the input (torch checks the
    # values before scaling)
    found = flags()
    h = flow.full((4,), 3e38)
    flow._amp_foreach_non_finite_check_and_unscale_([h], found, flow.full((), 4.0))
    assert found.item() == 0.0 and np.isinf(h.numpy()).all()


def test_mixed_dtypes_many_tensors_and_inv_scale_one():
    rng = np.random.default_rng(3)
    names = ["float32", "bfloat16", "float16", "float64"] * 30
    xs = [stored(rng.standard_normal(int(rng.integers(0, 300))), n) for n in names]
    gs = [grad(x, n) for x, n in zip(xs, names)]
    found = flags()
    flow._amp_foreach_non_finite_check_and_unscale_(gs, found, flow.full((), 0.125))
    for x, n, g in zip(xs, names, gs):
        np.testing.assert_array_equal(g.double().numpy(), expected_unscaled(x, n, 0.125))
    assert found.item() == 0.0
    # inv_scale 1: values untouched, inf still found
    xs[7][0] = np.inf
    gs = [grad(x, n) for x, n in zip(xs, names)]
    flow._amp_foreach_non_finite_check_and_unscale_(gs, found, flow.full((), 1.0))
    for x, g in zip(xs, gs):
        np.testing.assert_array_equal(g.double().numpy(), x)
    assert found.item() == 1.0


@pytest.mark.parametrize(
    "view",
    [lambda t: t.t(), lambda t: t[:, 3:40], lambda t: t[::2, 1::3]],
    ids=["t", "slice", "step"],
)
@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_strided_grads_are_updated_in_place(view, name):
    base_np = stored(np.random.default_rng(4).standard_normal((67, 45)), name)
    base = grad(base_np, name)
    g = view(base)
    assert not g.is_contiguous()
    found = flags()
    flow._amp_foreach_non_finite_check_and_unscale_([g], found, flow.full((), 0.25))
    want = base_np.copy()
    sel = view(flow.tensor(np.arange(base_np.size).reshape(base_np.shape))).numpy().reshape(-1)
    flat = want.reshape(-1)
    flat[sel] = expected_unscaled(flat[sel], name, 0.25)
    np.testing.assert_array_equal(base.double().numpy(), want)


def test_empty_list_does_nothing():
    found = flags(0.5)
    assert flow._amp_foreach_non_finite_check_and_unscale_([], found, flow.full((), 2.0)) is None
    assert found.item() == 0.5


def test_unscale_errors_name_the_op_and_operands():
    op = "_amp_foreach_non_finite_check_and_unscale_"
    inv = flow.full((), 0.5)
    with pytest.raises(TypeError, match=op + ".*found_inf must be a one-element float32"):
        flow._amp_foreach_non_finite_check_and_unscale_(
            [flow.ones(2)], flow.zeros(()).double(), inv
        )
    with pytest.raises(TypeError, match="found_inf must be a one-element float32.*f32\\[2\\]"):
        flow._amp_foreach_non_finite_check_and_unscale_([flow.ones(2)], flow.zeros(2), inv)
    with pytest.raises(TypeError, match="inv_scale must be a one-element float32"):
        flow._amp_foreach_non_finite_check_and_unscale_(
            [flow.ones(2)], flags(), flow.ones((), dtype=flow.float16)
        )
    with pytest.raises(TypeError, match=op + ".*grads\\[1\\] must be a floating point.*s64"):
        flow._amp_foreach_non_finite_check_and_unscale_(
            [flow.ones(2), flow.ones(3, dtype=flow.int64)], flags(), inv
        )
    with pytest.raises(TypeError, match="grads\\[0\\] must be a floating point.*c64"):
        flow._amp_foreach_non_finite_check_and_unscale_(
            [flow.ones(2, dtype=flow.complex64)], flags(), inv
        )
    w = flow.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match=op + ".*not differentiable.*requires grad"):
        flow._amp_foreach_non_finite_check_and_unscale_([w], flags(), inv)


@pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device (device mismatch)")
def test_unscale_device_mismatch_is_an_error():
    with pytest.raises(ValueError, match="grad.*is on cuda.*found_inf is on cpu"):
        flow._amp_foreach_non_finite_check_and_unscale_(
            [flow.ones(2, device="cuda")], flags(), flow.full((), 0.5)
        )


def update_reference(scale, tracker, found, growth, backoff, interval):
    """torch._amp_update_scale_'s rule in float32 scale arithmetic (the factors in double)."""
    if found:
        return np.float32(np.float64(scale) * backoff), 0
    n = tracker + 1
    if n == interval:
        with np.errstate(over="ignore"):
            grown = np.float32(np.float64(scale) * growth)
        return (grown if np.isfinite(grown) else scale), 0
    return scale, n


@pytest.mark.parametrize(
    "init,growth,backoff,interval",
    [(2.0**16, 2.0, 0.5, 3), (1.0, 1.7, 0.3, 1), (3e38, 2.0, 0.5, 2), (65536.0, 1.001, 0.999, 5)],
)
def test_update_scale_schedule_over_many_steps(init, growth, backoff, interval):
    rng = np.random.default_rng(5)
    scale = flow.full((), init, dtype=flow.float32)
    tracker = flow.zeros((), dtype=flow.int32)
    rs, rt = np.float32(init), 0
    for step in range(200):
        found = float(rng.random() < 0.15) * (1.0 + step % 3)  # any non-zero counts
        out = flow._amp_update_scale_(scale, tracker, flags(found), growth, backoff, interval)
        rs, rt = update_reference(rs, rt, found != 0, growth, backoff, interval)
        assert out.item() == scale.item()  # returns scale
        assert np.float32(scale.item()) == rs, step
        assert tracker.item() == rt, step
        assert scale.dtype == flow.float32 and tracker.dtype == flow.int32


def test_update_scale_errors():
    op = "_amp_update_scale_"
    s, t, f = flow.ones(()), flow.zeros((), dtype=flow.int32), flags()
    with pytest.raises(TypeError, match=op + ".*scale must be a one-element float32"):
        flow._amp_update_scale_(s.double(), t, f, 2.0, 0.5, 10)
    with pytest.raises(TypeError, match="growth_tracker must be a one-element int32.*s64"):
        flow._amp_update_scale_(s, t.long(), f, 2.0, 0.5, 10)
    with pytest.raises(TypeError, match="found_inf must be a one-element float32"):
        flow._amp_update_scale_(s, t, flow.zeros(2), 2.0, 0.5, 10)


def test_op_table_lists_both_ops_with_defaults():
    table = flow._C._amp_table()
    rows = {r["name"]: r for r in table["ops"]}
    apis = {a["name"]: a for a in table["apis"]}
    assert apis["_amp_update_scale_"]["entry"] == "AmpUpdateScale_"
    assert rows["_amp_update_scale_"]["attrs"] == {
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
    }
    assert rows["_amp_foreach_non_finite_check_and_unscale_"]["kind"] == "unscale"


@pytest.mark.parametrize("bad_step", [None, 1])
def test_grad_scaler_groups_dtypes_and_unscales_with_the_fused_op(bad_step):
    """Params of three dtypes (f32, bf16, f64: one fused call per dtype group); the unscaled grads
    equal grad / scale in each dtype, and an inf in any group skips the step."""
    rng = np.random.default_rng(6)
    ws = {
        "float32": flow.tensor(rng.standard_normal(33).astype(np.float32), requires_grad=True),
        "bfloat16": flow.tensor(
            bf16_round(rng.standard_normal(40)), dtype=flow.bfloat16, requires_grad=True
        ),
        "float64": flow.tensor(rng.standard_normal(7), requires_grad=True),
    }
    opt = flow.optim.SGD(list(ws.values()), lr=0.0)
    scaler = flow.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    rs, rt = np.float32(8.0), 0
    scaler.scale(flow.ones(()))  # creates the scale and growth tracker
    for step in range(3):
        opt.zero_grad()
        gs = {}
        for name, w in ws.items():
            g = stored(rng.standard_normal(w.numel()) * 8.0, name)
            if step == bad_step and name == "bfloat16":
                g[3] = np.inf
            w.grad = grad(g, name)
            gs[name] = g
        scale = scaler.get_scale()
        scaler.unscale_(opt)
        for name, w in ws.items():
            got = w.grad.double().numpy()
            want = expected_unscaled(gs[name], name, np.float32(1.0 / scale))
            np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
            fin = np.isfinite(want)
            np.testing.assert_array_equal(got[fin], want[fin])
        scaler.step(opt)
        scaler.update()
        rs, rt = update_reference(rs, rt, step == bad_step, 2.0, 0.5, 2)
        assert scaler.get_scale() == rs and scaler._get_growth_tracker() == rt, step


@pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_cuda_kernels_match_cpu(name):
    rng = np.random.default_rng(7)
    xs = [stored(rng.standard_normal(n) * 100, name) for n in (0, 1, 1037, 70001)]
    xs[2][5] = np.nan
    cpu = [grad(x, name) for x in xs]
    gpu = [grad(x, name).to("cuda") for x in xs]
    fc, fg = flags(), flags().to("cuda")
    flow._amp_foreach_non_finite_check_and_unscale_(cpu, fc, flow.full((), 0.375))
    flow._amp_foreach_non_finite_check_and_unscale_(gpu, fg, flow.full((), 0.375).to("cuda"))
    assert fc.item() == fg.item() == 1.0
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(c.double().numpy(), g.cpu().double().numpy())
    s, t = flow.full((), 4.0), flow.zeros((), dtype=flow.int32)
    sg, tg = s.to("cuda"), t.to("cuda")
    for step in range(20):
        f = flags(float(step % 7 == 3))
        flow._amp_update_scale_(s, t, f, 2.0, 0.5, 3)
        flow._amp_update_scale_(sg, tg, f.to("cuda"), 2.0, 0.5, 3)
        assert s.item() == sg.item() and t.item() == tg.item()
