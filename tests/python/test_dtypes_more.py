"""The dtypes appended after complex (issue 19): int16 with the full integer kernel set; uint16,
uint32, uint64 and the float8 types with torch 2.x's limited support (creation, copies and
casts, views, comparisons / bitwise / min-max for the unsigned ones, NumPy and DLPack interop,
save/load). References: NumPy for the integer types, ml_dtypes (PyPI, `make deps`) for float8.
"""
import math

import ml_dtypes
import numpy as np
import pytest

import oneflow_like as flow

rng = np.random.default_rng(19)

UNSIGNED = [flow.uint16, flow.uint32, flow.uint64]
FLOAT8 = [flow.float8_e4m3fn, flow.float8_e5m2, flow.float8_e4m3fnuz, flow.float8_e5m2fnuz]
LIMITED = UNSIGNED + FLOAT8
NP = {flow.int16: np.int16, flow.uint16: np.uint16, flow.uint32: np.uint32,
      flow.uint64: np.uint64}  # fmt: skip
ML = {
    flow.float8_e4m3fn: ml_dtypes.float8_e4m3fn,
    flow.float8_e5m2: ml_dtypes.float8_e5m2,
    flow.float8_e4m3fnuz: ml_dtypes.float8_e4m3fnuz,
    flow.float8_e5m2fnuz: ml_dtypes.float8_e5m2fnuz,
}
TORCH_NAME = {
    flow.uint16: "UInt16", flow.uint32: "UInt32", flow.uint64: "UInt64",
    flow.float8_e4m3fn: "Float8_e4m3fn", flow.float8_e5m2: "Float8_e5m2",
    flow.float8_e4m3fnuz: "Float8_e4m3fnuz", flow.float8_e5m2fnuz: "Float8_e5m2fnuz",
}  # fmt: skip


def name(d):
    return str(d).rpartition(".")[2]


def bits8(t):
    """The raw bytes of a float8 tensor as a uint8 array."""
    return t.contiguous().view(flow.uint8).numpy()


# ---- dtype objects -----------------------------------------------------------------------------


def test_dtype_objects():
    assert flow.short is flow.int16 and repr(flow.int16) == "oneflow_like.int16"
    # appended after complex128 (10): stored dtype numbers never move
    assert [int(d) for d in [flow.int16] + LIMITED] == list(range(11, 19))
    sizes = {flow.int16: 2, flow.uint16: 2, flow.uint32: 4, flow.uint64: 8}
    for d in [flow.int16] + LIMITED:
        assert d.itemsize == sizes.get(d, 1), d
        assert d.is_floating_point == (d in FLOAT8), d
        assert not d.is_complex
        assert d.is_signed == (d not in UNSIGNED), d
        assert getattr(flow, name(d)) is d
    assert not flow.uint8.is_signed and flow.int8.is_signed and not flow.bool.is_signed


def test_iinfo_finfo():
    for d in [flow.int16] + UNSIGNED:
        i, n = flow.iinfo(d), np.iinfo(NP[d])
        assert (i.bits, i.min, i.max) == (n.bits, int(n.min), int(n.max)), d
    for d in FLOAT8:
        f, m = flow.finfo(d), ml_dtypes.finfo(ML[d])
        assert f.bits == 8
        assert (f.eps, f.max, f.min, f.tiny) == (float(m.eps), float(m.max), float(m.min),
                                                 float(m.tiny)), d  # fmt: skip
        assert f.smallest_normal == f.tiny and f.resolution == 1.0
    assert flow.finfo(flow.float8_e4m3fn).max == 448.0
    with pytest.raises(TypeError, match="not a floating point"):
        flow.finfo(flow.uint16)
    with pytest.raises(TypeError, match="not an integer"):
        flow.iinfo(flow.float8_e5m2)


# ---- creation, NumPy interop -------------------------------------------------------------------


