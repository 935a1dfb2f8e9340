// PriorityFusion: repeatedly fuses the producer with the highest benefit into all of its users
// (duplicating it when it has several), until no fusion pays off. Benefit, in bytes:
//   saved  = write of the producer + each user's read of it + one kernel launch (kLaunchBytes)
//   spent  = the producer's inputs read again by every extra user + duplicated math
// Producers: elementwise, broadcast, reshape, transpose, slice, concat, pad, iota, scalar
// constants, loop fusions. Consumers: the same plus reductions of a known kind (fusion roots).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class PriorityFusion {
 public:
  static const char* name() { return "priority-fusion"; }
  static StatusOr<bool> Run(HloModule* module);
  // Bytes saved by fusing `producer` into all its users (negative: not worth it).
  static int64_t Benefit(const HloInstruction* producer);
  static constexpr int64_t kLaunchBytes = 4096;
  // Room for a counter-based random mask (~40 instructions) inside the loop that uses it.
  static constexpr int64_t kMaxFusedInstructions = 128;
  static constexpr int64_t kMaxFusionOperands = 24;
};

}  // namespace oneflow_like::hlo
