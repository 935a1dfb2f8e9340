// LoopEmitter: the per-element loop body. One output element per iteration (the CUDA dialect's
// thread, the C++ dialect's fallback for what row loops do not cover): every index dim is
// computed from the linear position `i`, each HLO value becomes one `const T vN = ...;` line,
// memoised per (instruction, index) so a value read twice at one position is computed once.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/elemental.h"

namespace oneflow_like::hlo::codegen {

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
  // A pad or concatenation: a value chosen by per-dim branches (pad_concat.cc).
  StatusOr<std::string> EmitPadOrConcat(const HloInstruction* inst, const Index& idx,
                                        const std::string& T);

  KernelDialect dialect_;
  std::string body_;
  int indent_ = 4;
  int counter_ = 0;
};

}  // namespace oneflow_like::hlo::codegen
