// GraphView: the C view (OflGraphView, ofl_compiler_plugin.h) of one HLO computation, with the
// storage every pointer in it refers to. The view's op i is instructions()[i] (post-order).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_computation.h"
#include "compiler/plugin/ofl_compiler_plugin.h"

namespace oneflow_like::hlo::plugin {

class GraphView {
 public:
  // Ops = `c`'s instructions in post-order; outputs = the root's operands when it is a tuple,
  // else the root.
  explicit GraphView(const HloComputation& c);
  GraphView(const GraphView&) = delete;
  GraphView& operator=(const GraphView&) = delete;

  const OflGraphView& view() const { return view_; }
  const std::vector<const HloInstruction*>& instructions() const { return insts_; }

 private:
  struct OpStorage {
    std::string name, opcode, comparison, reduce_kind, attributes;
    std::vector<int64_t> dims, dimensions, starts, limits, strides;
    std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
    std::vector<int32_t> operands;
  };
  std::string name_;
  std::vector<const HloInstruction*> insts_;
  std::vector<OpStorage> storage_;
  std::vector<OflOpView> ops_;
  std::vector<int32_t> outputs_;
  OflGraphView view_{};
};

OflDType ToOflDType(const HloShape& shape);

}  // namespace oneflow_like::hlo::plugin
