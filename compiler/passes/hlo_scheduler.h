// HloScheduler: orders each non-fusion computation. Tries the existing order, a depth-first
// post-order from the root and a greedy list scheduler that prefers the op freeing the most
// live bytes; keeps the one with the lowest simulated peak of live temporaries. Asynchronous
// custom-call pairs are then spread apart (HideAsyncLatency). The chosen order becomes the
// computation's instruction order and the module is marked scheduled.
#pragma once
#include <vector>

#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class HloScheduler {
 public:
  static const char* name() { return "scheduler"; }
  static StatusOr<bool> Run(HloModule* module);
  // Peak bytes of buffers live at once when `c` runs in `order` (parameters and constants,
  // which are not temporaries, excluded; aliasing ops own nothing).
  static int64_t SimulatePeak(const HloComputation& c, const std::vector<HloInstruction*>& order);
  static std::vector<HloInstruction*> DfsOrder(const HloComputation& c);
  static std::vector<HloInstruction*> ListOrder(const HloComputation& c);
  // Latency hiding for asynchronous custom-call pairs (library/external_calls.h), applied to the
  // chosen order: every start moves up, with what it needs, to the first place it can run (the
  // starts keep their order), then every done down to just before its first user, so the work
  // a start begins overlaps everything in between.
  static std::vector<HloInstruction*> HideAsyncLatency(std::vector<HloInstruction*> order);
};

// Bytes of the buffers `i` defines (0 for aliases: parameter, constant, bitcast, tuple, gte).
int64_t DefinedBytes(const HloInstruction* i);

}  // namespace oneflow_like::hlo
