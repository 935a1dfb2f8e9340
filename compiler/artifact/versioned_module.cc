#include "compiler/artifact/versioned_module.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/artifact/opset.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_verifier.h"

namespace oneflow_like::artifact {
namespace {

// `a={0,1}, b="x, y", c=%f` -> {a, {0,1}}, {b, "x, y"}, {c, %f}: splits at top-level commas.
std::vector<VAttr> SplitAttrs(const std::string& text) {
  std::vector<VAttr> out;
  size_t start = 0;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      char ch = text[i];
      if (quoted) {
        if (ch == '\\')
          ++i;
        else if (ch == '"')
          quoted = false;
        continue;
      }
      if (ch == '"') quoted = true;
      if (ch == '{' || ch == '[' || ch == '(') ++depth;
      if (ch == '}' || ch == ']' || ch == ')') --depth;
      if (ch != ',' || depth != 0) continue;
    }
    std::string part(absl::StripAsciiWhitespace(text.substr(start, i - start)));
    start = i + 1;
    if (part.empty()) continue;
    size_t eq = part.find('=');
    out.push_back({part.substr(0, eq), eq == std::string::npos ? "" : part.substr(eq + 1)});
  }
  return out;
}

// pad_v2 keeps interior padding apart: padding=`lo_hi x ...`, interior=`{i0,i1,...}` (absent when
// all zero, its default). The IR writes `lo_hi_interior` per dimension.
void SplitPadding(VInst* v) {
  for (VAttr& a : v->attrs) {
    if (a.name != "padding" || a.value == "{}") continue;
    std::vector<std::string> edge, interior;
    bool any = false;
    for (absl::string_view dim : absl::StrSplit(a.value, 'x')) {
      std::vector<std::string> p = absl::StrSplit(dim, '_');
      edge.push_back(absl::StrCat(p[0], "_", p.size() > 1 ? p[1] : "0"));
      interior.push_back(p.size() > 2 ? p[2] : "0");
      any |= p.size() > 2 && p[2] != "0";
    }
    a.value = absl::StrJoin(edge, "x");
    if (any) v->attrs.push_back({"interior", absl::StrCat("{", absl::StrJoin(interior, ","), "}")});
    return;
  }
}

std::string JoinPadding(const VInst& v) {
  const VAttr* pad = v.FindAttr("padding");
  const VAttr* interior = v.FindAttr("interior");
  if (pad == nullptr || interior == nullptr || pad->value == "{}") return pad ? pad->value : "";
  std::string in = interior->value;
  if (in.size() >= 2) in = in.substr(1, in.size() - 2);
  std::vector<std::string> edge = absl::StrSplit(pad->value, 'x');
  std::vector<std::string> inner = absl::StrSplit(in, ',');
  for (size_t i = 0; i < edge.size() && i < inner.size(); ++i)
    absl::StrAppend(&edge[i], "_", inner[i]);
  return absl::StrJoin(edge, "x");
}

// convolution_v2 keeps kernel dilation apart: window=`{size=3x3 pad=1_1x1_1}`,
// rhs_dilate=`2x2` (absent when 1, its default). The IR writes it last inside the window.
void SplitRhsDilation(VInst* v) {
  for (VAttr& a : v->attrs) {
    size_t at = a.name == "window" ? a.value.find(" rhs_dilate=") : std::string::npos;
    if (at == std::string::npos) continue;
    size_t end = a.value.find('}', at);
    std::string dil = a.value.substr(at + 12, end - at - 12);
    a.value.erase(at, end - at);
    v->attrs.push_back({"rhs_dilate", dil});
    return;
  }
}

std::string JoinWindow(const VInst& v, const std::string& window) {
  const VAttr* dil = v.FindAttr("rhs_dilate");
  if (dil == nullptr || window.empty() || window.back() != '}') return window;
  return absl::StrCat(window.substr(0, window.size() - 1), " rhs_dilate=", dil->value, "}");
}

}  // namespace