@pytest.mark.parametrize("d", [flow.int16] + LIMITED, ids=name)
def test_creation(d):
    z, o = flow.zeros(2, 3, dtype=d), flow.ones(4, dtype=d)
    assert z.dtype == d and o.dtype == d and z.shape == (2, 3)
    assert z.float().sum().item() == 0 and o.float().tolist() == [1.0] * 4
    f = flow.full((3,), 5, dtype=d)
    assert f.to(flow.float64).tolist() == [5.0] * 3
    e = flow.empty(2, dtype=d)
    e.fill_(3)
    assert e.to(flow.float32).tolist() == [3.0, 3.0]
    assert flow.zeros_like(f).dtype == d
    t = flow.tensor([1, 2, 3], dtype=d)
    assert t.dtype == d and t.to(flow.int64).tolist() == [1, 2, 3]
    c = t.clone()
    c[0] = 7  # copy_ into a view
    assert c.to(flow.int64).tolist() == [7, 2, 3] and t.to(flow.int64).tolist() == [1, 2, 3]
    assert t[1:].contiguous().to(flow.int64).tolist() == [2, 3]


@pytest.mark.parametrize("d", [flow.int16] + UNSIGNED, ids=name)
def test_numpy_interop(d):
    info = np.iinfo(NP[d])
    a = np.array([info.min, 0, 1, info.max], dtype=NP[d])
    t = flow.from_numpy(a)
    assert t.dtype == d and t.numpy().dtype == NP[d]
    np.testing.assert_array_equal(t.numpy(), a)
    a[1] = 9  # from_numpy shares memory
    assert int(t.numpy()[1]) == 9
    assert flow.tensor(a).dtype == d  # tensor() copies, keeping the dtype
    assert t.tolist() == [int(v) for v in a]


def test_float8_numpy_through_float32():
    v = np.array([0.5, -2.0, 448.0, 3.3], np.float32)
    for d in FLOAT8:
        t = flow.tensor(v, dtype=d)  # NumPy has no float8: rounded from float32
        assert t.dtype == d
        out = t.numpy()
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, v.astype(ML[d]).astype(np.float32))
        # ml_dtypes arrays come in by their dtype name, bytes shared
        m = v.astype(ML[d])
        w = flow.from_numpy(m)
        assert w.dtype == d
        np.testing.assert_array_equal(bits8(w), m.view(np.uint8))


# ---- casts both ways ---------------------------------------------------------------------------


INT_SOURCES = [np.int8, np.uint8, np.int16, np.int32, np.int64]


@pytest.mark.parametrize("d", [flow.int16] + UNSIGNED, ids=name)
def test_integer_casts_vs_numpy(d):
    # from every integer dtype: wraps modulo 2^n, as NumPy's astype
    big = rng.integers(-(2**62), 2**62, 50, dtype=np.int64)
    for src in INT_SOURCES:
        a = big.astype(src)
        np.testing.assert_array_equal(flow.from_numpy(a).to(d).numpy(), a.astype(NP[d]))
    # from floats: truncation toward zero through int64, as torch
    f = (rng.standard_normal(50) * 1000).astype(np.float32)
    np.testing.assert_array_equal(
        flow.from_numpy(f).to(d).numpy(), f.astype(np.int64).astype(NP[d])
    )
    f64 = rng.uniform(0, 2**40, 20)
    np.testing.assert_array_equal(
        flow.from_numpy(f64).to(d).numpy(), f64.astype(np.int64).astype(NP[d])
    )
    # back to every dtype
    info = np.iinfo(NP[d])
    a = np.array([info.min, 0, 1, 7, info.max], dtype=NP[d])
    t = flow.from_numpy(a)
    for dst in [np.float32, np.float64, np.int64, np.int32, np.int8, np.uint8, np.float16]:
        np.testing.assert_array_equal(t.to(getattr(flow, np.dtype(dst).name)).numpy(),
                                      a.astype(dst))  # fmt: skip
    assert t.bool().tolist() == [bool(v) for v in a]
    for other in [flow.int16] + UNSIGNED:
        np.testing.assert_array_equal(t.to(other).numpy(), a.astype(NP[other]))
    assert flow.from_numpy(np.array([2**64 - 1], np.uint64)).double().item() == 2.0**64


