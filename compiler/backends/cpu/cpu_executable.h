// Executable (CPU): the optimized module, its buffer assignment, the thunk sequence and the
// loaded kernels. Run() binds the caller's buffers to the parameter/output allocations, uses a
// private arena for temporaries and runs the thunks on the calling thread.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "compiler/backends/cpu/thunk_emitter.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo {

struct CompileStats {
  double passes_seconds = 0, codegen_seconds = 0, jit_seconds = 0;
  bool jit_cache_hit = false;
  std::string jit_library;  // the JIT's cached shared object (KernelCacheDir()/k_<key>.so), if any
  EmitStats emit;
  std::string ToString() const;
};

class Executable {
 public:
  Executable(std::unique_ptr<HloModule> module, std::unique_ptr<BufferAssignment> assignment,
             ThunkSequence thunks, std::shared_ptr<KernelLibrary> kernels, CompileStats stats);
  // Prepare + Initialize every thunk; called once by Compile.
  Status Initialize();

  // arguments[i]: parameter i's bytes, laid out as parameter_shapes()[i] (with its layout);
  // outputs[k]: output leaf k (output_shapes()[k]), written by the run. Thread-safe (runs are
  // serialised: the temp arena is shared).
  Status Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs);

  const std::vector<HloShape>& parameter_shapes() const { return parameter_shapes_; }
  const std::vector<HloShape>& output_shapes() const { return output_shapes_; }
  const HloModule& module() const { return *module_; }
  const BufferAssignment& buffer_assignment() const { return *assignment_; }
  const CompileStats& stats() const { return stats_; }
  std::string ThunksToString() const { return ThunkSequenceToString(thunks_); }
  // (output leaf, parameter) pairs of CompileOptions::donated the code was built to run on one
  // buffer: the caller may pass the parameter's buffer as that output (an in-place update).
  const std::vector<std::pair<int64_t, int64_t>>& output_parameter_aliases() const {
    return aliases_;
  }
  void set_output_parameter_aliases(std::vector<std::pair<int64_t, int64_t>> a) {
    aliases_ = std::move(a);
  }

 private:
  std::unique_ptr<HloModule> module_;
  std::unique_ptr<BufferAssignment> assignment_;
  ThunkSequence thunks_;
  std::shared_ptr<KernelLibrary> kernels_;
  CompileStats stats_;
  std::vector<HloShape> parameter_shapes_, output_shapes_;
  std::vector<std::pair<int64_t, int64_t>> aliases_;
  std::vector<std::vector<char>> constants_;  // indexed by allocation
  std::unique_ptr<char, void (*)(void*)> arena_{nullptr, &std::free};
  std::mutex mu_;
};

// Runs `exe` on host literals (tests, eager-vs-lazy checks). Tuple results come back as tuples.
StatusOr<Literal> RunOnLiterals(Executable& exe, absl::Span<const Literal> args);

}  // namespace oneflow_like::hlo
