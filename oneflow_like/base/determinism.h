// torch.use_deterministic_algorithms: when on, code with a choice between algorithms whose
// results differ bit for bit takes the fixed one (cpu::AutotuneGemm keeps the shape rule
// instead of timing), and an op with no deterministic implementation fails (or warns, with
// warn_only) naming itself. Kept apart from the headers most of the tree includes.
#pragma once

namespace oneflow_like {

bool DeterministicAlgorithms();
bool DeterministicAlgorithmsWarnOnly();
void SetDeterministicAlgorithms(bool mode, bool warn_only);

}  // namespace oneflow_like
