#include "vm/engine.h"

#include <algorithm>

namespace oneflow_like {
namespace vm {

VirtualMachineEngine::~VirtualMachineEngine() {
  for (Instruction* i : live_) delete i;
}

void VirtualMachineEngine::AddEdge(Instruction* from, Instruction* to) {
  if (from == nullptr || from == to || from->state_ == InstructionState::kDone) return;
  from->out_edges_.push_back(to);
  to->in_degree_++;
}

void VirtualMachineEngine::Receive(std::unique_ptr<Instruction> owned,
                                   std::vector<Instruction*>* ready) {
  Instruction* instr = owned.release();
  instr->id_ = next_id_++;
  InstructionPolicy* p = instr->policy();
  if (p->IsBarrier()) {
    for (Instruction* other : live_) AddEdge(other, instr);
  }
  for (Dependence* d : p->input_dependences()) {
    d->add_live_access(1);
    AddEdge(d->last_writer, instr);
    // An op reading one blob twice (x + x) is one reader: the record must not keep a copy.
    if (d->readers.empty() || d->readers.back() != instr) d->readers.push_back(instr);
  }
  for (Dependence* d : p->output_dependences()) {
    d->add_live_access(1);
    AddEdge(d->last_writer, instr);
    for (Instruction* r : d->readers) AddEdge(r, instr);
    d->readers.clear();
    d->last_writer = instr;
  }
  live_.insert(instr);
  if (instr->in_degree_ == 0) {
    instr->state_ = InstructionState::kReady;
    ready->push_back(instr);
  }
}

std::unique_ptr<Instruction> VirtualMachineEngine::Retire(Instruction* instr,
                                                          std::vector<Instruction*>* ready) {
  instr->state_ = InstructionState::kDone;
  InstructionPolicy* p = instr->policy();
  const DependenceVector& ins = p->input_dependences();
  for (Dependence* d : p->output_dependences()) {
    if (!instr->status_.ok()) {
      d->mark_error(instr->status_);
    } else if (std::find(ins.begin(), ins.end(), d) == ins.end()) {
      d->clear_error();  // a clean overwrite heals the blob
    }
    if (d->last_writer == instr) d->last_writer = nullptr;
    d->add_live_access(-1);
  }
  for (Dependence* d : ins) {
    d->add_live_access(-1);
    d->readers.erase(std::remove(d->readers.begin(), d->readers.end(), instr), d->readers.end());
  }
  for (Instruction* succ : instr->out_edges_) {
    if (--succ->in_degree_ == 0) {
      succ->state_ = InstructionState::kReady;
      ready->push_back(succ);
    }
  }
  live_.erase(instr);
  return std::unique_ptr<Instruction>(instr);
}

}  // namespace vm
}  // namespace oneflow_like
