// Op definitions and dispatch. An op is a schema (shape/dtype/device inference on the caller's
// thread), kernels per device (kernels/, looked up by name) and an optional gradient formula
// written with the functional API. Dispatch runs the schema, creates the outputs, then either
// enqueues an OpCall instruction (eager) or appends to the active trace (lazy), and records an
// autograd node when grad mode is on and an input requires grad.
#pragma once
#include <atomic>
#include <initializer_list>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_like/base/attrs.h"
#include "oneflow_like/framework/tensor.h"

namespace oneflow_like {

struct TensorMeta {
  Shape shape;
  DType dtype;
  Device device;
};

struct GradContext {
  const TensorList& inputs;        // forward inputs (as saved)
  const TensorList& outputs;       // forward outputs (detached from the graph)
  const TensorList& grad_outputs;  // undefined entries mean zero gradient
  const AttrMap& attrs;
  const std::vector<bool>& needs_input_grad;
};

using InferFn = Status (*)(TensorSpan inputs, const AttrMap& attrs,
                           std::vector<TensorMeta>* outputs);
// Returns one gradient per input (undefined = none); shapes may be broadcast: Dispatch reduces.
using GradFn = StatusOr<TensorList> (*)(const GradContext& ctx);
// View ops: compute the output's view of input 0's storage; no kernel runs in eager mode.
using ViewFn = Status (*)(const Tensor& input, const AttrMap& attrs, Shape* shape,
                          DimVector* strides, int64_t* offset);

// How an op is declared, the one way to build an OpDef: named setters over the defaults, e.g.
//   const OpDef kRelu = OpSpec("relu", InferSameAsInput).Grad(ReluGrad).SaveInputs(false);
struct OpSpec {
  const char* name;
  InferFn infer;
  GradFn grad = nullptr;
  ViewFn view = nullptr;
  bool strided_inputs = false;
  bool cross_device = false;
  bool save_inputs = true;
  bool save_outputs = true;
  // Outputs the gradient formula never reads (bit i: output i), kept as undefined tensors when the
  // outputs are saved: changing one in place before backward is then no error, as in torch
  // (relu_(batch_norm(x)) saves only the batch statistics, not the normalized output).
  uint32_t unread_outputs = 0;
  // Inputs read only by the gradients of some inputs (ReadBy: byte i holds the inputs whose
  // gradient formula reads input i; bit 63 marks it given). At record time an input is saved
  // only when one of those requires grad, as torch saves `other` for d/dself only when self
  // requires grad: y.mul_(w) with w needing no grad keeps no copy of y's old value. Zero: every
  // input is saved whenever the op saves inputs.
  uint64_t input_readers = 0;
  // Device types (bit 1 << DeviceType) whose kernels take f16/bf16 themselves; elsewhere
  // Dispatch computes f16/bf16 inputs in f32 and casts the outputs back (framework/autocast.h).
  uint8_t low_precision_devices = 0;
  constexpr OpSpec(const char* name, InferFn infer) : name(name), infer(infer) {}
  // The gradient formula (none: outputs don't require grad).
  constexpr OpSpec Grad(GradFn f) const { return With(&OpSpec::grad, f); }
  // A view op: computes the output's place in input 0's storage; no kernel runs in eager mode.
  constexpr OpSpec View(ViewFn f) const { return With(&OpSpec::view, f); }
  // The kernel handles any input strides; otherwise non-contiguous inputs are copied first.
  constexpr OpSpec StridedInputs(bool on = true) const { return With(&OpSpec::strided_inputs, on); }
  // Inputs may live on another device than the op runs on (copies).
  constexpr OpSpec CrossDevice(bool on = true) const { return With(&OpSpec::cross_device, on); }
  // Saved for backward: whether the gradient formula reads the inputs / outputs (saving nothing
  // frees memory early).
  constexpr OpSpec SaveInputs(bool on = true) const { return With(&OpSpec::save_inputs, on); }
  constexpr OpSpec SaveOutputs(bool on = true) const { return With(&OpSpec::save_outputs, on); }
  constexpr OpSpec UnreadOutputs(uint32_t mask) const {
    return With(&OpSpec::unread_outputs, mask);
  }
  constexpr OpSpec InputReaders(uint64_t readers) const {
    return With(&OpSpec::input_readers, readers);
  }
  // The kernels on these device types take f16/bf16 (kLowPrecisionCPU, kLowPrecisionAll).
  constexpr OpSpec LowPrecision(uint8_t devices) const {
    return With(&OpSpec::low_precision_devices, devices);
  }

