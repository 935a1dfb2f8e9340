#include "compiler/codegen/fused_loop_emitter.h"

#include <algorithm>
#include <cmath>
#include <map>

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

  std::string Math(const char* fn) const { return dialect_ == KernelDialect::kCpp ? absl::StrCat("std::", fn) : fn; }

  Index Decompose(const std::string& linear, const DimVector& shape) {
    Index idx;
    idx.shape = shape;
    idx.linear = linear;
    int64_t stride = Product(shape);
    for (size_t k = 0; k < shape.size(); ++k) {
      stride /= std::max<int64_t>(shape[k], 1);
      std::string v = Var("d");
      Line(absl::StrCat("const int64_t ", v, " = (", linear, " / ", stride, ")", k == 0 ? "" : absl::StrCat(" % ", shape[k]), ";"));
      idx.dims.push_back(v);
    }
    return idx;
  }

  std::string Linearize(const Index& idx, const DimVector& shape) {
    if (!idx.linear.empty() && idx.shape == shape) return idx.linear;
    if (shape.empty()) return "0";
    std::string e = idx.dims[0];
    for (size_t k = 1; k < shape.size(); ++k) e = absl::StrCat("(", e, ") * ", shape[k], " + ", idx.dims[k]);
    std::string v = Var("l");
    Line(absl::StrCat("const int64_t ", v, " = ", e, ";"));
    return v;
  }

  std::string Literal(DType t, double v, const std::string& type) {
    if (std::isnan(v)) return absl::StrCat("ofl_nan<", type, ">()");
    if (std::isinf(v)) return absl::StrCat(v < 0 ? "-" : "", "ofl_inf<", type, ">()");
    if (t == DType::kBool) return v != 0 ? "true" : "false";
    if (IsIntegral(t)) return absl::StrCat(type, "(", static_cast<int64_t>(v), t == DType::kI64 ? "LL" : "", ")");
    return absl::StrFormat("%s(%.17g)", type.c_str(), v);
  }

  StatusOr<std::string> Emit(const HloInstruction* inst, const Index& idx);
  StatusOr<std::string> EmitElementwise(const HloInstruction* inst, const Index& idx, const std::string& type);

  std::map<std::pair<const HloInstruction*, std::string>, std::string> cache;

 private:
  KernelDialect dialect_;
  std::string body_;
  int indent_ = 4;
  int counter_ = 0;
};

