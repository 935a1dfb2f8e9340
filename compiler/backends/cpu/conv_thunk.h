// ConvolutionThunk: a 2-D f32 HLO `convolution` run by oneDNN. ClassifyConvolution maps the
// instruction (window, dim labels, feature groups) onto one of oneDNN's three convolution
// primitives, described in the forward op's geometry (device/cpu/dnnl_conv.h), the way XLA's
// GPU conv rewriter turns convolutions into cuDNN forward / backward-input / backward-filter
// calls:
//   forward           no lhs dilation: src = input, weights = kernel, dst = output.
//   backward_data     lhs dilation (the forward stride) with window stride 1: the input is the
//                     forward's dy, the kernel its weights reversed in space with i/o swapped
//                     (oneflow_like/lazy/lowering/conv.cc), pad_lo = (R-1)*dilation - padding,
//                     the output dx.
//   backward_weights  no lhs dilation, one group, a kernel larger in space than the output (or
//                     as large, with the input's feature dim before its batch dim): the
//                     input is x with batch and feature swapped (`fb01`), the kernel dy (`io01`),
//                     the window stride the forward dilation, the rhs dilation the forward
//                     stride, the output dW (`fb01` = [K, C, R, S]).
// Both readings of an ambiguous convolution compute the same sums, so the choice only affects
// speed. Every tensor is handed to oneDNN as a strided plain memory desc over the executable's
// row-major buffer (any dim-label order works); oneDNN's blocked layouts are reached by
// reorders into scratch kept by the thunk, which also owns the primitive's scratchpad (oneDNN's
// own is thread-local, and graphs compile on one thread and run on another). backward_data
// copies the reversed kernel back into plain (g)oihw order first (oneDNN strides cannot be
// negative). Anything not classified (other dtypes or ranks, negative low padding, layouts) or
// rejected by oneDNN keeps InstructionThunk's direct loop.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/ir/hlo_instruction.h"
#include "compiler/thunks/thunk.h"
#include "device/cpu/dnnl_conv.h"

namespace oneflow_like::hlo {

struct ConvPlan {
  enum class Kind { kForward, kBackwardData, kBackwardWeights };
  Kind kind = Kind::kForward;
  cpu::ConvGeom geom{};
  // Element strides, in the HLO buffer that holds it, of each oneDNN tensor in oneDNN's dim
  // order: src {n, c, h, w}, dst {n, k, oh, ow}, weights {k, c/g, r, s} or {g, k/g, c/g, r, s}.
  std::vector<int64_t> src_strides, dst_strides, wei_strides;
  // backward_data: weights element (..., r, s) sits at spatial index (R-1-r, S-1-s).
  bool wei_reversed = false;
};
const char* ConvPlanKindString(ConvPlan::Kind k);  // "forward", "backward_data", "backward_weights"

// The oneDNN reading of `conv`, or Unimplemented saying why there is none.
StatusOr<ConvPlan> ClassifyConvolution(const HloInstruction& conv);

class ConvolutionThunk : public Thunk {
 public:
  // Classifies `conv` and builds its oneDNN primitive; an error means "run the direct loop".
  static StatusOr<std::unique_ptr<ConvolutionThunk>> Create(const HloInstruction& conv,
                                                            BufferSlice input, BufferSlice kernel,
                                                            BufferSlice output);
  Status ExecuteOnStream(const ExecuteParams& p) override;
  const ConvPlan& plan() const { return plan_; }

 protected:
  std::string Details() const override;

 private:
  ConvolutionThunk(const HloInstruction& conv, ConvPlan plan, BufferSlice input, BufferSlice kernel,
                   BufferSlice output);
  Status Build();
  StatusOr<void*> Scratch(size_t index, size_t bytes);

  ConvPlan plan_;
  BufferSlice input_, kernel_, output_;
  dnnl::primitive prim_;
  dnnl::memory::desc src_want_, wei_want_, dst_want_;  // the layouts the primitive picked
  dnnl::memory::desc scratchpad_want_;                 // its scratchpad (user-managed)
  std::mutex mu_;                                      // one run at a time (the scratch is shared)
  std::vector<std::unique_ptr<char, void (*)(void*)>> scratch_;
  std::vector<size_t> scratch_bytes_;
  std::vector<float> weights_;  // backward_data: the kernel un-reversed, plain (g)oihw
};

}  // namespace oneflow_like::hlo
