#include "compiler/dump.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

namespace oneflow_like::hlo {

DumpOptions DumpOptions::FromEnv() {
  DumpOptions o;
  if (const char* d = std::getenv("ONEFLOW_LIKE_DUMP_TO")) o.dir = d;
  if (const char* r = std::getenv("ONEFLOW_LIKE_DUMP_PASS_RE")) o.pass_re = r;
  return o;
}

bool DumpOptions::DumpsPass(const std::string& pass_name) const {
  if (!enabled() || pass_re.empty()) return false;
  try {
    return std::regex_search(pass_name, std::regex(pass_re));
  } catch (const std::regex_error&) {
    return false;
  }
}

void DumpToFile(const DumpOptions& opts, const std::string& module_name, const std::string& suffix,
                const std::string& text) {
  if (!opts.enabled()) return;
  std::string cur;
  for (size_t i = 0; i <= opts.dir.size(); ++i) {
    if (i == opts.dir.size() || opts.dir[i] == '/') {
      if (!cur.empty()) mkdir(cur.c_str(), 0755);
    }
    if (i < opts.dir.size()) cur += opts.dir[i];
  }
  std::string path = absl::StrCat(opts.dir, "/", module_name, ".", suffix);
  std::ofstream out(path);
  out << text;
  if (!out) std::fprintf(stderr, "[dump] cannot write %s\n", path.c_str());
}

std::string ModuleToDot(const HloModule& module) {
  std::string s = absl::StrCat("digraph \"", module.name(),
                               "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n");
  const HloComputation& c = *module.entry_computation();
  for (const HloInstruction* i : c.MakeInstructionPostOrder()) {
    std::string label =
        absl::StrCat(i->name(), "\\n", HloOpcodeString(i->opcode()), " ", i->shape().ToString());
    const char* style = "shape=ellipse";
    if (i->opcode() == HloOpcode::kFusion) {
      style = "shape=box, style=filled, fillcolor=\"#dde8ff\"";
      for (const HloInstruction* f : i->fused_computation()->MakeInstructionPostOrder())
        if (f->opcode() != HloOpcode::kParameter)
          absl::StrAppend(&label, "\\l  ", HloOpcodeString(f->opcode()));
    } else if (i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution ||
               i->opcode() == HloOpcode::kCustomCall) {
      style = "shape=box, style=filled, fillcolor=\"#ffe0c0\"";
    } else if (i->opcode() == HloOpcode::kParameter) {
      style = "shape=invhouse";
    }
    absl::StrAppend(&s, "  n", i->unique_id(), " [label=\"", label, "\", ", style,
                    i->IsRoot() ? ", penwidth=3" : "", "];\n");
    for (const HloInstruction* o : i->operands())
      absl::StrAppend(&s, "  n", o->unique_id(), " -> n", i->unique_id(), ";\n");
  }
  absl::StrAppend(&s, "}\n");
  return s;
}

}  // namespace oneflow_like::hlo
