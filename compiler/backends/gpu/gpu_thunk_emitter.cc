#include "compiler/backends/gpu/gpu_thunk_emitter.h"

#include <memory>

#include "compiler/backends/gpu/gpu_kernel_compiler.h"
#include "compiler/backends/gpu/gpu_thunks.h"
#include "compiler/ir/hlo_computation.h"

namespace oneflow_like::hlo {
namespace {

Status NoGpuThunk(const HloInstruction& i, absl::string_view why) {
  return Unimplemented("[gpu emitter] %s (%s) has no GPU thunk: %s", i.name(),
                       HloOpcodeString(i.opcode()), why);
}

class GpuEmitter {
 public:
  GpuEmitter(const BufferAssignment& ba, GpuEmitResult* out, const FusionAliases* aliased)
      : ba_(ba), out_(out), aliased_(aliased) {}

  Status EmitComputation(const HloComputation& c, std::vector<std::unique_ptr<GpuThunk>>* seq) {
    for (const HloInstruction* i : c.MakeInstructionPostOrder())
      RETURN_IF_ERROR(EmitInstruction(*i, seq));
    return absl::OkStatus();
  }

 private:
  std::vector<BufferSlice> OperandSlices(const HloInstruction& i) const {
    std::vector<BufferSlice> out;
    for (const HloInstruction* o : i.operands()) {
      const auto& l = ba_.Leaves(o);
      out.insert(out.end(), l.begin(), l.end());
    }
    return out;
  }

  Status EmitInstruction(const HloInstruction& i, std::vector<std::unique_ptr<GpuThunk>>* seq) {
    switch (i.opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kBitcast:
      case HloOpcode::kTuple:
      case HloOpcode::kGetTupleElement: return absl::OkStatus();
      case HloOpcode::kFusion: {
        const std::string name = GpuKernelName(i);
        std::vector<std::pair<int64_t, int64_t>> aliased;
        if (aliased_ != nullptr) {
          if (auto it = aliased_->find(&i); it != aliased_->end()) aliased = it->second;
        }
        auto src = EmitFusionKernel(i, name, KernelDialect::kCuda, aliased);
        if (!src.ok()) return NoGpuThunk(i, src.status().message());
        std::vector<BufferSlice> args = OperandSlices(i);
        const auto& outs = ba_.Leaves(&i);
        args.insert(args.end(), outs.begin(), outs.end());
        if (static_cast<int64_t>(args.size()) != src->num_args)
          return Internal("[gpu emitter] %s: %d buffers for %d kernel arguments", i.name(),
                          static_cast<int64_t>(args.size()), src->num_args);
        seq->push_back(
            std::make_unique<GpuKernelThunk>(i.name(), name, std::move(args), src->num_elements));
        out_->kernels.push_back(std::move(src).value());
        ++out_->stats.kernels;
        return absl::OkStatus();
      }
      case HloOpcode::kDot: {
        auto config = GemmConfigFor(i);
        if (!config.ok()) return NoGpuThunk(i, config.status().message());
        ASSIGN_OR_RETURN(BufferSlice l, ba_.Slice(i.operand(0)));
        ASSIGN_OR_RETURN(BufferSlice r, ba_.Slice(i.operand(1)));
        ASSIGN_OR_RETURN(BufferSlice o, ba_.Slice(&i));
        if (blas_ == nullptr) blas_ = std::make_shared<CublasContext>();
        seq->push_back(std::make_unique<GpuGemmThunk>(i.name(), *config, l, r, o, blas_));
        ++out_->stats.gemms;
        return absl::OkStatus();
      }
      case HloOpcode::kCopy: {
        const auto &src = ba_.Leaves(i.operand(0)), &dst = ba_.Leaves(&i);
        for (size_t k = 0; k < dst.size(); ++k)
          seq->push_back(std::make_unique<GpuCopyThunk>(i.name(), src[k], dst[k]));
        ++out_->stats.copies;
        return absl::OkStatus();
      }
      case HloOpcode::kConvolution:
        return NoGpuThunk(i, "no GPU convolution yet (the CPU runs a direct loop)");
      case HloOpcode::kCustomCall: return EmitLibraryCall(i, seq);
      case HloOpcode::kWhile:
      case HloOpcode::kConditional:
        return NoGpuThunk(i, "control flow reads its predicate on the host; no GPU version yet");
      default:
        return NoGpuThunk(
            i, "the CPU runs it through the evaluator fallback, which the GPU does not have");
    }
  }

