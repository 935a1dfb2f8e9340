// Pads and concatenations in both loop emitters: the value is chosen by branches on the output
// position (which operand piece, or operand vs padding value). Operand loads stay inside their
// branch; a branch's memoised values are dropped after it (they are not defined outside it).
#include <optional>

#include "compiler/codegen/element_emitter.h"
#include "compiler/codegen/row_emitter.h"

namespace oneflow_like::hlo::codegen {

// Per element: each dim's condition and offset computed from the decomposed index.
StatusOr<std::string> LoopEmitter::EmitPadOrConcat(const HloInstruction* inst, const Index& idx,
                                                   const std::string& T) {
  std::string v = Var("v");
  Line(absl::StrCat(T, " ", v, ";"));
  auto saved = cache;
  if (inst->opcode() == HloOpcode::kPad) {
    ASSIGN_OR_RETURN(std::string pv, Emit(inst->operand(1), Index{}));
    saved = cache;
    Index sub;
    sub.shape = inst->operand(0)->shape().dims();
    std::vector<std::string> conds;
    for (int64_t d = 0; d < inst->shape().rank(); ++d) {
      const PadDim& p = inst->attrs().padding[d];
      std::string q = Var("q");
      Line(absl::StrCat("const int64_t ", q, " = ", idx.dims[d], " - ", p.lo, ";"));
      conds.push_back(absl::StrCat(q, " >= 0 && ", q, " % ", p.interior + 1, " == 0 && ", q, " / ",
                                   p.interior + 1, " < ", sub.shape[d]));
      sub.dims.push_back(absl::StrCat("(", q, " / ", p.interior + 1, ")"));
    }
    Line(absl::StrCat("if (", conds.empty() ? "true" : absl::StrJoin(conds, " && "), ") {"));
    indent_ += 2;
    ASSIGN_OR_RETURN(std::string x, Emit(inst->operand(0), sub));
    Line(absl::StrCat(v, " = ", x, ";"));
    indent_ -= 2;
    Line(absl::StrCat("} else { ", v, " = ", pv, "; }"));
  } else {
    const int64_t dim = inst->dimensions()[0];
    int64_t offset = 0;
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      const HloInstruction* x = inst->operand(k);
      const int64_t size = x->shape().dim(dim);
      Line(absl::StrCat(k == 0 ? "if (" : "} else if (", idx.dims[dim], " < ", offset + size,
                        ") {"));
      indent_ += 2;
      Index sub;
      sub.shape = x->shape().dims();
      sub.dims = idx.dims;
      sub.dims[dim] = absl::StrCat("(", idx.dims[dim], " - ", offset, ")");
      ASSIGN_OR_RETURN(std::string e, Emit(x, sub));
      Line(absl::StrCat(v, " = ", e, ";"));
      indent_ -= 2;
      cache = saved;
      offset += size;
    }
    Line(absl::StrCat("} else { ", v, " = ", T, "(0); }"));
  }
  cache = saved;
  return v;
}

