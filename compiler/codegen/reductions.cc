#include "compiler/codegen/reductions.h"

#include <algorithm>

#include "compiler/codegen/loop_nests.h"
#include "compiler/codegen/row_emitter.h"

namespace oneflow_like::hlo::codegen {

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

namespace {

int64_t ReducedElements(const HloInstruction* r) {
  int64_t n = 1;
  for (int64_t d : r->dimensions()) n *= r->operand(0)->shape().dim(d);
  return n;
}

// `acc` (declared and initialised by the caller) combined with the reduced positions
// first, first + step, ... of output element `idx` (step 1: `++r`).
Status EmitAccumulation(LoopEmitter& e, const HloInstruction* r, const LoopEmitter::Index& idx,
                        const std::string& acc, const std::string& first, int64_t step) {
  const ReduceKind kind = r->GetReduceKind();
  ASSIGN_OR_RETURN(std::string T, CType(r->shape().dtype()));
  const HloInstruction* x = r->operand(0);
  const DimVector& rd = r->dimensions();
  DimVector reduced_sizes, sorted_rd(rd.begin(), rd.end());
  std::sort(sorted_rd.begin(), sorted_rd.end());
  for (int64_t d : sorted_rd) reduced_sizes.push_back(x->shape().dim(d));
  std::string rv = e.Var("r");
  e.Line(absl::StrCat("for (int64_t ", rv, " = ", first, "; ", rv, " < ", Product(reduced_sizes),
                      "; ", step == 1 ? absl::StrCat("++", rv) : absl::StrCat(rv, " += ", step),
                      ") {"));
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
  return absl::OkStatus();
}

}  // namespace

Status EmitElementReduction(LoopEmitter& e, const HloInstruction* r, const LoopEmitter::Index& idx,
                            int64_t k) {
  if (r->GetReduceKind() == ReduceKind::kNone)
    return Unimplemented("[codegen] reduce without a known kind");
  ASSIGN_OR_RETURN(std::string T, CType(r->shape().dtype()));
  ASSIGN_OR_RETURN(std::string init, e.Emit(r->operand(1), LoopEmitter::Index{}));
  std::string acc = e.Var("acc");
  e.Line(absl::StrCat(T, " ", acc, " = ", init, ";"));
  RETURN_IF_ERROR(EmitAccumulation(e, r, idx, acc, "0", 1));
  e.Line(absl::StrCat("o", k, "[i] = ", acc, ";"));
  return absl::OkStatus();
}

StatusOr<std::optional<std::string>> EmitWarpReduction(const HloInstruction* r) {
  const ReduceKind kind = r->GetReduceKind();
  const DType t = r->shape().dtype();
  if (kind != ReduceKind::kAdd && kind != ReduceKind::kMul && kind != ReduceKind::kMax &&
      kind != ReduceKind::kMin)
    return std::optional<std::string>();
  if ((t != DType::kF32 && t != DType::kF64) || ReducedElements(r) < kWarpReductionMin)
    return std::optional<std::string>();
  LoopEmitter e(KernelDialect::kCuda);
  ASSIGN_OR_RETURN(std::string T, CType(t));
  LoopEmitter::Index idx = e.Decompose("i", r->shape().dims());
  ASSIGN_OR_RETURN(std::string init, e.Emit(r->operand(1), LoopEmitter::Index{}));
  std::string acc = e.Var("acc");
  e.Line(absl::StrCat(T, " ", acc, " = ", Identity(kind, T), ";"));
  RETURN_IF_ERROR(EmitAccumulation(e, r, idx, acc, "lane", kWarpReductionLanes));
  e.Line(absl::StrCat(
      "for (int off = ", kWarpReductionLanes / 2, "; off > 0; off >>= 1) ", acc, " = ",
      Combine(kind, acc, absl::StrCat("__shfl_down_sync(0xffffffffu, ", acc, ", off)"), T), ";"));
  e.Line(absl::StrCat("if (lane == 0) o0[i] = ", Combine(kind, init, acc, T), ";"));
  return std::make_optional(absl::StrCat(
      "  const int64_t gi = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n",
      "  const int64_t i = gi / ", kWarpReductionLanes, ";\n", "  const int lane = (int)(gi % ",
      kWarpReductionLanes, ");\n", "  if (gi < end) {\n", e.body(), "  }\n"));
}

}  // namespace oneflow_like::hlo::codegen
