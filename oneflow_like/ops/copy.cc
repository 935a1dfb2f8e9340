// Copy family schemas, gradients and functional entries.
#include "oneflow_like/ops/copy.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/reduce.h"

namespace oneflow_like {
namespace {

const OpDef kContiguous = OpSpec("contiguous", ops::InferSameAsInput)
                              .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                                return TensorList{c.grad_outputs[0]};
                              })
                              .StridedInputs()
                              .LowPrecision(kLowPrecisionAll);

const OpDef kCast =
    OpSpec("cast",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             out->push_back(TensorMeta{in[0].shape(), a.Dtype("dtype"), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          if (!IsFloating(c.inputs[0].dtype())) return TensorList{Tensor()};
          ASSIGN_OR_RETURN(Tensor g, functional::Cast(c.grad_outputs[0], c.inputs[0].dtype()));
          return TensorList{g};
        })
        .StridedInputs()
        .LowPrecision(kLowPrecisionAll);

// copy_(dst, src): inputs {src}; output written in place into dst (broadcast + cast).
const OpDef kCopyInto =
    OpSpec("copy_",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             DimVector dims = a.Ints("shape").empty()
                                  ? DimVector()
                                  : DimVector(a.Ints("shape").begin(), a.Ints("shape").end());
             Shape dst(dims);
             ASSIGN_OR_RETURN(Shape b, BroadcastShapes("copy_", in[0].shape(), dst));
             if (b != dst)
               return InvalidArgument(
                   "[copy_] source %s cannot be broadcast to the destination shape %s",
                   in[0].meta_string(), dst.ToString());
             out->push_back(TensorMeta{dst, a.Dtype("dtype"), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, functional::Cast(c.grad_outputs[0], c.inputs[0].dtype()));
          return TensorList{g};
        })
        .StridedInputs()
        .LowPrecision(kLowPrecisionAll);

// Device transfer: the kernel runs on the destination device's copy stream.
const OpDef kToDevice =
    OpSpec("to_device",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             ASSIGN_OR_RETURN(Device d, Device::Parse(a.Str("device")));
             out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), d});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, functional::To(c.grad_outputs[0], c.inputs[0].device()));
          return TensorList{g};
        })
        .CrossDevice()
        .LowPrecision(kLowPrecisionAll);

}  // namespace

namespace functional {

StatusOr<Tensor> Contiguous(const Tensor& x) {
  // Lazy tensors too: a lazy value is laid out contiguously, and a lazy view carries its layout
  // in its root (lazy/trace.h), so this copies exactly when eager mode would.
  if (x.is_contiguous()) return x;
  return Dispatch1(kContiguous, {x});
}

StatusOr<Tensor> Clone(const Tensor& x) {
  return Dispatch1(kContiguous, {x});
}

StatusOr<Tensor> Cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return Dispatch1(kCast, {x}, {{"dtype", dtype}});
}

Status CopyInto(const Tensor& dst, const Tensor& src) {
  Tensor s = src;
  if (src.device() != dst.device()) {
    ASSIGN_OR_RETURN(s, To(src, dst.device()));
  }
  std::vector<int64_t> shape(dst.shape().dims().begin(), dst.shape().dims().end());
  return DispatchInplace(kCopyInto, {s}, {{"shape", shape}, {"dtype", dst.dtype()}}, dst);
}

StatusOr<Tensor> To(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  return Dispatch1(kToDevice, {x}, {{"device", device.ToString()}});
}

}  // namespace functional
}  // namespace oneflow_like
