"""DLPack: zero-copy exchange with NumPy (and PyTorch where installed), both capsule kinds."""
import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like.utils import dlpack


def test_from_numpy_shares_memory_and_keeps_strides():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = flow.from_dlpack(a)
    a[0, 0] = 100.0
    assert t[0, 0].item() == 100.0  # same memory
    b = a[:, ::2]  # a strided view
    tb = flow.from_dlpack(b)
    assert tb.shape == (3, 2) and tb.stride() == (4, 2)
    np.testing.assert_array_equal(tb.numpy(), b)
    del a, b  # the tensors keep the producer's memory alive
    assert tb.sum().item() == pytest.approx(100 + 2 + 4 + 6 + 8 + 10)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8]
)
def test_round_trip_dtypes(dtype):
    a = (np.arange(6) - 2).astype(dtype).reshape(2, 3)
    t = flow.from_dlpack(a)
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype
    assert back.ctypes.data == a.ctypes.data  # numpy -> flow -> numpy: one buffer
    np.testing.assert_array_equal(back, a)


def test_export_to_numpy_shares_our_memory():
    x = flow.arange(6.0).reshape(2, 3)
    n = np.from_dlpack(x)
    x.add_(1.0)  # in place: numpy sees it after the write completes
    np.testing.assert_array_equal(n, np.arange(6.0).reshape(2, 3) + 1)
    nt = np.from_dlpack(x.t())
    assert nt.strides == (4, 12)
    np.testing.assert_array_equal(nt, (np.arange(6.0).reshape(2, 3) + 1).T)
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU, device 0


def test_versioned_and_legacy_capsules():
    x = flow.arange(4.0)
    legacy = dlpack.to_dlpack(x)
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    versioned = x.__dlpack__(max_version=(1, 1))
    assert "dltensor_versioned" in repr(versioned)
    for cap in (legacy, versioned):
        y = dlpack.from_dlpack(cap)
        y.mul_(2.0)
    np.testing.assert_array_equal(x.numpy(), np.arange(4.0) * 4)  # both alias x
    with pytest.raises(TypeError, match="can be imported only once"):
        flow.from_dlpack(versioned)
    del legacy, versioned  # consumed capsules must not free anything twice


def test_unconsumed_capsule_is_released():
    x = flow.ones(1000)
    for _ in range(100):
        x.__dlpack__()  # dropped at once: the capsule's destructor frees the export
        x.__dlpack__(max_version=(1, 0))
    assert x.sum().item() == 1000.0


def test_bfloat16_bool_and_empty():
    bf = flow.tensor([1.0, -2.0, 0.5]).to(flow.bfloat16)
    back = flow.from_dlpack(bf.__dlpack__())
    assert back.dtype == flow.bfloat16
    np.testing.assert_array_equal(back.numpy(), [1.0, -2.0, 0.5])
    m = flow.tensor([True, False])
    assert flow.from_dlpack(m.__dlpack__()).numpy().tolist() == [True, False]
    assert flow.from_dlpack(np.zeros((2, 0), np.float32)).shape == (2, 0)
    s = flow.from_dlpack(np.array(3.0, np.float32))
    assert s.shape == () and s.item() == 3.0


def test_bad_input_raises_clearly():
    with pytest.raises(TypeError, match=r"\[from_dlpack\] unsupported DLPack dtype"):
        # float8_e8m0fnu (DLPack code 14): a dtype oneflow_like lacks, in a CPU capsule
        cap, keep = fake_cuda_capsule(0, device_type=1, dtype=(14, 8))
        flow.from_dlpack(cap)
    with pytest.raises(TypeError, match=r"\[from_dlpack\] expected an object with __dlpack__"):
        flow.from_dlpack([1, 2, 3])
    with pytest.raises(ValueError, match=r"\[__dlpack__\] copy=True"):
        flow.ones(2).__dlpack__(copy=True)
    with pytest.raises(ValueError, match=r"\[__dlpack__\] dl_device"):
        flow.ones(2).__dlpack__(dl_device=(2, 0))

    class Elsewhere:  # a producer on a device we cannot import from
        def __init__(self, device):
            self.device = device

        def __dlpack_device__(self):
            return self.device

        def __dlpack__(self, **kw):
            raise AssertionError("must not be asked for memory")

    with pytest.raises(TypeError, match="DLPack device type 7 cannot be imported"):
        flow.from_dlpack(Elsewhere((7, 0)))  # Vulkan
    with pytest.raises(TypeError, match="is on cuda:9"):
        flow.from_dlpack(Elsewhere((2, 9)))


