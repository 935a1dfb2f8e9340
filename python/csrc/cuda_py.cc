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
      "max_memory_reserved",
      [](py::object d) { return Unwrap(cuda::MaxMemoryReserved(DeviceIndex(d))); },
      py::arg("device") = py::none());
  c.def(
      "reset_peak_memory_stats",
      [](py::object d) { Check(cuda::ResetPeakMemoryStats(DeviceIndex(d))); },
      py::arg("device") = py::none());
  c.def("set_allow_tf32", &cuda::SetAllowTF32);
  c.def("_get_device_properties", [](int device) {
    cuda::DeviceProperties p = Unwrap(cuda::GetDeviceProperties(device));
    py::dict d;
    d["name"] = p.name;
    d["major"] = p.major;
    d["minor"] = p.minor;
    d["total_memory"] = p.total_memory;
    d["multi_processor_count"] = p.multi_processor_count;
    d["is_integrated"] = p.is_integrated;
    d["is_multi_gpu_board"] = p.is_multi_gpu_board;
    d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
    d["warp_size"] = p.warp_size;
    d["L2_cache_size"] = p.l2_cache_size;
    d["uuid"] = p.uuid;
    d["pci_bus_id"] = p.pci_bus_id;
    d["pci_device_id"] = p.pci_device_id;
    d["pci_domain_id"] = p.pci_domain_id;
    return d;
  });
  c.def("_mem_get_info", [](int device) { return Unwrap(cuda::MemGetInfo(device)); });
  c.def("_build_info", [] {
    cuda::BuildInfo b = cuda::GetBuildInfo();
    py::dict d;
    d["cuda_compiled"] = b.cuda_compiled;
    d["cudnn_compiled"] = b.cudnn_compiled;
    d["cuda_runtime"] = b.cuda_runtime;
    d["cuda_driver"] = b.cuda_driver;
    d["cudnn_runtime"] = b.cudnn_runtime;
    d["arch_list"] = b.arch_list;
    return d;
  });
  // CPU allocator statistics, for memory benchmarks and tests.
  m.def("_cpu_memory_stats", [] {
    AllocatorStats s = CpuAllocator()->Stats();
    py::dict d;
    d["allocated"] = s.allocated;
    d["reserved"] = s.reserved;
    d["peak_allocated"] = s.peak_allocated;
    d["peak_reserved"] = s.peak_reserved;
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
