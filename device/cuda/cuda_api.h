// The C++ functions behind Python's `flow.cuda.*`. Implemented in both configurations: a build
// without --config=cuda links cuda_api_stub.cc, where nothing is available.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace cuda {

// True when this build has the CUDA backend and at least one device answers. Never fails.
bool IsAvailable();
// Number of usable devices (0 without the backend or on any CUDA error at start-up).
int GetDeviceCount();
// Waits for the device work already issued to `device` (-1: every device). Only covers work
// the VM has already dispatched: call it after the VM barrier (flow.sync()). FailedPrecondition
// without a device.
Status Synchronize(int device = -1);
// DLPack import: waits for every stream of `device` in this process, other libraries' included
// (cudaDeviceSynchronize), so memory a foreign producer is still writing is complete. Used once
// per imported CUDA tensor. FailedPrecondition without a device.
Status SynchronizeDevice(int device);
// Returns cached, unused device memory of every device to the driver. No-op without a device.
void EmptyCache();
// Bytes currently handed out by `device`'s caching allocator / their high-water mark since the
// last reset. 0 when CUDA is unavailable; InvalidArgument for an index past the device count.
StatusOr<int64_t> MemoryAllocated(int device = 0);
StatusOr<int64_t> MaxMemoryAllocated(int device = 0);
StatusOr<int64_t> MemoryReserved(int device = 0);
StatusOr<int64_t> MaxMemoryReserved(int device = 0);  // high-water mark of MemoryReserved
Status ResetPeakMemoryStats(int device = 0);
// TF32 for float32 matmul/convolution (off by default). No-op without the backend.
void SetAllowTF32(bool allow);
bool GetAllowTF32();

// What torch.cuda.get_device_properties reports (cudaGetDeviceProperties).
struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;
  int64_t total_memory = 0;  // bytes
  int multi_processor_count = 0;
  bool is_integrated = false;
  bool is_multi_gpu_board = false;
  int max_threads_per_multi_processor = 0;
  int warp_size = 0;
  int64_t l2_cache_size = 0;  // bytes
  std::string uuid;           // "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it
  int pci_bus_id = 0, pci_device_id = 0, pci_domain_id = 0;
};
// FailedPrecondition without a device; InvalidArgument for an index past the device count.
StatusOr<DeviceProperties> GetDeviceProperties(int device);
// (free, total) bytes of the device as the driver sees them (cudaMemGetInfo).
StatusOr<std::pair<int64_t, int64_t>> MemGetInfo(int device);

// The build and the libraries found at run time. Versions are CUDA's integer encodings
// (12040 = 12.4) and 0 where unknown: `cuda_compiled`/`cudnn_compiled` are 0 in a build without
// the backend; the run-time versions are 0 when the library or driver is not there.
struct BuildInfo {
  int cuda_compiled = 0;               // CUDART_VERSION of the toolkit this build used
  int cudnn_compiled = 0;              // CUDNN_VERSION of its headers
  int cuda_runtime = 0;                // cudaRuntimeGetVersion
  int cuda_driver = 0;                 // cudaDriverGetVersion (0: no driver)
  int cudnn_runtime = 0;               // cudnnGetVersion of the loaded library
  std::vector<std::string> arch_list;  // nvcc targets: "sm_90" (SASS), "compute_80" (PTX)
};
BuildInfo GetBuildInfo();

}  // namespace cuda
}  // namespace oneflow_like
