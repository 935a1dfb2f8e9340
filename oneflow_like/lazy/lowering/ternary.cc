// Lowerings of the ternary family (oneflow_like/opdefs/ternary.def), generated from the table:
// ops of lower column L / LI / LA are built from their formula through HloMath over the
// broadcast operands, in the op's dtype and the kernels' operation order (eager == lazy bit for
// bit); dtypes outside the column's set, or operands of other dtypes, stay kernel calls.
#include "oneflow_like/lazy/lowering/hlo_math.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo_math::HloMath;
using hlo_math::HV;

// The lower column's dtypes: L f32/f64; LI also i32/i64 (HLO wraps as C++ does for these; u8/i8
// promote to int in the kernels); LA every dtype with codegen (formulas that only select).
enum class LowerSet { L, LI, LA };
bool Lowerable(LowerSet k, DType t) {
  if (IsF32OrF64(t)) return true;
  if (k == LowerSet::LI) return t == DType::kI32 || t == DType::kI64;
  return k == LowerSet::LA && t != DType::kF16 && t != DType::kBF16;
}

template <typename Fn, LowerSet K>
Status LowerTernary(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(K, m.dtype)) return ctx.LowerAsKernelCall(op);
  if (Fn::kCond && ctx.in_meta(op, 0).dtype != DType::kBool) return ctx.LowerAsKernelCall(op);
  for (size_t i = Fn::kCond ? 1 : 0; i < op.inputs.size(); ++i)
    if (ctx.in_meta(op, static_cast<int>(i)).dtype != m.dtype) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(std::vector<hlo::HloInstruction*> in, BroadcastInputs(ctx, op, m.shape));
  ExprBuilder e{ctx, m, Status()};
  bool unsupported = false;
  HloMath math{&e, &unsupported};
  const auto a = opdefs::ReadAttrs<typename Fn::Attrs>(op.attrs);
  HV r;
  if constexpr (Fn::kInputs == 3)
    r = Fn{}(math, HV{&e, in[0]}, HV{&e, in[1]}, HV{&e, in[2]}, a);
  else
    r = Fn{}(math, HV{&e, in[0]}, HV{&e, in[1]}, math.scalar(a.scalar), a);
  if (unsupported) return ctx.LowerAsKernelCall(op);
  return e.Set(op, r.h);
}

}  // namespace

namespace ternary_table {  // (registrations named by .def line numbers)
// clang-format off
#define OFL_TLOWER_L(name, Name) \
  OFL_REGISTER_LOWERING(name, (LowerTernary<opdefs::Name##Fn, LowerSet::L>));
#define OFL_TLOWER_LI(name, Name) \
  OFL_REGISTER_LOWERING(name, (LowerTernary<opdefs::Name##Fn, LowerSet::LI>));
#define OFL_TLOWER_LA(name, Name) \
  OFL_REGISTER_LOWERING(name, (LowerTernary<opdefs::Name##Fn, LowerSet::LA>));
#define OFL_TLOWER_H(name, Name)  // hand-written elsewhere
#define OFL_TLOWER_K(name, Name)  // kernel call
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, args, lower, ...) \
  OFL_TLOWER_##lower(name, Name)
#define OFL_TERNARY_SCALAR(name, Name, types, Base, pos, grad, lower) OFL_TLOWER_##lower(name, Name)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
#undef OFL_TLOWER_L
#undef OFL_TLOWER_LI
#undef OFL_TLOWER_LA
#undef OFL_TLOWER_H
#undef OFL_TLOWER_K
// clang-format on
}  // namespace ternary_table

}  // namespace lazy
}  // namespace oneflow_like
