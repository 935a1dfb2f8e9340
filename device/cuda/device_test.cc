// The CUDA device layer and its VM stream policies. Discovery and the error macros run everywhere;
// the rest needs a GPU and reports SKIPPED without one.
#include "device/cuda/device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "vm/stream.h"

namespace oneflow_like {
namespace cuda {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << NoDeviceReason()

TEST(CudaDiscovery, AnyStartupErrorMeansNoDevice) {
  int n = DeviceCount();  // must not crash or throw on a machine without a driver or GPU
  EXPECT_GE(n, 0);
  EXPECT_EQ(n, DeviceCount());  // cached
  if (n == 0) {
    EXPECT_FALSE(NoDeviceReason().empty());
    // (Initialisation errors are sticky in the runtime: every later CUDA call repeats them, so
    // nothing else in the backend may call CUDA once DeviceCount() is 0.)
    EXPECT_EQ(GetAllocator(Device(DeviceType::kCUDA, 0)), nullptr);
    EXPECT_EQ(PinnedHostAllocator(), nullptr);
    EXPECT_FALSE(CudaStream::Create(0).ok());
    EXPECT_FALSE(
        vm::CreateStreamPolicy(Device(DeviceType::kCUDA, 0), vm::StreamRole::kCompute).ok());
  }
  EXPECT_EQ(CheckDevice(-1).ok(), false);
  EXPECT_EQ(CheckDevice(n).ok(), false);
}

Status FailingCudaCall() {
  CUDA_RETURN_IF_ERROR(cudaErrorInvalidValue);
  return Status();
}
Status FailingCublasCall() {
  CUBLAS_RETURN_IF_ERROR(CUBLAS_STATUS_INVALID_VALUE);
  return Status();
}
Status FailingCudnnCall() {
  CUDNN_RETURN_IF_ERROR(CUDNN_STATUS_BAD_PARAM);
  return Status();
}
Status CudaOom() {
  CUDA_RETURN_IF_ERROR(cudaErrorMemoryAllocation);
  return Status();
}

TEST(CudaStatusMacros, NameTheCallTheLibraryAndTheLine) {
  Status s = FailingCudaCall();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("cudaErrorInvalidValue"), std::string::npos) << s;
  EXPECT_NE(s.message().find("device_test.cc:"), std::string::npos) << s;
  s = FailingCublasCall();
  EXPECT_NE(s.message().find("cuBLAS error"), std::string::npos) << s;
  EXPECT_NE(s.message().find("device_test.cc:"), std::string::npos) << s;
  s = FailingCudnnCall();
  EXPECT_NE(s.message().find("cuDNN error"), std::string::npos) << s;
  EXPECT_EQ(CudaOom().code(), absl::StatusCode::kResourceExhausted);
}

TEST(CudaAllocator, ReusesFreedBlocksAndKeepsStats) {
  SKIP_WITHOUT_GPU();
  CachingAllocator* a = DeviceAllocator(0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(GetAllocator(Device(DeviceType::kCUDA, 0)), a);
  int64_t before = a->Stats().allocated;
  auto p = a->Allocate(1000);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(a->Stats().allocated, before + 1024);
  a->Deallocate(*p);
  auto q = a->Allocate(1000);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, *p);  // best-fit reuse of the same block
  a->Deallocate(*q);
  a->EmptyCache();
  EXPECT_EQ(a->Stats().allocated, before);
  auto huge = a->Allocate(size_t(1) << 50);  // 1 PiB: a clean OOM, not an abort
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the failed cudaMalloc left nothing behind
}

TEST(CudaStreamAndEvent, CopyRoundTripAndCrossStreamWait) {
  SKIP_WITHOUT_GPU();
  auto s1 = CudaStream::Create(0);
  auto s2 = CudaStream::Create(0);
  ASSERT_TRUE(s1.ok() && s2.ok());
  CachingAllocator* pinned = PinnedHostAllocator();
  ASSERT_NE(pinned, nullptr);
  const size_t n = 1 << 20;
  auto host = pinned->Allocate(n * sizeof(float));
  auto dev = DeviceAllocator(0)->Allocate(n * sizeof(float));
  ASSERT_TRUE(host.ok() && dev.ok());
  float* h = static_cast<float*>(*host);
  for (size_t i = 0; i < n; ++i) h[i] = float(i);
  ASSERT_EQ(cudaMemcpyAsync(*dev, h, n * sizeof(float), cudaMemcpyHostToDevice, (*s1)->get()),
            cudaSuccess);
  CudaEvent ev(0);
  ASSERT_TRUE(ev.Record(s1->get()).ok());
  ASSERT_TRUE(ev.WaitOn(s2->get()).ok());
  std::vector<float> back(n);
  ASSERT_EQ(
      cudaMemcpyAsync(back.data(), *dev, n * sizeof(float), cudaMemcpyDeviceToHost, (*s2)->get()),
      cudaSuccess);
  ASSERT_TRUE((*s2)->Synchronize().ok());
  auto done = ev.Query();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(*done);
  EXPECT_EQ(std::memcmp(back.data(), h, n * sizeof(float)), 0);
  pinned->Deallocate(h);
  DeviceAllocator(0)->Deallocate(*dev);
}

TEST(CudaStreamAndEvent, LibraryHandles) {
  SKIP_WITHOUT_GPU();
  auto s = CudaStream::Create(0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE((*s)->cublas().ok());
  EXPECT_TRUE((*s)->cublaslt().ok());
  EXPECT_TRUE((*s)->cudnn().ok());
  auto w = (*s)->Workspace(1 << 20);
  EXPECT_TRUE(w.ok());
}

TEST(CudaStreamPolicy, AllRolesExistOnADevice) {
  SKIP_WITHOUT_GPU();
  for (auto role : {vm::StreamRole::kCompute, vm::StreamRole::kH2D, vm::StreamRole::kD2H}) {
    auto p = vm::CreateStreamPolicy(Device(DeviceType::kCUDA, 0), role);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE((*p)->InitThread(Device(DeviceType::kCUDA, 0)).ok());
    ASSERT_NE((*p)->device_stream(), nullptr);
    EXPECT_TRUE((*p)->device_stream()->device().is_cuda());
  }
  EXPECT_FALSE(vm::CreateStreamPolicy(Device(DeviceType::kCUDA, 0), vm::StreamRole::kLazyJob).ok());
}

}  // namespace
}  // namespace cuda
}  // namespace oneflow_like
