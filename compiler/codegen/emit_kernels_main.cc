// emit_kernels: prints the kernel source of every fusion in fused HLO text files (for example
// the `<module>.9997.after_optimizations.txt` dumps), in the C++ or the CUDA dialect.
//   emit_kernels cpp|cuda file.hlo... > kernels.cc
// Used to diff the generated source across emitter changes and to inspect vectorisation
// (`c++ -O3 -march=x86-64-v3 -fopt-info-vec -c kernels.cc`).
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/hlo_parser.h"

using namespace oneflow_like::hlo;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s cpp|cuda fused.hlo...\n", argv[0]);
    return 2;
  }
  const KernelDialect dialect =
      std::string(argv[1]) == "cuda" ? KernelDialect::kCuda : KernelDialect::kCpp;
  std::string out = KernelPrelude(dialect);
  int failures = 0;
  for (int a = 2; a < argc; ++a) {
    std::ifstream in(argv[a]);
    std::stringstream ss;
    ss << in.rdbuf();
    auto module = ParseHloModule(ss.str());
    if (!module.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[a], module.status().ToString().c_str());
      ++failures;
      continue;
    }
    for (HloComputation* c : (*module)->computations()) {
      for (HloInstruction* i : c->instructions()) {
        if (i->opcode() != HloOpcode::kFusion) continue;
        std::string name = "k_" + (*module)->name() + "_";
        for (char ch : i->name()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
        auto src = EmitFusionKernel(*i, name, dialect);
        if (src.ok())
          absl::StrAppend(&out, "// ", argv[a], " ", i->name(), "\n", src->code, "\n");
        else
          absl::StrAppend(&out, "// ", argv[a], " ", i->name(), ": ", src.status().ToString(),
                          "\n\n");
      }
    }
  }
  std::fputs(out.c_str(), stdout);
  return failures == 0 ? 0 : 1;
}
