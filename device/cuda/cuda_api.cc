#include "device/cuda/cuda_api.h"

#include <cstdio>
#include <sstream>

#include "device/cuda/device.h"

// nvcc's targets, from tools/cuda/defs.bzl's CUDA_GENCODE through device/cuda/BUILD
// (-DOFL_CUDA_ARCH_LIST=sm_90,compute_80).
#define OFL_STRINGIFY_ARGS(...) #__VA_ARGS__
#define OFL_STRINGIFY_LIST(...) OFL_STRINGIFY_ARGS(__VA_ARGS__)

namespace oneflow_like {
namespace cuda {
namespace {

// 0 when unavailable (nothing allocated), the allocator when the index is valid, else an error.
StatusOr<CachingAllocator*> AllocatorFor(int device) {
  if (DeviceCount() == 0) return static_cast<CachingAllocator*>(nullptr);
  RETURN_IF_ERROR(CheckDevice(device));
  return DeviceAllocator(device);
}

}  // namespace

bool IsAvailable() {
  return DeviceCount() > 0;
}
int GetDeviceCount() {
  return DeviceCount();
}

Status Synchronize(int device) {
  if (device >= 0)
    RETURN_IF_ERROR(CheckDevice(device));
  else if (DeviceCount() == 0)
    return CheckDevice(0);
  return SynchronizeAllStreams(device);
}

Status SynchronizeDevice(int device) {
  RETURN_IF_ERROR(CheckDevice(device));
  DeviceGuard g(device);
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return Status();
}

void EmptyCache() {
  for (int i = 0; i < DeviceCount(); ++i) DeviceAllocator(i)->EmptyCache();
}

StatusOr<int64_t> MemoryAllocated(int device) {
  ASSIGN_OR_RETURN(CachingAllocator * a, AllocatorFor(device));
  return a ? a->Stats().allocated : 0;
}

StatusOr<int64_t> MaxMemoryAllocated(int device) {
  ASSIGN_OR_RETURN(CachingAllocator * a, AllocatorFor(device));
  return a ? a->Stats().peak_allocated : 0;
}

StatusOr<int64_t> MemoryReserved(int device) {
  ASSIGN_OR_RETURN(CachingAllocator * a, AllocatorFor(device));
  return a ? a->Stats().reserved : 0;
}

StatusOr<int64_t> MaxMemoryReserved(int device) {
  ASSIGN_OR_RETURN(CachingAllocator * a, AllocatorFor(device));
  return a ? a->Stats().peak_reserved : 0;
}

Status ResetPeakMemoryStats(int device) {
  ASSIGN_OR_RETURN(CachingAllocator * a, AllocatorFor(device));
  if (a) a->ResetPeak();
  return Status();
}

bool GetAllowTF32() {
  return AllowTF32();
}

StatusOr<DeviceProperties> GetDeviceProperties(int device) {
  RETURN_IF_ERROR(CheckDevice(device));
  cudaDeviceProp p{};
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, device));
  DeviceProperties out;
  out.name = p.name;
  out.major = p.major;
  out.minor = p.minor;
  out.total_memory = static_cast<int64_t>(p.totalGlobalMem);
  out.multi_processor_count = p.multiProcessorCount;
  out.is_integrated = p.integrated != 0;
  out.is_multi_gpu_board = p.isMultiGpuBoard != 0;
  out.max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
  out.warp_size = p.warpSize;
  out.l2_cache_size = p.l2CacheSize;
  out.pci_bus_id = p.pciBusID;
  out.pci_device_id = p.pciDeviceID;
  out.pci_domain_id = p.pciDomainID;
  // nvidia-smi's form: GPU-8 hex, 4, 4, 4, 12.
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    char b[3];
    std::snprintf(b, sizeof(b), "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
    hex += b;
    if (i == 3 || i == 5 || i == 7 || i == 9) hex += '-';
  }
  out.uuid = "GPU-" + hex;
  return out;
}

StatusOr<std::pair<int64_t, int64_t>> MemGetInfo(int device) {
  RETURN_IF_ERROR(CheckDevice(device));
  DeviceGuard g(device);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  return std::make_pair(static_cast<int64_t>(free_bytes), static_cast<int64_t>(total_bytes));
}

BuildInfo GetBuildInfo() {
  BuildInfo b;
  b.cuda_compiled = CUDART_VERSION;
  b.cudnn_compiled = CUDNN_VERSION;
  if (cudaRuntimeGetVersion(&b.cuda_runtime) != cudaSuccess) b.cuda_runtime = 0;
  if (cudaDriverGetVersion(&b.cuda_driver) != cudaSuccess) b.cuda_driver = 0;
  b.cudnn_runtime = static_cast<int>(cudnnGetVersion());
#ifdef OFL_CUDA_ARCH_LIST
  std::stringstream list(OFL_STRINGIFY_LIST(OFL_CUDA_ARCH_LIST));
  for (std::string arch; std::getline(list, arch, ',');) b.arch_list.push_back(arch);
#endif
  return b;
}

}  // namespace cuda
}  // namespace oneflow_like
