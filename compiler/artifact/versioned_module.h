// The versioned form of an HLO module: instructions name a versioned op by wire code and carry
// their attributes by name, values in HLO text form. Export legalizes an HloModule to the current
// op set and downgrades it to the target; load upgrades it to the current op set and lowers it
// back to an HloModule (through the HLO parser, so the usual checks apply).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_module.h"

namespace oneflow_like::artifact {

struct VAttr {
  std::string name, value;
};

struct VInst {
  std::string name;
  uint32_t op = 0;  // wire code (opset.h)
  std::string shape;
  std::vector<uint32_t> operands;  // indices of earlier instructions of the computation
  std::vector<VAttr> attrs;
  std::string literal;  // constants
  int64_t parameter = -1;
  bool root = false;
  const VAttr* FindAttr(const std::string& n) const;
};

struct VComputation {
  std::string name;
  bool entry = false;
  std::vector<VInst> insts;
};

struct VModule {
  std::string name;
  int opset = 0;  // the op set every instruction's versioned op belongs to
  std::vector<VComputation> computations;
};

// HloModule -> versioned form at kCurrentOpset. Fails on custom-call targets outside the set.
StatusOr<VModule> Legalize(const hlo::HloModule& module);
// Rewrites every op to its version in op-set `target` (< m->opset). An op or attribute newer than
// `target` (an attribute not at its default) fails naming the op, the attribute and the version
// that introduced it.
Status Downgrade(VModule* m, int target);
// Rewrites every op to its version in kCurrentOpset; attributes new since then take defaults.
Status Upgrade(VModule* m);
// Checks wire codes, op-set ranges and operand indices (anything read from a file).
Status Validate(const VModule& m);
// HLO text of a module at kCurrentOpset; LowerToHlo parses and verifies it.
StatusOr<std::string> ToHloText(const VModule& m);
StatusOr<std::unique_ptr<hlo::HloModule>> LowerToHlo(const VModule& m);

}  // namespace oneflow_like::artifact
