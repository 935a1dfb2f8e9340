#include "compiler/ir/hlo_builder.h"

#include "compiler/ir/shape_inference.h"

namespace oneflow_like::hlo {

HloBuilder::HloBuilder(HloModule* module, std::string name)
    : module_(module), comp_(std::make_unique<HloComputation>(std::move(name))) {}

HloInstruction* HloBuilder::Parameter(HloShape shape, std::string name) {
  return comp_->AddParameter(HloInstruction::CreateParameter(0, std::move(shape), std::move(name)));
}

HloInstruction* HloBuilder::Constant(Literal literal) {
  literal.RoundToType();
  return comp_->AddInstruction(HloInstruction::CreateConstant(std::move(literal)));
}

StatusOr<HloInstruction*> HloBuilder::Add(HloOpcode op, std::vector<HloInstruction*> operands,
                                          HloAttrs attrs, std::vector<HloComputation*> called,
                                          const HloShape* declared) {
  std::vector<const HloShape*> shapes;
  for (HloInstruction* o : operands) {
    if (o == nullptr) return InvalidArgument("[%s] null operand", HloOpcodeString(op));
    shapes.push_back(&o->shape());
  }
  ASSIGN_OR_RETURN(HloShape shape, InferShape(op, shapes, attrs, called, declared));
  auto inst = HloInstruction::Create(op, std::move(shape), std::move(operands));
  *inst->mutable_attrs() = std::move(attrs);
  inst->set_called_computations(std::move(called));
  return comp_->AddInstruction(std::move(inst));
}

StatusOr<HloInstruction*> HloBuilder::Unary(HloOpcode op, HloInstruction* x) {
  if (!IsElementwiseUnary(op) || op == HloOpcode::kConvert)
    return InvalidArgument("[%s] is not a unary elementwise op", HloOpcodeString(op));
  return Add(op, {x});
}

StatusOr<HloInstruction*> HloBuilder::Convert(HloInstruction* x, DType to) {
  HloShape declared(to, x->shape().dims());
  return Add(HloOpcode::kConvert, {x}, {}, {}, &declared);
}

StatusOr<HloInstruction*> HloBuilder::Binary(HloOpcode op, HloInstruction* x, HloInstruction* y) {
  if (!IsElementwiseBinary(op) || op == HloOpcode::kCompare)
    return InvalidArgument("[%s] is not a binary elementwise op", HloOpcodeString(op));
  return Add(op, {x, y});
}

StatusOr<HloInstruction*> HloBuilder::Compare(HloInstruction* x, HloInstruction* y,
                                              ComparisonDirection d) {
  HloAttrs a;
  a.direction = d;
  return Add(HloOpcode::kCompare, {x, y}, a);
}

StatusOr<HloInstruction*> HloBuilder::Select(HloInstruction* p, HloInstruction* x,
                                             HloInstruction* y) {
  return Add(HloOpcode::kSelect, {p, x, y});
}

StatusOr<HloInstruction*> HloBuilder::Broadcast(HloInstruction* x, DimVector out_dims,
                                                DimVector dims) {
  HloAttrs a;
  a.dimensions = std::move(dims);
  HloShape declared(x->shape().dtype(), std::move(out_dims));
  return Add(HloOpcode::kBroadcast, {x}, a, {}, &declared);
}

StatusOr<HloInstruction*> HloBuilder::BroadcastLike(HloInstruction* x, const HloShape& like) {
  const int64_t r = x->shape().rank(), out_rank = like.rank();
  if (r > out_rank)
    return InvalidArgument("[broadcast] cannot broadcast %s to %s", x->shape().ToString(false),
                           like.ToString(false));
  DimVector dims;
  for (int64_t i = 0; i < r; ++i) dims.push_back(out_rank - r + i);
  // Size-1 dims that broadcast NumPy-style are dropped first by a reshape.
  DimVector keep_dims, keep_out;
  for (int64_t i = 0; i < r; ++i) {
    if (x->shape().dim(i) == like.dim(dims[i])) {
      keep_dims.push_back(x->shape().dim(i));
      keep_out.push_back(dims[i]);
    } else if (x->shape().dim(i) != 1)
      return InvalidArgument("[broadcast] cannot broadcast %s to %s", x->shape().ToString(false),
                             like.ToString(false));
  }
  HloInstruction* src = x;
  if (static_cast<int64_t>(keep_dims.size()) != r) {
    ASSIGN_OR_RETURN(src, Reshape(x, keep_dims));
  }
  if (src->shape().dims() == like.dims()) return src;
  return Broadcast(src, like.dims(), keep_out);
}

StatusOr<HloInstruction*> HloBuilder::Reshape(HloInstruction* x, DimVector dims) {
  HloShape declared(x->shape().dtype(), std::move(dims));
  return Add(HloOpcode::kReshape, {x}, {}, {}, &declared);
}

StatusOr<HloInstruction*> HloBuilder::Transpose(HloInstruction* x, DimVector permutation) {
  HloAttrs a;
  a.dimensions = std::move(permutation);
  return Add(HloOpcode::kTranspose, {x}, a);
}

StatusOr<HloInstruction*> HloBuilder::Slice(HloInstruction* x, std::vector<SliceDim> slice) {
  HloAttrs a;
  a.slice = std::move(slice);
  return Add(HloOpcode::kSlice, {x}, a);
}

StatusOr<HloInstruction*> HloBuilder::Concatenate(std::vector<HloInstruction*> xs, int64_t dim) {
  HloAttrs a;
  a.dimensions = {dim};
  return Add(HloOpcode::kConcatenate, std::move(xs), a);
}

StatusOr<HloInstruction*> HloBuilder::Pad(HloInstruction* x, HloInstruction* value,
                                          std::vector<PadDim> padding) {
  HloAttrs a;
  a.padding = std::move(padding);
  return Add(HloOpcode::kPad, {x, value}, a);
}

StatusOr<HloInstruction*> HloBuilder::Reduce(HloInstruction* x, HloInstruction* init,
                                             DimVector dims, ReduceKind kind) {
  HloAttrs a;
  a.dimensions = std::move(dims);
  a.reduce_kind = kind;
  return Add(HloOpcode::kReduce, {x, init}, a);
}

StatusOr<HloInstruction*> HloBuilder::Reduce(HloInstruction* x, HloInstruction* init,
                                             DimVector dims, HloComputation* to_apply) {
  HloAttrs a;
  a.dimensions = std::move(dims);
  return Add(HloOpcode::kReduce, {x, init}, a, {to_apply});
}

StatusOr<HloInstruction*> HloBuilder::Dot(HloInstruction* x, HloInstruction* y, DotDims dims) {
  HloAttrs a;
  a.dot = std::move(dims);
  return Add(HloOpcode::kDot, {x, y}, a);
}

StatusOr<HloInstruction*> HloBuilder::MatMul(HloInstruction* x, HloInstruction* y) {
  DotDims d;
  if (x->shape().rank() == 3) {
    d.lhs_batch = {0};
    d.rhs_batch = {0};
  }
  d.lhs_contracting = {x->shape().rank() - 1};
  d.rhs_contracting = {x->shape().rank() == 3 ? 1 : 0};
  return Dot(x, y, d);
}

StatusOr<HloInstruction*> HloBuilder::Convolution(HloInstruction* x, HloInstruction* kernel,
                                                  std::vector<WindowDim> window, ConvDims dims,
                                                  int64_t groups) {
  HloAttrs a;
  a.window = std::move(window);
  a.conv = std::move(dims);
  a.feature_group_count = groups;
  return Add(HloOpcode::kConvolution, {x, kernel}, a);
}

StatusOr<HloInstruction*> HloBuilder::Gather(HloInstruction* x, HloInstruction* indices,
                                             GatherDims dims, DimVector slice_sizes) {
  HloAttrs a;
  a.gather = std::move(dims);
  a.slice_sizes = std::move(slice_sizes);
  return Add(HloOpcode::kGather, {x, indices}, a);
}

StatusOr<HloInstruction*> HloBuilder::Scatter(HloInstruction* x, HloInstruction* indices,
                                              HloInstruction* updates, ScatterDims dims,
                                              ReduceKind combiner) {
  HloAttrs a;
  a.scatter = std::move(dims);
  a.reduce_kind = combiner;
  return Add(HloOpcode::kScatter, {x, indices, updates}, a);
}

StatusOr<HloInstruction*> HloBuilder::DynamicSlice(HloInstruction* x,
                                                   std::vector<HloInstruction*> starts,
                                                   DimVector sizes) {
  HloAttrs a;
  a.slice_sizes = std::move(sizes);
  starts.insert(starts.begin(), x);
  return Add(HloOpcode::kDynamicSlice, std::move(starts), a);
}

StatusOr<HloInstruction*> HloBuilder::Iota(HloShape shape, int64_t dim) {
  HloAttrs a;
  a.index = dim;
  return Add(HloOpcode::kIota, {}, a, {}, &shape);
}

StatusOr<HloInstruction*> HloBuilder::Rng(HloInstruction* lo, HloInstruction* hi, HloShape shape,
                                          RngDistribution d) {
  HloAttrs a;
  a.distribution = d;
  return Add(HloOpcode::kRng, {lo, hi}, a, {}, &shape);
}

StatusOr<HloInstruction*> HloBuilder::CustomCall(std::string target,
                                                 std::vector<HloInstruction*> operands,
                                                 HloShape shape, std::string config) {
  HloAttrs a;
  a.custom_call_target = std::move(target);
  a.backend_config = std::move(config);
  return Add(HloOpcode::kCustomCall, std::move(operands), a, {}, &shape);
}

StatusOr<HloInstruction*> HloBuilder::Tuple(std::vector<HloInstruction*> xs) {
  return Add(HloOpcode::kTuple, std::move(xs));
}

StatusOr<HloInstruction*> HloBuilder::GetTupleElement(HloInstruction* t, int64_t index) {
  HloAttrs a;
  a.index = index;
  return Add(HloOpcode::kGetTupleElement, {t}, a);
}

StatusOr<HloInstruction*> HloBuilder::While(HloInstruction* init, HloComputation* condition,
                                            HloComputation* body) {
  return Add(HloOpcode::kWhile, {init}, {}, {condition, body});
}

StatusOr<HloInstruction*> HloBuilder::Conditional(HloInstruction* branch_index,
                                                  std::vector<HloComputation*> branches,
                                                  std::vector<HloInstruction*> operands) {
  operands.insert(operands.begin(), branch_index);
  return Add(HloOpcode::kConditional, std::move(operands), {}, std::move(branches));
}

StatusOr<HloComputation*> HloBuilder::Build(HloInstruction* root, bool is_entry) {
  if (comp_ == nullptr) return Internal("[builder] Build called twice");
  if (root == nullptr || root->parent() != comp_.get())
    return InvalidArgument("[builder] root is not from this builder");
  comp_->set_root_instruction(root);
  return module_->AddComputation(std::move(comp_), is_entry);
}

HloComputation* AddScalarComputation(HloModule* module, const std::string& name, HloOpcode op,
                                     DType t) {
  HloBuilder b(module, name);
  HloInstruction* x = b.Parameter(HloShape::Scalar(t), "lhs");
  HloInstruction* y = b.Parameter(HloShape::Scalar(t), "rhs");
  HloInstruction* r = b.Binary(op, x, y).value();
  return b.Build(r).value();
}

}  // namespace oneflow_like::hlo
