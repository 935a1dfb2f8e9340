// Kernel interface: what every device kernel receives, and the registry keyed by
// (op name, device type). Kernels see raw views (pointer, dtype, shape, strides in elements),
// never framework tensors. A missing kernel is a clear runtime error, not a link error.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "oneflow_like/base/allocator.h"
#include "oneflow_like/base/attrs.h"
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/shape.h"
#include "oneflow_like/base/status.h"
#include "oneflow_like/base/stream.h"

namespace oneflow_like {
namespace kernels {

struct TensorView {
  void* data = nullptr;  // already offset to the view's first element
  DType dtype = DType::kF32;
  Shape shape;
  DimVector strides;  // elements; 0 for broadcast dims
  int64_t numel() const { return shape.numel(); }
  bool contiguous() const { return IsContiguous(shape, strides); }
  template <typename T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

class KernelContext {
 public:
  KernelContext(const char* op, Device device, const AttrMap& attrs,
                absl::Span<const TensorView> inputs, absl::Span<const TensorView> outputs,
                oneflow_like::Stream* stream)
      : op_(op),
        device_(device),
        attrs_(attrs),
        inputs_(inputs),
        outputs_(outputs),
        stream_(stream) {}
  ~KernelContext();
  const char* op() const { return op_; }
  Device device() const { return device_; }
  const AttrMap& attrs() const { return attrs_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const TensorView& input(int i) const { return inputs_[i]; }
  const TensorView& output(int i) const { return outputs_[i]; }
  oneflow_like::Stream* stream() const { return stream_; }  // device stream (CUDA), null on CPU
  // Scratch memory from the device's allocator, freed when the context dies.
  StatusOr<void*> AllocateTemp(size_t bytes);

 private:
  const char* op_;
  Device device_;
  const AttrMap& attrs_;
  absl::Span<const TensorView> inputs_, outputs_;
  oneflow_like::Stream* stream_;
  std::vector<std::pair<Allocator*, void*>> temps_;
};

using KernelFn = Status (*)(KernelContext& ctx);

// Registers at static-init time: OFL_REGISTER_KERNEL(relu, kCPU, ReluCpu);
void RegisterKernel(const char* op, DeviceType device, KernelFn fn);
// Returns the kernel or an Unimplemented error naming op and device.
StatusOr<KernelFn> FindKernel(const char* op, DeviceType device);
std::vector<std::string> RegisteredKernels(DeviceType device);

struct KernelRegistrar {
  KernelRegistrar(const char* op, DeviceType device, KernelFn fn) {
    RegisterKernel(op, device, fn);
  }
};
#define OFL_REGISTER_KERNEL(op, device, fn)                                               \
  static ::oneflow_like::kernels::KernelRegistrar OFL_CONCAT(_ofl_kernel_reg_, __LINE__)( \
      #op, ::oneflow_like::DeviceType::device, fn)

}  // namespace kernels
}  // namespace oneflow_like
