// HloOpcode: the op set of the IR, with text names and a few per-opcode properties.
#pragma once
#include <string>

#include "oneflow_like/base/status.h"

namespace oneflow_like::hlo {

// V(enum, "text name", arity) ; arity -1 = variadic.
// clang-format off
#define OFL_HLO_OPCODES(V)                                    \
  V(kParameter, "parameter", 0)                               \
  V(kConstant, "constant", 0)                                 \
  V(kIota, "iota", 0)                                         \
  V(kNegate, "negate", 1) V(kAbs, "abs", 1) V(kExp, "exponential", 1) \
  V(kLog, "log", 1) V(kLog1p, "log-plus-one", 1) V(kSqrt, "sqrt", 1) \
  V(kRsqrt, "rsqrt", 1) V(kSin, "sine", 1) V(kCos, "cosine", 1)      \
  V(kTanh, "tanh", 1) V(kLogistic, "logistic", 1) V(kSign, "sign", 1) \
  V(kFloor, "floor", 1) V(kCeil, "ceil", 1)                   \
  V(kRoundNearestEven, "round-nearest-even", 1) V(kNot, "not", 1) \
  V(kErf, "erf", 1) V(kConvert, "convert", 1)                 \
  V(kAdd, "add", 2) V(kSubtract, "subtract", 2) V(kMultiply, "multiply", 2) \
  V(kDivide, "divide", 2) V(kRemainder, "remainder", 2) V(kPower, "power", 2) \
  V(kMaximum, "maximum", 2) V(kMinimum, "minimum", 2) V(kCompare, "compare", 2) \
  V(kAnd, "and", 2) V(kOr, "or", 2) V(kXor, "xor", 2)        \
  V(kShiftRightLogical, "shift-right-logical", 2) V(kSelect, "select", 3) \
  V(kBroadcast, "broadcast", 1) V(kReshape, "reshape", 1)     \
  V(kTranspose, "transpose", 1) V(kSlice, "slice", 1)         \
  V(kConcatenate, "concatenate", -1) V(kPad, "pad", 2)        \
  V(kReduce, "reduce", 2) V(kDot, "dot", 2)                   \
  V(kConvolution, "convolution", 2) V(kGather, "gather", 2)   \
  V(kScatter, "scatter", 3) V(kDynamicSlice, "dynamic-slice", -1) \
  V(kRng, "rng", 2) V(kCustomCall, "custom-call", -1)         \
  V(kTuple, "tuple", -1) V(kGetTupleElement, "get-tuple-element", 1) \
  V(kFusion, "fusion", -1) V(kWhile, "while", 1)              \
  V(kConditional, "conditional", -1) V(kCopy, "copy", 1)      \
  V(kBitcast, "bitcast", 1)
// clang-format on

enum class HloOpcode : int {
#define OFL_HLO_ENUM(e, s, a) e,
  OFL_HLO_OPCODES(OFL_HLO_ENUM)
#undef OFL_HLO_ENUM
};

const char* HloOpcodeString(HloOpcode op);
StatusOr<HloOpcode> StringToHloOpcode(const std::string& name);
int HloOpcodeArity(HloOpcode op);        // -1 = variadic
bool IsElementwiseUnary(HloOpcode op);   // negate .. convert
bool IsElementwiseBinary(HloOpcode op);  // add .. shift-right-logical (compare included)
// Elementwise in the XLA sense: output[i] depends only on operand[i] (select included).
bool IsElementwise(HloOpcode op);
// Cheap per element (no transcendental): used by the fusion cost model.
bool IsTranscendental(HloOpcode op);

enum class ComparisonDirection { kEq, kNe, kLt, kLe, kGt, kGe };
const char* ComparisonDirectionString(ComparisonDirection d);  // "EQ", "LT", ...
StatusOr<ComparisonDirection> StringToComparisonDirection(const std::string& s);

enum class FusionKind { kLoop, kInput };  // kInput: a reduction is the root
const char* FusionKindString(FusionKind k);
StatusOr<FusionKind> StringToFusionKind(const std::string& s);

// Reduce by a known combiner (attr `kind=add`), or kNone when only to_apply says what it does.
enum class ReduceKind { kNone, kAdd, kMul, kMax, kMin, kAnd, kOr };
const char* ReduceKindString(ReduceKind k);
StatusOr<ReduceKind> StringToReduceKind(const std::string& s);

enum class RngDistribution { kUniform, kNormal };
const char* RngDistributionString(RngDistribution d);  // "rng_uniform", "rng_normal"
StatusOr<RngDistribution> StringToRngDistribution(const std::string& s);

}  // namespace oneflow_like::hlo
