// CUDA kernels of the ternary elementwise family, registered from oneflow_like/opdefs/ternary.def
// (same op names, attrs and dtypes as kernels/cpu): operands broadcast to the output, which may be
// strided (in-place variants). Scalar variants convert their scalar here, as the CPU does.
#include <cstring>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// A Python number in T, as kernels/cpu's ScalarAs: ScalarMath::scalar for arithmetic types,
// f16/bf16 through float.
template <typename T>
T ScalarAs(double v) {
  if constexpr (std::is_arithmetic_v<T>)
    return opdefs::ScalarMath<T>{}.scalar(v);
  else
    return T(static_cast<float>(v));
}

// The scalar in dtype `t`, as its bits.
uint64_t ScalarBits(DType t, double v) {
  uint64_t bits = 0;
  OFL_SWITCH_ALL(t, {
    const scalar_t x = ScalarAs<scalar_t>(v);
    std::memcpy(&bits, &x, sizeof(x));
  });
  return bits;
}

// One table op: `inputs` operands (3, or 2 for scalar variants), `attrs` holding the op's typed
// attributes, read once by the generated caller.
Status RunTable(KernelContext& ctx, opdefs::TernaryId op, int inputs,
                const opdefs::TernaryAttrsAll& attrs, double scalar) {
  const TensorView& out = ctx.output(0);
  ScalarType t = ToScalarType(out.dtype);
  if (!TernaryTableSupported(op, t))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(out.dtype));
  TensorView x = BroadcastTo(ctx.input(0), out.shape), y = BroadcastTo(ctx.input(1), out.shape),
             z = inputs == 3 ? BroadcastTo(ctx.input(2), out.shape) : y;
  LoopShape loop;
  Operand ops[4];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &x, &y, &z}, &loop, ops));
  const uint64_t bits = inputs == 3 ? 0 : ScalarBits(out.dtype, scalar);
  cudaError_t e =
      LaunchTernaryTable(op, t, attrs, bits, loop, ops[0], ops[1], ops[2], ops[3], StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

// clang-format off
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, ...)                                                \
  Status Run_##name(KernelContext& ctx) {                                           \
    opdefs::TernaryAttrsAll attrs;                                                  \
    attrs.name = opdefs::ReadAttrs<opdefs::Name##Fn::Attrs>(ctx.attrs());           \
    return RunTable(ctx, opdefs::TernaryId::name, 3, attrs, 0.0);                   \
  }                                                                                 \
  OFL_REGISTER_CUDA_KERNEL(name, Run_##name);
#define OFL_TERNARY_SCALAR(name, Name, ...)                                         \
  Status Run_##name(KernelContext& ctx) {                                           \
    const double s = opdefs::ReadAttrs<opdefs::ScalarAttrs>(ctx.attrs()).scalar;    \
    return RunTable(ctx, opdefs::TernaryId::name, 2, opdefs::TernaryAttrsAll{}, s); \
  }                                                                                 \
  OFL_REGISTER_CUDA_KERNEL(name, Run_##name);
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on

}  // namespace cuda
}  // namespace oneflow_like