StatusOr<std::string> LoopEmitter::EmitElementwise(const HloInstruction* inst, const Index& idx, const std::string& T) {
  std::vector<std::string> a;
  for (const HloInstruction* o : inst->operands()) {
    ASSIGN_OR_RETURN(std::string v, Emit(o, idx));
    a.push_back(v);
  }
  const DType in_t = inst->operand(0)->shape().dtype();
  const bool pred = in_t == DType::kBool, integral = !IsFloating(in_t);
  auto m1 = [&](const char* fn) { return absl::StrCat(Math(fn), "(", a[0], ")"); };
  switch (inst->opcode()) {
    case HloOpcode::kNegate: return absl::StrCat(T, "(-", a[0], ")");
    case HloOpcode::kAbs: return absl::StrCat(T, "(", integral ? "ofl_iabs(" : Math("fabs") + "(", a[0], "))");
    case HloOpcode::kExp: return m1("exp");
    case HloOpcode::kLog: return m1("log");
    case HloOpcode::kLog1p: return m1("log1p");
    case HloOpcode::kSqrt: return m1("sqrt");
    case HloOpcode::kRsqrt: return absl::StrCat("(", T, "(1) / ", m1("sqrt"), ")");
    case HloOpcode::kSin: return m1("sin");
    case HloOpcode::kCos: return m1("cos");
    case HloOpcode::kTanh: return m1("tanh");
    case HloOpcode::kLogistic: return absl::StrCat("(", T, "(1) / (", T, "(1) + ", Math("exp"), "(-", a[0], ")))");
    case HloOpcode::kSign: return absl::StrCat("ofl_sign(", a[0], ")");
    case HloOpcode::kFloor: return m1("floor");
    case HloOpcode::kCeil: return m1("ceil");
    case HloOpcode::kRoundNearestEven: return m1("nearbyint");
    case HloOpcode::kErf: return m1("erf");
    case HloOpcode::kNot: return pred ? absl::StrCat("(!", a[0], ")") : absl::StrCat(T, "(~", a[0], ")");
    case HloOpcode::kConvert:
      if (inst->shape().dtype() == DType::kBool) return absl::StrCat("(", a[0], " != 0)");
      return absl::StrCat("static_cast<", T, ">(", a[0], ")");
    case HloOpcode::kAdd: return absl::StrCat(T, "(", a[0], " + ", a[1], ")");
    case HloOpcode::kSubtract: return absl::StrCat(T, "(", a[0], " - ", a[1], ")");
    case HloOpcode::kMultiply: return absl::StrCat(T, "(", a[0], " * ", a[1], ")");
    case HloOpcode::kDivide:
      return integral ? absl::StrCat("ofl_idiv(", a[0], ", ", a[1], ")") : absl::StrCat("(", a[0], " / ", a[1], ")");
    case HloOpcode::kPower: return absl::StrCat(T, "(", Math("pow"), "(", a[0], ", ", a[1], "))");
    case HloOpcode::kMaximum: return absl::StrCat("ofl_max(", a[0], ", ", a[1], ")");
    case HloOpcode::kMinimum: return absl::StrCat("ofl_min(", a[0], ", ", a[1], ")");
    case HloOpcode::kAnd: return absl::StrCat("(", a[0], pred ? " && " : " & ", a[1], ")");
    case HloOpcode::kOr: return absl::StrCat("(", a[0], pred ? " || " : " | ", a[1], ")");
    case HloOpcode::kCompare: {
      static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      return absl::StrCat("(", a[0], " ", kOps[static_cast<int>(inst->attrs().direction)], " ", a[1], ")");
    }
    case HloOpcode::kSelect: return absl::StrCat("(", a[0], " ? ", a[1], " : ", a[2], ")");
    default: return Unimplemented("[codegen] %s", HloOpcodeString(inst->opcode()));
  }
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
    case HloOpcode::kIota:
      expr = absl::StrCat(T, "(", idx.dims[inst->attrs().index], ")");
      break;
    case HloOpcode::kBroadcast: case HloOpcode::kTranspose: case HloOpcode::kSlice: {
      const HloInstruction* x = inst->operand(0);
      Index sub;
      sub.shape = x->shape().dims();
      sub.dims.resize(x->shape().rank());
      for (int64_t j = 0; j < x->shape().rank(); ++j) {
        if (inst->opcode() == HloOpcode::kBroadcast) sub.dims[j] = idx.dims[inst->dimensions()[j]];
        else if (inst->opcode() == HloOpcode::kTranspose) sub.dims[inst->dimensions()[j]] = idx.dims[j];
        else {
          const SliceDim& s = inst->attrs().slice[j];
          sub.dims[j] = absl::StrCat("(", s.start, " + ", idx.dims[j], " * ", s.stride, ")");
        }
      }
      ASSIGN_OR_RETURN(expr, Emit(x, sub));
      break;
    }
    case HloOpcode::kReshape: case HloOpcode::kBitcast: {
      const HloInstruction* x = inst->operand(0);
      Index sub = Decompose(Linearize(idx, out), x->shape().dims());
      ASSIGN_OR_RETURN(expr, Emit(x, sub));
      break;
    }
    case HloOpcode::kPad: case HloOpcode::kConcatenate: {
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
          conds.push_back(absl::StrCat(q, " >= 0 && ", q, " % ", p.interior + 1, " == 0 && ", q, " / ", p.interior + 1,
                                       " < ", sub.shape[d]));
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
          Line(absl::StrCat(k == 0 ? "if (" : "} else if (", idx.dims[dim], " < ", offset + size, ") {"));
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
      if (!IsElementwise(inst->opcode())) return Unimplemented("[codegen] %s inside a fusion", HloOpcodeString(inst->opcode()));
      ASSIGN_OR_RETURN(expr, EmitElementwise(inst, idx, T));
  }
  std::string v = Var("v");
  Line(absl::StrCat("const ", T, " ", v, " = ", expr, ";"));
  cache[key] = v;
  return v;
}

std::string Combine(ReduceKind k, const std::string& acc, const std::string& v, const std::string& T) {
  switch (k) {
    case ReduceKind::kAdd: return absl::StrCat(T, "(", acc, " + ", v, ")");
    case ReduceKind::kMul: return absl::StrCat(T, "(", acc, " * ", v, ")");
    case ReduceKind::kMax: return absl::StrCat("ofl_max(", acc, ", ", v, ")");
    case ReduceKind::kMin: return absl::StrCat("ofl_min(", acc, ", ", v, ")");
    case ReduceKind::kAnd: return absl::StrCat("(", acc, " && ", v, ")");
    default: return absl::StrCat("(", acc, " || ", v, ")");
  }
}

}  // namespace

