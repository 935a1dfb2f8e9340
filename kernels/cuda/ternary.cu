// Device code of the ternary elementwise family: the table's ops (oneflow_like/opdefs/ternary.def,
// the very functors kernels/cpu runs, tensor and scalar variants) in one ternary loop per
// operand-type combination. Ops of types All (formulas that only select) run on elements moved by
// size, so one instantiation serves every dtype of a width.
#include <cstring>

#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {
using opdefs::InTypes;
using opdefs::TernaryId;
using opdefs::Types;

// The ternary table over value type T and first-operand type C (bool for the `cond` ops):
// instantiated only for the ops whose dtype set holds T, whose first operand is C, and whose
// types are All exactly when the launch is by size.
template <typename T, typename C, bool kBySize>
struct TernaryTableF {
  TernaryId op;
  opdefs::TernaryAttrsAll a;
  T s;  // the scalar of scalar variants, in T
  template <typename Fn>
  static constexpr bool Runs() {
    return Fn::kCond == std::is_same_v<C, bool> && (Fn::kTypes == Types::All) == kBySize &&
           InTypes<Fn::kTypes, T>();
  }
  __device__ T operator()(C x, T y, T z) const {
    const opdefs::ScalarMath<T> m{};
    switch (op) {
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, ...)                                                       \
  case TernaryId::name:                                                                    \
    if constexpr (Runs<opdefs::Name##Fn>()) return opdefs::Name##Fn{}(m, x, y, z, a.name); \
    break;
#define OFL_TERNARY_SCALAR(name, Name, ...)                         \
  case TernaryId::name:                                             \
    if constexpr (Runs<opdefs::Name##Fn>())                         \
      return opdefs::Name##Fn{}(m, x, y, s, opdefs::ScalarAttrs{}); \
    break;
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
      default: break;
    }
    return y;
  }
};

// An op's dtype set and whether its first operand is a condition.
struct OpKind {
  Types types;
  bool cond;
};
OpKind KindOf(TernaryId op) {
  switch (op) {
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, ...) \
  case TernaryId::name:              \
    return {opdefs::Name##Fn::kTypes, opdefs::Name##Fn::kCond};
#define OFL_TERNARY_SCALAR OFL_TERNARY
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
  }
  return {Types::Float, false};
}

// Whether any op of the table has a condition first (kCondOp) and runs by size (kBySize): only
// those loop instantiations are compiled.
template <bool kCondOp, bool kBySize>
constexpr bool AnyOp() {
  return false
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, ...) \
  || (opdefs::Name##Fn::kCond == kCondOp && (opdefs::Name##Fn::kTypes == Types::All) == kBySize)
#define OFL_TERNARY_SCALAR OFL_TERNARY
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
      ;
}

int SizeOf(ScalarType t) {
  switch (t) {
    case ScalarType::kBool:
    case ScalarType::kU8:
    case ScalarType::kI8: return 1;
    case ScalarType::kF16:
    case ScalarType::kBF16:
    case ScalarType::kI16: return 2;
    case ScalarType::kI32:
    case ScalarType::kF32: return 4;
    case ScalarType::kI64:
    case ScalarType::kF64: return 8;
    default: break;  // complex and the limited dtypes have no ternary kernels
  }
  return 0;
}

template <typename T, typename C, bool kBySize>
cudaError_t Launch(TernaryId op, const opdefs::TernaryAttrsAll& a, uint64_t scalar_bits,
                   const LoopShape& loop, const Operand& out, const Operand& x, const Operand& y,
                   const Operand& z, cudaStream_t stream) {
  T s;
  static_assert(sizeof(T) <= sizeof(scalar_bits), "scalar wider than its bits");
  std::memcpy(&s, &scalar_bits, sizeof(T));
  return LaunchTernaryLoop<T, C, T, T>(loop, out, x, y, z, TernaryTableF<T, C, kBySize>{op, a, s},
                                       stream);
}

}  // namespace

bool TernaryTableSupported(TernaryId op, ScalarType t) {
  switch (KindOf(op).types) {
    case Types::Float: return InSet(F, t);
    case Types::Numeric: return InSet(N, t);
    case Types::All: return SizeOf(t) > 0;
    default: return false;
  }
}

cudaError_t LaunchTernaryTable(TernaryId op, ScalarType t, const opdefs::TernaryAttrsAll& a,
                               uint64_t scalar_bits, const LoopShape& loop, const Operand& out,
                               const Operand& x, const Operand& y, const Operand& z,
                               cudaStream_t stream) {
  if (!TernaryTableSupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  const OpKind k = KindOf(op);
  const bool cond = k.cond, by_size = k.types == Types::All;
  if constexpr (AnyOp<true, true>()) {
    if (cond && by_size)
      OFL_CU_SWITCH_SIZE(SizeOf(t), e = (Launch<scalar_t, bool, true>(op, a, scalar_bits, loop, out,
                                                                      x, y, z, stream)));
  }
  if constexpr (AnyOp<false, true>()) {
    if (!cond && by_size)
      OFL_CU_SWITCH_SIZE(SizeOf(t), e = (Launch<scalar_t, scalar_t, true>(op, a, scalar_bits, loop,
                                                                          out, x, y, z, stream)));
  }
  if constexpr (AnyOp<true, false>()) {
    if (cond && !by_size)
      OFL_CU_SWITCH_NUMERIC(
          t, e = (Launch<scalar_t, bool, false>(op, a, scalar_bits, loop, out, x, y, z, stream)));
  }
  if constexpr (AnyOp<false, false>()) {
    if (!cond && !by_size)
      OFL_CU_SWITCH_NUMERIC(t, e = (Launch<scalar_t, scalar_t, false>(op, a, scalar_bits, loop, out,
                                                                      x, y, z, stream)));
  }
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
