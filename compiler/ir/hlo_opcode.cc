#include "compiler/ir/hlo_opcode.h"

namespace oneflow_like::hlo {
namespace {
struct OpInfo {
  const char* name;
  int arity;
};
const OpInfo kOps[] = {
#define OFL_HLO_INFO(e, s, a) {s, a},
    OFL_HLO_OPCODES(OFL_HLO_INFO)
#undef OFL_HLO_INFO
};
constexpr int kNumOps = sizeof(kOps) / sizeof(kOps[0]);
}  // namespace

const char* HloOpcodeString(HloOpcode op) {
  return kOps[static_cast<int>(op)].name;
}
int HloOpcodeArity(HloOpcode op) {
  return kOps[static_cast<int>(op)].arity;
}

StatusOr<HloOpcode> StringToHloOpcode(const std::string& name) {
  for (int i = 0; i < kNumOps; ++i) {
    if (name == kOps[i].name) return static_cast<HloOpcode>(i);
  }
  if (name == "exp") return HloOpcode::kExp;  // accepted alias
  return InvalidArgument("unknown opcode '%s'", name);
}

bool IsElementwiseUnary(HloOpcode op) {
  return static_cast<int>(op) >= static_cast<int>(HloOpcode::kNegate) &&
         static_cast<int>(op) <= static_cast<int>(HloOpcode::kConvert);
}
bool IsElementwiseBinary(HloOpcode op) {
  return static_cast<int>(op) >= static_cast<int>(HloOpcode::kAdd) &&
         static_cast<int>(op) <= static_cast<int>(HloOpcode::kShiftRightLogical);
}
bool IsElementwise(HloOpcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kSelect;
}
bool IsTranscendental(HloOpcode op) {
  switch (op) {
    case HloOpcode::kExp:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTanh:
    case HloOpcode::kLogistic:
    case HloOpcode::kErf:
    case HloOpcode::kPower:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder: return true;
    default: return false;
  }
}

namespace {
template <typename E, size_t N>
StatusOr<E> LookUp(const char* const (&names)[N], const std::string& s, const char* what) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<E>(i);
  }
  return InvalidArgument("unknown %s '%s'", what, s);
}
const char* const kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
const char* const kFusionKinds[] = {"kLoop", "kInput"};
const char* const kReduceKinds[] = {"none", "add", "mul", "max", "min", "and", "or"};
const char* const kRngs[] = {"rng_uniform", "rng_normal"};
}  // namespace

const char* ComparisonDirectionString(ComparisonDirection d) {
  return kDirections[static_cast<int>(d)];
}
StatusOr<ComparisonDirection> StringToComparisonDirection(const std::string& s) {
  return LookUp<ComparisonDirection>(kDirections, s, "comparison direction");
}
const char* FusionKindString(FusionKind k) {
  return kFusionKinds[static_cast<int>(k)];
}
StatusOr<FusionKind> StringToFusionKind(const std::string& s) {
  return LookUp<FusionKind>(kFusionKinds, s, "fusion kind");
}
const char* ReduceKindString(ReduceKind k) {
  return kReduceKinds[static_cast<int>(k)];
}
StatusOr<ReduceKind> StringToReduceKind(const std::string& s) {
  return LookUp<ReduceKind>(kReduceKinds, s, "reduce kind");
}
const char* RngDistributionString(RngDistribution d) {
  return kRngs[static_cast<int>(d)];
}
StatusOr<RngDistribution> StringToRngDistribution(const std::string& s) {
  return LookUp<RngDistribution>(kRngs, s, "rng distribution");
}

}  // namespace oneflow_like::hlo
