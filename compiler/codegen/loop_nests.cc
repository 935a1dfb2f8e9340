#include "compiler/codegen/loop_nests.h"

#include "compiler/codegen/element_emitter.h"
#include "compiler/codegen/reductions.h"
#include "compiler/codegen/row_emitter.h"

namespace oneflow_like::hlo::codegen {

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

std::string RowLoop(int64_t n, const std::string& body) {
  return absl::StrCat("  for (int64_t row = begin / ", n, "; row * ", n, " < end; ++row) {\n",
                      "    const int64_t rb = row * ", n, ";\n",
                      "    const int64_t j0 = begin > rb ? begin - rb : 0;\n",
                      "    const int64_t j1 = end - rb < ", n, " ? end - rb : ", n, ";\n", body,
                      "  }\n");
}

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

StatusOr<std::string> EmitElementLoop(const std::vector<const HloInstruction*>& roots,
                                      KernelDialect dialect) {
  LoopEmitter e(dialect);
  const std::string open = dialect == KernelDialect::kCpp
                               ? "  for (int64_t i = begin; i < end; ++i) {\n"
                               : "  const int64_t i = begin + blockIdx.x * (int64_t)blockDim.x + "
                                 "threadIdx.x;\n  if (i < end) {\n";
  LoopEmitter::Index idx = e.Decompose("i", roots[0]->shape().dims());
  std::vector<std::string> stores;  // elementwise roots store after every root's loads
  for (size_t k = 0; k < roots.size(); ++k) {
    const HloInstruction* r = roots[k];
    if (r->opcode() != HloOpcode::kReduce) {
      ASSIGN_OR_RETURN(std::string v, e.Emit(r, idx));
      stores.push_back(absl::StrCat("o", k, "[i] = ", v, ";"));
      continue;
    }
    RETURN_IF_ERROR(EmitElementReduction(e, r, idx, static_cast<int64_t>(k)));
  }
  for (const std::string& st : stores) e.Line(st);
  return absl::StrCat(open, e.body(), "  }\n");
}

}  // namespace oneflow_like::hlo::codegen
