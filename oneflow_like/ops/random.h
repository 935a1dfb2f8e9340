// Random number generation: one generator per device (manual_seed sets all). Each random op
// takes a fresh 64-bit seed from its device's generator at dispatch time (on the caller's
// thread, so results do not depend on scheduling) and passes it to its kernel as attr "seed";
// kernels derive element i's numbers from (seed, i) with a counter-based hash (kernels/cpu/rng.h),
// so parallel and sequential runs agree.
#pragma once
#include <cstdint>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

void ManualSeed(uint64_t seed);
uint64_t InitialSeed();
// The next per-op seed of `device`'s generator.
uint64_t NextSeed(const Device& device);

}  // namespace functional
}  // namespace oneflow_like
