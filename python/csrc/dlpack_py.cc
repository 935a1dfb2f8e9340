// DLPack exchange (third_party/dlpack, v1.1): Tensor.__dlpack__ / __dlpack_device__ and
// flow.from_dlpack, zero-copy both ways, CPU (kDLCPU, kDLCUDAHost) and CUDA (kDLCUDA) memory.
// Export waits for the tensor's pending work (a write-mode access, so the consumer may also
// write) and hands out a DLManagedTensor(Versioned) that keeps the tensor alive; import wraps the
// producer's memory, calling its deleter when the last view dies (through a capsule whose release
// always runs under the GIL, see tensor_py.cc).
//
// Streams (the array API's __dlpack__ contract): the consumer names the stream it will use and
// the producer makes the data safe there. As producer we wait on the host for our work (the
// export is a host-access callback, which the CUDA stream policy runs only after the stream's
// queued kernels are done), so every consumer stream may read at once. As consumer we pass
// stream=1 (CUDA's legacy default stream) and then wait for the device
// (cuda::SynchronizeDevice): any of our streams may read the import.
#include <dlpack/dlpack.h>

#include <cstring>

#include "device/cuda/cuda_api.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"
#include "python/csrc/tensor_py.h"
#include "vm/instructions_builder.h"

namespace oneflow_like {
namespace python {
namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

DLDataType ToDL(DType t) {
  switch (t) {
    case DType::kBool: return {kDLBool, 8, 1};
    case DType::kU8: return {kDLUInt, 8, 1};
    case DType::kI8: return {kDLInt, 8, 1};
    case DType::kI32: return {kDLInt, 32, 1};
    case DType::kI64: return {kDLInt, 64, 1};
    case DType::kF16: return {kDLFloat, 16, 1};
    case DType::kBF16: return {kDLBfloat, 16, 1};
    case DType::kF32: return {kDLFloat, 32, 1};
    case DType::kF64: return {kDLFloat, 64, 1};
    case DType::kC64: return {kDLComplex, 64, 1};
    case DType::kC128: return {kDLComplex, 128, 1};
    case DType::kI16: return {kDLInt, 16, 1};
    case DType::kU16: return {kDLUInt, 16, 1};
    case DType::kU32: return {kDLUInt, 32, 1};
    case DType::kU64: return {kDLUInt, 64, 1};
    case DType::kF8E4M3FN: return {kDLFloat8_e4m3fn, 8, 1};
    case DType::kF8E5M2: return {kDLFloat8_e5m2, 8, 1};
    case DType::kF8E4M3FNUZ: return {kDLFloat8_e4m3fnuz, 8, 1};
    case DType::kF8E5M2FNUZ: return {kDLFloat8_e5m2fnuz, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

StatusOr<DType> FromDL(DLDataType d) {
  if (d.lanes == 1) {
    if (d.code == kDLBool && d.bits == 8) return DType::kBool;
    if (d.code == kDLUInt && d.bits == 8) return DType::kU8;
    if (d.code == kDLInt && d.bits == 8) return DType::kI8;
    if (d.code == kDLInt && d.bits == 16) return DType::kI16;
    if (d.code == kDLInt && d.bits == 32) return DType::kI32;
    if (d.code == kDLUInt && d.bits == 16) return DType::kU16;
    if (d.code == kDLUInt && d.bits == 32) return DType::kU32;
    if (d.code == kDLUInt && d.bits == 64) return DType::kU64;
    if (d.code == kDLComplex && d.bits == 64) return DType::kC64;
    if (d.code == kDLComplex && d.bits == 128) return DType::kC128;
    if (d.code == kDLFloat8_e4m3fn && d.bits == 8) return DType::kF8E4M3FN;
    if (d.code == kDLFloat8_e5m2 && d.bits == 8) return DType::kF8E5M2;
    if (d.code == kDLFloat8_e4m3fnuz && d.bits == 8) return DType::kF8E4M3FNUZ;
    if (d.code == kDLFloat8_e5m2fnuz && d.bits == 8) return DType::kF8E5M2FNUZ;
    if (d.code == kDLInt && d.bits == 64) return DType::kI64;
    if (d.code == kDLFloat && d.bits == 16) return DType::kF16;
    if (d.code == kDLBfloat && d.bits == 16) return DType::kBF16;
    if (d.code == kDLFloat && d.bits == 32) return DType::kF32;
    if (d.code == kDLFloat && d.bits == 64) return DType::kF64;
  }
  return TypeError(
      "[from_dlpack] unsupported DLPack dtype (code %d, bits %d, lanes %d): oneflow_like has "
      "bool, uint8-64, int8-64, float16, bfloat16, float32, float64, complex64/128 and the "
      "float8 types (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz)",
      int(d.code), int(d.bits), int(d.lanes));
}

// What a producer's capsule keeps alive: the tensor and the shape/stride arrays DLTensor uses.
struct ExportCtx {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

template <typename Managed>
void DeleteExported(Managed* m) {
  delete static_cast<ExportCtx*>(m->manager_ctx);
  delete m;
}

// Fills `dl` from `t` (after its pending work); the arrays live in `ctx`.
Status Describe(const Tensor& t, ExportCtx* ctx, DLTensor* dl) {
  if (t.is_lazy()) return InvalidArgument("[__dlpack__] a lazy (traced) tensor has no data yet");
  void* base = nullptr;
  if (t.numel() > 0) {
    py::gil_scoped_release nogil;
    RETURN_IF_ERROR(vm::SyncAccessBlob(t.blob(), vm::AccessMode::kWrite, [&](void* p) {
      base = p;
      return Status();
    }));
  }
  ctx->shape.assign(t.shape().dims().begin(), t.shape().dims().end());
  ctx->strides.assign(t.strides().begin(), t.strides().end());
  dl->data = base ? static_cast<char*>(base) + t.offset() * DTypeSize(t.dtype()) : nullptr;
  dl->device = {t.device().is_cuda() ? kDLCUDA : kDLCPU, t.device().index()};
  dl->ndim = static_cast<int32_t>(t.ndim());
  dl->dtype = ToDL(t.dtype());
  dl->shape = ctx->shape.data();
  dl->strides = ctx->strides.data();
  dl->byte_offset = 0;
  return Status();
}

// The values DLPack allows: CUDA None, -1 (no sync wanted), 1 (legacy default), 2 (per-thread
// default) or a cudaStream_t (> 2; 0 is ambiguous and refused); CPU None or -1. Describe's host
// wait makes any of them safe (see the top of this file).
void CheckStream(const Tensor& t, py::object stream) {
  if (stream.is_none()) return;
  if (!PyLong_Check(stream.ptr()) || PyBool_Check(stream.ptr()))
    throw py::type_error("[__dlpack__] stream must be an int or None, got " +
                         std::string(py::str(py::type::of(stream).attr("__name__"))));
  const long long v = stream.cast<long long>();
  if (t.device().is_cuda()) {
    if (v == 0)
      throw py::value_error(
          "[__dlpack__] stream=0 is ambiguous for CUDA (DLPack): pass 1 for the legacy default "
          "stream, 2 for the per-thread default stream, or a cudaStream_t");
    if (v < -1)
      throw py::value_error("[__dlpack__] stream must be >= -1, got " + std::to_string(v));
  } else if (v != -1) {
    throw py::value_error(
        "[__dlpack__] a CPU tensor has no streams: stream must be None or -1, got " +
        std::to_string(v));
  }
}

// Tensor.__dlpack__(stream=None, max_version=None, dl_device=None, copy=None).
py::object ToDlpack(const Tensor& self, py::object stream, py::object max_version,
                    py::object dl_device, py::object copy) {
  DrainPendingDecrefs();
  if (!copy.is_none() && copy.cast<bool>())
    throw py::value_error("[__dlpack__] copy=True is not supported: the export shares memory");
  if (!dl_device.is_none()) {
    auto dev = dl_device.cast<std::pair<int, int>>();
    int want = self.device().is_cuda() ? kDLCUDA : kDLCPU;
    if (dev.first != want || dev.second != self.device().index())
      throw py::value_error("[__dlpack__] dl_device (" + std::to_string(dev.first) + ", " +
                            std::to_string(dev.second) + ") differs from the tensor's device " +
                            self.device().ToString() + "; move it with .to() first");
  }
  CheckStream(self, stream);
  bool versioned = false;
  if (!max_version.is_none()) versioned = max_version.cast<std::pair<int, int>>().first >= 1;
  auto* ctx = new ExportCtx{self, {}, {}};
  if (versioned) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    m->manager_ctx = ctx;
    m->deleter = &DeleteExported<DLManagedTensorVersioned>;
    Status s = Describe(self, ctx, &m->dl_tensor);
    if (!s.ok()) {
      DeleteExported(m);
      RaiseStatus(s);
    }
    return py::reinterpret_steal<py::object>(PyCapsule_New(m, kVersionedName, [](PyObject* cap) {
      if (PyCapsule_IsValid(cap, kVersionedName)) {  // never consumed: we still own it
        auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedName));
        m->deleter(m);
      }
    }));
  }
  auto* m = new DLManagedTensor{};
  m->manager_ctx = ctx;
  m->deleter = &DeleteExported<DLManagedTensor>;
  Status s = Describe(self, ctx, &m->dl_tensor);
  if (!s.ok()) {
    DeleteExported(m);
    RaiseStatus(s);
  }
  return py::reinterpret_steal<py::object>(PyCapsule_New(m, kLegacyName, [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, kLegacyName)) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kLegacyName));
      m->deleter(m);
    }
  }));
}

