// HloVerifier: structural checks (roots, parameters, operand/user links, acyclicity, names) and
// per-opcode shape consistency through ShapeInference. Errors name the instruction.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

Status VerifyHloModule(const HloModule& module);

class HloVerifier {
 public:
  static const char* name() { return "verifier"; }
  // Never changes the module; returns an error if it is malformed.
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
