#include "compiler/codegen/element_emitter.h"

namespace oneflow_like::hlo::codegen {

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
      expr = LiteralExpr(inst->shape().dtype(), inst->literal().data[0], T);
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
      ASSIGN_OR_RETURN(std::string v, EmitPadOrConcat(inst, idx, T));
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

}  // namespace oneflow_like::hlo::codegen
