// Runs "ofl.kernel.<op>" custom-calls (ops without an HLO lowering) with the op's kernel: the
// CPU's through the CPU backend's library-call thunks, the CUDA one through the GPU backend's
// (on the run's stream). The compiler hands over row-major buffers, the attributes come back
// from the call's config.
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

// The op's kernel for `device` on `stream` (null on the CPU).
Status RunOpKernel(const std::string& target, const std::string& config,
                   absl::Span<const hlo::ExternalBuffer> ins,
                   absl::Span<const hlo::ExternalBuffer> outs, Device device,
                   oneflow_like::Stream* stream) {
  std::string op = target.substr(std::string(kPrefix).size());
  ASSIGN_OR_RETURN(kernels::KernelFn fn, kernels::FindKernel(op.c_str(), device.type()));
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
  kernels::KernelContext ctx(op.c_str(), device, attrs, in, out, stream);
  return fn(ctx);
}

// "ofl.view": result = the operand read through (strides, offset), copied contiguously by the
// device's "contiguous" kernel.
Status RunStridedCopy(const std::string& config, absl::Span<const hlo::ExternalBuffer> ins,
                      absl::Span<const hlo::ExternalBuffer> outs, Device device,
                      oneflow_like::Stream* stream) {
  ASSIGN_OR_RETURN(AttrMap attrs, DecodeAttrs(config));
  ASSIGN_OR_RETURN(kernels::KernelFn copy, kernels::FindKernel("contiguous", device.type()));
  kernels::TensorView in = ViewOf(ins[0]), out = ViewOf(outs[0]);
  in.shape = out.shape;
  const auto& strides = attrs.Ints("strides");
  in.strides = DimVector(strides.begin(), strides.end());
  in.data = static_cast<char*>(in.data) + attrs.Int("offset") * DTypeSize(in.dtype);
  absl::InlinedVector<kernels::TensorView, 1> iv{in}, ov{out};
  AttrMap none;
  kernels::KernelContext ctx("view", device, none, iv, ov, stream);
  return copy(ctx);
}

Status RunKernelCall(const std::string& target, const std::string& config,
                     absl::Span<const hlo::ExternalBuffer> ins,
                     absl::Span<const hlo::ExternalBuffer> outs) {
  return RunOpKernel(target, config, ins, outs, Device::CPU(), nullptr);
}

Status RunViewCopy(const std::string&, const std::string& config,
                   absl::Span<const hlo::ExternalBuffer> ins,
                   absl::Span<const hlo::ExternalBuffer> outs) {
  return RunStridedCopy(config, ins, outs, Device::CPU(), nullptr);
}

// On CUDA (the GPU backend's library-call thunks): the same, with the op's CUDA kernel on the
// run's stream; compile time checks the kernel exists.
hlo::DeviceExternalCall CudaKernelCall() {
  hlo::DeviceExternalCall c;
  c.check = [](const std::string& target) -> Status {
    const std::string op = target.substr(std::string(kPrefix).size());
    return kernels::FindKernel(op.c_str(), DeviceType::kCUDA).status();
  };
  c.run = [](const std::string& target, const std::string& config,
             absl::Span<const hlo::ExternalBuffer> ins, absl::Span<const hlo::ExternalBuffer> outs,
             oneflow_like::Stream* stream) {
    return RunOpKernel(target, config, ins, outs, stream->device(), stream);
  };
  return c;
}

hlo::DeviceExternalCall CudaViewCopy() {
  hlo::DeviceExternalCall c;
  c.check = [](const std::string&) -> Status {
    return kernels::FindKernel("contiguous", DeviceType::kCUDA).status();
  };
  c.run = [](const std::string&, const std::string& config,
             absl::Span<const hlo::ExternalBuffer> ins, absl::Span<const hlo::ExternalBuffer> outs,
             oneflow_like::Stream* stream) {
    return RunStridedCopy(config, ins, outs, stream->device(), stream);
  };
  return c;
}

const bool kRegistered = [] {
  hlo::RegisterExternalCallPrefix("ofl.view", &RunViewCopy);
  hlo::RegisterExternalCallPrefix(kPrefix, &RunKernelCall);
  hlo::RegisterDeviceExternalCallPrefix(DeviceType::kCUDA, "ofl.view", CudaViewCopy());
  hlo::RegisterDeviceExternalCallPrefix(DeviceType::kCUDA, kPrefix, CudaKernelCall());
  return true;
}();

}  // namespace
}  // namespace lazy
}  // namespace oneflow_like
