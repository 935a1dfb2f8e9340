// Lowerings of the unary table (oneflow_like/opdefs/unary.def, lower column L): each op's formula
// is instantiated with HloMath, whose values are HLO instructions, so the HLO is the very
// expression tree the CPU kernel evaluates (same operation order, in the op's dtype). Floating
// dtypes only; other dtypes, and formulas using a function HLO lacks (expm1), keep the kernel
// call.
#include "oneflow_like/lazy/lowering/hlo_math.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo_math::LowerTable;
}  // namespace

namespace unary_table {  // (registrations named by .def line numbers)
// clang-format off
#define OFL_LOWER_L(name, Name, inputs) \
  OFL_REGISTER_LOWERING(name, (LowerTable<opdefs::Name##Fn, inputs>));
#define OFL_LOWER_H(name, Name, inputs)  // hand-written (lowering/elementwise.cc)
#define OFL_LOWER_K(name, Name, inputs)  // kernel call
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, lower, ...) OFL_LOWER_##lower(name, Name, 1)
#define OFL_UNARY_GRAD(name, Name, types, Attrs, lower, ...) OFL_LOWER_##lower(name, Name, 2)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
#undef OFL_LOWER_L
#undef OFL_LOWER_H
#undef OFL_LOWER_K
// clang-format on
}  // namespace unary_table

}  // namespace lazy
}  // namespace oneflow_like
