// cuda_api.h for builds without --config=cuda: no device, nothing allocated.
#include "device/cuda/cuda_api.h"

namespace oneflow_like {
namespace cuda {

bool IsAvailable() {
  return false;
}
int GetDeviceCount() {
  return 0;
}
Status Synchronize(int) {
  return absl::FailedPreconditionError(
      "[cuda] this build has no CUDA backend (rebuild with --config=cuda)");
}
Status SynchronizeDevice(int) {
  return absl::FailedPreconditionError(
      "[cuda] this build has no CUDA backend (rebuild with --config=cuda)");
}
void EmptyCache() {}
StatusOr<int64_t> MemoryAllocated(int) {
  return 0;
}
StatusOr<int64_t> MaxMemoryAllocated(int) {
  return 0;
}
StatusOr<int64_t> MemoryReserved(int) {
  return 0;
}
StatusOr<int64_t> MaxMemoryReserved(int) {
  return 0;
}
Status ResetPeakMemoryStats(int) {
  return Status();
}
void SetAllowTF32(bool) {}
bool GetAllowTF32() {
  return false;
}
StatusOr<DeviceProperties> GetDeviceProperties(int) {
  return absl::FailedPreconditionError(
      "[cuda] this build has no CUDA backend (rebuild with --config=cuda)");
}
StatusOr<std::pair<int64_t, int64_t>> MemGetInfo(int) {
  return absl::FailedPreconditionError(
      "[cuda] this build has no CUDA backend (rebuild with --config=cuda)");
}
BuildInfo GetBuildInfo() {
  return BuildInfo();
}

}  // namespace cuda
}  // namespace oneflow_like