def test_uint64_full_range():
    x = flow.full((2,), 2.0**63 + 2.0**12, dtype=flow.uint64)
    assert x.numpy().tolist() == [2**63 + 2**12] * 2
    y = flow.from_numpy(np.array([2**64 - 1, 2**63], np.uint64))
    assert y.to(flow.int64).tolist() == [-1, -(2**63)]


def _float8_inputs():
    specials = [0.0, -0.0, 1.0, -1.0, 448.0, 460.0, 464.0, 470.0, 480.0, 240.0, 248.0, 250.0,
                57344.0, 61439.0, 61440.0, 65536.0, 1e9, -1e9, 2.0**-9, 2.0**-10, 3 * 2.0**-11,
                2.0**-16, 2.0**-17, 1e-30, math.inf, -math.inf, math.nan]  # fmt: skip
    wide = rng.standard_normal(500) * np.exp2(rng.integers(-20, 18, 500))
    return np.concatenate([np.array(specials), wide]).astype(np.float32)


@pytest.mark.parametrize("d", FLOAT8, ids=name)
def test_float8_from_float32_vs_ml_dtypes(d):
    # round to nearest even; e4m3fn and the fnuz types have no infinity (out of range: NaN),
    # e5m2 overflows to inf: ml_dtypes implements the same formats and rules as torch's c10.
    x = _float8_inputs()
    want = x.astype(ML[d]).view(np.uint8)
    got = bits8(flow.from_numpy(x).to(d))
    nan_w = np.isnan(x.astype(ML[d]).astype(np.float32))
    np.testing.assert_array_equal(got[~nan_w], want[~nan_w])
    # NaN: e4m3fn / e5m2 keep the sign (0x7f / 0xff), fnuz has the one NaN 0x80
    back = flow.from_numpy(got.copy()).view(d).float().numpy()
    assert np.isnan(back[nan_w]).all()
    if d in (flow.float8_e4m3fnuz, flow.float8_e5m2fnuz):
        assert (got[nan_w] == 0x80).all()
        assert not (got == 0x80)[~nan_w].any()  # and no negative zero
    # from float16 / bfloat16 / float64: through float32, as torch
    h = x[np.isfinite(x) & (np.abs(x) < 6e4)].astype(np.float16)
    np.testing.assert_array_equal(
        bits8(flow.from_numpy(h).to(d)), bits8(flow.from_numpy(h.astype(np.float32)).to(d))
    )
    np.testing.assert_array_equal(
        bits8(flow.from_numpy(x.astype(np.float64)).to(d)), bits8(flow.from_numpy(x).to(d))
    )
    # from integers
    ints = np.array([0, 1, -3, 17, 300, 100000], np.int64)
    np.testing.assert_array_equal(
        bits8(flow.from_numpy(ints).to(d)), ints.astype(np.float32).astype(ML[d]).view(np.uint8)
    )


@pytest.mark.parametrize("d", FLOAT8, ids=name)
def test_float8_to_every_dtype(d):
    codes = np.arange(256, dtype=np.uint8)
    t = flow.from_numpy(codes).view(d)
    ref = codes.view(ML[d]).astype(np.float32)
    f = t.float().numpy()
    nan = np.isnan(ref)
    assert (np.isnan(f) == nan).all()
    np.testing.assert_array_equal(f[~nan], ref[~nan])
    np.testing.assert_array_equal(np.signbit(f[~nan]), np.signbit(ref[~nan]))
    np.testing.assert_array_equal(t.double().numpy()[~nan], ref[~nan].astype(np.float64))
    np.testing.assert_array_equal(t.half().numpy()[~nan], ref[~nan].astype(np.float16))
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(t.to(flow.int64).numpy()[fin], ref[fin].astype(np.int64))
    np.testing.assert_array_equal(t.to(flow.int16).numpy()[fin],
                                  ref[fin].astype(np.int64).astype(np.int16))  # fmt: skip
    assert t.bool().numpy().tolist() == (ref != 0).tolist()
    for other in FLOAT8:  # float8 -> float8 through float32
        np.testing.assert_array_equal(
            bits8(t.to(other))[fin], ref[fin].astype(ML[other]).view(np.uint8)
        )


