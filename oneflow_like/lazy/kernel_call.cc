// Runs "ofl.kernel.<op>" custom-calls (ops without an HLO lowering) with the op's CPU kernel:
// the compiler hands over row-major buffers, the attributes come back from the call's config.
#include "compiler/library/external_calls.h"
#include "kernels/kernel.h"
#include "oneflow_like/lazy/launch_lazy_job_instruction_policy.h"
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

Status RunKernelCall(const std::string& target, const std::string& config,
                     absl::Span<const hlo::ExternalBuffer> ins,
                     absl::Span<const hlo::ExternalBuffer> outs) {
  std::string op = target.substr(std::string(kPrefix).size());
  ASSIGN_OR_RETURN(kernels::KernelFn fn, kernels::FindKernel(op.c_str(), DeviceType::kCPU));
  ASSIGN_OR_RETURN(AttrMap attrs, DecodeAttrs(config));
  if (uint64_t nonce = CurrentRandomNonce(); nonce != 0 && attrs.Has("seed")) {
    // The traced seed is fixed; mixing in the run's nonce gives every run fresh numbers while a
    // forward op and its backward (same traced seed) still agree within the run.
    uint64_t s = static_cast<uint64_t>(attrs.Int("seed")) ^ (nonce * 0x9e3779b97f4a7c15ULL);
    s = (s ^ (s >> 31)) * 0xbf58476d1ce4e5b9ULL;
    attrs.Set("seed", static_cast<int64_t>(s ^ (s >> 29)));
  }
  absl::InlinedVector<kernels::TensorView, 4> in, out;
  for (auto& b : ins) in.push_back(ViewOf(b));
  for (auto& b : outs) out.push_back(ViewOf(b));
  kernels::KernelContext ctx(op.c_str(), Device::CPU(), attrs, in, out, nullptr);
  return fn(ctx);
}

// "ofl.view": result = the operand read through (strides, offset), copied contiguously.
Status RunViewCopy(const std::string&, const std::string& config,
                   absl::Span<const hlo::ExternalBuffer> ins,
                   absl::Span<const hlo::ExternalBuffer> outs) {
  ASSIGN_OR_RETURN(AttrMap attrs, DecodeAttrs(config));
  ASSIGN_OR_RETURN(kernels::KernelFn copy, kernels::FindKernel("contiguous", DeviceType::kCPU));
  kernels::TensorView in = ViewOf(ins[0]), out = ViewOf(outs[0]);
  in.shape = out.shape;
  const auto& strides = attrs.Ints("strides");
  in.strides = DimVector(strides.begin(), strides.end());
  in.data = static_cast<char*>(in.data) + attrs.Int("offset") * DTypeSize(in.dtype);
  absl::InlinedVector<kernels::TensorView, 1> iv{in}, ov{out};
  AttrMap none;
  kernels::KernelContext ctx("view", Device::CPU(), none, iv, ov, nullptr);
  return copy(ctx);
}

const bool kRegistered = [] {
  hlo::RegisterExternalCallPrefix("ofl.view", &RunViewCopy);
  hlo::RegisterExternalCallPrefix(kPrefix, &RunKernelCall);
  return true;
}();

}  // namespace
}  // namespace lazy
}  // namespace oneflow_like
