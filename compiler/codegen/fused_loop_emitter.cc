#include "compiler/codegen/fused_loop_emitter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "absl/strings/str_join.h"
#include "compiler/ir/hlo_computation.h"

namespace oneflow_like::hlo {
namespace {

StatusOr<std::string> CType(DType t) {
  switch (t) {
    case DType::kBool: return std::string("bool");
    case DType::kU8: return std::string("uint8_t");
    case DType::kI8: return std::string("int8_t");
    case DType::kI32: return std::string("int32_t");
    case DType::kI64: return std::string("int64_t");
    case DType::kF32: return std::string("float");
    case DType::kF64: return std::string("double");
    default: return Unimplemented("[codegen] element type %s", DTypeName(t));
  }
}

int64_t Product(const DimVector& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

std::string Literal(DType t, double v, const std::string& type) {
  if (std::isnan(v)) return absl::StrCat("ofl_nan<", type, ">()");
  if (std::isinf(v)) return absl::StrCat(v < 0 ? "-" : "", "ofl_inf<", type, ">()");
  if (t == DType::kBool) return v != 0 ? "true" : "false";
  if (IsIntegral(t))
    return absl::StrCat(type, "(", static_cast<int64_t>(v), t == DType::kI64 ? "LL" : "", ")");
  return absl::StrFormat("%s(%.17g)", type.c_str(), v);
}

// The expression of elementwise `inst` of C type T over operand values `a` (both dialects).
StatusOr<std::string> ElementwiseExpr(const HloInstruction* inst, const std::vector<std::string>& a,
                                      const std::string& T, KernelDialect dialect) {
  auto Math = [dialect](const char* fn) {
    return dialect == KernelDialect::kCpp ? absl::StrCat("std::", fn) : std::string(fn);
  };
  const DType in_t = inst->operand(0)->shape().dtype();
  const bool pred = in_t == DType::kBool, integral = !IsFloating(in_t);
  const bool wide_int = in_t == DType::kI32 || in_t == DType::kI64;
  const bool cpu_f32 = dialect == KernelDialect::kCpp && in_t == DType::kF32;
  auto m1 = [&](const char* fn) { return absl::StrCat(Math(fn), "(", a[0], ")"); };
  switch (inst->opcode()) {
    case HloOpcode::kNegate: return absl::StrCat(T, "(-", a[0], ")");
    case HloOpcode::kAbs:
      return absl::StrCat(T, "(", integral ? "ofl_iabs(" : Math("fabs") + "(", a[0], "))");
    // float exp on the CPU: the prelude's branch-free ofl_expf (1 ulp, vectorises); libm's expf
    // stays scalar (and libmvec's vector variant rounds differently from its scalar calls).
    case HloOpcode::kExp: return cpu_f32 ? absl::StrCat("ofl_expf(", a[0], ")") : m1("exp");
    case HloOpcode::kLog: return m1("log");
    case HloOpcode::kLog1p: return m1("log1p");
    case HloOpcode::kSqrt: return m1("sqrt");
    case HloOpcode::kRsqrt: return absl::StrCat("(", T, "(1) / ", m1("sqrt"), ")");
    case HloOpcode::kSin: return m1("sin");
    case HloOpcode::kCos: return m1("cos");
    case HloOpcode::kTanh: return m1("tanh");
    case HloOpcode::kLogistic:
      return absl::StrCat("(", T, "(1) / (", T, "(1) + ",
                          cpu_f32 ? std::string("ofl_expf") : Math("exp"), "(-", a[0], ")))");
    case HloOpcode::kSign: return absl::StrCat("ofl_sign(", a[0], ")");
    case HloOpcode::kFloor: return m1("floor");
    case HloOpcode::kCeil: return m1("ceil");
    case HloOpcode::kRoundNearestEven: return m1("nearbyint");
    case HloOpcode::kErf: return m1("erf");
    case HloOpcode::kNot:
      return pred ? absl::StrCat("(!", a[0], ")") : absl::StrCat(T, "(~", a[0], ")");
    case HloOpcode::kConvert:
      if (inst->shape().dtype() == DType::kBool) return absl::StrCat("(", a[0], " != 0)");
      return absl::StrCat("static_cast<", T, ">(", a[0], ")");
    // i32/i64 arithmetic wraps (two's complement) through the unsigned type: no signed overflow.
    case HloOpcode::kAdd:
      return wide_int ? absl::StrCat("ofl_wadd(", a[0], ", ", a[1], ")")
                      : absl::StrCat(T, "(", a[0], " + ", a[1], ")");
    case HloOpcode::kSubtract:
      return wide_int ? absl::StrCat("ofl_wsub(", a[0], ", ", a[1], ")")
                      : absl::StrCat(T, "(", a[0], " - ", a[1], ")");
    case HloOpcode::kMultiply:
      return wide_int ? absl::StrCat("ofl_wmul(", a[0], ", ", a[1], ")")
                      : absl::StrCat(T, "(", a[0], " * ", a[1], ")");
    case HloOpcode::kDivide:
      return integral ? absl::StrCat("ofl_idiv(", a[0], ", ", a[1], ")")
                      : absl::StrCat("(", a[0], " / ", a[1], ")");
    case HloOpcode::kRemainder:
      return absl::StrCat(T, "(", Math("fmod"), "(", a[0], ", ", a[1], "))");
    case HloOpcode::kPower: return absl::StrCat(T, "(", Math("pow"), "(", a[0], ", ", a[1], "))");
    case HloOpcode::kMaximum: return absl::StrCat("ofl_max(", a[0], ", ", a[1], ")");
    case HloOpcode::kMinimum: return absl::StrCat("ofl_min(", a[0], ", ", a[1], ")");
    case HloOpcode::kAnd: return absl::StrCat("(", a[0], pred ? " && " : " & ", a[1], ")");
    case HloOpcode::kOr: return absl::StrCat("(", a[0], pred ? " || " : " | ", a[1], ")");
    case HloOpcode::kXor: return absl::StrCat(T, "(", a[0], pred ? " != " : " ^ ", a[1], ")");
    case HloOpcode::kShiftRightLogical: return absl::StrCat("ofl_shrl(", a[0], ", ", a[1], ")");
    case HloOpcode::kCompare: {
      static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      return absl::StrCat("(", a[0], " ", kOps[static_cast<int>(inst->attrs().direction)], " ",
                          a[1], ")");
    }
    case HloOpcode::kSelect: return absl::StrCat("(", a[0], " ? ", a[1], " : ", a[2], ")");
    default: return Unimplemented("[codegen] %s", HloOpcodeString(inst->opcode()));
  }
}

class LoopEmitter {
 public:
  // An element position: per-dim expressions, plus the row-major linear expression over `shape`
  // when known (then loads skip the index arithmetic).
  struct Index {
    std::vector<std::string> dims;
    std::string linear;
    DimVector shape;
    std::string Key() const { return absl::StrCat(absl::StrJoin(dims, ","), "|", linear); }
  };

  explicit LoopEmitter(KernelDialect d) : dialect_(d) {}

  std::string Var(const std::string& prefix) { return absl::StrCat(prefix, counter_++); }
  void Line(const std::string& s) { absl::StrAppend(&body_, std::string(indent_, ' '), s, "\n"); }
  std::string& body() { return body_; }
  int& indent() { return indent_; }

  Index Decompose(const std::string& linear, const DimVector& shape) {
    Index idx;
    idx.shape = shape;
    idx.linear = linear;
    int64_t stride = Product(shape);
    for (size_t k = 0; k < shape.size(); ++k) {
      stride /= std::max<int64_t>(shape[k], 1);
      std::string v = Var("d");
      Line(absl::StrCat("const int64_t ", v, " = (", linear, " / ", stride, ")",
                        k == 0 ? "" : absl::StrCat(" % ", shape[k]), ";"));
      idx.dims.push_back(v);
    }
    return idx;
  }

  std::string Linearize(const Index& idx, const DimVector& shape) {
    if (!idx.linear.empty() && idx.shape == shape) return idx.linear;
    if (shape.empty()) return "0";
    std::string e = idx.dims[0];
    for (size_t k = 1; k < shape.size(); ++k)
      e = absl::StrCat("(", e, ") * ", shape[k], " + ", idx.dims[k]);
    std::string v = Var("l");
    Line(absl::StrCat("const int64_t ", v, " = ", e, ";"));
    return v;
  }

  StatusOr<std::string> Emit(const HloInstruction* inst, const Index& idx);
  StatusOr<std::string> EmitElementwise(const HloInstruction* inst, const Index& idx,
                                        const std::string& type);

  std::map<std::pair<const HloInstruction*, std::string>, std::string> cache;

 private:
  KernelDialect dialect_;
  std::string body_;
  int indent_ = 4;
  int counter_ = 0;
};

StatusOr<std::string> LoopEmitter::EmitElementwise(const HloInstruction* inst, const Index& idx,
                                                   const std::string& T) {
  std::vector<std::string> a;
  for (const HloInstruction* o : inst->operands()) {
    ASSIGN_OR_RETURN(std::string v, Emit(o, idx));
    a.push_back(v);
  }
  return ElementwiseExpr(inst, a, T, dialect_);
}

StatusOr<std::string> LoopEmitter::Emit(const HloInstruction* inst, const Index& idx) {
  auto key = std::make_pair(inst, idx.Key());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  ASSIGN_OR_RETURN(std::string T, CType(inst->shape().dtype()));
  const DimVector& out = inst->shape().dims();
  std::string expr;
  switch (inst->opcode()) {
    case HloOpcode::kParameter:
      expr = absl::StrCat("p", inst->parameter_number(), "[", Linearize(idx, out), "]");
      break;
    case HloOpcode::kConstant:
      if (!inst->IsScalarConstant()) return Unimplemented("[codegen] array constant in a fusion");
      expr = Literal(inst->shape().dtype(), inst->literal().data[0], T);
      break;
    case HloOpcode::kIota: expr = absl::StrCat(T, "(", idx.dims[inst->attrs().index], ")"); break;
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice: {
      const HloInstruction* x = inst->operand(0);
      Index sub;
      sub.shape = x->shape().dims();
      sub.dims.resize(x->shape().rank());
      for (int64_t j = 0; j < x->shape().rank(); ++j) {
        if (inst->opcode() == HloOpcode::kBroadcast)
          sub.dims[j] = idx.dims[inst->dimensions()[j]];
        else if (inst->opcode() == HloOpcode::kTranspose)
          sub.dims[inst->dimensions()[j]] = idx.dims[j];
        else {
          const SliceDim& s = inst->attrs().slice[j];
          sub.dims[j] = absl::StrCat("(", s.start, " + ", idx.dims[j], " * ", s.stride, ")");
        }
      }
      ASSIGN_OR_RETURN(expr, Emit(x, sub));
      break;
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast: {
      const HloInstruction* x = inst->operand(0);
      Index sub = Decompose(Linearize(idx, out), x->shape().dims());
      ASSIGN_OR_RETURN(expr, Emit(x, sub));
      break;
    }
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate: {
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
          conds.push_back(absl::StrCat(q, " >= 0 && ", q, " % ", p.interior + 1, " == 0 && ", q,
                                       " / ", p.interior + 1, " < ", sub.shape[d]));
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
      cache[key] = v;
      return v;
    }
    default:
      if (!IsElementwise(inst->opcode()))
        return Unimplemented("[codegen] %s inside a fusion", HloOpcodeString(inst->opcode()));
      ASSIGN_OR_RETURN(expr, EmitElementwise(inst, idx, T));
  }
  std::string v = Var("v");
  Line(absl::StrCat("const ", T, " ", v, " = ", expr, ";"));
  cache[key] = v;
  return v;
}

std::string Combine(ReduceKind k, const std::string& acc, const std::string& v,
                    const std::string& T) {
  switch (k) {
    case ReduceKind::kAdd: return absl::StrCat(T, "(", acc, " + ", v, ")");
    case ReduceKind::kMul: return absl::StrCat(T, "(", acc, " * ", v, ")");
    case ReduceKind::kMax: return absl::StrCat("ofl_max(", acc, ", ", v, ")");
    case ReduceKind::kMin: return absl::StrCat("ofl_min(", acc, ", ", v, ")");
    case ReduceKind::kAnd: return absl::StrCat("(", acc, " && ", v, ")");
    default: return absl::StrCat("(", acc, " || ", v, ")");
  }
}

// ---------------------------------------------------------------------------------------------
// C++ dialect: row loops. The iteration space is split into rows of `n` elements (the innermost
// output dimension, or the largest trailing block that keeps every access affine); per row, the
// outer indices and everything that does not depend on the inner position j are computed once
// ("pre"), and the inner loop over j holds only accesses affine in j (contiguous, broadcast,
// strided), so the system compiler vectorises it. Constructs that are not affine in j (concat or
// pad along the row, reshapes that wrap inside a row) are computed per j (correct, slower).

// A row-invariant `base` plus `c` * j (j in [0, n)) when `affine`; base is a multiple of `m`
// (m == 0: base is exactly 0). Otherwise `expr`, a value defined inside the inner loop.
struct Aff {
  std::string base = "0";
  int64_t m = 0, c = 0;
  bool affine = true;
  std::string expr;
  bool invariant() const { return affine && c == 0; }
  std::string Key() const { return affine ? absl::StrCat(base, "+", c, "j") : expr; }
};

// A position over `shape`: per-dim values (known ones) and/or the row-major linear position,
// from which unknown dims are derived on demand (so a broadcast over a collapsed row only needs
// the dims it reads).
struct RowIndex {
  DimVector shape;
  std::vector<std::optional<Aff>> dims;
  std::optional<Aff> linear;
  std::string Key() const {
    std::string k = absl::StrCat(absl::StrJoin(shape, "x"), ":");
    for (const auto& d : dims) absl::StrAppend(&k, d ? d->Key() : "?", ",");
    return absl::StrCat(k, "|", linear ? linear->Key() : "");
  }
};

class RowEmitter {
 public:
  // `j`: the inner loop variable, in [0, n).
  RowEmitter(std::string j, int64_t n) : j_(std::move(j)), n_(n) {}
  struct Val {
    std::string v;
    bool invariant;  // defined in the pre block
  };

  std::string pre, inner;  // statements, one per line, unindented
  bool affine = true;      // false once something per j is not affine (not vectorisable)

  // The value of `inst` at `idx`.
  StatusOr<Val> Emit(const HloInstruction* inst, const RowIndex& idx);
  StatusOr<Aff> Dim(const RowIndex& idx, int64_t k);
  StatusOr<Aff> Linear(const RowIndex& idx, const DimVector& shape);
  // An index over `shape` whose position is `linear`.
  static RowIndex FromLinear(const DimVector& shape, Aff linear) {
    RowIndex r;
    r.shape = shape;
    r.dims.resize(shape.size());
    r.linear = std::move(linear);
    return r;
  }
  static Aff Invariant(std::string base, int64_t m = 1) {
    Aff a;
    a.base = std::move(base);
    a.m = a.base == "0" ? 0 : m;
    return a;
  }
  // The value of `a` at the current j, as an expression.
  std::string At(const Aff& a) const {
    if (!a.affine) return a.expr;
    std::string t = a.c == 0 ? "" : a.c == 1 ? j_ : absl::StrCat(j_, " * ", a.c);
    if (t.empty()) return a.base;
    return a.base == "0" ? t : absl::StrCat("(", a.base, " + ", t, ")");
  }
  std::string PreDef(const std::string& type, const std::string& expr, const char* prefix) {
    std::string v = Var(prefix);
    absl::StrAppend(&pre, "const ", type, " ", v, " = ", expr, ";\n");
    return v;
  }
  std::string InDef(const std::string& type, const std::string& expr, const char* prefix) {
    std::string v = Var(prefix);
    absl::StrAppend(&inner, "const ", type, " ", v, " = ", expr, ";\n");
    return v;
  }
  std::string Var(const char* prefix) { return absl::StrCat(prefix, counter_++); }

 private:
  Aff PerJ(const std::string& expr) {
    affine = false;
    Aff a;
    a.affine = false;
    a.expr = InDef("int64_t", expr, "y");
    return a;
  }
  StatusOr<Val> EmitPadOrConcat(const HloInstruction* inst, const RowIndex& idx,
                                const std::string& T);

  std::string j_;
  int64_t n_;
  int counter_ = 0;
  bool hoist_loads_ = true;  // false inside per-j branches: a hoisted load would run unguarded
  struct Caches {
    std::map<std::pair<const HloInstruction*, std::string>, Val> values;
    std::map<std::string, Aff> dims;
  } cache_;
};

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
      val = {PreDef(T, Literal(inst->shape().dtype(), inst->literal().data[0], T), "v"), true};
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

std::string Indent(const std::string& code, int n) {
  std::string out, pad(n, ' ');
  size_t pos = 0;
  while (pos < code.size()) {
    size_t e = code.find('\n', pos);
    if (e == std::string::npos) e = code.size();
    absl::StrAppend(&out, pad, code.substr(pos, e - pos), "\n");
    pos = e + 1;
  }
  return out;
}

// Identity of `k` for lane accumulators (floating types only).
std::string Identity(ReduceKind k, const std::string& T) {
  switch (k) {
    case ReduceKind::kAdd: return absl::StrCat(T, "(0)");
    case ReduceKind::kMul: return absl::StrCat(T, "(1)");
    case ReduceKind::kMax: return absl::StrCat("-ofl_inf<", T, ">()");
    default: return absl::StrCat("ofl_inf<", T, ">()");
  }
}

// The row loop over [begin, end) in rows of n: `rb` = row start, j in [j0, j1).
std::string RowLoop(int64_t n, const std::string& body) {
  return absl::StrCat("  for (int64_t row = begin / ", n, "; row * ", n, " < end; ++row) {\n",
                      "    const int64_t rb = row * ", n, ";\n",
                      "    const int64_t j0 = begin > rb ? begin - rb : 0;\n",
                      "    const int64_t j1 = end - rb < ", n, " ? end - rb : ", n, ";\n", body,
                      "  }\n");
}

// Elementwise roots (one or several outputs of one shape): rows of the largest trailing block
// whose accesses are all affine in j; nullopt where no block of at least 4 elements is.
StatusOr<std::optional<std::pair<std::string, int64_t>>> EmitElementwiseRows(
    const std::vector<const HloInstruction*>& roots) {
  const DimVector& shape = roots[0]->shape().dims();
  std::optional<std::pair<std::string, int64_t>> fallback;
  // Row lengths to try, longest first: the trailing blocks, then the divisors of the innermost
  // dim down to 16 elements: a row that crosses a boundary of an operand's contiguous run (the
  // heads of [b, s, h*d] read from [b, h, s, d]) has per-element index arithmetic, a shorter row
  // inside that run is affine.
  std::vector<int64_t> lengths;
  for (int64_t k = static_cast<int64_t>(shape.size()); k >= 1; --k) {
    if (k > 1 && shape[shape.size() - k] == 1) continue;  // the same block as k - 1
    lengths.push_back(Product(DimVector(shape.end() - k, shape.end())));
  }
  for (int64_t n = shape.back() / 2; n >= 16; --n)
    if (shape.back() % n == 0) lengths.push_back(n);
  for (int64_t n : lengths) {
    const bool innermost = n == shape.back();
    RowEmitter e("j", n);
    Aff lin;
    lin.base = "rb";
    lin.m = n;
    lin.c = 1;
    const RowIndex idx = RowEmitter::FromLinear(shape, lin);
    std::string
        stores;  // after every root's loads (an output may share its buffer with an operand)
    for (size_t r = 0; r < roots.size(); ++r) {
      ASSIGN_OR_RETURN(RowEmitter::Val v, e.Emit(roots[r], idx));
      absl::StrAppend(&stores, "o", r, "[rb + j] = ", v.v, ";\n");
    }
    absl::StrAppend(&e.inner, stores);
    std::string body = absl::StrCat(Indent(e.pre, 4), "    for (int64_t j = j0; j < j1; ++j) {\n",
                                    Indent(e.inner, 6), "    }\n");
    if (e.affine) return std::make_optional(std::make_pair(RowLoop(n, body), n));
    if (innermost && n >= 4) fallback = std::make_pair(RowLoop(n, body), n);
  }
  return fallback;
}

// A reduction root. Row reduction (the input's innermost dim is reduced): per output element, the
// trailing reduced block is the inner loop, accumulated in 16 lanes (lane = position % 16, the
// same for any [begin, end)) and folded in lane order after init; integer/pred reductions keep
// one accumulator. Column reduction (innermost dim kept): rows of the output's innermost dim,
// tiles of 256 accumulators, the reduced positions outside, the kept dim inside.
StatusOr<std::pair<std::string, int64_t>> EmitReductionRows(const HloInstruction* r) {
  const ReduceKind kind = r->GetReduceKind();
  if (kind == ReduceKind::kNone) return Unimplemented("[codegen] reduce without a known kind");
  ASSIGN_OR_RETURN(std::string T, CType(r->shape().dtype()));
  const HloInstruction* x = r->operand(0);
  const DimVector& xs = x->shape().dims();
  const int64_t rank = x->shape().rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : r->dimensions()) reduced[d] = true;
  const DimVector& out = r->shape().dims();
  if (rank > 0 && !reduced[rank - 1] && !out.empty()) {
    // Column reduction.
    const int64_t n = out.back();
    DimVector red_sizes;
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d]) red_sizes.push_back(xs[d]);
    RowEmitter e("j", n);
    ASSIGN_OR_RETURN(RowEmitter::Val init, e.Emit(r->operand(1), RowIndex{}));
    const std::string init_code = e.pre;
    e.pre.clear();
    Aff lin;
    lin.base = "rb";
    lin.m = n;
    lin.c = 1;
    const RowIndex oidx = RowEmitter::FromLinear(out, lin);
    RowIndex in;
    in.shape = xs;
    int64_t kept = 0, stride = Product(red_sizes), red_pos = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) {
        ASSIGN_OR_RETURN(Aff a, e.Dim(oidx, kept++));
        in.dims.push_back(a);
        continue;
      }
      stride /= red_sizes[red_pos++];
      in.dims.push_back(RowEmitter::Invariant(
          e.PreDef("int64_t", absl::StrCat("(r / ", stride, ") % ", xs[d]), "x")));
    }
    ASSIGN_OR_RETURN(RowEmitter::Val v, e.Emit(x, in));
    absl::StrAppend(&e.inner, "acc[j - jt] = ", Combine(kind, "acc[j - jt]", v.v, T), ";\n");
    std::string body = absl::StrCat(
        Indent(init_code, 4), "    for (int64_t jt = j0; jt < j1; jt += 256) {\n",
        "      const int64_t je = jt + 256 < j1 ? jt + 256 : j1;\n", "      ", T, " acc[256];\n",
        "      for (int64_t j = jt; j < je; ++j) acc[j - jt] = ", init.v, ";\n",
        "      for (int64_t r = 0; r < ", Product(red_sizes), "; ++r) {\n", Indent(e.pre, 8),
        "        for (int64_t j = jt; j < je; ++j) {\n", Indent(e.inner, 10),
        "        }\n      }\n",
        "      for (int64_t j = jt; j < je; ++j) o0[rb + j] = acc[j - jt];\n    }\n");
    return std::make_pair(RowLoop(n, body), n);
  }
  // Row reduction: inner = the trailing reduced block [t, rank), outer = the other reduced dims.
  int64_t t = rank;
  while (t > 0 && reduced[t - 1]) --t;
  const int64_t rin = Product(DimVector(xs.begin() + t, xs.end()));
  DimVector outer_sizes;
  for (int64_t d = 0; d < t; ++d)
    if (reduced[d]) outer_sizes.push_back(xs[d]);
  const int64_t rout = Product(outer_sizes);
  RowEmitter e("j", std::max<int64_t>(rin, 1));
  std::string head;
  {
    int64_t s = Product(out);
    for (size_t k = 0; k < out.size(); ++k) {
      s /= std::max<int64_t>(out[k], 1);
      absl::StrAppend(&head, "const int64_t oi", k, " = ",
                      k == 0 ? absl::StrCat("i / ", s) : absl::StrCat("(i / ", s, ") % ", out[k]),
                      ";\n");
    }
  }
  ASSIGN_OR_RETURN(RowEmitter::Val init, e.Emit(r->operand(1), RowIndex{}));
  absl::StrAppend(&head, e.pre);
  e.pre.clear();
  RowIndex pos;  // dims [0, t) with the trailing block at 0, for the block's base
  pos.shape = xs;
  int64_t kept = 0, stride = rout;
  size_t opos = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (d >= t) {
      pos.dims.push_back(Aff{});
      continue;
    }
    if (!reduced[d]) {
      pos.dims.push_back(RowEmitter::Invariant(absl::StrCat("oi", kept++)));
      continue;
    }
    stride /= outer_sizes[opos++];
    pos.dims.push_back(RowEmitter::Invariant(
        e.PreDef("int64_t", absl::StrCat("(ro / ", stride, ") % ", xs[d]), "x")));
  }
  ASSIGN_OR_RETURN(Aff base, e.Linear(pos, xs));
  RowIndex in = pos;
  for (int64_t d = t; d < rank; ++d) in.dims[d].reset();
  Aff lin = base;
  lin.c = 1;
  in.linear = lin;
  ASSIGN_OR_RETURN(RowEmitter::Val v, e.Emit(x, in));
  const bool lanes = IsFloating(r->shape().dtype());
  std::string body;
  if (!lanes) {
    absl::StrAppend(&e.inner, "acc = ", Combine(kind, "acc", v.v, T), ";\n");
    body = absl::StrCat(Indent(head, 4), "    ", T, " acc = ", init.v, ";\n",
                        "    for (int64_t ro = 0; ro < ", rout, "; ++ro) {\n", Indent(e.pre, 6),
                        "      for (int64_t j = 0; j < ", rin, "; ++j) {\n", Indent(e.inner, 8),
                        "      }\n    }\n");
  } else {
    const std::string main =
        absl::StrCat(e.inner, "ln[lane] = ", Combine(kind, "ln[lane]", v.v, T), ";\n");
    const std::string tail =
        absl::StrCat(e.inner, "ln[j & 15] = ", Combine(kind, "ln[j & 15]", v.v, T), ";\n");
    body = absl::StrCat(
        Indent(head, 4), "    ", T, " ln[16];\n",
        "    for (int lane = 0; lane < 16; ++lane) ln[lane] = ", Identity(kind, T), ";\n",
        "    for (int64_t ro = 0; ro < ", rout, "; ++ro) {\n", Indent(e.pre, 6),
        "      int64_t jb = 0;\n", "      for (; jb + 16 <= ", rin, "; jb += 16) {\n",
        // Not unrolled: the lane loop is then a plain vector loop (unrolled, GCC 12 does not
        // recognise the NaN-propagating max/min as a reduction and leaves it scalar).
        "        #pragma GCC unroll 1\n", "        for (int64_t lane = 0; lane < 16; ++lane) {\n",
        "          const int64_t j = jb + lane;\n", Indent(main, 10), "        }\n      }\n",
        "      for (int64_t j = jb; j < ", rin, "; ++j) {\n", Indent(tail, 8), "      }\n    }\n",
        "    ", T, " acc = ", init.v, ";\n",
        "    for (int lane = 0; lane < 16; ++lane) acc = ", Combine(kind, "acc", "ln[lane]", T),
        ";\n");
  }
  absl::StrAppend(&body, "    o0[i] = acc;\n");
  return std::make_pair(absl::StrCat("  for (int64_t i = begin; i < end; ++i) {\n", body, "  }\n"),
                        int64_t{1});
}

}  // namespace

