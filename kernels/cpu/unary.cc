// CPU kernels of the unary elementwise family.
#include <cmath>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

#define OFL_UNARY_KERNEL(Name, SWITCH, EXPR)                                                 \
  Status Name(KernelContext& ctx) {                                                          \
    const TensorView &out = ctx.output(0), &a = ctx.input(0);                                \
    bool done = false;                                                                       \
    SWITCH(out.dtype, {                                                                      \
      UnaryLoop<scalar_t, scalar_t>(out, a, [](scalar_t x) { return EXPR; });                \
      done = true;                                                                           \
    });                                                                                      \
    if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(out.dtype)); \
    return Status();                                                                         \
  }

OFL_UNARY_KERNEL(NegKernel, OFL_SWITCH_NUMERIC, scalar_t(-x))
OFL_UNARY_KERNEL(ExpKernel, OFL_SWITCH_FLOAT, std::exp(x))
OFL_UNARY_KERNEL(ReluKernel, OFL_SWITCH_NUMERIC, x > scalar_t(0) ? x : scalar_t(0))

Status ReluGradKernel(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &dy = ctx.input(0), &y = ctx.input(1);
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    BinaryLoop<scalar_t, scalar_t>(out, dy, y, [](scalar_t g, scalar_t v) { return v > scalar_t(0) ? g : scalar_t(0); });
    done = true;
  });
  if (!done) return TypeError("[relu_grad] not supported for %s on cpu", DTypeName(out.dtype));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(neg, kCPU, NegKernel);
OFL_REGISTER_KERNEL(exp, kCPU, ExpKernel);
OFL_REGISTER_KERNEL(relu, kCPU, ReluKernel);
OFL_REGISTER_KERNEL(relu_grad, kCPU, ReluGradKernel);

}  // namespace kernels
}  // namespace oneflow_like
