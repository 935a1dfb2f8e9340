"""torch.storage: UntypedStorage/TypedStorage over tensors' memory, the legacy typed classes,
Tensor.set_(storage), nbytes/itemsize/storage_type/is_set_to, from_file; checked against torch
where it is installed (torch 1.13 has no Tensor.untyped_storage: its storage().untyped())."""
import os
import pickle
import warnings

import numpy as np
import pytest

import oneflow_like as flow

try:
    import torch
except ImportError:
    torch = None


def _torch_untyped(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int64", "bool", "uint8"])
def test_untyped_storage_bytes_match_torch(dtype):
    a = (np.arange(6) % 3).astype(dtype)
    x = flow.tensor(a)
    s = x.untyped_storage()
    assert s.nbytes() == s.size() == len(s) == a.nbytes and s.element_size() == 1
    assert s.tolist() == list(a.tobytes())
    if torch is not None:
        assert s.tolist() == _torch_untyped(torch.tensor(a)).tolist()


def test_storage_is_the_whole_allocation_and_shared():
    x = flow.arange(6.0)
    v = x[2:].view(2, 2)
    s = v.untyped_storage()
    assert s.nbytes() == 24 and s.data_ptr() == x.data_ptr()  # from byte 0, not v's offset
    s[0:4] = flow.tensor(list(np.float32(7.5).tobytes()), dtype=flow.uint8)
    assert x[0].item() == 7.5  # a write through the storage reaches the tensor
    x[5] = -1.0
    assert x.storage()[5] == -1.0  # and the other way round


def test_typed_storage_and_legacy_classes():
    x = flow.tensor([1.5, 2.5, 3.5], dtype=flow.float64)
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        flow.storage._warned.clear()
        ts = x.storage()
    assert type(ts) is flow.TypedStorage and ts.dtype == flow.float64
    assert ts.size() == 3 and ts.element_size() == 8 and ts.nbytes() == 24 and ts[-1] == 3.5
    assert ts.tolist() == [1.5, 2.5, 3.5] and list(ts) == [1.5, 2.5, 3.5]
    assert x.storage_type() is flow.DoubleStorage and ts.type() == "torch.DoubleStorage"
    assert ts.untyped().nbytes() == 24
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = flow.FloatStorage([1, 2, 3])
        assert (
            isinstance(f, flow.TypedStorage) and f.dtype == flow.float32 and f.tolist() == [1, 2, 3]
        )
        assert flow.LongStorage(4).tolist() == [0, 0, 0, 0]
        assert f.double().dtype == flow.float64 and f.int().tolist() == [1, 2, 3]
        assert f.type("torch.IntStorage").tolist() == [1, 2, 3]
        assert flow.ByteStorage([1, 2]).type(flow.DoubleStorage).tolist() == [1.0, 2.0]
        with pytest.raises(RuntimeError, match="float32"):
            flow.FloatStorage(2, dtype=flow.int64)
    if torch is not None:
        assert repr(ts) == repr(torch.tensor([1.5, 2.5, 3.5], dtype=torch.float64).storage())
        # an untyped storage's float() converts its byte values, as torch's
        u = flow.arange(2.0).untyped_storage().float().tolist()
        assert u == torch.arange(2.0).storage().untyped().float().tolist()


def test_set_from_storage_and_is_set_to():
    x = flow.arange(8.0)
    t = flow.empty(0)
    t.set_(x.untyped_storage(), 2, (2, 2), (1, 2))
    assert t.tolist() == [[2.0, 4.0], [3.0, 5.0]]
    assert t.is_set_to(x.as_strided((2, 2), (1, 2), 2)) and not t.is_set_to(x)
    whole = flow.empty(0).set_(x.untyped_storage())
    assert whole.shape == (8,) and whole.is_set_to(x)
    with pytest.raises(RuntimeError, match="whole number of"):
        flow.empty(0, dtype=flow.float64).set_(flow.arange(3.0).untyped_storage())
    if torch is not None:
        tx = torch.arange(8.0)
        tt = torch.empty(0).set_(tx.storage(), 2, (2, 2), (1, 2))
        assert tt.tolist() == t.tolist()


def test_nbytes_itemsize_match_torch():
    for dt in ("float32", "float64", "int8", "int64", "bool", "complex64"):
        x = flow.zeros(3, 5, dtype=getattr(flow, dt))
        assert x.nbytes == 15 * x.element_size() and x.itemsize == x.element_size()
    assert flow.zeros(3, dtype=flow.bfloat16).nbytes == 6


def test_pickle_storages():
    x = flow.tensor([1, 2, 3], dtype=flow.int32)
    s = pickle.loads(pickle.dumps(x.untyped_storage()))
    assert type(s) is flow.UntypedStorage and s.tolist() == list(np.int32([1, 2, 3]).tobytes())
    ts = pickle.loads(pickle.dumps(x._typed_storage()))
    assert ts.dtype == flow.int32 and ts.tolist() == [1, 2, 3]


def test_from_file_shared_and_private(tmp_path):
    path = str(tmp_path / "data.bin")
    np.arange(4, dtype=np.float32).tofile(path)
    private = flow.from_file(path, shared=False, size=4, dtype=flow.float32)
    assert private.tolist() == [0.0, 1.0, 2.0, 3.0]
    private[0] = 9.0  # copy-on-write: the file keeps its bytes
    assert np.fromfile(path, dtype=np.float32)[0] == 0.0
    shared = flow.from_file(path, shared=True, size=4, dtype=flow.float32)
    shared[1] = 5.0
    del shared
    assert np.fromfile(path, dtype=np.float32)[1] == 5.0  # shared: the write reached the file
    grown = str(tmp_path / "new.bin")
    t = flow.from_file(grown, shared=True, size=3, dtype=flow.int64)  # created and sized
    assert t.tolist() == [0, 0, 0] and os.path.getsize(grown) == 24
    with pytest.raises(RuntimeError, match="fewer than"):
        flow.from_file(path, shared=False, size=100, dtype=flow.float32)
    with pytest.raises(RuntimeError, match="cannot open"):
        flow.from_file(str(tmp_path / "missing.bin"), shared=False, size=1)
    u = flow.UntypedStorage.from_file(path, shared=False, nbytes=8)
    assert u.nbytes() == 8
    if torch is not None:
        assert (
            torch.from_file(path, shared=False, size=4).tolist()
            == flow.from_file(path, shared=False, size=4).tolist()
        )


def test_storage_errors_name_the_problem():
    s = flow.arange(3.0).untyped_storage()
    with pytest.raises(IndexError, match="out of range"):
        s[12]
    with pytest.raises(RuntimeError, match="size mismatch"):
        s.copy_(flow.UntypedStorage(4))
    with pytest.raises(TypeError, match="tensor or a storage"):
        flow.empty(0).set_([1, 2])
    assert (
        flow.UntypedStorage(4)
        .copy_(flow.tensor([1], dtype=flow.int32).untyped_storage())
        .tolist()[0]
        == 1
    )


def test_resize_keeps_leading_elements():
    s = flow.UntypedStorage([1, 2, 3])
    assert s.resize_(5).tolist() == [1, 2, 3, 0, 0] and s.resize_(2).tolist() == [1, 2]


def test_serialization_location_helpers():
    from oneflow_like import serialization as S

    x = flow.ones(2)
    assert S.location_tag(x) == S.location_tag(x.untyped_storage()) == "cpu"
    assert S.default_restore_location(x, "cpu") is x
    assert S.storage_to_tensor_type(x._typed_storage()) is flow.FloatTensor
    assert S.normalize_storage_type(flow.FloatStorage) is flow.FloatStorage
    assert S.StorageType("LongStorage").dtype == flow.int64
    if not flow.cuda.is_available():
        with pytest.raises(RuntimeError, match="map_location='cpu'"):
            S.default_restore_location(x, "cuda:0")
    seen = []
    S.register_package(5, lambda o: seen.append("tag") or None, lambda o, loc: None)
    try:
        assert S.location_tag(x) == "cpu" and seen == ["tag"]  # consulted first, then cpu's
    finally:
        S._package_registry.pop(0)
    with S.mkdtemp() as d:
        assert os.path.isdir(d)
    assert not os.path.exists(d)


def test_storage_pinning_follows_the_tensor():
    s = flow.arange(3.0).untyped_storage()
    assert s.is_pinned() is False
    if not flow.cuda.is_available():
        with pytest.raises(RuntimeError, match="pin_memory"):
            s.pin_memory()
