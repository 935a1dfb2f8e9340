#include "compiler/backends/cpu/thunk_emitter.h"

#include "compiler/library/external_calls.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_join.h"
#include "compiler/backends/cpu/conv_thunk.h"
#include "compiler/backends/cpu/cpu_thunks.h"
#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/library/library_ops.h"
#include "compiler/plugin/dispatch_thunk.h"
#include "compiler/plugin/partitioner.h"
#include "compiler/thunks/thunks.h"

namespace oneflow_like::hlo {
namespace {

class Emitter {
 public:
  Emitter(const BufferAssignment& ba, std::string* source, EmitStats* stats,
          const FusionAliases* aliased)
      : ba_(ba), source_(source), stats_(stats), aliased_(aliased) {}

  StatusOr<ThunkSequence> EmitComputation(const HloComputation& c) {
    ThunkSequence seq;
    for (const HloInstruction* i : c.MakeInstructionPostOrder())
      RETURN_IF_ERROR(EmitInstruction(*i, &seq));
    return seq;
  }

 private:
  std::vector<BufferSlice> OperandSlices(const HloInstruction& i) {
    std::vector<BufferSlice> out;
    for (const HloInstruction* o : i.operands()) {
      const auto& l = ba_.Leaves(o);
      out.insert(out.end(), l.begin(), l.end());
    }
    return out;
  }

  void Fallback(const HloInstruction& i, const Status& why, ThunkSequence* seq) {
    stats_->evaluator_fallbacks.push_back(
        absl::StrCat(i.name(), " (", HloOpcodeString(i.opcode()), "): ", why.message()));
    seq->push_back(std::make_unique<InstructionThunk>(Thunk::Kind::kEvaluator, &i, OperandSlices(i),
                                                      ba_.Leaves(&i)));
  }

  static bool FloatArray(const HloShape& s) {
    return s.is_array() && (s.dtype() == DType::kF32 || s.dtype() == DType::kF64);
  }

