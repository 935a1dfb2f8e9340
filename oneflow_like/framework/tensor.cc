#include "oneflow_like/framework/tensor.h"

#include "vm/virtual_machine.h"

namespace oneflow_like {

Storage::Storage(Device device, size_t bytes) : blob_(std::make_shared<vm::Blob>(device, bytes)) {}

Storage::~Storage() {
  vm::VirtualMachine::Get()->ReleaseBlob(std::move(blob_));
}

Tensor Tensor::Empty(const Shape& shape, DType dtype, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->strides = ContiguousStrides(shape);
  impl->dtype = dtype;
  impl->device = device;
  impl->storage =
      std::make_shared<Storage>(device, static_cast<size_t>(shape.numel() * DTypeSize(dtype)));
  return Tensor(std::move(impl));
}

Tensor Tensor::MakeView(const Tensor& base, Shape shape, DimVector strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->device = base.device();
  impl->storage = base.impl()->storage;
  impl->is_view = true;
  impl->lazy_ctx = base.impl()->lazy_ctx;
  return Tensor(std::move(impl));
}

AutogradMeta* Tensor::mutable_autograd_meta() {
  if (!impl_->autograd) impl_->autograd = std::make_shared<AutogradMeta>();
  return impl_->autograd.get();
}

Status Tensor::set_requires_grad(bool r) {
  if (r && !IsFloating(dtype()))
    return TypeError("[requires_grad] only floating point tensors can require gradients, got %s",
                     meta_string());
  if (!r && !is_leaf())
    return InvalidArgument(
        "[requires_grad] cannot turn off requires_grad of a non-leaf tensor; use detach()");
  mutable_autograd_meta()->requires_grad = r;
  return Status();
}

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<Node> none;
  return impl_->autograd ? impl_->autograd->grad_fn : none;
}

Tensor Tensor::grad() const {
  if (!impl_->autograd || !impl_->autograd->grad) return Tensor();
  return Tensor(impl_->autograd->grad);
}

void Tensor::set_grad(const Tensor& g) {
  mutable_autograd_meta()->grad = g.impl_ptr();
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>(*impl_);
  impl->autograd.reset();
  return Tensor(std::move(impl));
}

}  // namespace oneflow_like
