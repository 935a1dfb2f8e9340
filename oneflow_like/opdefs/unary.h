// The unary family's declarations expanded from unary.def: typed attribute structs, one functor
// per op holding its formula, the op ids and dtype sets. Shared by kernels/cpu, kernels/cuda
// (device code: this header includes nothing host-only), the HLO lowering and the framework.
#pragma once
#include "oneflow_like/opdefs/math.h"

namespace oneflow_like {
namespace opdefs {

// Dtype sets of the tables' `types` column (the unary table uses the first three; All, every
// dtype with f16/bf16, is the ternary table's).
enum class Types { Float, Numeric, IntBool, NumericBool, Bool, All };
template <Types K, typename T>
constexpr bool InTypes() {
  constexpr bool fl = std::is_floating_point_v<T>;
  constexpr bool b = std::is_same_v<T, bool>;
  if constexpr (K == Types::Float) return fl;
  if constexpr (K == Types::Numeric) return !b;
  if constexpr (K == Types::NumericBool) return true;
  if constexpr (K == Types::Bool) return b;
  if constexpr (K == Types::All) return true;
  return !fl;
}

// Attribute structs (fields with their defaults) and ForEachAttr visitors.
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(...)
#define OFL_TABLE "oneflow_like/opdefs/unary.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE
#undef OFL_UNARY
#undef OFL_UNARY_GRAD

// Functors: Fn{}(m, x, attrs) / Fn{}(m, dy, s, attrs).
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs_, grad, api, lower, ...) \
  struct Name##Fn {                                                 \
    using Attrs = Attrs_;                                           \
    static constexpr Types kTypes = Types::types;                   \
    static constexpr const char* kName = #name;                     \
    template <typename V, typename M>                               \
    OFL_HD V operator()(const M& m, V x, const Attrs& a) const {    \
      (void)a, (void)m;                                             \
      __VA_ARGS__                                                   \
    }                                                               \
  };
#define OFL_UNARY_GRAD(name, Name, types, Attrs_, lower, ...)          \
  struct Name##Fn {                                                    \
    using Attrs = Attrs_;                                              \
    static constexpr Types kTypes = Types::types;                      \
    static constexpr const char* kName = #name;                        \
    template <typename V, typename M>                                  \
    OFL_HD V operator()(const M& m, V dy, V s, const Attrs& a) const { \
      (void)a, (void)m;                                                \
      __VA_ARGS__                                                      \
    }                                                                  \
  };
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD

// Op ids (forward and backward ops in one enum) and every op's attributes in one struct, for the
// CUDA kernels' single switch.
#define OFL_UNARY(name, ...) name,
#define OFL_UNARY_GRAD(name, ...) name,
enum class UnaryId : int {
#include "oneflow_like/opdefs/unary.def"
};
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#define OFL_UNARY(name, Name, ...) Name##Fn::Attrs name;
#define OFL_UNARY_GRAD(name, Name, ...) Name##Fn::Attrs name;
struct UnaryAttrsAll {
#include "oneflow_like/opdefs/unary.def"
};
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS

}  // namespace opdefs
}  // namespace oneflow_like
