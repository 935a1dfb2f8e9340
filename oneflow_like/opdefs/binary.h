// The binary family's declarations expanded from binary.def: typed attribute structs, one functor
// per op holding its formula (scalar variants call their base op's), op ids and dtype sets.
// Shared by kernels/cpu, kernels/cuda (device code: nothing host-only here), the HLO lowering and
// the framework.
#pragma once
#include <utility>

#include "oneflow_like/opdefs/unary.h"

namespace oneflow_like {
namespace opdefs {

// Attribute structs and their visitors.
#define OFL_BINARY(...)
#define OFL_BINARY_SCALAR(...)
#define OFL_TABLE "oneflow_like/opdefs/binary.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR

// The result type of a formula: V (out same) or the type of V's comparisons (out bool: bool for
// ScalarMath, a pred instruction for HloMath).
template <typename V>
using TruthOf = decltype(std::declval<V>() == std::declval<V>());
#define OFL_BINARY_OUT_same(V) V
#define OFL_BINARY_OUT_bool(V) TruthOf<V>
#define OFL_BINARY_IS_BOOL_same false
#define OFL_BINARY_IS_BOOL_bool true
// Ops of api `division` report integer division by zero (the kernels read the flag back).
#define OFL_BINARY_DIVISION_promote false
#define OFL_BINARY_DIVISION_division true
#define OFL_BINARY_DIVISION_true_div false
#define OFL_BINARY_DIVISION_special false
#define OFL_BINARY_DIVISION_logical false
#define OFL_BINARY_DIVISION_bitwise false
#define OFL_BINARY_DIVISION_custom false
#define OFL_BINARY_SCALAR_FIRST_xs false
#define OFL_BINARY_SCALAR_FIRST_sx true

// Functors: Fn{}(m, x, y, attrs). Scalar variants: Fn{}(m, x, s, attrs) with s the scalar
// already in x's type (m.c(attrs.scalar), converted once per call by the caller).
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs_, grad, api, lower, ...)                   \
  struct Name##Fn {                                                                         \
    using Attrs = Attrs_;                                                                   \
    static constexpr Types kTypes = Types::types;                                           \
    static constexpr bool kBoolOut = OFL_BINARY_IS_BOOL_##out;                              \
    static constexpr bool kIntDivision = OFL_BINARY_DIVISION_##api;                         \
    static constexpr const char* kName = #name;                                             \
    template <typename V, typename M>                                                       \
    OFL_HD OFL_BINARY_OUT_##out(V) operator()(const M& m, V x, V y, const Attrs& a) const { \
      (void)a, (void)m;                                                                     \
      __VA_ARGS__                                                                           \
    }                                                                                       \
  };
#define OFL_BINARY_SCALAR(name, Name, types, out, Base, order, grad, lower)               \
  struct Name##Fn {                                                                       \
    using Attrs = ScalarAttrs;                                                            \
    using BaseFn = Base##Fn;                                                              \
    static constexpr Types kTypes = Types::types;                                         \
    static constexpr bool kBoolOut = OFL_BINARY_IS_BOOL_##out;                            \
    static constexpr bool kScalarFirst = OFL_BINARY_SCALAR_FIRST_##order;                 \
    static constexpr const char* kName = #name;                                           \
    static_assert(kBoolOut == BaseFn::kBoolOut, #name ": out must be " #Base "'s");       \
    template <typename V, typename M>                                                     \
    OFL_HD OFL_BINARY_OUT_##out(V) operator()(const M& m, V x, V s, const Attrs&) const { \
      if constexpr (kScalarFirst)                                                         \
        return BaseFn{}(m, s, x, typename BaseFn::Attrs{});                               \
      else                                                                                \
        return BaseFn{}(m, x, s, typename BaseFn::Attrs{});                               \
    }                                                                                     \
  };
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR

// Op ids (tensor-tensor and scalar ops in one enum) and every op's attributes in one struct, for
// the CUDA kernels' single switch.
#define OFL_BINARY(name, ...) name,
#define OFL_BINARY_SCALAR(name, ...) name,
enum class BinaryId : int {
#include "oneflow_like/opdefs/binary.def"
};
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#define OFL_BINARY(name, Name, ...) Name##Fn::Attrs name;
#define OFL_BINARY_SCALAR(name, Name, ...) Name##Fn::Attrs name;
struct BinaryAttrsAll {
#include "oneflow_like/opdefs/binary.def"
};
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS

}  // namespace opdefs
}  // namespace oneflow_like
