#include "compiler/pipeline.h"

#include "compiler/ir/hlo_verifier.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/copy_insertion.h"
#include "compiler/passes/dot_decomposer.h"
#include "compiler/passes/fusion_wrapper.h"
#include "compiler/passes/hlo_cse.h"
#include "compiler/passes/hlo_dce.h"
#include "compiler/passes/hlo_scheduler.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/layout_normalization.h"
#include "compiler/passes/multi_output_fusion.h"
#include "compiler/passes/priority_fusion.h"

namespace oneflow_like::hlo {
namespace {

class PassRunner {
 public:
  PassRunner(HloModule* m, const PipelineOptions& o) : m_(m), o_(o) {}

  template <typename Pass>
  StatusOr<bool> Run() {
    auto changed = Pass::Run(m_);
    if (!changed.ok())
      return absl::Status(changed.status().code(),
                          absl::StrCat("[pass ", Pass::name(), "] ", changed.status().message()));
    if (o_.verify_each_pass) {
      Status v = VerifyHloModule(*m_);
      if (!v.ok())
        return Internal("[pass %s] left an invalid module: %s", Pass::name(), v.message());
    }
    ++step_;
    if (*changed && o_.dump.DumpsPass(Pass::name()))
      DumpToFile(o_.dump, m_->name(), absl::StrFormat("%04d.after_%s.txt", step_, Pass::name()),
                 m_->ToString());
    return changed;
  }

 private:
  HloModule* m_;
  const PipelineOptions& o_;
  int step_ = 0;
};

}  // namespace

Status RunHloPasses(HloModule* module, const PipelineOptions& options) {
  PassRunner run(module, options);
  DumpToFile(options.dump, module->name(), "0000.before_optimizations.txt", module->ToString());
  // The tracer's module must be well formed before anything else looks at it.
  RETURN_IF_ERROR(run.Run<HloVerifier>().status());
  // Simplification to a fixpoint: each pass exposes work for the others (folded constants
  // enable identities, identities leave dead code and duplicates).
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    ASSIGN_OR_RETURN(bool a, run.Run<AlgebraicSimplifier>());
    ASSIGN_OR_RETURN(bool b, run.Run<ConstantFolding>());
    ASSIGN_OR_RETURN(bool c, run.Run<HloCSE>());
    ASSIGN_OR_RETURN(bool d, run.Run<HloDCE>());
    changed = a || b || c || d;
    if (!changed) break;
  }
  // GEMM-shaped dots before layouts, so the transposes it adds get default layouts and fuse.
  RETURN_IF_ERROR(run.Run<DotDecomposer>().status());
  // Its reshape/transpose pairs often cancel with the tracer's own.
  RETURN_IF_ERROR(run.Run<AlgebraicSimplifier>().status());
  RETURN_IF_ERROR(run.Run<HloDCE>().status());
  // Layouts: default everywhere inside, the caller's at the entry boundary (copies between).
  RETURN_IF_ERROR(run.Run<LayoutAssignment>().status());
  // Physical layout changes become explicit transposes; row-major reshapes become bitcasts.
  RETURN_IF_ERROR(run.Run<LayoutNormalization>().status());
  RETURN_IF_ERROR(run.Run<HloDCE>().status());
  // Compiler plugins on final layouts, before fusion: they see plain ops and fuse on their own;
  // what they leave fuses for the CPU below.
  if (!options.plugins.empty()) {
    plugin::PluginReport report;
    ASSIGN_OR_RETURN(bool changed, plugin::ApplyCompilerPlugins(module, options.plugins, &report));
    RETURN_IF_ERROR(VerifyHloModule(*module));
    DumpToFile(options.dump, module->name(), "plugin_report.txt", report.ToString());
    if (changed && options.dump.DumpsPass("compiler-plugins"))
      DumpToFile(options.dump, module->name(), "after_compiler-plugins.txt", module->ToString());
    if (options.plugin_report != nullptr) *options.plugin_report = std::move(report);
    RETURN_IF_ERROR(run.Run<HloDCE>().status());
  }
  if (options.stop_after_plugins) return absl::OkStatus();
  // Fusion on the final layouts: producers into consumers by the bytes/launches cost model...
  RETURN_IF_ERROR(run.Run<PriorityFusion>().status());
  // ...then siblings reading the same input into one multi-output kernel...
  RETURN_IF_ERROR(run.Run<MultiOutputFusion>().status());
  // ...and every leftover loop op into its own one-op kernel, so codegen sees fusions only.
  RETURN_IF_ERROR(run.Run<FusionWrapper>().status());
  // Duplicated producers may have become identical fusions.
  RETURN_IF_ERROR(run.Run<HloCSE>().status());
  RETURN_IF_ERROR(run.Run<HloDCE>().status());
  // After every rewrite that could change aliasing: outputs and loop state get their own buffers.
  RETURN_IF_ERROR(run.Run<CopyInsertion>().status());
  // Last: the order buffer assignment's live ranges are computed on.
  RETURN_IF_ERROR(run.Run<HloScheduler>().status());
  DumpToFile(options.dump, module->name(), "9997.after_optimizations.txt", module->ToString());
  DumpToFile(options.dump, module->name(), "after_optimizations.dot", ModuleToDot(*module));
  return absl::OkStatus();
}

}  // namespace oneflow_like::hlo