  Status EmitInstruction(const HloInstruction& i, ThunkSequence* seq) {
    switch (i.opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kBitcast:
      case HloOpcode::kTuple:
      case HloOpcode::kGetTupleElement: return absl::OkStatus();
      case HloOpcode::kFusion: {
        std::string name = "k_";
        for (char ch : i.name()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
        std::vector<std::pair<int64_t, int64_t>> pairs;
        if (aliased_ != nullptr) {
          if (auto it = aliased_->find(&i); it != aliased_->end()) pairs = it->second;
        }
        auto src = EmitFusionKernel(i, name, KernelDialect::kCpp, pairs);
        if (!src.ok()) {
          Fallback(i, src.status(), seq);
          return absl::OkStatus();
        }
        absl::StrAppend(source_, src->code, "\n");
        std::vector<BufferSlice> args = OperandSlices(i);
        const auto& outs = ba_.Leaves(&i);
        args.insert(args.end(), outs.begin(), outs.end());
        // Work estimate: the largest array inside the fusion (a reduction reads more than it
        // writes).
        int64_t work = src->num_elements;
        for (const HloInstruction* f : i.fused_computation()->instructions())
          if (f->shape().is_array()) work = std::max<int64_t>(work, f->shape().numel());
        seq->push_back(std::make_unique<KernelThunk>(i.name(), name, std::move(args),
                                                     src->num_elements, work));
        ++stats_->kernels;
        return absl::OkStatus();
      }
      case HloOpcode::kDot: {
        auto config = GemmConfigFor(i);
        if (!config.ok()) {
          Fallback(i, config.status(), seq);
          return absl::OkStatus();
        }
        ASSIGN_OR_RETURN(BufferSlice l, ba_.Slice(i.operand(0)));
        ASSIGN_OR_RETURN(BufferSlice r, ba_.Slice(i.operand(1)));
        ASSIGN_OR_RETURN(BufferSlice o, ba_.Slice(&i));
        seq->push_back(std::make_unique<GemmThunk>(i.name(), *config, l, r, o));
        ++stats_->gemms;
        return absl::OkStatus();
      }
      case HloOpcode::kConvolution: {
        if (!FloatArray(i.shape())) break;
        // f32 2-D convolutions oneDNN can run (forward / backward_data / backward_weights, see
        // conv_thunk.h); the rest, and any oneDNN rejects, keep the direct loop.
        if (i.shape().dtype() == DType::kF32) {
          ASSIGN_OR_RETURN(BufferSlice in, ba_.Slice(i.operand(0)));
          ASSIGN_OR_RETURN(BufferSlice k, ba_.Slice(i.operand(1)));
          ASSIGN_OR_RETURN(BufferSlice o, ba_.Slice(&i));
          auto conv = ConvolutionThunk::Create(i, in, k, o);
          if (conv.ok()) {
            seq->push_back(std::move(conv).value());
            ++stats_->convolutions;
            return absl::OkStatus();
          }
        }
        seq->push_back(std::make_unique<InstructionThunk>(Thunk::Kind::kConvolution, &i,
                                                          OperandSlices(i), ba_.Leaves(&i)));
        ++stats_->convolutions;
        return absl::OkStatus();
      }
      case HloOpcode::kCustomCall:
        if (i.attrs().custom_call_target == plugin::kDispatchTarget) {
          // A compiler plugin's partition: a missing dispatch library fails the compilation,
          // unless the op still holds its original partition (then it runs on the CPU).
          ASSIGN_OR_RETURN(auto t,
                           plugin::DispatchThunk::Create(i, OperandSlices(i), ba_.Leaves(&i)));
          if (!t->fallback_reason().empty())
            stats_->dispatch_fallbacks.push_back(
                absl::StrCat(i.name(), ": ", t->fallback_reason()));
          seq->push_back(std::move(t));
          ++stats_->dispatches;
          return absl::OkStatus();
        }
        if (FindExternalCall(i.attrs().custom_call_target)) {
          seq->push_back(std::make_unique<InstructionThunk>(Thunk::Kind::kLibraryCall, &i,
                                                            OperandSlices(i), ba_.Leaves(&i)));
          ++stats_->library_calls;
          return absl::OkStatus();
        }
        if (!FloatArray(i.shape()) || !library::IsLibraryCall(i.attrs().custom_call_target)) break;
        seq->push_back(std::make_unique<InstructionThunk>(Thunk::Kind::kLibraryCall, &i,
                                                          OperandSlices(i), ba_.Leaves(&i)));
        ++stats_->library_calls;
        return absl::OkStatus();
      case HloOpcode::kCopy: {
        const auto &src = ba_.Leaves(i.operand(0)), &dst = ba_.Leaves(&i);
        for (size_t k = 0; k < dst.size(); ++k)
          seq->push_back(std::make_unique<CopyThunk>(i.name(), src[k], dst[k]));
        ++stats_->copies;
        return absl::OkStatus();
      }
      case HloOpcode::kWhile: {
        ASSIGN_OR_RETURN(ThunkSequence cond, EmitComputation(*i.while_condition()));
        ASSIGN_OR_RETURN(ThunkSequence body, EmitComputation(*i.while_body()));
        ASSIGN_OR_RETURN(BufferSlice pred, ba_.Slice(i.while_condition()->root_instruction()));
        seq->push_back(std::make_unique<WhileThunk>(
            i.name(), ba_.Leaves(i.operand(0)), ba_.Leaves(&i), std::move(cond), pred,
            std::move(body), ba_.Leaves(i.while_body()->root_instruction())));
        ++stats_->control_flow;
        return absl::OkStatus();
      }
      case HloOpcode::kConditional: {
        std::vector<ThunkSequence> branches;
        std::vector<std::vector<BufferSlice>> results;
        for (const HloComputation* b : i.called_computations()) {
          ASSIGN_OR_RETURN(ThunkSequence s, EmitComputation(*b));
          branches.push_back(std::move(s));
          results.push_back(ba_.Leaves(b->root_instruction()));
        }
        ASSIGN_OR_RETURN(BufferSlice index, ba_.Slice(i.operand(0)));
        seq->push_back(std::make_unique<ConditionalThunk>(
            i.name(), index, i.operand(0)->shape().dtype() == DType::kBool, std::move(branches),
            std::move(results), ba_.Leaves(&i)));
        ++stats_->control_flow;
        return absl::OkStatus();
      }
      default: break;
    }
    Fallback(i, Unimplemented("no CPU kernel"), seq);
    return absl::OkStatus();
  }

  const BufferAssignment& ba_;
  std::string* source_;
  EmitStats* stats_;
  const FusionAliases* aliased_;
};

}  // namespace

std::string EmitStats::ToString() const {
  std::string s = absl::StrFormat(
      "kernels %d, gemms %d, convolutions %d, library calls %d, copies %d, control flow %d, "
      "plugin dispatches %d, evaluator fallbacks %d\n",
      kernels, gemms, convolutions, library_calls, copies, control_flow, dispatches,
      static_cast<int64_t>(evaluator_fallbacks.size()));
  for (const auto& f : evaluator_fallbacks) absl::StrAppend(&s, "  fallback: ", f, "\n");
  for (const auto& f : dispatch_fallbacks) absl::StrAppend(&s, "  plugin fallback: ", f, "\n");
  return s;
}

StatusOr<ThunkSequence> EmitThunks(const HloModule& module, const BufferAssignment& assignment,
                                   std::string* kernel_source, EmitStats* stats,
                                   const FusionAliases* aliased) {
  Emitter e(assignment, kernel_source, stats, aliased);
  return e.EmitComputation(*module.entry_computation());
}

}  // namespace oneflow_like::hlo