def test_strided_and_broadcast_casts():
    a = rng.standard_normal((4, 6)).astype(np.float32)
    t = flow.from_numpy(a).t()  # strided source
    got = t.to(flow.float8_e5m2).float().numpy()
    np.testing.assert_array_equal(got, a.T.astype(ml_dtypes.float8_e5m2).astype(np.float32))
    u = flow.zeros(3, 4, dtype=flow.uint32)
    u[:, 1:3] = flow.tensor([[7.9, 2.0]] * 3)  # copy_ with broadcast and cast into a view
    assert u.to(flow.int64).tolist() == [[0, 7, 2, 0]] * 3


# ---- Tensor.view(dtype) ------------------------------------------------------------------------


def test_view_dtype_reinterprets():
    h = np.array([1.0, -2.5, 65504.0], np.float16)
    x = flow.from_numpy(h.copy())
    for d, nd in [(flow.int16, np.int16), (flow.uint16, np.uint16), (flow.bfloat16, None)]:
        v = x.view(d)
        assert v.dtype == d and v.shape == x.shape
        if nd is not None:
            np.testing.assert_array_equal(v.numpy(), h.view(nd))
    assert x.view(flow.int16).view(flow.float16).numpy().tolist() == h.tolist()
    i = flow.from_numpy(np.array([1, 2], np.int32))
    np.testing.assert_array_equal(i.view(flow.float32).numpy(), np.array([1, 2], np.int32).view(
        np.float32))  # fmt: skip
    assert i.view(dtype=flow.uint32).numpy().tolist() == [1, 2]
    # shares storage both ways
    w = x.view(flow.int16)
    w[0] = 0
    assert x[0].item() == 0.0
    f8 = flow.zeros(3, dtype=flow.uint8).view(flow.float8_e4m3fn)
    f8.view(flow.uint8)[1] = 0x38  # 1.0 in e4m3fn
    assert f8.float().tolist() == [0.0, 1.0, 0.0]
    assert x.view(-1).shape == (3,) and x.view(3, 1).shape == (3, 1)  # views by shape still work
    with pytest.raises(RuntimeError, match=r"\[view\] self.size\(-1\) must be divisible by 2.*"
                       r"float16 as int32 \(different element sizes\)"):  # fmt: skip
        x.view(flow.int32)
    # Between sizes (torch 2.x): the last dim scales by the size ratio, the rest follows.
    b = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    for dt, nd in ((flow.int32, np.int32), (flow.float16, np.float16), (flow.int64, None)):
        if nd is None:
            with pytest.raises(RuntimeError, match=r"must be divisible by 8, but got 4"):
                flow.from_numpy(b).view(dt)
            continue
        v = flow.from_numpy(b).view(dt)
        np.testing.assert_array_equal(v.numpy(), b.view(nd))
        np.testing.assert_array_equal(v.view(flow.uint8).numpy(), b)
    sl = flow.from_numpy(b)[:, 1:, :]  # offset 4 and strides divisible by 4
    np.testing.assert_array_equal(
        sl.view(flow.float32).numpy(), b[:, 1:, :].copy().view(np.float32)
    )
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1"):
        flow.from_numpy(b)[..., ::2].view(flow.int16)
    with pytest.raises(RuntimeError, match=r"self.dim\(\) cannot be 0"):
        flow.tensor(1.0).view(flow.uint8)


