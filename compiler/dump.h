// Dumps for debugging a compilation. Enabled by ONEFLOW_LIKE_DUMP_TO=dir (or DumpOptions);
// ONEFLOW_LIKE_DUMP_PASS_RE=regex also writes the module after each matching pass. Files:
//   <module>.0000.before_optimizations.txt   <module>.NNNN.after_<pass>.txt
//   <module>.9997.after_optimizations.txt    <module>.9998.buffer_assignment.txt
//   <module>.9999.thunks.txt                 <module>.after_optimizations.dot (Graphviz)
#pragma once
#include <string>

#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

struct DumpOptions {
  std::string dir;      // empty: dumping off
  std::string pass_re;  // empty: no per-pass dumps
  static DumpOptions FromEnv();
  bool enabled() const { return !dir.empty(); }
  bool DumpsPass(const std::string& pass_name) const;
};

// Writes `text` to dir/<module>.<suffix>; errors are reported on stderr, never fatal.
void DumpToFile(const DumpOptions& opts, const std::string& module_name, const std::string& suffix,
                const std::string& text);
// Graphviz picture of the entry computation: each fusion a cluster of its fused ops, each edge
// labelled with the bytes of the value it carries (the buffer its producer writes).
std::string ModuleToDot(const HloModule& module);

}  // namespace oneflow_like::hlo
