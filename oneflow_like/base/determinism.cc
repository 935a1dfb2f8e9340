#include "oneflow_like/base/determinism.h"

#include <atomic>

namespace oneflow_like {
namespace {
// Bit 0: mode; bit 1: warn_only (one word, so a reader never sees half an update).
std::atomic<int> g_deterministic{0};
}  // namespace

bool DeterministicAlgorithms() {
  return (g_deterministic.load(std::memory_order_relaxed) & 1) != 0;
}

bool DeterministicAlgorithmsWarnOnly() {
  return (g_deterministic.load(std::memory_order_relaxed) & 2) != 0;
}

void SetDeterministicAlgorithms(bool mode, bool warn_only) {
  g_deterministic.store((mode ? 1 : 0) | (warn_only ? 2 : 0), std::memory_order_relaxed);
}

}  // namespace oneflow_like