StatusOr<RowEmitter::Val> RowEmitter::EmitPadOrConcat(const HloInstruction* inst,
                                                      const RowIndex& idx, const std::string& T) {
  // Conditions on dims invariant in the row are computed in pre (the branch is then the same for
  // the whole row); operand loads stay inside the branch.
  std::optional<Val> pad_value;
  if (inst->opcode() == HloOpcode::kPad) {
    ASSIGN_OR_RETURN(Val pv, Emit(inst->operand(1), RowIndex{}));
    pad_value = pv;
  }
  const std::string v = Var("v");
  absl::StrAppend(&inner, T, " ", v, ";\n");
  const Caches saved = cache_;
  const bool saved_hoist = hoist_loads_;
  auto Branch = [&](const std::string& cond, bool first, const HloInstruction* x,
                    const RowIndex& sub) -> Status {
    absl::StrAppend(&inner, first ? "" : "} else ", "if (", cond, ") {\n");
    hoist_loads_ = false;
    ASSIGN_OR_RETURN(Val e, Emit(x, sub));
    hoist_loads_ = saved_hoist;
    absl::StrAppend(&inner, v, " = ", e.v, ";\n");
    cache_ = saved;
    return absl::OkStatus();
  };
  if (inst->opcode() == HloOpcode::kPad) {
    RowIndex sub;
    sub.shape = inst->operand(0)->shape().dims();
    std::vector<std::string> pre_conds, in_conds;
    for (int64_t d = 0; d < inst->shape().rank(); ++d) {
      const PadDim& p = inst->attrs().padding[d];
      ASSIGN_OR_RETURN(Aff a, Dim(idx, d));
      const bool inv = a.invariant();
      // As in a concatenation: a row inside one aligned block is all in or all out of the
      // operand when both edges of the operand are block boundaries.
      const int64_t size = sub.shape[d];
      if (!inv && a.affine && a.c == 1 && a.m >= n_ && p.interior == 0 && p.lo % a.m == 0 &&
          (p.lo + size) % a.m == 0) {
        Aff shifted = a;
        shifted.base = PreDef("int64_t", absl::StrCat(a.base, " - ", p.lo), "x");
        pre_conds.push_back(absl::StrCat(shifted.base, " >= 0 && ", shifted.base, " < ", size));
        sub.dims.push_back(shifted);
        continue;
      }
      const std::string q = inv ? PreDef("int64_t", absl::StrCat(a.base, " - ", p.lo), "x")
                                : InDef("int64_t", absl::StrCat(At(a), " - ", p.lo), "y");
      const int64_t step = p.interior + 1;
      std::string cond =
          absl::StrCat(q, " >= 0 && ", step == 1 ? "" : absl::StrCat(q, " % ", step, " == 0 && "),
                       q, step == 1 ? "" : absl::StrCat(" / ", step), " < ", sub.shape[d]);
      const std::string qd = step == 1 ? q : absl::StrCat("(", q, " / ", step, ")");
      (inv ? pre_conds : in_conds).push_back(std::move(cond));
      if (inv)
        sub.dims.push_back(Invariant(step == 1 ? q : PreDef("int64_t", qd, "x")));
      else
        sub.dims.push_back(PerJ(qd));
    }
    if (!pre_conds.empty())
      in_conds.insert(in_conds.begin(), PreDef("bool", absl::StrJoin(pre_conds, " && "), "x"));
    RETURN_IF_ERROR(Branch(in_conds.empty() ? "true" : absl::StrJoin(in_conds, " && "), true,
                           inst->operand(0), sub));
    absl::StrAppend(&inner, "} else { ", v, " = ", pad_value->v, "; }\n");
  } else {
    const int64_t dim = inst->dimensions()[0];
    ASSIGN_OR_RETURN(Aff a, Dim(idx, dim));
    std::vector<Aff> dims;
    for (int64_t k = 0; k < inst->shape().rank(); ++k) {
      ASSIGN_OR_RETURN(Aff dk, Dim(idx, k));
      dims.push_back(dk);
    }
    const bool inv = a.invariant();
    // base + j with base a multiple of m and the row no longer than m: when every piece boundary
    // is a multiple of m too, the whole row lies in one piece, chosen by base alone, and stays
    // affine inside it (rows cut inside an attention head, see EmitElementwiseRows).
    bool in_one_piece = !inv && a.affine && a.c == 1 && a.m >= n_;
    for (int64_t k = 0, end = 0; in_one_piece && k + 1 < inst->operand_count(); ++k)
      in_one_piece = (end += inst->operand(k)->shape().dim(dim)) % a.m == 0;
    if (!inv && !in_one_piece) affine = false;
    // Every operand's index and condition first: per-j definitions must precede the branches.
    std::vector<std::pair<std::string, RowIndex>> cases;
    int64_t offset = 0;
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      const HloInstruction* x = inst->operand(k);
      const int64_t size = x->shape().dim(dim);
      RowIndex sub;
      sub.shape = x->shape().dims();
      for (const Aff& dk : dims) sub.dims.push_back(dk);
      const bool by_base = inv || in_one_piece;
      const std::string cond = absl::StrCat(by_base ? a.base : At(a), " < ", offset + size);
      if (inv) {
        sub.dims[dim] = Invariant(PreDef("int64_t", absl::StrCat(a.base, " - ", offset), "x"));
      } else if (in_one_piece) {
        Aff shifted = a;
        shifted.base = PreDef("int64_t", absl::StrCat(a.base, " - ", offset), "x");
        sub.dims[dim] = shifted;
      } else {
        sub.dims[dim] = PerJ(absl::StrCat(At(a), " - ", offset));
      }
      cases.push_back({by_base ? PreDef("bool", cond, "x") : cond, std::move(sub)});
      offset += size;
    }
    for (size_t k = 0; k < cases.size(); ++k)
      RETURN_IF_ERROR(Branch(cases[k].first, k == 0, inst->operand(k), cases[k].second));
    absl::StrAppend(&inner, "} else { ", v, " = ", T, "(0); }\n");
  }
  return Val{v, false};
}

}  // namespace oneflow_like::hlo::codegen
