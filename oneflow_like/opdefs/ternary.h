// The ternary family's declarations expanded from ternary.def: typed attribute structs, one
// functor per op holding its formula (scalar variants call their base op's), op ids and dtype
// sets. Shared by kernels/cpu, kernels/cuda (device code: nothing host-only here), the HLO
// lowering and the framework.
#pragma once
#include "oneflow_like/opdefs/binary.h"

namespace oneflow_like {
namespace opdefs {

// Attribute structs and their visitors.
#define OFL_TERNARY(...)
#define OFL_TERNARY_SCALAR(...)
#define OFL_TABLE "oneflow_like/opdefs/ternary.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR

#define OFL_TERNARY_IS_COND_value false
#define OFL_TERNARY_IS_COND_cond true
#define OFL_TERNARY_SCALAR_POS_y 1
#define OFL_TERNARY_SCALAR_POS_z 2

// Functors: Fn{}(m, x, y, z, attrs), x a condition for kCond ops. Scalar variants:
// Fn{}(m, x, in1, s, attrs) with s the scalar already in the value type (converted once per
// call by the caller); kScalarPos says where Base takes it.
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs_, grad, api, args, lower, ...) \
  struct Name##Fn {                                                                \
    using Attrs = Attrs_;                                                          \
    static constexpr Types kTypes = Types::types;                                  \
    static constexpr bool kCond = OFL_TERNARY_IS_COND_##first;                     \
    static constexpr int kInputs = 3;                                              \
    static constexpr const char* kName = #name;                                    \
    template <typename C, typename V, typename M>                                  \
    OFL_HD V operator()(const M& m, C x, V y, V z, const Attrs& a) const {         \
      (void)a, (void)m;                                                            \
      __VA_ARGS__                                                                  \
    }                                                                              \
  };
#define OFL_TERNARY_SCALAR(name, Name, types, Base, pos, grad, lower)             \
  struct Name##Fn {                                                               \
    using Attrs = ScalarAttrs;                                                    \
    using BaseFn = Base##Fn;                                                      \
    static constexpr Types kTypes = Types::types;                                 \
    static constexpr bool kCond = BaseFn::kCond;                                  \
    static constexpr int kInputs = 2;                                             \
    static constexpr int kScalarPos = OFL_TERNARY_SCALAR_POS_##pos;               \
    static constexpr const char* kName = #name;                                   \
    static_assert(kTypes == BaseFn::kTypes, #name ": types must be " #Base "'s"); \
    template <typename C, typename V, typename M>                                 \
    OFL_HD V operator()(const M& m, C x, V in1, V s, const Attrs&) const {        \
      if constexpr (kScalarPos == 1)                                              \
        return BaseFn{}(m, x, s, in1, typename BaseFn::Attrs{});                  \
      else                                                                        \
        return BaseFn{}(m, x, in1, s, typename BaseFn::Attrs{});                  \
    }                                                                             \
  };
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR

// Op ids (tensor and scalar variants in one enum) and every op's attributes in one struct, for
// the CUDA kernels' single switch.
#define OFL_TERNARY(name, ...) name,
#define OFL_TERNARY_SCALAR(name, ...) name,
enum class TernaryId : int {
#include "oneflow_like/opdefs/ternary.def"
};
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#define OFL_TERNARY(name, Name, ...) Name##Fn::Attrs name;
#define OFL_TERNARY_SCALAR(name, Name, ...) Name##Fn::Attrs name;
struct TernaryAttrsAll {
#include "oneflow_like/opdefs/ternary.def"
};
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS

}  // namespace opdefs
}  // namespace oneflow_like