const VAttr* VInst::FindAttr(const std::string& n) const {
  for (const VAttr& a : attrs) {
    if (a.name == n) return &a;
  }
  return nullptr;
}

StatusOr<VModule> Legalize(const hlo::HloModule& module) {
  VModule m;
  m.name = module.name();
  m.opset = kCurrentOpset;
  for (const hlo::HloComputation* c : module.MakeComputationPostOrder()) {
    VComputation vc;
    vc.name = c->name();
    vc.entry = c == module.entry_computation();
    absl::flat_hash_map<const hlo::HloInstruction*, uint32_t> index;
    for (const hlo::HloInstruction* i : c->MakeInstructionPostOrder()) {
      VInst v;
      v.name = i->name();
      v.shape = i->shape().ToString();
      std::string name = hlo::HloOpcodeString(i->opcode());
      if (i->opcode() == hlo::HloOpcode::kCustomCall) {
        ASSIGN_OR_RETURN(name, CustomCallFamily(i->attrs().custom_call_target));
      }
      const VersionedOp* op = FindVersion(name, kCurrentOpset);
      if (op == nullptr) return Internal("[%s] opcode missing from the versioned op set", name);
      v.op = op->wire;
      for (const hlo::HloInstruction* o : i->operands()) v.operands.push_back(index.at(o));
      v.attrs = SplitAttrs(i->AttributesToString());
      if (i->opcode() == hlo::HloOpcode::kPad) SplitPadding(&v);
      if (i->opcode() == hlo::HloOpcode::kConvolution) SplitRhsDilation(&v);
      for (const VAttr& a : v.attrs) {
        if (op->FindAttr(a.name) == nullptr)
          return Internal("[%s] attribute '%s' missing from the versioned op set", name, a.name);
      }
      if (i->opcode() == hlo::HloOpcode::kParameter) v.parameter = i->parameter_number();
      if (i->opcode() == hlo::HloOpcode::kConstant) v.literal = i->literal().ValuesToString();
      v.root = i == c->root_instruction();
      index[i] = static_cast<uint32_t>(vc.insts.size());
      vc.insts.push_back(std::move(v));
    }
    m.computations.push_back(std::move(vc));
  }
  return m;
}

Status Downgrade(VModule* m, int target) {
  if (target < kMinSupportedOpset || target > m->opset)
    return InvalidArgument("cannot downgrade op-set %d to %d: this build writes op-sets %d to %d",
                           m->opset, target, kMinSupportedOpset, m->opset);
  for (VComputation& c : m->computations) {
    for (VInst& inst : c.insts) {
      const VersionedOp* cur = FindByWire(inst.op);
      if (cur->InOpset(target)) continue;
      const VersionedOp* old = FindVersion(cur->name, target);
      if (old == nullptr)
        return InvalidArgument("[%s] op %s was introduced in op-set %d; target op-set %d lacks it",
                               cur->name, cur->FullName(), cur->min_opset, target);
      std::vector<VAttr> kept;
      for (VAttr& a : inst.attrs) {
        if (old->FindAttr(a.name) != nullptr) {
          kept.push_back(std::move(a));
          continue;
        }
        const OpAttr* attr = cur->FindAttr(a.name);
        if (a.value != attr->default_value)
          return InvalidArgument(
              "[%s] attribute '%s' (instruction %%%s) was introduced in op-set %d (%s); it is "
              "not at its default, so the module cannot be written for op-set %d",
              cur->name, a.name, inst.name, attr->introduced, cur->FullName(), target);
      }
      inst.attrs = std::move(kept);
      inst.op = old->wire;
    }
  }
  m->opset = target;
  return Status();
}

