"""flow.save / flow.load round trips and the file format's guarantees."""
from collections import OrderedDict
import io
import json
import pickle
import struct

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
from oneflow_like import serialization


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


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
    # plain containers keep format version 1 (JSON tree), readable by version-1 readers
    assert header["version"] == 1 and "pickle" not in header and len(header["tensors"]) == 3


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
    np.testing.assert_array_equal(m2[0].weight.detach().numpy(), [1.0, 2.0, 3.0])


def test_errors(tmp_path):
    with pytest.raises((pickle.PicklingError, AttributeError), match="Can't pickle"):
        flow.save({"f": lambda: 0}, io.BytesIO())  # not a container tree, and not picklable
    bad = tmp_path / "bad"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="bad magic"):
        flow.load(bad)
    buf = io.BytesIO()
    flow.save(flow.ones(100), buf)
    with pytest.raises(ValueError, match="truncated"):
        flow.load(io.BytesIO(buf.getvalue()[:-200]))


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("scale", flow.tensor([2.0]))
        self.tag = "net"

    def forward(self, x):
        return self.fc(x) * self.scale


def test_whole_module_and_arbitrary_objects_are_pickled(tmp_path):
    import argparse

    net = _Net()
    args = argparse.Namespace(lr=0.1, epochs=3)
    obj = {"model": net, "args": args, "arr": np.arange(4.0), "dtype": flow.float64}
    shapes = {"shape": flow.ones(2, 3).shape, "seen": {1, 2}}
    flow.save(shapes, tmp_path / "shapes.pt")  # a Size and a set: pickled, allowed by default
    assert flow.load(tmp_path / "shapes.pt") == shapes
    path = tmp_path / "ckpt.pt"
    flow.save(obj, path)
    (n,) = struct.unpack("<Q", path.read_bytes()[8:16])
    header = json.loads(path.read_bytes()[16 : 16 + n])
    assert header["version"] == 2 and "pickle" in header and len(header["tensors"]) == 4
    with pytest.raises(
        pickle.UnpicklingError,
        match=r"Weights only load failed.*_Net.*" r"add_safe_globals.*weights_only=False",
    ):
        flow.load(path)
    back = flow.load(path, weights_only=False)
    m = back["model"]
    assert isinstance(m, _Net) and m is not net and m.tag == "net"
    assert isinstance(m.fc.weight, nn.Parameter) and m.fc.weight.requires_grad
    x = flow.randn(4, 3)
    np.testing.assert_array_equal(m(x).detach().numpy(), net(x).detach().numpy())
    assert back["args"] == args and back["dtype"] is flow.float64
    np.testing.assert_array_equal(back["arr"], np.arange(4.0))


def test_safe_globals_allow_listed_classes(tmp_path):
    import argparse

    path = tmp_path / "ns.pt"
    flow.save({"args": argparse.Namespace(a=1), "w": flow.ones(2)}, path)
    with serialization.safe_globals([argparse.Namespace]):
        assert flow.load(path)["args"].a == 1
    assert argparse.Namespace not in serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match="argparse.Namespace"):
        flow.load(path)
    serialization.add_safe_globals([argparse.Namespace])
    try:
        assert flow.load(path, weights_only=True)["w"].tolist() == [1.0, 1.0]
    finally:
        serialization.clear_safe_globals()


def test_map_location_forms_and_parameters(tmp_path):
    p = nn.Parameter(flow.ones(2))
    path = tmp_path / "p"
    flow.save({"p": p, "t": flow.zeros(1)}, path)
    back = flow.load(path)
    assert isinstance(back["p"], nn.Parameter) and not isinstance(back["t"], nn.Parameter)
    seen = []
    out = flow.load(path, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cpu", "cpu"] and out["p"].device.type == "cpu"
    assert flow.load(path, map_location={"cuda:0": "cpu"})["t"].device.type == "cpu"
    assert flow.load(path, map_location=flow.device("cpu"))["t"].device.type == "cpu"
    if not flow.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"cuda.is_available\(\) is False.*map_location"):
            flow.load(path, map_location="cuda")