 private:
  template <typename T>
  constexpr OpSpec With(T OpSpec::*field, T v) const {
    OpSpec s = *this;
    s.*field = v;
    return s;
  }
};

// OpSpec::InputReaders's value: readers[i] is the mask of inputs (bit j: input j) whose gradient
// reads input i, e.g. mul: ReadBy({0b10, 0b01}) (x is read by d/dy, y by d/dx). At most 7 inputs.
constexpr uint64_t ReadBy(std::initializer_list<uint8_t> readers) {
  uint64_t r = 1ull << 63;
  int i = 0;
  for (uint8_t m : readers) r |= static_cast<uint64_t>(m) << (8 * i++);
  return r;
}
// Whether input i must be saved, given which inputs require grad (bit j: input j).
constexpr bool InputIsRead(uint64_t readers, size_t i, uint64_t requiring) {
  return readers == 0 || i >= 7 || ((readers >> (8 * i)) & 0xff & requiring) != 0;
}

constexpr uint8_t kLowPrecisionCPU = 1u << static_cast<int>(DeviceType::kCPU);
constexpr uint8_t kLowPrecisionAll = 0xff;

// An op: its spec plus the kernels found for it, cached per device type. Not copyable (ops are
// compared by address); declared as `const OpDef kName = OpSpec(...)...;`.
struct OpDef : OpSpec {
  OpDef(const OpSpec& spec) : OpSpec(spec) {}  // NOLINT: implicit, see above
  OpDef(const OpDef&) = delete;
  OpDef& operator=(const OpDef&) = delete;
  // The kernel of this op on `device`, looked up once (safe under concurrent first calls: racing
  // threads find the same kernel and store the same pointer).
  StatusOr<kernels::KernelFn> Kernel(DeviceType device) const;

 private:
  mutable std::atomic<kernels::KernelFn> kernel_cache_[kNumDeviceTypes] = {};
};

// Runs `op` on `inputs`; returns its outputs.
// The inputs are borrowed (a TensorList or a braced list `{a, b}`): no handle is copied to call.
StatusOr<TensorList> Dispatch(const OpDef& op, TensorSpan inputs, const AttrMap& attrs = {});
StatusOr<Tensor> Dispatch1(const OpDef& op, TensorSpan inputs, const AttrMap& attrs = {});
// In-place: the op's single output is written into `out` (same shape/dtype as inferred).
Status DispatchInplace(const OpDef& op, TensorSpan inputs, const AttrMap& attrs, const Tensor& out);

// Cost hint (elements) below which the VM may run a CPU instruction inline; see vm/stream.h.
int64_t KernelCostHint(TensorSpan outputs, TensorSpan inputs);

// Lazy mode (nn.Graph tracing) installs a handler; Dispatch calls it when any input is lazy.
// `inplace_out` is the tensor an in-place op overwrites (null otherwise); the handler rebinds it.
using LazyDispatchFn = StatusOr<TensorList> (*)(const OpDef& op, TensorSpan inputs,
                                                const AttrMap& attrs,
                                                const std::vector<TensorMeta>& output_metas,
                                                const Tensor* inplace_out);
void SetLazyDispatch(LazyDispatchFn fn);
// While tracing is active on this thread, every op goes to the lazy handler (eager tensors used
// by the traced ops are captured by reference instead of being computed at trace time).
void SetTracingActive(bool active);
bool TracingActive();

// Common schema helpers: errors name the op and the offending shapes/dtypes/devices.
Status CheckSameDevice(const char* op, TensorSpan inputs);
Status CheckFloating(const char* op, const Tensor& t);
Status CheckNumInputs(const char* op, TensorSpan inputs, size_t n);

}  // namespace oneflow_like
