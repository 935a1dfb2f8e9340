#include "compiler/compile.h"

#include <chrono>

#include "compiler/backends/cpu/cpu_jit.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/passes/fusion_utils.h"
#include "compiler/plugin/dispatch_thunk.h"

namespace oneflow_like::hlo {
namespace {

// A plugin partition compiled for the CPU: DispatchThunk's fallback when its dispatch library is
// missing (registered here: the CPU backend cannot depend on Compile).
class ExecutablePartition : public plugin::CpuPartition {
 public:
  explicit ExecutablePartition(std::unique_ptr<Executable> exe) : exe_(std::move(exe)) {}
  Status Run(const std::vector<const void*>& in, const std::vector<void*>& out) override {
    return exe_->Run(in, out);
  }

 private:
  std::unique_ptr<Executable> exe_;
};

StatusOr<std::unique_ptr<plugin::CpuPartition>> CompilePartitionForCpu(const std::string& hlo) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(hlo));
  ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, Compile(std::move(m)));
  return std::unique_ptr<plugin::CpuPartition>(new ExecutablePartition(std::move(exe)));
}

[[maybe_unused]] const bool kCpuPartitionCompilerRegistered =
    (plugin::SetCpuPartitionCompiler(&CompilePartitionForCpu), true);

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

std::vector<std::pair<int64_t, int64_t>> AcceptOutputParameterAliases(
    const HloModule& m, const std::vector<std::pair<int64_t, int64_t>>& donated,
    FusionAliases* fusions) {
  std::vector<std::pair<int64_t, int64_t>> accepted;
  const HloComputation* entry = m.entry_computation();
  const HloInstruction* root = entry->root_instruction();
  if (donated.empty() || root->opcode() != HloOpcode::kTuple) return accepted;
  absl::flat_hash_map<const HloInstruction*, int64_t> pos;
  int64_t n = 0;
  for (const HloInstruction* i : entry->MakeInstructionPostOrder()) pos[i] = n++;
  absl::flat_hash_set<int64_t> taken;
  for (auto [k, p] : donated) {
    if (k < 0 || k >= root->operand_count() || p < 0 ||
        p >= static_cast<int64_t>(entry->parameters().size()))
      continue;
    const HloInstruction* leaf = root->operand(k);
    const HloInstruction* f =
        leaf->opcode() == HloOpcode::kGetTupleElement ? leaf->operand(0) : leaf;
    const int64_t out_index =
        leaf->opcode() == HloOpcode::kGetTupleElement ? leaf->tuple_index() : 0;
    const HloInstruction* param = entry->parameter(p);
    if (f->opcode() != HloOpcode::kFusion || f->attrs().fusion_kind != FusionKind::kLoop ||
        taken.contains(p))
      continue;
    if (leaf->opcode() != HloOpcode::kGetTupleElement && f->shape().is_tuple()) continue;
    if (!param->shape().is_array() || param->shape().ToString() != leaf->shape().ToString())
      continue;
    int64_t operand = -1;
    for (int64_t j = 0; j < f->operand_count(); ++j)
      if (f->operand(j) == param) operand = j;
    if (!ReadsOperandElementwise(f, param)) continue;
    // Every other reader of the old value runs before f overwrites it; users that alias buffers
    // without running (bitcast, tuple, get-tuple-element) or run later make it unsafe.
    bool ok = true;
    for (const HloInstruction* u : param->users()) {
      if (u == f) continue;
      const HloOpcode op = u->opcode();
      if (op == HloOpcode::kBitcast || op == HloOpcode::kTuple ||
          op == HloOpcode::kGetTupleElement || op == HloOpcode::kWhile ||
          op == HloOpcode::kConditional || pos.at(u) > pos.at(f))
        ok = false;
    }
    if (!ok) continue;
    taken.insert(p);
    accepted.push_back({k, p});
    if (operand >= 0) (*fusions)[f].push_back({out_index, operand});  // unread: nothing to relax
  }
  return accepted;
}

StatusOr<std::unique_ptr<Executable>> Compile(std::unique_ptr<HloModule> module,
                                              const CompileOptions& options) {
  if (module == nullptr) return InvalidArgument("[compile] null module");
  const DumpOptions& dump = options.pipeline.dump;
  CompileStats stats;
  auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(RunHloPasses(module.get(), options.pipeline));
  stats.passes_seconds = Since(t0);
  t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<BufferAssignment> assignment, AssignBuffers(*module));
  DumpToFile(dump, module->name(), "9998.buffer_assignment.txt", assignment->ToString());
  FusionAliases fusion_aliases;
  std::vector<std::pair<int64_t, int64_t>> aliases =
      AcceptOutputParameterAliases(*module, options.donated, &fusion_aliases);
  std::string kernels;
  ASSIGN_OR_RETURN(ThunkSequence thunks,
                   EmitThunks(*module, *assignment, &kernels, &stats.emit, &fusion_aliases));
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
    stats.jit_library = jit.so_path;
  }
  auto exe = std::make_unique<Executable>(std::move(module), std::move(assignment),
                                          std::move(thunks), std::move(library), std::move(stats));
  exe->set_output_parameter_aliases(std::move(aliases));
  RETURN_IF_ERROR(exe->Initialize());
  return exe;
}

}  // namespace oneflow_like::hlo