// The element type of a kernel's buffer pointers: the value type, except that the C++ dialect
// reads and writes pred buffers (one byte, 0 or 1) as unsigned char. GCC 12 does not vectorise a
// loop that loads `bool` and selects with it ("no vectype"; a fused batch-norm-backward reduction
// ran scalar), while the same loop over unsigned char converted to bool vectorises.
static StatusOr<std::string> BufferCType(DType t, KernelDialect dialect) {
  if (t == DType::kBool && dialect == KernelDialect::kCpp) return std::string("unsigned char");
  return CType(t);
}

StatusOr<KernelSource> EmitFusionKernel(const HloInstruction& fusion, const std::string& name,
                                        KernelDialect dialect,
                                        const std::vector<std::pair<int64_t, int64_t>>& aliased) {
  auto restrict_operand = [&](int64_t k) {
    for (auto& a : aliased)
      if (a.second == k) return "";
    return "__restrict__ ";
  };
  auto restrict_output = [&](int64_t k) {
    for (auto& a : aliased)
      if (a.first == k) return "";
    return "__restrict__ ";
  };
  if (fusion.opcode() != HloOpcode::kFusion)
    return InvalidArgument("[codegen] %s is not a fusion", fusion.name());
  const HloComputation& body = *fusion.fused_computation();
  const HloInstruction* root = body.root_instruction();
  std::vector<const HloInstruction*> roots;
  if (root->opcode() == HloOpcode::kTuple)
    roots.assign(root->operands().begin(), root->operands().end());
  else
    roots.push_back(root);
  for (const HloInstruction* r : roots) {
    if (!r->shape().is_array() || r->shape().dims() != roots[0]->shape().dims())
      return Unimplemented("[codegen] outputs of %s differ in shape", fusion.name());
    if (r->opcode() == HloOpcode::kReduce && roots.size() > 1)
      return Unimplemented("[codegen] multi-output reduction");
  }
  LoopEmitter e(dialect);
  KernelSource src;
  src.name = name;
  src.num_elements = Product(roots[0]->shape().dims());
  src.num_args = fusion.operand_count() + roots.size();
  std::string header = dialect == KernelDialect::kCpp
                           ? absl::StrCat("extern \"C\" void ", name,
                                          "(char** args, int64_t begin, int64_t end) {\n")
                           : absl::StrCat("extern \"C\" __global__ void ", name,
                                          "(char** args, int64_t begin, int64_t end) {\n");
  for (int64_t k = 0; k < fusion.operand_count(); ++k) {
    ASSIGN_OR_RETURN(std::string T, BufferCType(fusion.operand(k)->shape().dtype(), dialect));
    absl::StrAppend(&header, "  const ", T, "* ", restrict_operand(k), "p", k,
                    " = reinterpret_cast<const ", T, "*>(args[", k, "]);\n");
  }
  for (size_t k = 0; k < roots.size(); ++k) {
    ASSIGN_OR_RETURN(std::string T, BufferCType(roots[k]->shape().dtype(), dialect));
    absl::StrAppend(&header, "  ", T, "* ", restrict_output(static_cast<int64_t>(k)), "o", k,
                    " = reinterpret_cast<", T, "*>(args[", fusion.operand_count() + k, "]);\n");
  }
  // Row loops divide by dim sizes at emission time: arrays with a zero-size dim use the per-element
  // path.
  bool has_empty = false;
  for (const HloInstruction* f : body.instructions())
    has_empty |= f->shape().is_array() && f->shape().numel() == 0;
  if (dialect == KernelDialect::kCpp && !has_empty) {
    std::optional<std::pair<std::string, int64_t>> rows;
    if (roots[0]->opcode() == HloOpcode::kReduce) {
      ASSIGN_OR_RETURN(rows, EmitReductionRows(roots[0]));
    } else if (roots[0]->shape().rank() > 0) {
      ASSIGN_OR_RETURN(rows, EmitElementwiseRows(roots));
    }
    if (rows) {
      src.row = rows->second;
      src.code = absl::StrCat(header, rows->first, "}\n", "extern \"C\" const int64_t ", name,
                              "_row = ", src.row, ";\n");
      return src;
    }
  }
  absl::StrAppend(&header, dialect == KernelDialect::kCpp
                               ? "  for (int64_t i = begin; i < end; ++i) {\n"
                               : "  const int64_t i = begin + blockIdx.x * (int64_t)blockDim.x + "
                                 "threadIdx.x;\n  if (i < end) {\n");
  LoopEmitter::Index idx = e.Decompose("i", roots[0]->shape().dims());
  std::vector<std::string> stores;  // elementwise roots store after every root's loads
  for (size_t k = 0; k < roots.size(); ++k) {
    const HloInstruction* r = roots[k];
    if (r->opcode() != HloOpcode::kReduce) {
      ASSIGN_OR_RETURN(std::string v, e.Emit(r, idx));
      stores.push_back(absl::StrCat("o", k, "[i] = ", v, ";"));
      continue;
    }
    const ReduceKind kind = r->GetReduceKind();
    if (kind == ReduceKind::kNone) return Unimplemented("[codegen] reduce without a known kind");
    ASSIGN_OR_RETURN(std::string T, CType(r->shape().dtype()));
    const HloInstruction* x = r->operand(0);
    const DimVector& rd = r->dimensions();
    DimVector reduced_sizes, sorted_rd(rd.begin(), rd.end());
    std::sort(sorted_rd.begin(), sorted_rd.end());
    for (int64_t d : sorted_rd) reduced_sizes.push_back(x->shape().dim(d));
    ASSIGN_OR_RETURN(std::string init, e.Emit(r->operand(1), LoopEmitter::Index{}));
    std::string acc = e.Var("acc"), rv = e.Var("r");
    e.Line(absl::StrCat(T, " ", acc, " = ", init, ";"));
    e.Line(absl::StrCat("for (int64_t ", rv, " = 0; ", rv, " < ", Product(reduced_sizes), "; ++",
                        rv, ") {"));
    e.indent() += 2;
    auto saved = e.cache;
    LoopEmitter::Index red = e.Decompose(rv, reduced_sizes);
    LoopEmitter::Index in;
    in.shape = x->shape().dims();
    size_t kept = 0, red_pos = 0;
    for (int64_t d = 0; d < x->shape().rank(); ++d) {
      bool is_red = std::count(rd.begin(), rd.end(), d) > 0;
      in.dims.push_back(is_red ? red.dims[red_pos++] : idx.dims[kept++]);
    }
    bool trailing = true;
    for (size_t j = 0; j < sorted_rd.size(); ++j)
      trailing &= sorted_rd[j] == x->shape().rank() - static_cast<int64_t>(sorted_rd.size()) +
                                      static_cast<int64_t>(j);
    if (trailing) in.linear = absl::StrCat("(i * ", Product(reduced_sizes), " + ", rv, ")");
    ASSIGN_OR_RETURN(std::string v, e.Emit(x, in));
    e.Line(absl::StrCat(acc, " = ", Combine(kind, acc, v, T), ";"));
    e.cache = saved;
    e.indent() -= 2;
    e.Line("}");
    e.Line(absl::StrCat("o", k, "[i] = ", acc, ";"));
  }
  for (const std::string& st : stores) e.Line(st);
  src.code = absl::StrCat(header, e.body(), "  }\n}\n");
  return src;
}

