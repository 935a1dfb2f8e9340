#include "vm/instruction.h"

#include <exception>

#include "vm/issue_site.h"

namespace oneflow_like {
namespace vm {

void ExecuteInstruction(Instruction* instr) {
  InstructionPolicy* p = instr->policy();
  for (Dependence* d : p->input_dependences()) {
    if (d->has_error()) {
      instr->input_error_ = d->error();
      break;
    }
  }
  if (!instr->input_error_.ok() && !p->RunsOnFailedInput()) {
    instr->status_ = instr->input_error_;  // propagate the producer's error unchanged
    return;
  }
  Status s;
  try {
    s = p->Prepare(instr);
    if (s.ok()) s = p->Compute(instr);
  } catch (const std::exception& e) {
    s = Internal("exception: %s", e.what());
  } catch (...) {
    s = Internal("unknown exception");
  }
  if (!s.ok()) {
    std::string name = instr->DebugName();
    std::string msg(s.message());
    // Prefix with the instruction's name once, keeping the error code for Python's mapping.
    if (msg.rfind("[" + name + "]", 0) != 0) msg = absl::StrCat("[", name, "] ", msg);
    s = Status(s.code(), absl::StrCat(msg, " (in instruction #", instr->id(), ")",
                                      IssueSiteSuffix(instr->issue_site_)));
  }
  instr->status_ = std::move(s);
}

}  // namespace vm
}  // namespace oneflow_like
