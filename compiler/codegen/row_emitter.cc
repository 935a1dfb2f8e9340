#include "compiler/codegen/row_emitter.h"

#include <numeric>

namespace oneflow_like::hlo::codegen {

StatusOr<Aff> RowEmitter::Dim(const RowIndex& idx, int64_t k) {
  if (idx.dims[k]) return *idx.dims[k];
  if (!idx.linear) return Internal("[codegen] row index without dim %d or a linear position", k);
  const int64_t S = idx.shape[k];
  if (S == 1) return Aff{};
  const std::string key =
      absl::StrCat(idx.linear->Key(), "/", absl::StrJoin(idx.shape, "x"), "/", k);
  auto it = cache_.dims.find(key);
  if (it != cache_.dims.end()) return it->second;
  int64_t s = 1;
  for (size_t q = k + 1; q < idx.shape.size(); ++q) s *= idx.shape[q];
  const Aff& L = *idx.linear;
  // d = (L / s) % S with L = B + c*j, B % m == 0, j in [0, n).
  std::optional<Aff> r;
  if (L.affine && L.m % s == 0) {
    // B / s is exact: d = (B/s + floor(c*j/s)) % S, affine while nothing wraps around S.
    std::optional<int64_t> cq;
    if (L.c % s == 0)
      cq = L.c / s;
    else if (L.c * (n_ - 1) < s)
      cq = 0;
    const int64_t g = std::gcd(L.m / s, S);  // (B/s) % S is a multiple of g
    if (cq && *cq * (n_ - 1) < g) {
      r = Aff{};
      r->c = *cq;
      if ((L.m / s) % S != 0) {
        r->base = PreDef("int64_t",
                         s == 1 ? absl::StrCat(L.base, " % ", S)
                                : absl::StrCat("(", L.base, " / ", s, ") % ", S),
                         "x");
        r->m = g;
      }
    }
  } else if (L.affine && L.m != 0 && s % L.m == 0 && L.c * (n_ - 1) < L.m) {
    // B % s <= s - m and c*j < m: floor(L / s) does not move within the row.
    r = Invariant(PreDef(
        "int64_t",
        k == 0 ? absl::StrCat(L.base, " / ", s) : absl::StrCat("(", L.base, " / ", s, ") % ", S),
        "x"));
  }
  if (!r) {
    const std::string at = At(L);
    r = PerJ(k == 0 ? absl::StrCat(at, " / ", s) : absl::StrCat("(", at, " / ", s, ") % ", S));
  }
  cache_.dims[key] = *r;
  return *r;
}

StatusOr<Aff> RowEmitter::Linear(const RowIndex& idx, const DimVector& shape) {
  if (idx.linear && idx.shape == shape) return *idx.linear;
  std::vector<Aff> d;
  bool all_affine = true;
  for (size_t k = 0; k < shape.size(); ++k) {
    ASSIGN_OR_RETURN(Aff a, Dim(idx, k));
    all_affine &= a.affine;
    d.push_back(a);
  }
  std::vector<std::string> terms;
  Aff out;
  int64_t stride = 1;
  for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) {
    const Aff& a = d[k];
    if (all_affine) {
      if (a.base != "0")
        terms.push_back(stride == 1 ? a.base : absl::StrCat(a.base, " * ", stride));
      out.m = std::gcd(out.m, a.m * stride);
      out.c += a.c * stride;
    } else {
      terms.push_back(stride == 1 ? At(a) : absl::StrCat(At(a), " * ", stride));
    }
    stride *= shape[k];
  }
  std::reverse(terms.begin(), terms.end());
  if (!all_affine) return PerJ(terms.empty() ? "0" : absl::StrJoin(terms, " + "));
  if (terms.size() == 1 && terms[0].find(' ') == std::string::npos)
    out.base = terms[0];
  else if (!terms.empty())
    out.base = PreDef("int64_t", absl::StrJoin(terms, " + "), "x");
  return out;
}

