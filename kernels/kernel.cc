#include "kernels/kernel.h"

#include <mutex>

#include "absl/container/flat_hash_map.h"

namespace oneflow_like {
namespace kernels {

KernelContext::~KernelContext() {
  for (auto& [a, p] : temps_) a->Deallocate(p);
}

StatusOr<void*> KernelContext::AllocateTemp(size_t bytes) {
  Allocator* a = GetAllocator(device_);
  if (!a) return Internal("[%s] no allocator for %s", op_, device_.ToString());
  ASSIGN_OR_RETURN(void* p, a->Allocate(bytes));
  temps_.emplace_back(a, p);
  return p;
}

namespace {
struct Registry {
  std::mutex mu;
  absl::flat_hash_map<std::string, KernelFn> table[kNumDeviceTypes];
};
Registry& GetRegistry() {
  static Registry* r = new Registry();
  return *r;
}
}  // namespace

void RegisterKernel(const char* op, DeviceType device, KernelFn fn) {
  auto& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  r.table[static_cast<int>(device)][op] = fn;
}

StatusOr<KernelFn> FindKernel(const char* op, DeviceType device) {
  auto& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  auto& t = r.table[static_cast<int>(device)];
  auto it = t.find(op);
  if (it == t.end())
    return Unimplemented("[%s] no kernel for device type %s in this build", op,
                         device == DeviceType::kCPU ? "cpu" : "cuda");
  return it->second;
}

std::vector<std::string> RegisteredKernels(DeviceType device) {
  auto& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  std::vector<std::string> out;
  for (auto& kv : r.table[static_cast<int>(device)]) out.push_back(kv.first);
  return out;
}

}  // namespace kernels
}  // namespace oneflow_like