# ---- int16: the integer kernels, vs NumPy ------------------------------------------------------


def i16(a):
    return flow.from_numpy(np.asarray(a, np.int16))


def test_int16_arithmetic_vs_numpy():
    a = rng.integers(-300, 300, (5, 7)).astype(np.int16)
    b = rng.integers(1, 50, (5, 7)).astype(np.int16)
    x, y = i16(a), i16(b)
    with np.errstate(over="ignore"):
        cases = {
            "add": (x + y, a + b), "sub": (x - y, a - b), "mul": (x * y, a * b),
            "floor_divide": (x // y, a // b), "remainder": (x % y, a % b),
            "fmod": (flow.fmod(x, y), np.fmod(a, b)), "neg": (-x, -a), "abs": (x.abs(), np.abs(a)),
            "and": (x & y, a & b), "or": (x | y, a | b), "xor": (x ^ y, a ^ b), "not": (~x, ~a),
            "lshift": (x << 2, a << 2), "rshift": (x >> 1, a >> 1),
            "maximum": (flow.maximum(x, y), np.maximum(a, b)),
            "clamp": (x.clamp(-100, 100), np.clip(a, -100, 100)),
            "scalar": (x * 3 + 1, a * 3 + 1), "pow": (y**2, b**2),
            "where": (flow.where(x > 0, x, y), np.where(a > 0, a, b)),
        }  # fmt: skip
    for k, (got, want) in cases.items():
        assert got.dtype == flow.int16, k
        np.testing.assert_array_equal(got.numpy(), want, err_msg=k)
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        np.testing.assert_array_equal(getattr(x, op)(y).numpy(), getattr(np, {
            "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
            "ge": "greater_equal"}[op])(a, b))  # fmt: skip
    assert (x / y).dtype == flow.float32
    np.testing.assert_allclose((x / y).numpy(), a / b, rtol=1e-6)
    with pytest.raises(Exception, match="division by zero"):
        (x // i16(np.zeros((5, 7)))).numpy()


def test_int16_reductions_scans_sorting():
    a = rng.integers(-1000, 1000, (4, 9)).astype(np.int16)
    x = i16(a)
    assert x.sum().dtype == flow.int64 and x.sum().item() == int(a.sum(dtype=np.int64))
    np.testing.assert_array_equal(x.sum(1).numpy(), a.sum(1, dtype=np.int64))
    np.testing.assert_array_equal(x.prod(0).numpy(), a.astype(np.int64).prod(0))
    np.testing.assert_array_equal(x.amax(1).numpy(), a.max(1))
    v, i = x.min(1)
    np.testing.assert_array_equal(v.numpy(), a.min(1))
    np.testing.assert_array_equal(i.numpy(), a.argmin(1))
    assert x.argmax().item() == a.argmax()
    np.testing.assert_array_equal(flow.cumsum(x, 1).numpy(), np.cumsum(a, 1, dtype=np.int64))
    s, si = flow.sort(x, 1)
    np.testing.assert_array_equal(s.numpy(), np.sort(a, 1))
    np.testing.assert_array_equal(np.take_along_axis(a, si.numpy(), 1), np.sort(a, 1))
    t = flow.topk(x, 3, 1).values
    np.testing.assert_array_equal(t.numpy(), -np.sort(-a.astype(np.int32), 1)[:, :3])
    assert t.dtype == flow.int16
    u = flow.unique(i16([3, 1, 3, 2]))
    assert u.dtype == flow.int16 and u.tolist() == [1, 2, 3]


def test_int16_indexing_and_shapes():
    a = rng.integers(-50, 50, (6, 5)).astype(np.int16)
    x = i16(a)
    idx = flow.tensor([4, 0, 2])
    np.testing.assert_array_equal(x[idx].numpy(), a[[4, 0, 2]])
    np.testing.assert_array_equal(x.index_select(1, idx[1:]).numpy(), a[:, [0, 2]])
    np.testing.assert_array_equal(x[x > 0].numpy(), a[a > 0])
    g = flow.gather(x, 1, flow.zeros(6, 1, dtype=flow.int64))
    np.testing.assert_array_equal(g.numpy(), a[:, :1])
    np.testing.assert_array_equal(flow.cat([x, x], 0).numpy(), np.concatenate([a, a]))
    np.testing.assert_array_equal(x.t().contiguous().numpy(), a.T)
    np.testing.assert_array_equal(x.flip(0).numpy(), a[::-1])
    y = x.clone()
    y[1:3, 2] = 9
    a2 = a.copy()
    a2[1:3, 2] = 9
    np.testing.assert_array_equal(y.numpy(), a2)
    y.index_put_((flow.tensor([0]), flow.tensor([0])), i16([5]), accumulate=True)
    a2[0, 0] += 5
    np.testing.assert_array_equal(y.numpy(), a2)
    m = x.float().matmul(x.t().float())
    np.testing.assert_array_equal((x @ x.t()).numpy(), m.numpy().astype(np.int16))


# ---- promotion ---------------------------------------------------------------------------------


def test_promotion_torch_rules():
    P = flow.promote_types
    # torch 2.x: int16 with int8 / uint8 -> int16 (and uint8 with int8 -> int16); int16 with
    # a float -> the float; int16 with int32/int64 -> the wider
    assert P(flow.int16, flow.int8) == flow.int16
    assert P(flow.uint8, flow.int16) == flow.int16
    assert P(flow.uint8, flow.int8) == flow.int16
    assert P(flow.int16, flow.int32) == flow.int32 and P(flow.int64, flow.int16) == flow.int64
    assert P(flow.int16, flow.float16) == flow.float16
    assert P(flow.bool, flow.int16) == flow.int16
    # uint16/32/64: only with floating dtypes (torch: "Promotion for uint16, uint32, uint64
    # types is not supported"); float8: only with itself
    for u in UNSIGNED:
        assert P(u, u) == u
        assert P(u, flow.float32) == flow.float32 and P(flow.bfloat16, u) == flow.bfloat16
        for o in [flow.bool, flow.uint8, flow.int8, flow.int16, flow.int32, flow.int64] + [
            v for v in UNSIGNED if v != u
        ]:
            with pytest.raises(TypeError, match="Promotion for uint16, uint32, uint64"):
                P(u, o)
    for f in FLOAT8:
        assert P(f, f) == f
        for o in [flow.float32, flow.float16, flow.int32, flow.bool] + [
            v for v in FLOAT8 if v != f
        ]:
            with pytest.raises(TypeError, match="Promotion for Float8 Types is not supported"):
                P(f, o)
    x8 = flow.tensor([1, -2], dtype=flow.int8)
    u8 = flow.tensor([200, 3], dtype=flow.uint8)
    s = x8 + u8
    assert s.dtype == flow.int16 and s.tolist() == [201, 1]
    h = i16([1, 2])
    assert (h + 1).dtype == flow.int16 and (h + 1.5).dtype == flow.float32
    assert (h * flow.tensor([2.0])).dtype == flow.float32
    assert (h + flow.tensor(3)).dtype == flow.int16  # a 0-d int64 does not promote
    assert flow.result_type(h, flow.tensor([1], dtype=flow.int8)) == flow.int16
    assert flow.result_type(flow.zeros(2, dtype=flow.uint16), 1.5) == flow.float32
    with pytest.raises(TypeError, match=r"Promotion for uint16.*UInt16 and Int"):
        flow.zeros(2, dtype=flow.uint16) == flow.zeros(2, dtype=flow.int32)


# ---- limited dtypes: what works and what raises ------------------------------------------------


@pytest.mark.parametrize("d", UNSIGNED, ids=name)
def test_unsigned_comparisons_bitwise_minmax(d):
    info = np.iinfo(NP[d])
    a = np.array([0, 1, info.max, info.max // 3, 5], NP[d])
    b = np.array([1, 1, info.max - 1, 7, 5], NP[d])
    x, y = flow.from_numpy(a), flow.from_numpy(b)
    for op, f in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                  ("gt", np.greater), ("ge", np.greater_equal)]:  # fmt: skip
        np.testing.assert_array_equal(getattr(x, op)(y).numpy(), f(a, b), err_msg=op)
    np.testing.assert_array_equal((x == 5).numpy(), a == 5)
    np.testing.assert_array_equal((x > 1).numpy(), a > 1)
    np.testing.assert_array_equal((x & y).numpy(), a & b)
    np.testing.assert_array_equal((x | y).numpy(), a | b)
    np.testing.assert_array_equal((x ^ y).numpy(), a ^ b)
    np.testing.assert_array_equal((~x).numpy(), ~a)
    np.testing.assert_array_equal(flow.maximum(x, y).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(flow.minimum(x, y).numpy(), np.minimum(a, b))
    assert x.amax().item() == int(a.max()) and x.amin().item() == int(a.min())
    m = flow.from_numpy(np.stack([a, b]))
    v, i = m.max(0)
    np.testing.assert_array_equal(v.numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(i.numpy(), np.stack([a, b]).argmax(0))
    assert (x & y).dtype == d and flow.maximum(x, y).dtype == d


@pytest.mark.parametrize("d", LIMITED, ids=name)
def test_limited_ops_raise_naming_op_and_dtype(d):
    x = flow.ones(3, dtype=d)
    tn = TORCH_NAME[d]
    cases = {
        "add": lambda: x + x, "sub": lambda: x - x, "mul": lambda: x * x,
        "sum": lambda: x.sum(), "prod": lambda: x.prod(),
        "sort": lambda: flow.sort(x), "abs": lambda: x.abs(),
        "neg": lambda: -x, "index_select": lambda: x.index_select(0, flow.tensor([0])),
        "cat": lambda: flow.cat([x, x]), "arange": lambda: flow.arange(3, dtype=d),
        "add_scalar": lambda: x + 1,
    }  # fmt: skip
    if d in FLOAT8:  # the unsigned types have these; float8 has none
        cases.update({"eq": lambda: x == x, "maximum": lambda: flow.maximum(x, x),
                      "cumsum": lambda: flow.cumsum(x, 0), "exp": lambda: x.exp()})  # fmt: skip
    else:  # the ops whose entries first cast an integer input (to int64 / float32) compute
        assert flow.cumsum(x, 0).tolist() == [1, 2, 3] and x.exp().dtype == flow.float32
    for op, fn in cases.items():
        with pytest.raises(TypeError) as e:
            fn()
        msg = str(e.value)
        assert f"not implemented for '{tn}'" in msg, (op, msg)
        assert f'"{op}"' in msg or f"[{op}]" in msg, (op, msg)


def test_limited_refused_in_graph():
    class G(flow.nn.Graph):
        def build(self, x):
            return x.to(flow.uint16)

    with pytest.raises(TypeError, match="nn.Graph does not support uint16"):
        G()(flow.ones(2))


# ---- printing ----------------------------------------------------------------------------------


def test_printing():
    assert repr(i16([1, -2])) == "tensor([ 1, -2], dtype=oneflow_like.int16)"
    assert repr(flow.tensor([3, 65535], dtype=flow.uint16)) == (
        "tensor([    3, 65535], dtype=oneflow_like.uint16)"
    )
    r = repr(flow.tensor([1.0, -0.5, 448.0], dtype=flow.float8_e4m3fn))
    assert r.startswith("tensor([") and "448." in r and "dtype=oneflow_like.float8_e4m3fn" in r
    assert str(flow.tensor([2.0], dtype=flow.float8_e5m2).item()) == "2.0"


# ---- save / load, safetensors, DLPack ----------------------------------------------------------


def _sample(d):
    if d in FLOAT8:
        return flow.from_numpy(np.arange(256, dtype=np.uint8)).view(d).reshape(16, 16)
    info = np.iinfo(NP[d])
    return flow.from_numpy(np.array([[info.min, 0], [1, info.max]], NP[d]))


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype in FLOAT8:
        np.testing.assert_array_equal(bits8(a), bits8(b))
    else:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


class _Box:
    pass


def test_save_load_round_trip(tmp_path):
    sd = {name(d): _sample(d) for d in [flow.int16] + LIMITED}
    sd["bf16"] = flow.tensor([1.5, -3.0], dtype=flow.bfloat16)  # keeps bfloat16 now too
    sd["strided"] = _sample(flow.float8_e5m2).t()
    flow.save(sd, tmp_path / "m.pt")
    back = flow.load(tmp_path / "m.pt")
    for k in sd:
        _same(sd[k], back[k])

    b = _Box()  # pickled (version 2) files keep them too
    b.w = _sample(flow.float8_e4m3fnuz)
    flow.save(b, tmp_path / "b.pt")
    _same(flow.load(tmp_path / "b.pt", weights_only=False).w, b.w)


def test_safetensors_round_trip(tmp_path):
    import safetensors
    import safetensors.numpy as stnp

    sd = {name(d): _sample(d) for d in [flow.int16] + LIMITED}
    path = tmp_path / "m.safetensors"
    flow.save(sd, path)
    back = flow.load(path)
    for k in sd:
        _same(sd[k], back[k])
    # the header codes other readers expect, the bytes as they are
    entries = dict(safetensors.deserialize(path.read_bytes()))
    codes = {k: e["dtype"] for k, e in entries.items()}
    assert codes == {"int16": "I16", "uint16": "U16", "uint32": "U32", "uint64": "U64",
                     "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
                     "float8_e4m3fnuz": "F8_E4M3FNUZ", "float8_e5m2fnuz": "F8_E5M2FNUZ"}  # fmt: skip
    assert bytes(entries["float8_e5m2"]["data"]) == bytes(range(256))
    # a file written by the safetensors package's NumPy writer loads
    stnp.save_file({"u": np.arange(4, dtype=np.uint32), "s": np.array([-7], np.int16)},
                   str(tmp_path / "np.safetensors"))  # fmt: skip
    d = flow.load(tmp_path / "np.safetensors")
    assert d["u"].dtype == flow.uint32 and d["u"].tolist() == [0, 1, 2, 3]
    assert d["s"].dtype == flow.int16 and d["s"].tolist() == [-7]


@pytest.mark.parametrize("d", [flow.int16] + UNSIGNED + FLOAT8, ids=name)
def test_dlpack(d):
    t = _sample(d)
    back = flow.from_dlpack(t)  # our capsule, our reader: the dtype code round-trips
    _same(t, back)
    if d in NP:
        a = np.from_dlpack(t)
        assert a.dtype == NP[d]
        np.testing.assert_array_equal(a, t.numpy())
        _same(flow.from_dlpack(a.copy()), t)


# ---- CUDA (compile-only here: runs where a GPU is present) ----------------------------------


@pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_int16_and_limited_transfers():
    a = rng.integers(-300, 300, 64).astype(np.int16)
    x = i16(a).cuda()
    np.testing.assert_array_equal((x * 2 + x).cpu().numpy(), a * 3)
    np.testing.assert_array_equal(x.sum().cpu().numpy(), a.sum(dtype=np.int64))
    for d in LIMITED:
        t = _sample(d)
        _same(t.cuda().cpu(), t)  # byte copies between devices
        with pytest.raises(TypeError, match="not implemented for"):
            t.cuda().to(flow.float32)