StatusOr<RowEmitter::Val> RowEmitter::Emit(const HloInstruction* inst, const RowIndex& idx) {
  auto key = std::make_pair(inst, idx.Key());
  auto it = cache_.values.find(key);
  if (it != cache_.values.end()) return it->second;
  ASSIGN_OR_RETURN(std::string T, CType(inst->shape().dtype()));
  const DimVector& out = inst->shape().dims();
  Val val;
  switch (inst->opcode()) {
    case HloOpcode::kParameter: {
      ASSIGN_OR_RETURN(Aff l, Linear(idx, out));
      const std::string load = absl::StrCat("p", inst->parameter_number(), "[", At(l), "]");
      val.invariant = l.invariant() && hoist_loads_;
      val.v = val.invariant ? PreDef(T, load, "v") : InDef(T, load, "v");
      break;
    }
    case HloOpcode::kConstant:
      if (!inst->IsScalarConstant()) return Unimplemented("[codegen] array constant in a fusion");
      val = {PreDef(T, LiteralExpr(inst->shape().dtype(), inst->literal().data[0], T), "v"), true};
      break;
    case HloOpcode::kIota: {
      ASSIGN_OR_RETURN(Aff a, Dim(idx, inst->attrs().index));
      val.invariant = a.invariant();
      val.v = val.invariant ? PreDef(T, absl::StrCat(T, "(", a.base, ")"), "v")
                            : InDef(T, absl::StrCat(T, "(", At(a), ")"), "v");
      break;
    }
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice: {
      const HloInstruction* x = inst->operand(0);
      RowIndex sub;
      sub.shape = x->shape().dims();
      sub.dims.resize(x->shape().rank());
      for (int64_t j = 0; j < x->shape().rank(); ++j) {
        if (inst->opcode() == HloOpcode::kBroadcast) {
          ASSIGN_OR_RETURN(sub.dims[j], Dim(idx, inst->dimensions()[j]));
        } else if (inst->opcode() == HloOpcode::kTranspose) {
          ASSIGN_OR_RETURN(sub.dims[inst->dimensions()[j]], Dim(idx, j));
        } else {
          const SliceDim& s = inst->attrs().slice[j];
          ASSIGN_OR_RETURN(Aff a, Dim(idx, j));
          Aff r;
          if (!a.affine) {
            r = PerJ(absl::StrCat(s.start, " + ", a.expr, " * ", s.stride));
          } else {
            r.c = a.c * s.stride;
            r.m = std::gcd(s.start, a.m * s.stride);
            if (a.base == "0")
              r.base = absl::StrCat(s.start);
            else
              r.base =
                  PreDef("int64_t", absl::StrCat(s.start, " + ", a.base, " * ", s.stride), "x");
          }
          sub.dims[j] = r;
        }
      }
      ASSIGN_OR_RETURN(val, Emit(x, sub));
      break;
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast: {
      const HloInstruction* x = inst->operand(0);
      ASSIGN_OR_RETURN(Aff l, Linear(idx, out));
      ASSIGN_OR_RETURN(val, Emit(x, FromLinear(x->shape().dims(), l)));
      break;
    }
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate: {
      ASSIGN_OR_RETURN(val, EmitPadOrConcat(inst, idx, T));
      break;
    }
    default: {
      if (!IsElementwise(inst->opcode()))
        return Unimplemented("[codegen] %s inside a fusion", HloOpcodeString(inst->opcode()));
      std::vector<std::string> a;
      bool inv = true;
      for (const HloInstruction* o : inst->operands()) {
        ASSIGN_OR_RETURN(Val ov, Emit(o, idx));
        a.push_back(ov.v);
        inv &= ov.invariant;
      }
      ASSIGN_OR_RETURN(std::string expr, ElementwiseExpr(inst, a, T, KernelDialect::kCpp));
      // Pure arithmetic on row-invariant values is computed once per row, even inside a branch.
      val = {inv ? PreDef(T, expr, "v") : InDef(T, expr, "v"), inv};
    }
  }
  cache_.values[key] = val;
  return val;
}

}  // namespace oneflow_like::hlo::codegen