  // A custom-call a handler registered for CUDA runs (external_calls.h): the lazy runtime's
  // op kernels. Asynchronous pairs (compiled collectives) have no GPU version yet.
  Status EmitLibraryCall(const HloInstruction& i, std::vector<std::unique_ptr<GpuThunk>>* seq) {
    const std::string& target = i.attrs().custom_call_target;
    const DeviceExternalCall* call = FindDeviceExternalCall(DeviceType::kCUDA, target);
    if (call == nullptr || IsAsyncStartTarget(target) || IsAsyncDoneTarget(target))
      return NoGpuThunk(i, absl::StrCat("library call \"", target, "\" has no GPU version"));
    if (call->check) {
      Status s = call->check(target);
      if (!s.ok()) return NoGpuThunk(i, s.message());
    }
    std::vector<GpuLibraryCallThunk::Operand> operands, results;
    for (const HloInstruction* o : i.operands()) {
      const auto& leaves = ba_.Leaves(o);
      if (!o->shape().is_array() || leaves.size() != 1)
        return NoGpuThunk(i, "library calls take array operands");
      operands.push_back({leaves[0], o->shape().dtype(), o->shape().dims()});
    }
    std::vector<HloShape> shapes;
    if (i.shape().is_tuple()) {
      shapes = i.shape().tuple_shapes();
    } else {
      shapes.push_back(i.shape());
    }
    const auto& leaves = ba_.Leaves(&i);
    if (leaves.size() != shapes.size())
      return NoGpuThunk(i, "library calls return arrays or a flat tuple of arrays");
    for (size_t k = 0; k < shapes.size(); ++k) {
      if (!shapes[k].is_array()) return NoGpuThunk(i, "nested tuple result");
      results.push_back({leaves[k], shapes[k].dtype(), shapes[k].dims()});
    }
    seq->push_back(std::make_unique<GpuLibraryCallThunk>(
        i.name(), target, i.attrs().backend_config, std::move(operands), std::move(results), call));
    ++out_->stats.library_calls;
    return absl::OkStatus();
  }

  const BufferAssignment& ba_;
  GpuEmitResult* out_;
  const FusionAliases* aliased_;
  std::shared_ptr<CublasContext> blas_;  // one handle for all GEMMs of the module
};

}  // namespace

StatusOr<GpuEmitResult> EmitGpuThunks(const HloModule& module, const BufferAssignment& assignment,
                                      const GpuEmitOptions& options, const FusionAliases* aliased) {
  GpuEmitResult result;
  std::vector<std::unique_ptr<GpuThunk>> seq;
  GpuEmitter e(assignment, &result, aliased);
  RETURN_IF_ERROR(e.EmitComputation(*module.entry_computation(), &seq));
  // Maximal runs of capturable thunks become command buffers; the rest run as they are.
  std::vector<std::unique_ptr<GpuThunk>> run;
  auto flush = [&] {
    if (options.command_buffers &&
        static_cast<int64_t>(run.size()) >= options.min_command_buffer_thunks) {
      result.thunks.push_back(std::make_unique<CommandBufferThunk>(
          absl::StrCat(module.name(), ".command_buffer.", result.command_buffers++),
          std::move(run)));
    } else {
      for (auto& t : run) result.thunks.push_back(std::move(t));
    }
    run.clear();
  };
  for (auto& t : seq) {
    if (t->Capturable()) {
      run.push_back(std::move(t));
      continue;
    }
    flush();
    result.thunks.push_back(std::move(t));
  }
  flush();
  return result;
}

}  // namespace oneflow_like::hlo