// Wraps the described memory; `owner` (a capsule that calls the producer's deleter) lives as
// long as any tensor using it.
// The device of DLPack memory we can import: the host, or a CUDA device this process sees.
Device ImportDevice(int device_type, int device_id) {
  if (device_type == kDLCPU || device_type == kDLCUDAHost) return Device::CPU();
  if (device_type != kDLCUDA)
    throw py::type_error("[from_dlpack] DLPack device type " + std::to_string(device_type) +
                         " cannot be imported: oneflow_like reads CPU (1), CUDA (2) and "
                         "CUDA host (3) memory");
  const int n = cuda::GetDeviceCount();
  if (device_id < 0 || device_id >= n)
    throw py::type_error("[from_dlpack] the tensor is on cuda:" + std::to_string(device_id) +
                         (n == 0 ? std::string(", but no CUDA device is available to this build")
                                 : ", but only " + std::to_string(n) + " CUDA device(s) exist"));
  return Device(DeviceType::kCUDA, device_id);
}

Tensor WrapDL(const DLTensor& dl, bool read_only, py::capsule owner) {
  const Device device = ImportDevice(dl.device.device_type, dl.device.device_id);
  DType dt = Unwrap(FromDL(dl.dtype));
  std::vector<int64_t> shape(dl.shape, dl.shape + dl.ndim);
  int64_t numel = 1, extent = 1;
  for (int i = 0; i < dl.ndim; ++i) numel *= shape[i];
  std::vector<int64_t> strides(dl.ndim);
  for (int i = dl.ndim - 1, s = 1; i >= 0; --i) {  // null strides mean C order
    strides[i] = dl.strides ? dl.strides[i] : s;
    s *= shape[i];
    if (strides[i] < 0)
      throw py::value_error("[from_dlpack] negative strides are not supported (dim " +
                            std::to_string(i) + ")");
    if (shape[i] > 0) extent += (shape[i] - 1) * strides[i];
  }
  if (numel == 0) extent = 0;
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  Shape full(DimVector(shape.begin(), shape.end()));
  Tensor flat;
  if (device.is_cpu()) {
    flat = Unwrap(functional::WrapHost(data, Shape{extent}, dt, KeepPyObject(owner.ptr())));
  } else {
    Status synced;
    {
      py::gil_scoped_release nogil;
      synced = cuda::SynchronizeDevice(device.index());  // the producer's writes are complete
    }
    Check(synced);
    flat = Tensor::Empty(Shape{extent}, dt, device);
    flat.blob()->AdoptExternal(data, KeepPyObject(owner.ptr()));
  }
  NoGradGuard g;
  Tensor t =
      Unwrap(functional::AsStrided(flat, full, DimVector(strides.begin(), strides.end()), 0));
  // Memory the producer marked read-only is never aliased (our tensors are writable): copy it.
  return read_only ? Unwrap(functional::Clone(t)).detach() : t;
}

