#include "oneflow_like/ops/random.h"

#include <mutex>

namespace oneflow_like {
namespace functional {
namespace {

struct Generators {
  std::mutex mu;
  uint64_t seed = 0x5eed5eedULL;
  uint64_t counter[kNumDeviceTypes][16] = {};
};
Generators& Gen() {
  static Generators* g = new Generators();
  return *g;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void ManualSeed(uint64_t seed) {
  auto& g = Gen();
  std::lock_guard<std::mutex> l(g.mu);
  g.seed = seed;
  for (auto& d : g.counter) for (auto& c : d) c = 0;
}

uint64_t InitialSeed() {
  auto& g = Gen();
  std::lock_guard<std::mutex> l(g.mu);
  return g.seed;
}

uint64_t NextSeed(const Device& device) {
  auto& g = Gen();
  std::lock_guard<std::mutex> l(g.mu);
  uint64_t& c = g.counter[static_cast<int>(device.type())][device.index() & 15];
  return SplitMix64(g.seed ^ SplitMix64(c++ + (static_cast<uint64_t>(device.type()) << 56)));
}

}  // namespace functional
}  // namespace oneflow_like
