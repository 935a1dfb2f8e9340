// HloInstruction: one op of a computation. Owns its attributes; operands/users are raw pointers
// into the same computation, which owns every instruction.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_opcode.h"
#include "compiler/ir/hlo_shape.h"
#include "compiler/ir/literal.h"

namespace oneflow_like::hlo {

class HloComputation;

struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
};
struct PadDim {
  int64_t lo = 0, hi = 0, interior = 0;
};
struct DotDims {
  DimVector lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  bool operator==(const DotDims& o) const {
    return lhs_batch == o.lhs_batch && lhs_contracting == o.lhs_contracting &&
           rhs_batch == o.rhs_batch && rhs_contracting == o.rhs_contracting;
  }
};
struct WindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, lhs_dilation = 1, rhs_dilation = 1;
  bool operator==(const WindowDim& o) const {
    return size == o.size && stride == o.stride && pad_lo == o.pad_lo && pad_hi == o.pad_hi &&
           lhs_dilation == o.lhs_dilation && rhs_dilation == o.rhs_dilation;
  }
};
// Convolution dimension numbers, printed as dim_labels `b01f_01io->b01f`.
struct ConvDims {
  int64_t in_batch = 0, in_feature = 1, k_in = 0, k_out = 1, out_batch = 0, out_feature = 1;
  DimVector in_spatial, k_spatial, out_spatial;
  bool operator==(const ConvDims& o) const;
  std::string ToString() const;
  static StatusOr<ConvDims> Parse(const std::string& labels);
};
struct GatherDims {
  DimVector offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDims& o) const {
    return offset_dims == o.offset_dims && collapsed_slice_dims == o.collapsed_slice_dims &&
           start_index_map == o.start_index_map && index_vector_dim == o.index_vector_dim;
  }
};
struct ScatterDims {
  DimVector update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDims& o) const {
    return update_window_dims == o.update_window_dims &&
           inserted_window_dims == o.inserted_window_dims &&
           scatter_dims_to_operand_dims == o.scatter_dims_to_operand_dims &&
           index_vector_dim == o.index_vector_dim;
  }
};

// Attributes; which ones an opcode uses is fixed by the printer/parser table (hlo_printer.cc).
struct HloAttrs {
  DimVector dimensions;             // broadcast, transpose, reduce, concatenate
  std::vector<SliceDim> slice;      // slice
  std::vector<PadDim> padding;      // pad
  DotDims dot;                      // dot
  std::vector<WindowDim> window;    // convolution
  ConvDims conv;                    // convolution
  int64_t feature_group_count = 1;  // convolution
  GatherDims gather;                // gather
  ScatterDims scatter;              // scatter
  DimVector slice_sizes;            // gather, dynamic-slice
  ComparisonDirection direction = ComparisonDirection::kEq;  // compare
  int64_t index = 0;               // parameter number, tuple index, iota dimension
  std::string custom_call_target;  // custom-call
  std::string backend_config;      // custom-call options, `key=value;key=value`
  FusionKind fusion_kind = FusionKind::kLoop;
  ReduceKind reduce_kind = ReduceKind::kNone;  // reduce/scatter without to_apply
  RngDistribution distribution = RngDistribution::kUniform;

  bool operator==(const HloAttrs& o) const;
};

class HloInstruction {
 public:
  // Generic factory: attributes and called computations are set afterwards.
  static std::unique_ptr<HloInstruction> Create(HloOpcode op, HloShape shape,
                                                std::vector<HloInstruction*> operands);
  static std::unique_ptr<HloInstruction> CreateParameter(int64_t number, HloShape shape,
                                                         std::string name);
  static std::unique_ptr<HloInstruction> CreateConstant(Literal literal);

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }
  const HloShape& shape() const { return shape_; }
  HloShape* mutable_shape() { return &shape_; }
  void set_shape(HloShape s) { shape_ = std::move(s); }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(HloInstruction* op);
  void ReplaceOperand(int64_t i, HloInstruction* new_op);
  // Replaces every occurrence of `old_op` among the operands.
  void ReplaceOperandWith(HloInstruction* old_op, HloInstruction* new_op);
  void RemoveOperand(int64_t i);  // for fusion parameter bookkeeping
  void DetachOperands();          // drop all operands (before deletion)
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  // Every user (and the root slot of the parent) now refers to `other`.
  Status ReplaceAllUsesWith(HloInstruction* other);

  const HloAttrs& attrs() const { return attrs_; }
  HloAttrs* mutable_attrs() { return &attrs_; }
  const Literal& literal() const { return literal_; }
  Literal* mutable_literal() { return &literal_; }

  // to_apply (reduce, scatter), calls (fusion), condition+body (while), branches (conditional).
  const std::vector<HloComputation*>& called_computations() const { return called_; }
  void set_called_computations(std::vector<HloComputation*> c) { called_ = std::move(c); }
  HloComputation* to_apply() const { return called_.empty() ? nullptr : called_[0]; }
  HloComputation* fused_computation() const { return called_[0]; }
  HloComputation* while_condition() const { return called_[0]; }
  HloComputation* while_body() const { return called_[1]; }

  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* c) { parent_ = c; }
  int64_t parameter_number() const { return attrs_.index; }
  int64_t tuple_index() const { return attrs_.index; }
  const DimVector& dimensions() const { return attrs_.dimensions; }

  // Copy with other operands/shape (attributes, literal and called computations kept).
  std::unique_ptr<HloInstruction> CloneWithNewOperands(const HloShape& shape,
                                                       std::vector<HloInstruction*> operands) const;
  // Same op, attributes, shape, literal and called computations (operands not compared).
  bool IdenticalIgnoringOperands(const HloInstruction& o) const;
  bool IsRoot() const;
  bool IsScalarConstant() const {
    return opcode_ == HloOpcode::kConstant && shape_.is_array() && shape_.rank() == 0;
  }
  // Reduce kind from the attr or by matching to_apply's root `op(p0, p1)`.
  ReduceKind GetReduceKind() const;

  // `%name = f32[2]{0} add(%a, %b), attrs` (no ROOT marker).
  std::string ToString() const;
  // `dimensions={0}, to_apply=%add` part, empty if none.
  std::string AttributesToString() const;

 private:
  HloInstruction(HloOpcode op, HloShape shape) : opcode_(op), shape_(std::move(shape)) {}
  void RemoveUser(HloInstruction* u);
  void AddUser(HloInstruction* u);

  HloOpcode opcode_;
  HloShape shape_;
  std::string name_;
  int64_t unique_id_ = -1;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  HloAttrs attrs_;
  Literal literal_;
  std::vector<HloComputation*> called_;
  HloComputation* parent_ = nullptr;
};

}  // namespace oneflow_like::hlo
