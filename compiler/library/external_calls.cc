#include "compiler/library/external_calls.h"

#include <mutex>

namespace oneflow_like::hlo {
namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::string, ExternalCallFn>> handlers;
};
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

}  // namespace oneflow_like::hlo
