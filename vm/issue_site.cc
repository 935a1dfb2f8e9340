#include "vm/issue_site.h"

#include <atomic>

#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace vm {
namespace {
std::atomic<uint32_t (*)()> g_capture{nullptr};
std::atomic<std::string (*)(uint32_t)> g_describe{nullptr};
}  // namespace

void SetIssueSiteHooks(IssueSiteHooks hooks) {
  // The describer first: a site captured by the new hook is always describable.
  g_describe.store(hooks.describe, std::memory_order_release);
  g_capture.store(hooks.capture, std::memory_order_release);
}

uint32_t CaptureIssueSite() {
  auto* capture = g_capture.load(std::memory_order_acquire);
  if (capture == nullptr || VirtualMachine::InsideInstruction()) return 0;
  return capture();
}

std::string IssueSiteSuffix(uint32_t site) {
  auto* describe = g_describe.load(std::memory_order_acquire);
  if (site == 0 || describe == nullptr) return "";
  std::string where = describe(site);
  return where.empty() ? "" : absl::StrCat(" (issued at ", where, ")");
}

Status WithIssueSite(const Status& s, uint32_t site) {
  if (s.ok()) return s;
  std::string suffix = IssueSiteSuffix(site);
  if (suffix.empty()) return s;
  return Status(s.code(), absl::StrCat(s.message(), suffix));
}

}  // namespace vm
}  // namespace oneflow_like
