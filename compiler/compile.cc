#include "compiler/compile.h"

#include <chrono>

#include "compiler/backends/cpu/cpu_jit.h"
#include "compiler/codegen/fused_loop_emitter.h"

namespace oneflow_like::hlo {
namespace {
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

StatusOr<std::unique_ptr<Executable>> Compile(std::unique_ptr<HloModule> module, const CompileOptions& options) {
  if (module == nullptr) return InvalidArgument("[compile] null module");
  const DumpOptions& dump = options.pipeline.dump;
  CompileStats stats;
  auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(RunHloPasses(module.get(), options.pipeline));
  stats.passes_seconds = Since(t0);
  t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<BufferAssignment> assignment, AssignBuffers(*module));
  DumpToFile(dump, module->name(), "9998.buffer_assignment.txt", assignment->ToString());
  std::string kernels;
  ASSIGN_OR_RETURN(ThunkSequence thunks, EmitThunks(*module, *assignment, &kernels, &stats.emit));
  stats.codegen_seconds = Since(t0);
  DumpToFile(dump, module->name(), "9999.thunks.txt",
             absl::StrCat(ThunkSequenceToString(thunks), "\n", stats.emit.ToString()));
  std::shared_ptr<KernelLibrary> library;
  if (!kernels.empty()) {
    const std::string source = KernelPrelude(KernelDialect::kCpp) + kernels;
    DumpToFile(dump, module->name(), "kernels.cc", source);
    JitStats jit;
    ASSIGN_OR_RETURN(library, CompileAndLoadKernels(source, &jit));
    stats.jit_seconds = jit.compile_seconds;
    stats.jit_cache_hit = jit.cache_hit;
  }
  auto exe = std::make_unique<Executable>(std::move(module), std::move(assignment), std::move(thunks), std::move(library),
                                          std::move(stats));
  RETURN_IF_ERROR(exe->Initialize());
  return exe;
}

}  // namespace oneflow_like::hlo
