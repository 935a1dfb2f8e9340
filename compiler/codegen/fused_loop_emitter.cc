// The driver: a fusion's roots, the kernel's signature and buffer pointers, then the loop form.
// C++ dialect: row loops (loop_nests.cc, reductions.cc) unless an array in the fusion is empty or
// no row form applies; otherwise, and always in the CUDA dialect, one iteration per element.
#include "compiler/codegen/fused_loop_emitter.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/elemental.h"
#include "compiler/codegen/loop_nests.h"
#include "compiler/codegen/reductions.h"
#include "compiler/ir/hlo_computation.h"

namespace oneflow_like::hlo {

using codegen::BufferCType;
using codegen::Product;

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
      ASSIGN_OR_RETURN(rows, codegen::EmitReductionRows(roots[0]));
    } else if (roots[0]->shape().rank() > 0) {
      ASSIGN_OR_RETURN(rows, codegen::EmitElementwiseRows(roots));
    }
    if (rows) {
      src.row = rows->second;
      src.code = absl::StrCat(header, rows->first, "}\n", "extern \"C\" const int64_t ", name,
                              "_row = ", src.row, ";\n");
      return src;
    }
  }
  if (dialect == KernelDialect::kCuda && roots.size() == 1 &&
      roots[0]->opcode() == HloOpcode::kReduce) {
    ASSIGN_OR_RETURN(std::optional<std::string> warp, codegen::EmitWarpReduction(roots[0]));
    if (warp) {
      src.num_elements *= codegen::kWarpReductionLanes;  // threads: one warp per output element
      src.code = absl::StrCat(header, *warp, "}\n");
      return src;
    }
  }
  ASSIGN_OR_RETURN(std::string loop, codegen::EmitElementLoop(roots, dialect));
  src.code = absl::StrCat(header, loop, "}\n");
  return src;
}

}  // namespace oneflow_like::hlo
