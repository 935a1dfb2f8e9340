#include "compiler/dump.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "absl/strings/str_format.h"

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

namespace {

// DOT strings: quotes and backslashes escaped (names come from user graphs).
std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string Bytes(int64_t n) {
  if (n >= (int64_t{1} << 20)) return absl::StrFormat("%.1f MiB", n / 1048576.0);
  if (n >= 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrCat(n, " B");
}

// The bytes of the value an edge carries: the buffer the producer writes it to.
int64_t ValueBytes(const HloShape& shape) {
  if (!shape.is_tuple()) return shape.ByteSize();
  int64_t n = 0;
  for (const HloShape& s : shape.tuple_shapes()) n += ValueBytes(s);
  return n;
}

const char* NodeStyle(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kCustomCall: return "shape=box, style=filled, fillcolor=\"#ffe0c0\"";
    case HloOpcode::kParameter: return "shape=invhouse";
    default: return "shape=ellipse";
  }
}

std::string NodeId(const HloInstruction* i, const HloInstruction* fusion) {
  return fusion ? absl::StrCat("f", fusion->unique_id(), "_", i->unique_id())
                : absl::StrCat("n", i->unique_id());
}

// The node an outside consumer's edge starts from: a fusion's root inside its cluster.
std::string OutNode(const HloInstruction* i) {
  if (i->opcode() == HloOpcode::kFusion)
    return NodeId(i->fused_computation()->root_instruction(), i);
  return NodeId(i, nullptr);
}

void AppendEdge(std::string* s, const std::string& from, const std::string& to, int64_t bytes) {
  absl::StrAppend(s, "  ", from, " -> ", to, " [label=\"", Bytes(bytes), "\"];\n");
}

}  // namespace

std::string ModuleToDot(const HloModule& module) {
  std::string s = absl::StrCat("digraph \"", DotEscape(module.name()),
                               "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n"
                               "  edge [fontname=\"monospace\", fontsize=9];\n");
  const HloComputation& c = *module.entry_computation();
  for (const HloInstruction* i : c.MakeInstructionPostOrder()) {
    if (i->opcode() != HloOpcode::kFusion) {
      absl::StrAppend(&s, "  ", NodeId(i, nullptr), " [label=\"", DotEscape(i->name()), "\\n",
                      HloOpcodeString(i->opcode()), " ", i->shape().ToString(false), "\", ",
                      NodeStyle(i), i->IsRoot() ? ", penwidth=3" : "", "];\n");
      for (const HloInstruction* o : i->operands())
        AppendEdge(&s, OutNode(o), NodeId(i, nullptr), ValueBytes(o->shape()));
      continue;
    }
    // A fusion is a cluster of its fused ops; operand k enters at the ops reading parameter k.
    const HloComputation* fc = i->fused_computation();
    const auto fused = fc->MakeInstructionPostOrder();
    int64_t num_ops = 0;
    for (const HloInstruction* f : fused) num_ops += f->opcode() != HloOpcode::kParameter;
    absl::StrAppend(&s, "  subgraph cluster_", i->unique_id(), " {\n    label=\"",
                    DotEscape(i->name()), " (", FusionKindString(i->attrs().fusion_kind), ", ",
                    num_ops, " ops) ", i->shape().ToString(false),
                    "\";\n    style=filled;\n    fillcolor=\"#dde8ff\";\n");
    for (const HloInstruction* f : fused) {
      if (f->opcode() == HloOpcode::kParameter) continue;
      absl::StrAppend(&s, "    ", NodeId(f, i), " [label=\"", HloOpcodeString(f->opcode()), " ",
                      f->shape().ToString(false), "\", shape=box",
                      f == fc->root_instruction() && i->IsRoot() ? ", penwidth=3" : "", "];\n");
    }
    absl::StrAppend(&s, "  }\n");
    for (const HloInstruction* f : fused) {
      if (f->opcode() == HloOpcode::kParameter) continue;
      for (const HloInstruction* o : f->operands()) {
        if (o->opcode() != HloOpcode::kParameter) {
          AppendEdge(&s, NodeId(o, i), NodeId(f, i), ValueBytes(o->shape()));
          continue;
        }
        const int64_t k = o->parameter_number();
        if (k < 0 || k >= static_cast<int64_t>(i->operands().size())) continue;
        const HloInstruction* producer = i->operand(k);
        AppendEdge(&s, OutNode(producer), NodeId(f, i), ValueBytes(producer->shape()));
      }
    }
  }
  absl::StrAppend(&s, "}\n");
  return s;
}

}  // namespace oneflow_like::hlo
