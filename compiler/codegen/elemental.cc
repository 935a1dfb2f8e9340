#include "compiler/codegen/elemental.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace oneflow_like::hlo::codegen {

StatusOr<std::string> CType(DType t) {
  switch (t) {
    case DType::kBool: return std::string("bool");
    case DType::kU8: return std::string("uint8_t");
    case DType::kI8: return std::string("int8_t");
    case DType::kI16: return std::string("int16_t");
    case DType::kI32: return std::string("int32_t");
    case DType::kI64: return std::string("int64_t");
    case DType::kF32: return std::string("float");
    case DType::kF64: return std::string("double");
    default: return Unimplemented("[codegen] element type %s", DTypeName(t));
  }
}

StatusOr<std::string> BufferCType(DType t, KernelDialect dialect) {
  if (t == DType::kBool && dialect == KernelDialect::kCpp) return std::string("unsigned char");
  return CType(t);
}

int64_t Product(const DimVector& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

std::string LiteralExpr(DType t, double v, const std::string& type) {
  if (std::isnan(v)) return absl::StrCat("ofl_nan<", type, ">()");
  if (std::isinf(v)) return absl::StrCat(v < 0 ? "-" : "", "ofl_inf<", type, ">()");
  if (t == DType::kBool) return v != 0 ? "true" : "false";
  if (IsIntegral(t))
    return absl::StrCat(type, "(", static_cast<int64_t>(v), t == DType::kI64 ? "LL" : "", ")");
  return absl::StrFormat("%s(%.17g)", type.c_str(), v);
}

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

std::string Identity(ReduceKind k, const std::string& T) {
  switch (k) {
    case ReduceKind::kAdd: return absl::StrCat(T, "(0)");
    case ReduceKind::kMul: return absl::StrCat(T, "(1)");
    case ReduceKind::kMax: return absl::StrCat("-ofl_inf<", T, ">()");
    default: return absl::StrCat("ofl_inf<", T, ">()");
  }
}

}  // namespace oneflow_like::hlo::codegen
