"""Property-based fuzzing (issue 18) with hypothesis (Debian's python3-hypothesis): random
shapes, dtypes, strides and attribute values against the op schemas, tensor construction from
arbitrary Python data, and flow.load of corrupted files. Every case must either produce a tensor
whose values can be read, or raise an ordinary Python exception; a crash, a hang (each example
runs under the suite's timeout) or a pending error left for an unrelated sync fails the test.
Derandomized and bounded, so CI runs the same examples every time."""
import io
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import oneflow_like as flow  # noqa: E402

SETTINGS = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DTYPES = [flow.float32, flow.float64, flow.int64, flow.int32, flow.bool]
# What a bad argument may raise: anything else (SystemError, a crash) is a bug.
EXPECTED = (
    ValueError,
    TypeError,
    IndexError,
    RuntimeError,
    NotImplementedError,
    MemoryError,
    OverflowError,
)

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
dims = st.integers(-5, 5)


def _tensor(draw):
    shape = draw(shapes)
    dtype = draw(st.sampled_from(DTYPES))
    data = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape) * 3
    t = flow.tensor(data.astype(np.float64)).to(dtype)
    if draw(st.booleans()) and t.ndim >= 2:
        t = t.transpose(0, 1)  # strided input
    return t


@st.composite
def tensors(draw):
    return _tensor(draw)


UNARY = ["abs", "neg", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "floor", "sign", "square"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "pow", "remainder"]
REDUCE = ["sum", "mean", "amax", "amin", "prod", "argmax", "var", "logsumexp"]


def _check(fn):
    try:
        out = fn()
    except EXPECTED:
        flow.sync()  # a rejected call leaves nothing pending
        return
    outs = out if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        if isinstance(o, flow.Tensor):
            try:
                o.numpy()
            except EXPECTED:  # failed in its kernel: raised here, once
                pass
    flow.sync()


@SETTINGS
@given(x=tensors(), op=st.sampled_from(UNARY))
def test_unary_ops(x, op):
    _check(lambda: getattr(flow, op)(x))


@SETTINGS
@given(x=tensors(), y=tensors(), op=st.sampled_from(BINARY))
def test_binary_ops_broadcast_and_promote(x, y, op):
    _check(lambda: getattr(flow, op)(x, y))


@SETTINGS
@given(x=tensors(), op=st.sampled_from(REDUCE), dim=st.one_of(st.none(), dims), keep=st.booleans())
def test_reductions(x, op, dim, keep):
    fn = getattr(flow, op)
    if op == "argmax":
        _check(lambda: fn(x, dim=dim, keepdim=keep))
    elif dim is None:
        _check(lambda: fn(x))
    else:
        _check(lambda: fn(x, dim, keepdim=keep))


@SETTINGS
@given(
    x=tensors(),
    shape=st.lists(st.integers(-2, 6), max_size=4).map(tuple),
    d0=dims,
    d1=dims,
    start=st.integers(-6, 6),
    length=st.integers(-1, 6),
)
def test_shape_and_index_ops(x, shape, d0, d1, start, length):
    _check(lambda: x.reshape(shape))
    _check(lambda: x.transpose(d0, d1))
    _check(lambda: x.permute(*range(x.ndim - 1, -1, -1)))
    _check(lambda: flow.cat([x, x], d0))
    _check(lambda: flow.stack([x, x], d0))
    _check(lambda: x.narrow(d0, start, length))
    _check(lambda: x.unsqueeze(d0).squeeze(d1))
    _check(lambda: x.flip([d0]))
    _check(lambda: x[start:length])
    _check(lambda: flow.index_select(x, d0, flow.tensor([start, length])))
    _check(lambda: x.expand(*shape))


@SETTINGS
@given(
    x=tensors(),
    kernel=st.integers(0, 4),
    stride=st.integers(0, 3),
    padding=st.integers(-1, 3),
    p=st.floats(-0.5, 1.5),
)
def test_nn_ops_attributes(x, kernel, stride, padding, p):
    F = flow.nn.functional
    _check(lambda: F.softmax(x, dim=-1))
    _check(lambda: F.dropout(x, p=p, training=True))
    _check(lambda: F.max_pool2d(x, kernel, stride, padding))
    _check(lambda: F.avg_pool2d(x, kernel, stride, padding))
    w = flow.ones(2, x.shape[1] if x.ndim == 4 else 1, max(kernel, 1), max(kernel, 1))
    _check(lambda: F.conv2d(x, w, stride=stride, padding=padding))
    _check(lambda: F.layer_norm(x, x.shape[-1:] if x.ndim else (1,)))
    _check(lambda: F.rms_norm(x, x.shape[-1:] if x.ndim else (1,)))
    _check(lambda: F.max_pool3d(x, kernel, stride, padding))
    _check(lambda: F.avg_pool3d(x, kernel, stride, padding))
    _check(lambda: F.adaptive_avg_pool3d(x, kernel))
    w3 = flow.ones(2, x.shape[1] if x.ndim == 5 else 1, 1, max(kernel, 1), max(kernel, 1))
    _check(lambda: F.conv3d(x, w3, stride=stride, padding=padding))
    _check(lambda: F.leaky_relu(x, p))
    _check(lambda: F.softplus(x, beta=p, threshold=kernel))


python_data = st.recursive(
    st.one_of(
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.text(max_size=3),
    ),
    lambda children: st.lists(children, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(data=python_data, dtype=st.one_of(st.none(), st.sampled_from(DTYPES)))
def test_tensor_from_arbitrary_python_data(data, dtype):
    _check(lambda: flow.tensor(data, dtype=dtype) if dtype is not None else flow.tensor(data))


def _saved_bytes():
    buf = io.BytesIO()
    flow.save({"w": flow.arange(12).float().reshape(3, 4), "b": flow.ones(4), "n": 3}, buf)
    return buf.getvalue()


@SETTINGS
@given(
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8),
    cut=st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_load_of_corrupted_files(tmp_path_factory, edits, cut):
    data = bytearray(_saved_bytes())
    for pos, val in edits:
        data[pos % len(data)] = val
    if cut is not None:
        data = data[: cut % len(data)]
    path = tmp_path_factory.mktemp("fuzz") / "f.oflw"
    path.write_bytes(bytes(data))
    try:
        obj = flow.load(str(path))
    except Exception:  # any clear error; never a crash
        flow.sync()
        return
    for v in obj.values() if isinstance(obj, dict) else []:
        if isinstance(v, flow.Tensor):
            v.numpy()
    flow.sync()
