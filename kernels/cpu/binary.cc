// CPU kernels of the binary elementwise family. Inputs share one dtype (promoted by the schema)
// and broadcast to the output's shape; the output may be strided (in-place variants).
#include <cmath>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

#define OFL_BINARY_KERNEL(Name, EXPR)                                                        \
  Status Name(KernelContext& ctx) {                                                          \
    const TensorView &out = ctx.output(0), &a = ctx.input(0), &b = ctx.input(1);             \
    [[maybe_unused]] double alpha_d = ctx.attrs().Float("alpha", 1.0);                      \
    bool done = false;                                                                       \
    OFL_SWITCH_NUMERIC(out.dtype, {                                                          \
      [[maybe_unused]] scalar_t alpha = static_cast<scalar_t>(alpha_d);                      \
      BinaryLoop<scalar_t, scalar_t>(out, a, b, [=](scalar_t x, scalar_t y) { return EXPR; }); \
      done = true;                                                                           \
    });                                                                                      \
    if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(out.dtype)); \
    return Status();                                                                         \
  }

OFL_BINARY_KERNEL(AddKernel, alpha == scalar_t(1) ? scalar_t(x + y) : scalar_t(x + alpha * y))
OFL_BINARY_KERNEL(MulKernel, scalar_t(x * y))
OFL_BINARY_KERNEL(DivKernel, scalar_t(x / y))

#define OFL_SCALAR_KERNEL(Name, EXPR)                                                        \
  Status Name(KernelContext& ctx) {                                                          \
    const TensorView &out = ctx.output(0), &a = ctx.input(0);                                \
    double s_d = ctx.attrs().Float("scalar");                                                \
    bool done = false;                                                                       \
    OFL_SWITCH_NUMERIC(out.dtype, {                                                          \
      scalar_t s = static_cast<scalar_t>(s_d);                                               \
      UnaryLoop<scalar_t, scalar_t>(out, a, [=](scalar_t x) { return EXPR; });               \
      done = true;                                                                           \
    });                                                                                      \
    if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(out.dtype)); \
    return Status();                                                                         \
  }

OFL_SCALAR_KERNEL(AddScalarKernel, scalar_t(x + s))
OFL_SCALAR_KERNEL(MulScalarKernel, scalar_t(x * s))
OFL_SCALAR_KERNEL(RSubScalarKernel, scalar_t(s - x))
OFL_SCALAR_KERNEL(RDivScalarKernel, scalar_t(s / x))

// Integer division by zero must not crash the process: checked for integer types.
Status CheckedDivKernel(KernelContext& ctx) {
  const TensorView& b = ctx.input(1);
  if (IsIntegral(b.dtype)) return TypeError("[div] integer inputs must be promoted to float first");
  return DivKernel(ctx);
}

}  // namespace

OFL_REGISTER_KERNEL(add, kCPU, AddKernel);
OFL_REGISTER_KERNEL(mul, kCPU, MulKernel);
OFL_REGISTER_KERNEL(div, kCPU, CheckedDivKernel);
OFL_REGISTER_KERNEL(add_scalar, kCPU, AddScalarKernel);
OFL_REGISTER_KERNEL(mul_scalar, kCPU, MulScalarKernel);
OFL_REGISTER_KERNEL(rsub_scalar, kCPU, RSubScalarKernel);
OFL_REGISTER_KERNEL(rdiv_scalar, kCPU, RDivScalarKernel);

}  // namespace kernels
}  // namespace oneflow_like
