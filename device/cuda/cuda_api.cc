#include "device/cuda/cuda_api.h"

#include "device/cuda/device.h"

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

Status ResetPeakMemoryStats(int device) {
  ASSIGN_OR_RETURN(CachingAllocator * a, AllocatorFor(device));
  if (a) a->ResetPeak();
  return Status();
}

bool GetAllowTF32() {
  return AllowTF32();
}

}  // namespace cuda
}  // namespace oneflow_like
