#include "vm/stream.h"

#include <mutex>

#include "vm/cpu_stream_policy.h"

namespace oneflow_like {
namespace vm {

const char* StreamRoleName(StreamRole role) {
  static const char* names[] = {"compute", "h2d", "d2h", "control", "lazy", "collective"};
  return names[static_cast<int>(role)];
}

std::string Stream::name() const {
  return absl::StrCat(device_.ToString(), "/", StreamRoleName(role_));
}

namespace {
// Function-local: backends register from their own static initializers (device/cuda's
// stream_policy.cc), which may run before this file's in the same shared library; a namespace-
// scope array would then be constructed over their entries (seen on the first GPU run).
struct Factories {
  std::mutex mu;
  StreamPolicyFactory by_type[kNumDeviceTypes];
};
Factories& GetFactories() {
  static Factories* f = new Factories();  // leaked: used by threads outliving static destruction
  return *f;
}
}  // namespace

void RegisterStreamPolicyFactory(DeviceType type, StreamPolicyFactory factory) {
  Factories& fs = GetFactories();
  std::lock_guard<std::mutex> l(fs.mu);
  fs.by_type[static_cast<int>(type)] = std::move(factory);
}

StatusOr<std::unique_ptr<StreamPolicy>> CreateStreamPolicy(const Device& device, StreamRole role) {
  if (role == StreamRole::kControl) return std::unique_ptr<StreamPolicy>(new ControlStreamPolicy());
  if (device.is_cpu()) {
    if (role == StreamRole::kH2D || role == StreamRole::kD2H)
      return InvalidArgument("[vm] the cpu has no %s stream", StreamRoleName(role));
    // Compute: small work inline. Collective: only an instruction that asks for it through its
    // CostHint (a Gloo collective its issuing thread waits for at once, which then runs on that
    // thread when ready as issued: distributed/collective_instruction_policy.h); the others go to
    // its worker, as a collective blocking on peers must not hold up the thread that readied it.
    return std::unique_ptr<StreamPolicy>(
        new CpuStreamPolicy(role == StreamRole::kCompute || role == StreamRole::kCollective));
  }
  StreamPolicyFactory f;
  {
    Factories& fs = GetFactories();
    std::lock_guard<std::mutex> l(fs.mu);
    f = fs.by_type[static_cast<int>(device.type())];
  }
  if (!f)
    return Unimplemented("[vm] no stream policy for %s: this build has no backend for it",
                         device.ToString());
  auto p = f(device, role);
  if (!p)
    return Unimplemented("[vm] backend for %s has no %s stream", device.ToString(),
                         StreamRoleName(role));
  return p;
}

}  // namespace vm
}  // namespace oneflow_like
