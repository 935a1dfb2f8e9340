#include "compiler/library/external_calls.h"

#include <deque>
#include <mutex>
#include <tuple>

namespace oneflow_like::hlo {
namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::string, ExternalCallFn>> handlers;
  std::vector<std::function<void()>> drains;
  // A deque: FindDeviceExternalCall hands out pointers that later registrations keep valid.
  std::deque<std::tuple<DeviceType, std::string, DeviceExternalCall>> device_handlers;
};
bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
Registry& Reg() {
  static Registry* r = new Registry();
  return *r;
}
}  // namespace

void RegisterExternalCallPrefix(const std::string& prefix, ExternalCallFn fn) {
  auto& r = Reg();
  std::lock_guard<std::mutex> l(r.mu);
  r.handlers.emplace_back(prefix, std::move(fn));
}

const ExternalCallFn* FindExternalCall(const std::string& target) {
  auto& r = Reg();
  std::lock_guard<std::mutex> l(r.mu);
  for (auto& [prefix, fn] : r.handlers)
    if (target.rfind(prefix, 0) == 0) return &fn;
  return nullptr;
}

void RegisterDeviceExternalCallPrefix(DeviceType type, const std::string& prefix,
                                      DeviceExternalCall call) {
  auto& r = Reg();
  std::lock_guard<std::mutex> l(r.mu);
  r.device_handlers.emplace_back(type, prefix, std::move(call));
}

const DeviceExternalCall* FindDeviceExternalCall(DeviceType type, const std::string& target) {
  auto& r = Reg();
  std::lock_guard<std::mutex> l(r.mu);
  for (auto& [t, prefix, call] : r.device_handlers)
    if (t == type && target.rfind(prefix, 0) == 0) return &call;
  return nullptr;
}

bool IsAsyncStartTarget(const std::string& target) {
  return EndsWith(target, kAsyncStartSuffix);
}
bool IsAsyncDoneTarget(const std::string& target) {
  return EndsWith(target, kAsyncDoneSuffix);
}

void RegisterExternalCallDrain(std::function<void()> drain) {
  auto& r = Reg();
  std::lock_guard<std::mutex> l(r.mu);
  r.drains.push_back(std::move(drain));
}

void DrainExternalCalls() {
  auto& r = Reg();
  std::vector<std::function<void()>> drains;
  {
    std::lock_guard<std::mutex> l(r.mu);
    if (r.drains.empty()) return;
    drains = r.drains;
  }
  for (auto& d : drains) d();
}

}  // namespace oneflow_like::hlo
