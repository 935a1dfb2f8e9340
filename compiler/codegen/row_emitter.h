// RowEmitter: the C++ dialect's row bodies, indexing by affine expressions in the inner index j
// (`Aff`, `RowIndex`) so that what does not depend on j is computed once per row.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/elemental.h"

namespace oneflow_like::hlo::codegen {

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

}  // namespace oneflow_like::hlo::codegen
