// VirtualMachineEngine: the pure scheduling logic, no threads. Instructions move
// pending -> ready -> dispatched -> done -> erased. Dependences come from each blob's access
// record: a read orders after the blob's last write; a write orders after the last write and
// every read since. A barrier orders after every live instruction. The caller serialises calls
// (VirtualMachine holds a mutex; tests drive it on one thread).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "vm/instruction.h"

namespace oneflow_like {
namespace vm {

class VirtualMachineEngine {
 public:
  VirtualMachineEngine() = default;
  ~VirtualMachineEngine();
  // Takes ownership; appends the instructions that are ready to run to `ready`.
  void Receive(std::unique_ptr<Instruction> instr, std::vector<Instruction*>* ready);
  // Marks a ready instruction as handed to its stream.
  void MarkDispatched(Instruction* instr) { instr->state_ = InstructionState::kDispatched; }
  // Records completion: propagates the status to written blobs, releases successors (appended
  // to `ready`), clears the instruction from the blobs' access records and erases it.
  void MarkDone(Instruction* instr, std::vector<Instruction*>* ready) { Retire(instr, ready); }
  // MarkDone, but hands the erased instruction back instead of deleting it, so the caller can
  // destroy it (and whatever its policy captured) outside its own lock.
  std::unique_ptr<Instruction> Retire(Instruction* instr, std::vector<Instruction*>* ready);
  int64_t num_live() const { return static_cast<int64_t>(live_.size()); }
  uint64_t num_received() const { return next_id_; }

 private:
  void AddEdge(Instruction* from, Instruction* to);
  absl::flat_hash_set<Instruction*> live_;
  uint64_t next_id_ = 0;
};

}  // namespace vm
}  // namespace oneflow_like
// x