Status Upgrade(VModule* m) {
  for (VComputation& c : m->computations) {
    for (VInst& inst : c.insts) {
      const VersionedOp* cur = FindByWire(inst.op);
      if (cur->InOpset(kCurrentOpset)) continue;
      const VersionedOp* now = FindVersion(cur->name, kCurrentOpset);
      if (now == nullptr)
        return InvalidArgument("[%s] op %s was removed from the op set before op-set %d", cur->name,
                               cur->FullName(), kCurrentOpset);
      for (const OpAttr& a : now->attrs) {
        if (inst.FindAttr(a.name) == nullptr && *a.default_value != '\0')
          inst.attrs.push_back({a.name, a.default_value});
      }
      inst.op = now->wire;
    }
  }
  m->opset = kCurrentOpset;
  return Status();
}

Status Validate(const VModule& m) {
  if (m.opset < kMinSupportedOpset || m.opset > kCurrentOpset)
    return InvalidArgument("module is written in op-set %d; this build reads op-sets %d to %d",
                           m.opset, kMinSupportedOpset, kCurrentOpset);
  for (const VComputation& c : m.computations) {
    for (size_t k = 0; k < c.insts.size(); ++k) {
      const VInst& inst = c.insts[k];
      const VersionedOp* op = FindByWire(inst.op);
      if (op == nullptr)
        return InvalidArgument("instruction %%%s has unknown op wire code %d", inst.name,
                               int(inst.op));
      if (!op->InOpset(m.opset))
        return InvalidArgument("instruction %%%s: op %s is not in op-set %d", inst.name,
                               op->FullName(), m.opset);
      for (uint32_t o : inst.operands) {
        if (o >= k)
          return InvalidArgument("instruction %%%s: operand index %d is not an earlier instruction",
                                 inst.name, int(o));
      }
      for (const VAttr& a : inst.attrs) {
        if (op->FindAttr(a.name) == nullptr)
          return InvalidArgument("instruction %%%s: op %s has no attribute '%s'", inst.name,
                                 op->FullName(), a.name);
      }
    }
  }
  return Status();
}

StatusOr<std::string> ToHloText(const VModule& m) {
  RETURN_IF_ERROR(Validate(m));
  if (m.opset != kCurrentOpset)
    return InvalidArgument("module is in op-set %d; upgrade it to %d first", m.opset,
                           kCurrentOpset);
  std::string s = absl::StrCat("HloModule ", m.name, "\n");
  for (const VComputation& c : m.computations) {
    absl::StrAppend(&s, "\n", c.entry ? "ENTRY " : "", "%", c.name, " {\n");
    for (const VInst& inst : c.insts) {
      const VersionedOp* op = FindByWire(inst.op);
      std::string opname = op->name;
      if (opname.rfind("custom-call.", 0) == 0) opname = "custom-call";
      std::string args;
      if (opname == "parameter") {
        args = absl::StrCat(inst.parameter);
      } else if (opname == "constant") {
        args = inst.literal;
      } else {
        std::vector<std::string> names;
        for (uint32_t o : inst.operands) names.push_back(absl::StrCat("%", c.insts[o].name));
        args = absl::StrJoin(names, ", ");
      }
      absl::StrAppend(&s, "  ", inst.root ? "ROOT " : "", "%", inst.name, " = ", inst.shape, " ",
                      opname, "(", args, ")");
      for (const VAttr& a : inst.attrs) {
        if (a.name == "interior" || a.name == "rhs_dilate") continue;
        std::string value = a.name == "padding"  ? JoinPadding(inst)
                            : a.name == "window" ? JoinWindow(inst, a.value)
                                                 : a.value;
        absl::StrAppend(&s, ", ", a.name, "=", value);
      }
      absl::StrAppend(&s, "\n");
    }
    absl::StrAppend(&s, "}\n");
  }
  return s;
}

StatusOr<std::unique_ptr<hlo::HloModule>> LowerToHlo(const VModule& m) {
  ASSIGN_OR_RETURN(std::string text, ToHloText(m));
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModule(text));
  RETURN_IF_ERROR(hlo::HloVerifier::Run(module.get()).status());
  return module;
}

}  // namespace oneflow_like::artifact
