// Runs "ofl.kernel.<op>" custom-calls (ops without an HLO lowering) with the op's CPU kernel:
// the compiler hands over row-major buffers, the attributes come back from the call's config.
#include "compiler/library/external_calls.h"
#include "kernels/kernel.h"
#include "oneflow_like/lazy/lower.h"

namespace oneflow_like {
namespace lazy {
namespace {

constexpr const char* kPrefix = "ofl.kernel.";

kernels::TensorView ViewOf(const hlo::ExternalBuffer& b) {
  kernels::TensorView v;
  v.data = b.data;
  v.dtype = b.dtype;
  v.shape = Shape(b.dims);
  v.strides = ContiguousStrides(v.shape);
  return v;
}

Status RunKernelCall(const std::string& target, const std::string& config, absl::Span<const hlo::ExternalBuffer> ins,
                     absl::Span<const hlo::ExternalBuffer> outs) {
  std::string op = target.substr(std::string(kPrefix).size());
  ASSIGN_OR_RETURN(kernels::KernelFn fn, kernels::FindKernel(op.c_str(), DeviceType::kCPU));
  ASSIGN_OR_RETURN(AttrMap attrs, DecodeAttrs(config));
  absl::InlinedVector<kernels::TensorView, 4> in, out;
  for (auto& b : ins) in.push_back(ViewOf(b));
  for (auto& b : outs) out.push_back(ViewOf(b));
  kernels::KernelContext ctx(op.c_str(), Device::CPU(), attrs, in, out, nullptr);
  return fn(ctx);
}

const bool kRegistered = [] {
  hlo::RegisterExternalCallPrefix(kPrefix, &RunKernelCall);
  return true;
}();

}  // namespace
}  // namespace lazy
}  // namespace oneflow_like
