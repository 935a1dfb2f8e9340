// HloBuilder: appends instructions with inferred shapes to a new computation, then hands it to a
// module. This is the API the lazy tracer uses:
//
//   auto module = std::make_unique<HloModule>("graph");
//   HloBuilder b(module.get(), "main");
//   HloInstruction* x = b.Parameter(HloShape(DType::kF32, {2, 3}), "x");
//   ASSIGN_OR_RETURN(HloInstruction* y, b.Unary(HloOpcode::kExp, x));
//   ASSIGN_OR_RETURN(HloComputation* entry, b.Build(y, /*is_entry=*/true));
//
// Shape errors come back as `[opcode] ...` Status, never a crash.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class HloBuilder {
 public:
  HloBuilder(HloModule* module, std::string name);

  // Parameters are numbered in call order.
  HloInstruction* Parameter(HloShape shape, std::string name = "");
  HloInstruction* Constant(Literal literal);
  HloInstruction* ScalarConstant(DType t, double v) { return Constant(Literal::Scalar(t, v)); }

  StatusOr<HloInstruction*> Unary(HloOpcode op, HloInstruction* x);
  StatusOr<HloInstruction*> Convert(HloInstruction* x, DType to);
  StatusOr<HloInstruction*> Binary(HloOpcode op, HloInstruction* x, HloInstruction* y);
  StatusOr<HloInstruction*> Compare(HloInstruction* x, HloInstruction* y, ComparisonDirection d);
  StatusOr<HloInstruction*> Select(HloInstruction* pred, HloInstruction* x, HloInstruction* y);
  // out[dims[i]] = x[i]; `out_dims` is the result's dims.
  StatusOr<HloInstruction*> Broadcast(HloInstruction* x, DimVector out_dims, DimVector dims);
  // Scalar or lower-rank `x` broadcast to `like`'s dims, matching trailing dims (NumPy style).
  StatusOr<HloInstruction*> BroadcastLike(HloInstruction* x, const HloShape& like);
  StatusOr<HloInstruction*> Reshape(HloInstruction* x, DimVector dims);
  StatusOr<HloInstruction*> Transpose(HloInstruction* x, DimVector permutation);
  StatusOr<HloInstruction*> Slice(HloInstruction* x, std::vector<SliceDim> slice);
  StatusOr<HloInstruction*> Concatenate(std::vector<HloInstruction*> xs, int64_t dim);
  StatusOr<HloInstruction*> Pad(HloInstruction* x, HloInstruction* value,
                                std::vector<PadDim> padding);
  StatusOr<HloInstruction*> Reduce(HloInstruction* x, HloInstruction* init, DimVector dims,
                                   ReduceKind kind);
  StatusOr<HloInstruction*> Reduce(HloInstruction* x, HloInstruction* init, DimVector dims,
                                   HloComputation* to_apply);
  StatusOr<HloInstruction*> Dot(HloInstruction* x, HloInstruction* y, DotDims dims);
  // Plain matmul: contracts x's last dim with y's first (rank 2), or batched rank-3 on dim 0.
  StatusOr<HloInstruction*> MatMul(HloInstruction* x, HloInstruction* y);
  StatusOr<HloInstruction*> Convolution(HloInstruction* x, HloInstruction* kernel,
                                        std::vector<WindowDim> window, ConvDims dims,
                                        int64_t feature_group_count = 1);
  StatusOr<HloInstruction*> Gather(HloInstruction* x, HloInstruction* indices, GatherDims dims,
                                   DimVector slice_sizes);
  StatusOr<HloInstruction*> Scatter(HloInstruction* x, HloInstruction* indices,
                                    HloInstruction* updates, ScatterDims dims,
                                    ReduceKind combiner);  // kNone = overwrite
  StatusOr<HloInstruction*> DynamicSlice(HloInstruction* x, std::vector<HloInstruction*> starts,
                                         DimVector sizes);
  StatusOr<HloInstruction*> Iota(HloShape shape, int64_t dim);
  StatusOr<HloInstruction*> Rng(HloInstruction* lo, HloInstruction* hi, HloShape shape,
                                RngDistribution d);
  // Library op by name (softmax, log_softmax, layer_norm, ...); `config` is `key=value;...`.
  StatusOr<HloInstruction*> CustomCall(std::string target, std::vector<HloInstruction*> operands,
                                       HloShape shape, std::string config = "");
  StatusOr<HloInstruction*> Tuple(std::vector<HloInstruction*> xs);
  StatusOr<HloInstruction*> GetTupleElement(HloInstruction* t, int64_t index);
  StatusOr<HloInstruction*> While(HloInstruction* init, HloComputation* condition,
                                  HloComputation* body);
  StatusOr<HloInstruction*> Conditional(HloInstruction* branch_index,
                                        std::vector<HloComputation*> branches,
                                        std::vector<HloInstruction*> operands);
  // Any op: the shape is inferred (`declared` supplies what cannot be, e.g. reshape dims).
  StatusOr<HloInstruction*> Add(HloOpcode op, std::vector<HloInstruction*> operands,
                                HloAttrs attrs = {}, std::vector<HloComputation*> called = {},
                                const HloShape* declared = nullptr);

  // Hands the computation to the module (names made unique). The builder is spent afterwards.
  StatusOr<HloComputation*> Build(HloInstruction* root, bool is_entry = false);

 private:
  HloModule* module_;
  std::unique_ptr<HloComputation> comp_;
};

// `%name (a: T[], b: T[]) -> T[] { ROOT op(a, b) }` added to `module`, for reduce to_apply.
HloComputation* AddScalarComputation(HloModule* module, const std::string& name, HloOpcode op,
                                     DType t);

}  // namespace oneflow_like::hlo
