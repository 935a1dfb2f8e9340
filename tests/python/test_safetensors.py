"""flow.save / flow.load of safetensors files: read and written by the safetensors package itself."""
import io

import numpy as np
import pytest
import safetensors.numpy as stnp

import oneflow_like as flow
import oneflow_like.nn as nn


def _state():
    flow.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    return m, m.state_dict()


def test_state_dict_round_trip_and_package_reads_it(tmp_path):
    m, sd = _state()
    path = tmp_path / "model.safetensors"
    flow.save(sd, path, metadata={"format": "pt"})
    back = stnp.load_file(str(path))  # the package's own reader
    assert set(back) == set(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(back[k], v.detach().numpy())
        assert back[k].dtype == v.detach().numpy().dtype
    loaded = flow.load(path)
    m2 = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    m2.load_state_dict(loaded)
    x = flow.randn(5, 4)
    m.eval(), m2.eval()
    np.testing.assert_array_equal(m(x).detach().numpy(), m2(x).detach().numpy())


def test_loads_files_written_by_the_package(tmp_path):
    arrays = {
        "w": np.arange(12, dtype=np.float32).reshape(3, 4),
        "d": np.linspace(-1, 1, 5),
        "h": np.array([1.5, -2.0], dtype=np.float16),
        "i": np.array([[1, -2]], dtype=np.int64),
        "b": np.array([True, False]),
        "u": np.arange(4, dtype=np.uint8),
    }
    path = tmp_path / "np.safetensors"
    stnp.save_file(arrays, str(path))
    got = flow.load(str(path))
    for k, a in arrays.items():
        assert got[k].detach().numpy().dtype == a.dtype, k
        np.testing.assert_array_equal(got[k].detach().numpy(), a)


def test_bfloat16_bits_survive(tmp_path):
    t = flow.tensor([1.0, -2.5, 3.140625, 1e-3]).to(flow.bfloat16)
    path = tmp_path / "bf.safetensors"
    flow.save({"t": t}, path)
    got = flow.load(path)["t"]
    assert got.dtype == flow.bfloat16
    np.testing.assert_array_equal(got.detach().numpy(), t.detach().numpy())
    with open(path, "rb") as fh:  # stored as 2-byte BF16, as PyTorch writes it
        data = fh.read()
    assert b'"BF16"' in data and len(data) < 200


def test_format_argument_file_objects_and_sniffing(tmp_path):
    sd = {"a": flow.ones(2, 2), "b": flow.zeros(3, dtype=flow.int32)}
    buf = io.BytesIO()
    flow.save(sd, buf, format="safetensors")
    buf.seek(0)
    got = flow.load(buf)  # recognised from its contents
    np.testing.assert_array_equal(got["a"].detach().numpy(), np.ones((2, 2), np.float32))
    plain = tmp_path / "plain.bin"
    flow.save(sd, plain, format="safetensors")
    assert flow.load(plain, format="safetensors")["b"].dtype == flow.int32
    # the native format still round-trips any nesting
    flow.save({"x": [flow.ones(1)]}, tmp_path / "n.oflw")
    assert flow.load(tmp_path / "n.oflw")["x"][0].item() == 1.0


def test_bad_inputs_raise_clearly(tmp_path):
    with pytest.raises(TypeError, match="flat dict of str -> tensor"):
        flow.save([flow.ones(1)], tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="'a' is a dict"):
        flow.save({"a": {"b": flow.ones(1)}}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="metadata must map str to str"):
        flow.save({"a": flow.ones(1)}, tmp_path / "x.safetensors", metadata={"k": 1})
    with pytest.raises(ValueError, match="format must be"):
        flow.save({"a": flow.ones(1)}, tmp_path / "x.bin", format="onnx")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b'\x10\x00\x00\x00\x00\x00\x00\x00{"a": 1}')
    with pytest.raises(ValueError, match="bad.safetensors.*not a valid safetensors"):
        flow.load(bad)
    e8m0 = tmp_path / "e8m0.safetensors"  # a dtype oneflow_like lacks (float8_e8m0fnu)
    head = b'{"x":{"dtype":"F8_E8M0","shape":[2],"data_offsets":[0,2]}}'
    head += b" " * (-len(head) % 8)
    e8m0.write_bytes(len(head).to_bytes(8, "little") + head + b"\x01\x02")
    with pytest.raises(TypeError, match="'x' has dtype F8_E8M0"):
        flow.load(e8m0)


def test_map_location(tmp_path):
    path = tmp_path / "m.safetensors"
    flow.save({"a": flow.ones(2)}, path)
    got = flow.load(path, map_location=lambda t: t * 2)
    np.testing.assert_array_equal(got["a"].detach().numpy(), [2.0, 2.0])


def test_pytorch_reads_and_writes_the_same_files(tmp_path):
    torch = pytest.importorskip("torch")  # Debian's python3-torch, where installed
    st_torch = pytest.importorskip("safetensors.torch")
    _, sd = _state()
    path = tmp_path / "ours.safetensors"
    flow.save(sd, path)
    theirs = st_torch.load_file(str(path))
    for k, v in sd.items():
        np.testing.assert_array_equal(theirs[k].detach().numpy(), v.detach().numpy())
    tpath = tmp_path / "theirs.safetensors"
    st_torch.save_file({"w": torch.arange(6.0).reshape(2, 3).to(torch.bfloat16)}, str(tpath))
    got = flow.load(tpath)["w"]
    assert got.dtype == flow.bfloat16
    np.testing.assert_array_equal(got.detach().numpy(), np.arange(6.0).reshape(2, 3))
