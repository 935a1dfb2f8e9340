// The C++ functions behind Python's `flow.cuda.*`. Implemented in both configurations: a build
// without --config=cuda links cuda_api_stub.cc, where nothing is available.
#pragma once
#include <cstdint>

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
Status ResetPeakMemoryStats(int device = 0);
// TF32 for float32 matmul/convolution (off by default). No-op without the backend.
void SetAllowTF32(bool allow);
bool GetAllowTF32();

}  // namespace cuda
}  // namespace oneflow_like
