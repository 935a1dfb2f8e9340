// flow.cuda: device queries and memory statistics (a CPU-only build reports no device).
#include "device/cpu/gemm.h"
#include "device/cuda/cuda_api.h"
#include "oneflow_like/base/allocator.h"
#include "python/csrc/binding.h"
#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace python {
namespace {

int DeviceIndex(py::object d) {
  if (d.is_none()) return 0;
  if (PyLong_Check(d.ptr())) return py::cast<int>(d);
  return ParseDevice(d).index();
}

void BindCuda(py::module_& m, TensorClass&) {
  py::module_ c = m.def_submodule("cuda", "CUDA device queries");
  c.def("is_available", &cuda::IsAvailable);
  c.def("device_count", &cuda::GetDeviceCount);
  c.def(
      "synchronize",
      [](py::object d) {
        Status s;
        {
          py::gil_scoped_release nogil;
          s = vm::VirtualMachine::Get()->SyncAll();  // first everything the VM has queued
          if (s.ok() && cuda::IsAvailable())
            s = cuda::Synchronize(d.is_none() ? -1 : DeviceIndex(d));
        }
        Check(s);
      },
      py::arg("device") = py::none());
  c.def("empty_cache", [] {
    py::gil_scoped_release nogil;
    (void)vm::VirtualMachine::Get()->SyncAll();
    cuda::EmptyCache();
  });
  c.def(
      "memory_allocated",
      [](py::object d) { return Unwrap(cuda::MemoryAllocated(DeviceIndex(d))); },
      py::arg("device") = py::none());
  c.def(
      "max_memory_allocated",
      [](py::object d) { return Unwrap(cuda::MaxMemoryAllocated(DeviceIndex(d))); },
      py::arg("device") = py::none());
  c.def(
      "memory_reserved", [](py::object d) { return Unwrap(cuda::MemoryReserved(DeviceIndex(d))); },
      py::arg("device") = py::none());
  c.def(
      "reset_peak_memory_stats",
      [](py::object d) { Check(cuda::ResetPeakMemoryStats(DeviceIndex(d))); },
      py::arg("device") = py::none());
  c.def("set_allow_tf32", &cuda::SetAllowTF32);
  // CPU allocator statistics, for memory benchmarks and tests.
  m.def("_cpu_memory_stats", [] {
    AllocatorStats s = CpuAllocator()->Stats();
    py::dict d;
    d["allocated"] = s.allocated;
    d["reserved"] = s.reserved;
    d["peak_allocated"] = s.peak_allocated;
    return d;
  });
  m.def("_cpu_reset_peak", [] { CpuAllocator()->ResetPeak(); });
  m.def("_cpu_empty_cache", [] { CpuAllocator()->EmptyCache(); });
  // Time inside the f32 GEMM (eager matmul and graph GEMM thunks alike), for benchmarks.
  m.def("_cpu_gemm_stats", [] {
    cpu::GemmStats s = cpu::GetGemmStats();
    py::dict d;
    d["calls"] = s.calls;
    d["seconds"] = s.seconds;
    d["autotuned"] = s.autotuned;
    return d;
  });
  m.def("_cpu_reset_gemm_stats", [] { cpu::ResetGemmStats(); });
}

}  // namespace
OFL_PY_BINDING(BindCuda);
}  // namespace python
}  // namespace oneflow_like
