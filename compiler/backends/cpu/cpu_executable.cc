#include "compiler/backends/cpu/cpu_executable.h"

#include "compiler/library/external_calls.h"

#include <cstdlib>
#include <cstring>
#include <functional>

namespace oneflow_like::hlo {
namespace {
void FlattenShapes(const HloShape& s, std::vector<HloShape>* out) {
  if (!s.is_tuple()) {
    out->push_back(s);
    return;
  }
  for (auto& e : s.tuple_shapes()) FlattenShapes(e, out);
}
}  // namespace

std::string CompileStats::ToString() const {
  return absl::StrFormat("passes %.3fs, codegen %.3fs, jit %.3fs (%s)\n%s", passes_seconds,
                         codegen_seconds, jit_seconds, jit_cache_hit ? "cache hit" : "compiled",
                         emit.ToString());
}

Executable::Executable(std::unique_ptr<HloModule> module,
                       std::unique_ptr<BufferAssignment> assignment, ThunkSequence thunks,
                       std::shared_ptr<KernelLibrary> kernels, CompileStats stats)
    : module_(std::move(module)),
      assignment_(std::move(assignment)),
      thunks_(std::move(thunks)),
      kernels_(std::move(kernels)),
      stats_(std::move(stats)) {
  for (HloInstruction* p : module_->entry_computation()->parameters())
    parameter_shapes_.push_back(p->shape());
  FlattenShapes(module_->entry_computation()->root_instruction()->shape(), &output_shapes_);
}

Status Executable::Initialize() {
  constants_.resize(assignment_->allocations().size());
  for (const BufferAllocation& a : assignment_->allocations()) {
    if (a.kind == BufferAllocation::Kind::kConstant)
      constants_[a.index] = a.constant->literal().ToBytes();
    if (a.kind == BufferAllocation::Kind::kTemp && a.size > 0) {
      size_t bytes = (a.size + BufferAssignment::kAlignment - 1) / BufferAssignment::kAlignment *
                     BufferAssignment::kAlignment;
      arena_.reset(static_cast<char*>(std::aligned_alloc(BufferAssignment::kAlignment, bytes)));
      if (!arena_) return OutOfMemory("[executable] cannot allocate a %d-byte arena", a.size);
    }
  }
  RETURN_IF_ERROR(PrepareAll(thunks_, {}));
  Thunk::InitializeParams init;
  init.kernels = kernels_.get();
  return InitializeAll(thunks_, init);
}

Status Executable::Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs) {
  if (arguments.size() != parameter_shapes_.size())
    return InvalidArgument("[executable %s] takes %d arguments, got %d", module_->name(),
                           static_cast<int64_t>(parameter_shapes_.size()),
                           static_cast<int64_t>(arguments.size()));
  if (outputs.size() != output_shapes_.size())
    return InvalidArgument("[executable %s] writes %d outputs, got %d buffers", module_->name(),
                           static_cast<int64_t>(output_shapes_.size()),
                           static_cast<int64_t>(outputs.size()));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<char*> bases(assignment_->allocations().size(), nullptr);
  for (const BufferAllocation& a : assignment_->allocations()) {
    switch (a.kind) {
      case BufferAllocation::Kind::kTemp: bases[a.index] = arena_.get(); break;
      case BufferAllocation::Kind::kParameter:
        bases[a.index] = const_cast<char*>(static_cast<const char*>(arguments[a.parameter_number]));
        break;
      case BufferAllocation::Kind::kOutput:
        bases[a.index] = static_cast<char*>(outputs[a.output_index]);
        break;
      case BufferAllocation::Kind::kConstant: bases[a.index] = constants_[a.index].data(); break;
    }
  }
  BufferAllocations buffers(std::move(bases));
  Thunk::ExecuteParams params;
  params.buffers = &buffers;
  Status st = ExecuteAll(thunks_, params);
  // Asynchronous custom-calls (a collective's start) a failed run left without their done: wait
  // for them before the buffers they write are handed to the next run.
  DrainExternalCalls();
  return st;
}

StatusOr<Literal> RunOnLiterals(Executable& exe, absl::Span<const Literal> args) {
  if (args.size() != exe.parameter_shapes().size())
    return InvalidArgument("[executable] takes %d arguments, got %d",
                           static_cast<int64_t>(exe.parameter_shapes().size()),
                           static_cast<int64_t>(args.size()));
  std::vector<std::vector<char>> in;
  std::vector<const void*> in_ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].shape.Compatible(exe.parameter_shapes()[i]))
      return InvalidArgument("[executable] argument %d is %s, expected %s", static_cast<int64_t>(i),
                             args[i].shape.ToString(false),
                             exe.parameter_shapes()[i].ToString(false));
    Literal l = args[i];
    l.shape = exe.parameter_shapes()[i];
    in.push_back(l.ToBytes());
    in_ptrs.push_back(in.back().data());
  }
  std::vector<std::vector<char>> out;
  std::vector<void*> out_ptrs;
  for (const HloShape& s : exe.output_shapes()) {
    out.emplace_back(std::max<int64_t>(s.ByteSize(), 1));
    out_ptrs.push_back(out.back().data());
  }
  RETURN_IF_ERROR(exe.Run(in_ptrs, out_ptrs));
  size_t leaf = 0;
  std::function<Literal(const HloShape&)> build = [&](const HloShape& s) {
    if (!s.is_tuple()) {
      const size_t k = leaf++;
      return Literal::FromBytes(s, out[k].data());
    }
    std::vector<Literal> elems;
    for (auto& e : s.tuple_shapes()) elems.push_back(build(e));
    return Literal::MakeTuple(std::move(elems));
  };
  return build(exe.module().entry_computation()->root_instruction()->shape());
}

}  // namespace oneflow_like::hlo