StatusOr<KernelSource> EmitFusionKernel(const HloInstruction& fusion, const std::string& name, KernelDialect dialect) {
  if (fusion.opcode() != HloOpcode::kFusion) return InvalidArgument("[codegen] %s is not a fusion", fusion.name());
  const HloComputation& body = *fusion.fused_computation();
  const HloInstruction* root = body.root_instruction();
  std::vector<const HloInstruction*> roots;
  if (root->opcode() == HloOpcode::kTuple) roots.assign(root->operands().begin(), root->operands().end());
  else roots.push_back(root);
  for (const HloInstruction* r : roots) {
    if (!r->shape().is_array() || r->shape().dims() != roots[0]->shape().dims())
      return Unimplemented("[codegen] outputs of %s differ in shape", fusion.name());
    if (r->opcode() == HloOpcode::kReduce && roots.size() > 1) return Unimplemented("[codegen] multi-output reduction");
  }
  LoopEmitter e(dialect);
  KernelSource src;
  src.name = name;
  src.num_elements = Product(roots[0]->shape().dims());
  src.num_args = fusion.operand_count() + roots.size();
  std::string header = dialect == KernelDialect::kCpp
                           ? absl::StrCat("extern \"C\" void ", name, "(char** args, int64_t begin, int64_t end) {\n")
                           : absl::StrCat("extern \"C\" __global__ void ", name, "(char** args, int64_t begin, int64_t end) {\n");
  for (int64_t k = 0; k < fusion.operand_count(); ++k) {
    ASSIGN_OR_RETURN(std::string T, CType(fusion.operand(k)->shape().dtype()));
    absl::StrAppend(&header, "  const ", T, "* __restrict__ p", k, " = reinterpret_cast<const ", T, "*>(args[", k, "]);\n");
  }
  for (size_t k = 0; k < roots.size(); ++k) {
    ASSIGN_OR_RETURN(std::string T, CType(roots[k]->shape().dtype()));
    absl::StrAppend(&header, "  ", T, "* __restrict__ o", k, " = reinterpret_cast<", T, "*>(args[", fusion.operand_count() + k, "]);\n");
  }
  absl::StrAppend(&header, dialect == KernelDialect::kCpp
                               ? "  for (int64_t i = begin; i < end; ++i) {\n"
                               : "  const int64_t i = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n  if (i < end) {\n");
  LoopEmitter::Index idx = e.Decompose("i", roots[0]->shape().dims());
  for (size_t k = 0; k < roots.size(); ++k) {
    const HloInstruction* r = roots[k];
    if (r->opcode() != HloOpcode::kReduce) {
      ASSIGN_OR_RETURN(std::string v, e.Emit(r, idx));
      e.Line(absl::StrCat("o", k, "[i] = ", v, ";"));
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
    e.Line(absl::StrCat("for (int64_t ", rv, " = 0; ", rv, " < ", Product(reduced_sizes), "; ++", rv, ") {"));
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
      trailing &= sorted_rd[j] == x->shape().rank() - static_cast<int64_t>(sorted_rd.size()) + static_cast<int64_t>(j);
    if (trailing) in.linear = absl::StrCat("(i * ", Product(reduced_sizes), " + ", rv, ")");
    ASSIGN_OR_RETURN(std::string v, e.Emit(x, in));
    e.Line(absl::StrCat(acc, " = ", Combine(kind, acc, v, T), ";"));
    e.cache = saved;
    e.indent() -= 2;
    e.Line("}");
    e.Line(absl::StrCat("o", k, "[i] = ", acc, ";"));
  }
  src.code = absl::StrCat(header, e.body(), "  }\n}\n");
  return src;
}

std::string KernelPrelude(KernelDialect dialect) {
  std::string s;
  if (dialect == KernelDialect::kCpp) {
    s = "#include <cmath>\n#include <cstdint>\n#include <cstdlib>\n#include <limits>\n#define OFL_FN static inline\n"
        "template <typename T> OFL_FN T ofl_nan() { return std::numeric_limits<T>::quiet_NaN(); }\n"
        "template <typename T> OFL_FN T ofl_inf() { return std::numeric_limits<T>::infinity(); }\n";
  } else {
    s = "typedef long long int64_t; typedef int int32_t; typedef signed char int8_t; typedef unsigned char uint8_t;\n"
        "#define OFL_FN static __device__ inline\n"
        "template <typename T> OFL_FN T ofl_nan() { return T(__longlong_as_double(0x7ff8000000000000LL)); }\n"
        "template <typename T> OFL_FN T ofl_inf() { return T(__longlong_as_double(0x7ff0000000000000LL)); }\n";
  }
  absl::StrAppend(&s,
      // Bitwise | (no short-circuit branch): the compiler emits compare + blend and vectorises;
      // with || a relu over random signs was a mispredicted branch per element (6x slower).
      "template <typename T> OFL_FN T ofl_max(T a, T b) { return ((a > b) | (a != a)) ? a : b; }\n"
      "template <typename T> OFL_FN T ofl_min(T a, T b) { return ((a < b) | (a != a)) ? a : b; }\n"
      "template <typename T> OFL_FN T ofl_sign(T x) { return x != x ? x : T((x > T(0)) - (x < T(0))); }\n"
      "template <typename T> OFL_FN T ofl_idiv(T a, T b) { return b == T(0) ? T(-1) : T(a / b); }\n"
      "template <typename T> OFL_FN T ofl_iabs(T a) { return a < T(0) ? T(-a) : a; }\n\n");
  return s;
}

}  // namespace oneflow_like::hlo