def test_stream_argument_is_checked():
    x = flow.ones(3)
    assert np.from_dlpack(x).sum() == 3  # NumPy passes no stream
    flow.from_dlpack(x.__dlpack__(stream=-1))  # -1: "no synchronization", allowed on the CPU too
    with pytest.raises(ValueError, match="CPU tensor has no streams"):
        x.__dlpack__(stream=7)
    with pytest.raises(TypeError, match="stream must be an int"):
        x.__dlpack__(stream="default")


def fake_cuda_capsule(device_id, device_type=2, dtype=(2, 32)):
    """A legacy DLPack capsule describing CUDA memory (or another device type), built with ctypes
    (no GPU needed); its data pointer is not dereferenceable."""
    import ctypes

    class DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.c_void_p),
            ("device", DLDevice),
            ("ndim", ctypes.c_int32),
            ("dtype", DLDataType),
            ("shape", ctypes.POINTER(ctypes.c_int64)),
            ("strides", ctypes.POINTER(ctypes.c_int64)),
            ("byte_offset", ctypes.c_uint64),
        ]

    class DLManagedTensor(ctypes.Structure):
        _fields_ = [
            ("dl_tensor", DLTensor),
            ("manager_ctx", ctypes.c_void_p),
            ("deleter", ctypes.c_void_p),
        ]

    shape = (ctypes.c_int64 * 1)(4)
    m = DLManagedTensor(
        DLTensor(
            0x1000, DLDevice(device_type, device_id), 1, DLDataType(*dtype, 1), shape, None, 0
        ),
        None,
        None,
    )
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_void_p,
    ]
    return new(ctypes.addressof(m), b"dltensor", None), (m, shape)  # keep the structs alive


@pytest.mark.skipif(
    flow.cuda.is_available(), reason="checks the import error without a CUDA device"
)
def test_cuda_capsule_without_a_device_raises():
    cap, keep = fake_cuda_capsule(0)
    with pytest.raises(TypeError, match="is on cuda:0, but no CUDA device is available"):
        flow.from_dlpack(cap)


@pytest.mark.skipif(not flow.cuda.is_available(), reason="no CUDA device")
def test_cuda_round_trip_shares_device_memory():
    x = flow.arange(12.0).reshape(3, 4).to("cuda")
    assert x.__dlpack_device__() == (2, 0)
    for stream in (None, -1, 1, 2):
        y = flow.from_dlpack(x.__dlpack__(stream=stream))
        assert y.device.type == "cuda" and y.shape == (3, 4)
        np.testing.assert_array_equal(y.cpu().numpy(), np.arange(12.0).reshape(3, 4))
    y.add_(1.0)  # the import aliases x's memory
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(12.0).reshape(3, 4) + 1)
    yt = flow.from_dlpack(x.t())
    assert yt.stride() == (1, 4)
    with pytest.raises(ValueError, match="stream=0 is ambiguous"):
        x.__dlpack__(stream=0)


@pytest.mark.skipif(not flow.cuda.is_available(), reason="no CUDA device")
def test_pytorch_cuda_round_trip():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    t = torch.arange(6.0, device="cuda").reshape(2, 3)
    ours = flow.from_dlpack(t)
    t.mul_(2)  # PyTorch's stream; our import waited for the device, so compare after a sync
    torch.cuda.synchronize()
    np.testing.assert_array_equal(ours.cpu().numpy(), np.arange(6.0).reshape(2, 3) * 2)
    back = torch.from_dlpack(ours)  # PyTorch passes its current stream
    assert back.data_ptr() == t.data_ptr()


def test_pytorch_round_trip():
    torch = pytest.importorskip("torch")  # Debian's python3-torch, where installed
    t = torch.arange(6.0).reshape(2, 3)
    ours = flow.from_dlpack(t)
    t[0, 0] = 7.0
    assert ours[0, 0].item() == 7.0
    back = torch.from_dlpack(ours)
    assert back.data_ptr() == t.data_ptr()
