"""flow.save / flow.load round trips and the file format's guarantees."""
from collections import OrderedDict
import io
import json
import struct

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
from oneflow_like import serialization


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_, np.uint8])
def test_tensor_round_trip_dtypes(tmp_path, dtype):
    a = (np.random.default_rng(0).standard_normal((3, 4)) * 10).astype(dtype)
    t = flow.tensor(a)
    path = tmp_path / "t.ofl"
    flow.save(t, str(path))
    u = flow.load(str(path))
    same(t, u)
    assert u.device.type == "cpu"


def test_scalar_empty_and_noncontiguous(tmp_path):
    objs = [flow.tensor(3.5), flow.zeros(0, 3), flow.tensor(np.arange(6.0).reshape(2, 3)).t()]
    flow.save(objs, tmp_path / "x")
    back = flow.load(tmp_path / "x")
    for a, b in zip(objs, back):
        same(a, b)


def test_nested_structures_keys_and_aliasing():
    w = flow.tensor([1.0, 2.0])
    obj = {
        "a": [w, (w, None, "s", 3, 2.5, True)],
        7: OrderedDict(b=flow.tensor([1])),
        "arr": np.arange(3, dtype=np.int16),
        ("k", 1): -1,
    }
    buf = io.BytesIO()
    flow.save(obj, buf)
    data = buf.getvalue()
    buf.seek(0)
    back = flow.load(buf)
    assert list(back) == ["a", 7, "arr", ("k", 1)]
    assert isinstance(back[7], OrderedDict) and isinstance(back["a"][1], tuple)
    assert back["a"][1][1:] == (None, "s", 3, 2.5, True)
    same(back["a"][0], w)
    assert back["a"][0] is back["a"][1][0]  # an alias is stored once and loads as one tensor
    assert isinstance(back["arr"], np.ndarray) and back["arr"].dtype == np.int16
    (n,) = struct.unpack("<Q", data[8:16])
    header = json.loads(data[16 : 16 + n])
    assert header["version"] == serialization.VERSION and len(header["tensors"]) == 3


def test_requires_grad_and_map_location(tmp_path):
    p = nn.Parameter(flow.ones(2))
    flow.save({"p": p}, tmp_path / "p")
    back = flow.load(tmp_path / "p", map_location="cpu")["p"]
    assert back.requires_grad and back.is_leaf
    calls = []
    flow.load(tmp_path / "p", map_location=lambda t: calls.append(1) or t)
    assert calls == [1]


def test_module_state_dict_round_trip(tmp_path):
    m = nn.Sequential(nn.LayerNorm(3), nn.ReLU())
    with flow.no_grad():
        m[0].weight.copy_(flow.tensor([1.0, 2.0, 3.0]))
    flow.save(m.state_dict(), tmp_path / "m")
    m2 = nn.Sequential(nn.LayerNorm(3), nn.ReLU())
    m2.load_state_dict(flow.load(tmp_path / "m"))
    np.testing.assert_array_equal(m2[0].weight.numpy(), [1.0, 2.0, 3.0])


def test_errors(tmp_path):
    with pytest.raises(TypeError, match="cannot store"):
        flow.save({"f": lambda: 0}, io.BytesIO())
    bad = tmp_path / "bad"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="bad magic"):
        flow.load(bad)
    buf = io.BytesIO()
    flow.save(flow.ones(100), buf)
    with pytest.raises(ValueError, match="truncated"):
        flow.load(io.BytesIO(buf.getvalue()[:-200]))