std::pair<int, int> DlpackDevice(const Tensor& t) {
  return {t.device().is_cuda() ? kDLCUDA : kDLCPU, t.device().index()};
}

template <typename Managed>
void CallDeleter(void* p) {
  auto* m = static_cast<Managed*>(p);
  if (m->deleter) m->deleter(m);
}

// flow.from_dlpack(obj): an object with __dlpack__ (NumPy, PyTorch, JAX, ...) or a capsule.
Tensor FromDlpack(py::object obj) {
  DrainPendingDecrefs();
  py::object cap = obj;
  if (!PyCapsule_CheckExact(obj.ptr())) {
    if (!py::hasattr(obj, "__dlpack__"))
      throw py::type_error(
          "[from_dlpack] expected an object with __dlpack__ or a DLPack capsule, "
          "got " +
          std::string(py::str(py::type::of(obj).attr("__name__"))));
    bool on_cuda = false;
    if (py::hasattr(obj, "__dlpack_device__")) {  // refuse before the producer hands memory over
      auto dev = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
      on_cuda = ImportDevice(dev.first, dev.second).is_cuda();
    }
    // CUDA producers order their work before the stream we name (1: the legacy default stream);
    // WrapDL then waits for the device. CPU producers get no stream.
    py::object stream = on_cuda ? py::object(py::int_(1)) : py::object(py::none());
    try {  // DLPack 1.x producers take max_version; older ones (NumPy < 2.1) do not
      cap = obj.attr("__dlpack__")(py::arg("stream") = stream,
                                   py::arg("max_version") = py::make_tuple(1, 1));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      cap = on_cuda ? obj.attr("__dlpack__")(py::arg("stream") = stream) : obj.attr("__dlpack__")();
    }
  }
  PyObject* c = cap.ptr();
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
    PyCapsule_SetName(c, "used_dltensor_versioned");
    py::capsule owner(m, &CallDeleter<DLManagedTensorVersioned>);
    if (m->version.major != DLPACK_MAJOR_VERSION)
      throw py::type_error("[from_dlpack] DLPack version " + std::to_string(m->version.major) +
                           "." + std::to_string(m->version.minor) + " is not supported (we read " +
                           std::to_string(DLPACK_MAJOR_VERSION) + ".x)");
    return WrapDL(m->dl_tensor, m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, owner);
  }
  if (PyCapsule_IsValid(c, kLegacyName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
    PyCapsule_SetName(c, "used_dltensor");
    py::capsule owner(m, &CallDeleter<DLManagedTensor>);
    return WrapDL(m->dl_tensor, false, owner);
  }
  throw py::type_error(
      "[from_dlpack] not a DLPack capsule named 'dltensor' or "
      "'dltensor_versioned' (a capsule can be imported only once)");
}

void BindDlpack(py::module_& m, TensorClass& cls) {
  m.def("from_dlpack", &FromDlpack, py::arg("ext_tensor"));
  cls.def("__dlpack__", &ToDlpack, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none())
      .def("__dlpack_device__", &DlpackDevice);
}

}  // namespace
OFL_PY_BINDING(BindDlpack);
}  // namespace python
}  // namespace oneflow_like
