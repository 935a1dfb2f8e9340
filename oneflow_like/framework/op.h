// Op definitions and dispatch. An op is a schema (shape/dtype/device inference on the caller's
// thread), kernels per device (kernels/, looked up by name) and an optional gradient formula
// written with the functional API. Dispatch runs the schema, creates the outputs, then either
// enqueues an OpCall instruction (eager) or appends to the active trace (lazy), and records an
// autograd node when grad mode is on and an input requires grad.
#pragma once
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

using InferFn = Status (*)(const TensorList& inputs, const AttrMap& attrs,
                           std::vector<TensorMeta>* outputs);
// Returns one gradient per input (undefined = none); shapes may be broadcast: Dispatch reduces.
using GradFn = StatusOr<TensorList> (*)(const GradContext& ctx);
// View ops: compute the output's view of input 0's storage; no kernel runs in eager mode.
using ViewFn = Status (*)(const Tensor& input, const AttrMap& attrs, Shape* shape,
                          DimVector* strides, int64_t* offset);

struct OpDef {
  const char* name;
  InferFn infer;
  GradFn grad = nullptr;
  ViewFn view = nullptr;
  // The kernel handles any input strides; otherwise non-contiguous inputs are copied first.
  bool strided_inputs = false;
  // Inputs that may live on another device than the op runs on (copies); -1: none.
  bool cross_device = false;
  // Saved for backward: the grad formula reads inputs / outputs (saving nothing frees memory
  // early).
  bool save_inputs = true;
  bool save_outputs = true;
  mutable kernels::KernelFn kernel_cache[kNumDeviceTypes] = {};
};

// Runs `op` on `inputs`; returns its outputs.
StatusOr<TensorList> Dispatch(const OpDef& op, const TensorList& inputs, const AttrMap& attrs = {});
StatusOr<Tensor> Dispatch1(const OpDef& op, const TensorList& inputs, const AttrMap& attrs = {});
// In-place: the op's single output is written into `out` (same shape/dtype as inferred).
Status DispatchInplace(const OpDef& op, const TensorList& inputs, const AttrMap& attrs,
                       const Tensor& out);

// Cost hint (elements) below which the VM may run a CPU instruction inline; see vm/stream.h.
int64_t KernelCostHint(const TensorList& outputs, const TensorList& inputs);

// Lazy mode (nn.Graph tracing) installs a handler; Dispatch calls it when any input is lazy.
// `inplace_out` is the tensor an in-place op overwrites (null otherwise); the handler rebinds it.
using LazyDispatchFn = StatusOr<TensorList> (*)(const OpDef& op, const TensorList& inputs,
                                                const AttrMap& attrs,
                                                const std::vector<TensorMeta>& output_metas,
                                                const Tensor* inplace_out);
void SetLazyDispatch(LazyDispatchFn fn);
// While tracing is active on this thread, every op goes to the lazy handler (eager tensors used
// by the traced ops are captured by reference instead of being computed at trace time).
void SetTracingActive(bool active);
bool TracingActive();

// Common schema helpers: errors name the op and the offending shapes/dtypes/devices.
Status CheckSameDevice(const char* op, const TensorList& inputs);
Status CheckFloating(const char* op, const Tensor& t);
Status CheckNumInputs(const char* op, const TensorList& inputs, size_t n);

}  // namespace oneflow_like
