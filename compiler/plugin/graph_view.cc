#include "compiler/plugin/graph_view.h"

#include "absl/container/flat_hash_map.h"

namespace oneflow_like::hlo::plugin {

OflDType ToOflDType(const HloShape& shape) {
  if (!shape.is_array()) return kOflOtherDType;
  switch (shape.dtype()) {
    case DType::kBool: return kOflBool;
    case DType::kI32: return kOflS32;
    case DType::kI64: return kOflS64;
    case DType::kF32: return kOflF32;
    case DType::kF64: return kOflF64;
    default: return kOflOtherDType;
  }
}

GraphView::GraphView(const HloComputation& c) : name_(c.name()) {
  insts_ = {};
  for (const HloInstruction* i : c.MakeInstructionPostOrder()) insts_.push_back(i);
  absl::flat_hash_map<const HloInstruction*, int32_t> index;
  storage_.resize(insts_.size());
  ops_.resize(insts_.size());
  for (size_t k = 0; k < insts_.size(); ++k) {
    const HloInstruction& i = *insts_[k];
    index[&i] = static_cast<int32_t>(k);
    OpStorage& s = storage_[k];
    const HloAttrs& a = i.attrs();
    s.name = i.name();
    s.opcode = HloOpcodeString(i.opcode());
    s.attributes = i.AttributesToString();
    if (i.shape().is_array()) s.dims.assign(i.shape().dims().begin(), i.shape().dims().end());
    s.dimensions.assign(a.dimensions.begin(), a.dimensions.end());
    for (const SliceDim& d : a.slice) {
      s.starts.push_back(d.start);
      s.limits.push_back(d.limit);
      s.strides.push_back(d.stride);
    }
    if (i.opcode() == HloOpcode::kDot) {
      s.lhs_batch.assign(a.dot.lhs_batch.begin(), a.dot.lhs_batch.end());
      s.lhs_contracting.assign(a.dot.lhs_contracting.begin(), a.dot.lhs_contracting.end());
      s.rhs_batch.assign(a.dot.rhs_batch.begin(), a.dot.rhs_batch.end());
      s.rhs_contracting.assign(a.dot.rhs_contracting.begin(), a.dot.rhs_contracting.end());
    }
    if (i.opcode() == HloOpcode::kCompare) s.comparison = ComparisonDirectionString(a.direction);
    if (i.opcode() == HloOpcode::kReduce && i.GetReduceKind() != ReduceKind::kNone)
      s.reduce_kind = ReduceKindString(i.GetReduceKind());
    for (const HloInstruction* o : i.operands()) s.operands.push_back(index.at(o));

    OflOpView& v = ops_[k];
    v.name = s.name.c_str();
    v.opcode = s.opcode.c_str();
    v.dtype = ToOflDType(i.shape());
    v.rank = static_cast<int32_t>(s.dims.size());
    v.dims = s.dims.data();
    v.has_default_layout = i.shape().is_array() && i.shape().HasDefaultLayout();
    v.num_operands = static_cast<int32_t>(s.operands.size());
    v.operands = s.operands.data();
    v.num_dimensions = static_cast<int32_t>(s.dimensions.size());
    v.dimensions = s.dimensions.data();
    v.slice_starts = s.starts.data();
    v.slice_limits = s.limits.data();
    v.slice_strides = s.strides.data();
    v.num_lhs_batch = static_cast<int32_t>(s.lhs_batch.size());
    v.num_lhs_contracting = static_cast<int32_t>(s.lhs_contracting.size());
    v.num_rhs_batch = static_cast<int32_t>(s.rhs_batch.size());
    v.num_rhs_contracting = static_cast<int32_t>(s.rhs_contracting.size());
    v.lhs_batch = s.lhs_batch.data();
    v.lhs_contracting = s.lhs_contracting.data();
    v.rhs_batch = s.rhs_batch.data();
    v.rhs_contracting = s.rhs_contracting.data();
    v.comparison = s.comparison.c_str();
    v.reduce_kind = s.reduce_kind.c_str();
    v.index = a.index;
    v.is_scalar_constant = i.IsScalarConstant();
    v.scalar_value = i.IsScalarConstant() ? i.literal().data.at(0) : 0.0;
    v.attributes = s.attributes.c_str();
  }
  const HloInstruction* root = c.root_instruction();
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : root->operands()) outputs_.push_back(index.at(o));
  } else {
    outputs_.push_back(index.at(root));
  }
  view_.name = name_.c_str();
  view_.num_ops = static_cast<int32_t>(ops_.size());
  view_.ops = ops_.data();
  view_.num_outputs = static_cast<int32_t>(outputs_.size());
  view_.outputs = outputs_.data();
}

}  // namespace oneflow_like::hlo::plugin
