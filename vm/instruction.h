// Instruction and InstructionPolicy. A policy declares which blobs it reads and writes and how
// it runs: Prepare (resources, e.g. allocate outputs) then Compute (the work), both on the
// thread of the instruction's stream. Errors are Status values (exceptions are caught too) and
// never abort the process: they are stored on the instruction and on the blobs it writes.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "oneflow_like/base/status.h"
#include "vm/blob.h"

namespace oneflow_like {
namespace vm {

class Stream;
class Instruction;
using DependenceVector = absl::InlinedVector<Dependence*, 4>;

class InstructionPolicy {
 public:
  virtual ~InstructionPolicy() = default;
  virtual const DependenceVector& input_dependences() const = 0;
  virtual const DependenceVector& output_dependences() const = 0;
  virtual Status Prepare(Instruction*) { return Status(); }
  virtual Status Compute(Instruction*) = 0;
  virtual std::string DebugName(const Instruction&) const = 0;
  // A barrier orders after every instruction received before it, on every stream.
  virtual bool IsBarrier() const { return false; }
  // Policies that must run even when an input carries an error (release, sync accesses) say so;
  // for the others the engine skips Prepare/Compute and propagates the input's error.
  virtual bool RunsOnFailedInput() const { return false; }
  // Rough work estimate (elements touched); small CPU instructions may run inline on the
  // caller's thread when their stream is idle. Negative: never inline.
  virtual int64_t CostHint() const { return -1; }
};

void ExecuteInstruction(Instruction* instr);

enum class InstructionState : int8_t { kPending, kReady, kDispatched, kDone };

class Instruction {
 public:
  Instruction(Stream* stream, std::unique_ptr<InstructionPolicy> policy)
      : stream_(stream), policy_(std::move(policy)) {}
  Stream* stream() const { return stream_; }
  InstructionPolicy* policy() const { return policy_.get(); }
  std::string DebugName() const { return policy_->DebugName(*this); }
  uint64_t id() const { return id_; }
  InstructionState state() const { return state_; }
  const Status& status() const { return status_; }
  // Error carried by an input blob when the instruction was dispatched (OK if none).
  const Status& input_error() const { return input_error_; }
  // The thread that issued it (VirtualMachine::ThisThreadIssuer; 0 when issued from inside an
  // instruction): a failure is reported by SyncAll on that thread only.
  uint64_t issuer() const { return issuer_; }
  // Where it was issued from (vm/issue_site.h; 0 if unknown), named in its error message.
  uint32_t issue_site() const { return issue_site_; }

 private:
  friend class VirtualMachineEngine;
  friend class VirtualMachine;
  friend void ExecuteInstruction(Instruction* instr);
  Stream* stream_;
  std::unique_ptr<InstructionPolicy> policy_;
  uint64_t id_ = 0;
  InstructionState state_ = InstructionState::kPending;
  uint32_t issue_site_ = 0;  // in the padding after state_: the instruction does not grow
  int64_t in_degree_ = 0;
  absl::InlinedVector<Instruction*, 4> out_edges_;
  Status status_;
  Status input_error_;
  uint64_t issuer_ = 0;
};

// Runs Prepare + Compute, converting exceptions into Status, and handling failed inputs.
// Records the result on the instruction; the engine propagates it to the written blobs.
void ExecuteInstruction(Instruction* instr);

}  // namespace vm
}  // namespace oneflow_like