std::string KernelPrelude(KernelDialect dialect) {
  std::string s;
  if (dialect == KernelDialect::kCpp) {
    s = "#include <cmath>\n#include <cstdint>\n#include <cstdlib>\n#include <limits>\n#define "
        "OFL_FN static inline\n"
        "template <typename T> OFL_FN T ofl_nan() { return std::numeric_limits<T>::quiet_NaN(); }\n"
        "template <typename T> OFL_FN T ofl_inf() { return std::numeric_limits<T>::infinity(); }\n"
        // exp for float, branch-free so loops vectorise: n = round(x log2 e), r = x - n ln2 (ln2
        // in two parts), exp(r) by a degree-6 polynomial on [-ln2/2, ln2/2] (Cephes expf
        // coefficients), times 2^n as two exponent-field scalings so results reach denormals.
        // Max error 1 ulp against exp in double over [-110, 90]; NaN -> NaN, inf -> inf, -inf -> 0.
        "OFL_FN float ofl_expf(float x) {\n"
        "  const float xc = x != x ? 0.f : (x < -104.f ? -104.f : (x > 89.f ? 89.f : x));\n"
        "  const float n = __builtin_floorf(xc * 1.44269504088896341f + 0.5f);\n"
        "  float r = xc - n * 0.693359375f;\n"
        "  r = r - n * -2.12194440e-4f;\n"
        "  float p = 1.9875691500e-4f;\n"
        "  p = p * r + 1.3981999507e-3f;\n"
        "  p = p * r + 8.3334519073e-3f;\n"
        "  p = p * r + 4.1665795894e-2f;\n"
        "  p = p * r + 1.6666665459e-1f;\n"
        "  p = p * r + 5.0000001201e-1f;\n"
        "  p = p * r * r + r + 1.0f;\n"
        "  const int32_t ni = static_cast<int32_t>(n), n1 = ni / 2, n2 = ni - n1;\n"
        "  const uint32_t b1 = static_cast<uint32_t>(n1 + 127) << 23, b2 = "
        "static_cast<uint32_t>(n2 + 127) << 23;\n"
        "  float s1, s2;\n"
        "  __builtin_memcpy(&s1, &b1, 4);\n"
        "  __builtin_memcpy(&s2, &b2, 4);\n"
        "  const float v = p * s1 * s2;\n"
        "  return x != x ? x : (x > 88.72283905206835f ? __builtin_inff() : v);\n"
        "}\n";
  } else {
    s = "typedef long long int64_t; typedef int int32_t; typedef signed char int8_t; typedef "
        "unsigned char uint8_t;\n"
        "typedef unsigned long long uint64_t; typedef unsigned int uint32_t;\n"
        "#define OFL_FN static __device__ inline\n"
        "template <typename T> OFL_FN T ofl_nan() { return "
        "T(__longlong_as_double(0x7ff8000000000000LL)); }\n"
        "template <typename T> OFL_FN T ofl_inf() { return "
        "T(__longlong_as_double(0x7ff0000000000000LL)); }\n";
  }
  absl::StrAppend(
      &s,
      // Bitwise | (no short-circuit branch): the compiler emits compare + blend and vectorises;
      // with || a relu over random signs was a mispredicted branch per element (6x slower).
      "template <typename T> OFL_FN T ofl_max(T a, T b) { return ((a > b) | (a != a)) ? a : b; }\n"
      "template <typename T> OFL_FN T ofl_min(T a, T b) { return ((a < b) | (a != a)) ? a : b; }\n"
      "template <typename T> OFL_FN T ofl_sign(T x) { return x != x ? x : T((x > T(0)) - (x < "
      "T(0))); }\n"
      "template <typename T> OFL_FN T ofl_idiv(T a, T b) { return b == T(0) ? T(-1) : T(a / b); }\n"
      "template <typename T> OFL_FN T ofl_iabs(T a) { return a < T(0) ? T(-a) : a; }\n"
      // Wrapping i32/i64 arithmetic and logical right shifts (counter-based random numbers).
      "OFL_FN int32_t ofl_wadd(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); "
      "}\n"
      "OFL_FN int64_t ofl_wadd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); "
      "}\n"
      "OFL_FN int32_t ofl_wsub(int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); "
      "}\n"
      "OFL_FN int64_t ofl_wsub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); "
      "}\n"
      "OFL_FN int32_t ofl_wmul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); "
      "}\n"
      "OFL_FN int64_t ofl_wmul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); "
      "}\n"
      "OFL_FN int32_t ofl_shrl(int32_t a, int32_t s) { return s < 0 || s >= 32 ? 0 : "
      "int32_t(uint32_t(a) >> s); }\n"
      "OFL_FN int64_t ofl_shrl(int64_t a, int64_t s) { return s < 0 || s >= 64 ? 0 : "
      "int64_t(uint64_t(a) >> s); }\n"
      "OFL_FN int8_t ofl_shrl(int8_t a, int8_t s) { return s < 0 || s >= 8 ? 0 : int8_t(uint8_t(a) "
      ">> s); }\n"
      "OFL_FN uint8_t ofl_shrl(uint8_t a, uint8_t s) { return s >= 8 ? 0 : uint8_t(a >> s); }\n\n");
  return s;
}

}  // namespace oneflow_like::hlo
