// Buffer assignment: gives every value of a scheduled module a slice of an allocation.
//  1. dataflow: each op defines one buffer per array leaf; bitcast, get-tuple-element and tuple
//     alias their operands'; nested computations' parameters alias the caller's buffers.
//  2. liveness: a buffer lives from its defining position to its last reader (entry outputs to
//     the end), positions being the schedule.
//  3. packing: temporaries go into one arena, best-fit by decreasing size, reusing space across
//     disjoint live ranges. Parameters, outputs and constants get allocations of their own
//     (parameters and outputs are the caller's buffers). While/conditional bodies get a region of
//     the arena reserved while the op runs, packed the same way inside.
// Report: total bytes, arena (peak) bytes and the lower bound = the largest set live at once.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

struct BufferSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const BufferSlice& o) const {
    return allocation == o.allocation && offset == o.offset && size == o.size;
  }
  bool operator!=(const BufferSlice& o) const { return !(*this == o); }
  std::string ToString() const;
};

struct BufferAllocation {
  enum class Kind { kTemp, kParameter, kOutput, kConstant };
  int64_t index = 0;
  Kind kind = Kind::kTemp;
  int64_t size = 0;
  int64_t parameter_number = -1;             // kParameter
  int64_t output_index = -1;                 // kOutput: leaf index of the entry root
  const HloInstruction* constant = nullptr;  // kConstant
};

class BufferAssignment {
 public:
  static constexpr int64_t kAlignment = 64;
  const std::vector<BufferAllocation>& allocations() const { return allocations_; }
  // One slice per array leaf of `inst`'s result, in flattened order.
  const std::vector<BufferSlice>& Leaves(const HloInstruction* inst) const;
  bool HasLeaves(const HloInstruction* inst) const { return leaves_.contains(inst); }
  // The slice of an array-shaped instruction.
  StatusOr<BufferSlice> Slice(const HloInstruction* inst) const;
  int64_t temp_bytes() const { return temp_bytes_; }
  int64_t lower_bound_bytes() const { return lower_bound_bytes_; }
  int64_t total_bytes() const;
  std::string ToString() const;

 private:
  friend class BufferAssigner;
  std::vector<BufferAllocation> allocations_;
  absl::flat_hash_map<const HloInstruction*, std::vector<BufferSlice>> leaves_;
  std::vector<std::string> value_lines_;
  std::string module_name_;
  int64_t temp_bytes_ = 0, lower_bound_bytes_ = 0;
};

// Needs a scheduled module (HloScheduler) with copies inserted (CopyInsertion).
StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(const HloModule& module);
int64_t LeafCount(const HloShape& shape);

}  // namespace oneflow_like::hlo
