"""Bad .oflx files: each must raise a Python exception naming the file and the problem, never
crash. Files are damaged at known places found by walking the flatbuffer (artifact.fbs)."""
import struct

import pytest

import oneflow_like as flow
from oneflow_like import artifact
from artifact_models import build, digits

# Field indices in compiler/artifact/artifact.fbs (declaration order).
ARTIFACT_OPSET, ARTIFACT_CHECKSUM, ARTIFACT_PAYLOAD = 2, 4, 7
PAYLOAD_TENSORS, TENSOR_OFFSET = 1, 4


def _table(buf, pos):
    """(table position, field offsets) of the flatbuffer table at `pos`."""
    vtable = pos - struct.unpack_from("<i", buf, pos)[0]
    vsize = struct.unpack_from("<H", buf, vtable)[0]
    fields = [struct.unpack_from("<H", buf, vtable + 4 + 2 * i)[0] for i in range((vsize - 4) // 2)]
    return pos, fields


def _field(buf, table, index):
    pos, fields = table
    return pos + fields[index]


def _deref(buf, at):
    return at + struct.unpack_from("<I", buf, at)[0]


def _fnv(data, h=14695981039346656037):
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("a") / "good.oflx")
    model = build("mlp")
    flow.export(model, (flow.tensor(digits(4)[0]),), path)
    return open(path, "rb").read()


def _write(tmp_path, data, name="bad.oflx"):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _expect(path, *words):
    with pytest.raises(ValueError) as e:
        flow.load_graph(path)
    msg = str(e.value)
    assert msg.startswith(path), msg
    for w in words:
        assert w in msg, msg
    return msg


def test_good_file_loads(tmp_path, good):
    assert flow.load_graph(_write(tmp_path, good)).opset_version == artifact.OPSET_CURRENT


@pytest.mark.parametrize("keep", [0, 3, 16, 200, "half", -1])
def test_truncated(tmp_path, good, keep):
    n = {"half": len(good) // 2, -1: len(good) - 1}.get(keep, keep)
    msg = _expect(_write(tmp_path, good[:n]))
    assert any(w in msg for w in ("truncated", "bad magic", "empty file")), msg


def test_not_an_artifact(tmp_path):
    _expect(_write(tmp_path, b"HloModule m\n" * 20), "bad magic")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        flow.load_graph(str(tmp_path / "nope.oflx"))


def test_corrupted_tensor_bytes(tmp_path, good):
    bad = bytearray(good)
    bad[-5] ^= 0xFF
    _expect(_write(tmp_path, bytes(bad)), "checksum mismatch")


def test_wrong_checksum(tmp_path, good):
    bad = bytearray(good)
    root = _table(bad, struct.unpack_from("<I", bad, 0)[0])
    at = _field(bad, root, ARTIFACT_CHECKSUM)
    struct.pack_into("<Q", bad, at, struct.unpack_from("<Q", bad, at)[0] ^ 1)
    _expect(_write(tmp_path, bytes(bad)), "checksum mismatch")


def test_future_opset(tmp_path, good):
    bad = bytearray(good)
    root = _table(bad, struct.unpack_from("<I", bad, 0)[0])
    struct.pack_into("<I", bad, _field(bad, root, ARTIFACT_OPSET), 99)
    _expect(_write(tmp_path, bytes(bad)), "op-set 99", "newer")


def test_tensor_offset_out_of_range(tmp_path, good):
    bad = bytearray(good)
    root = _table(bad, struct.unpack_from("<I", bad, 0)[0])
    vec = _deref(bad, _field(bad, root, ARTIFACT_PAYLOAD))
    size, payload = struct.unpack_from("<I", bad, vec)[0], vec + 4
    proot = _table(bad, payload + struct.unpack_from("<I", bad, payload)[0])
    tensors = _deref(bad, _field(bad, proot, PAYLOAD_TENSORS))
    first = _deref(bad, tensors + 4)
    struct.pack_into("<Q", bad, _field(bad, _table(bad, first), TENSOR_OFFSET), 1 << 40)
    # Recompute the checksum so the loader reaches the tensor table.
    data_offset = artifact.describe(_write(tmp_path, good, "ok.oflx"))["data_offset"]
    checksum = _fnv(bad[data_offset:], _fnv(bad[payload : payload + size]))
    struct.pack_into("<Q", bad, _field(bad, root, ARTIFACT_CHECKSUM), checksum)
    _expect(_write(tmp_path, bytes(bad)), "outside the data region")


def test_cli_reports_errors(tmp_path, good, capsys):
    from oneflow_like.artifact.__main__ import main

    path = _write(tmp_path, good[: len(good) // 3])
    assert main(["verify", path]) == 1
    assert path in capsys.readouterr().err
