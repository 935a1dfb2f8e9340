// Tensor: a handle (shared_ptr) over TensorImpl = view metadata (shape, strides, offset, dtype,
// device) + shared storage (a VM blob with its dependence object and version counter) +
// autograd metadata. Views share storage; the storage is released through the VM when the
// last tensor using it dies. A "lazy" tensor (nn.Graph tracing) has no storage, only a value id
// in the trace.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/shape.h"
#include "oneflow_like/base/status.h"
#include "vm/blob.h"

namespace oneflow_like {

class Node;
class Tensor;

// Storage shared by a tensor and its views. Its destructor hands the blob to the VM, which
// frees it after every instruction already using it.
class Storage {
 public:
  Storage(Device device, size_t bytes);
  ~Storage();
  const vm::BlobPtr& blob() const { return blob_; }
  std::atomic<int64_t>& version() { return version_; }

 private:
  vm::BlobPtr blob_;
  std::atomic<int64_t> version_{0};
};

using TensorHook = std::function<StatusOr<Tensor>(const Tensor& grad)>;
// Runs after backward accumulated a leaf's .grad (torch's register_post_accumulate_grad_hook).
using PostAccumulateGradHook = std::function<Status(const Tensor& leaf)>;

struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  std::shared_ptr<Node> grad_fn;            // null for leaves
  int output_nr = 0;                        // which output of grad_fn this tensor is
  std::weak_ptr<Node> grad_accumulator;     // leaves only; created on first use
  std::shared_ptr<struct TensorImpl> grad;  // accumulated .grad
  // Removing a hook empties its std::function in place, so the indices handles hold stay valid.
  std::vector<TensorHook> hooks;
  std::vector<PostAccumulateGradHook> post_accumulate_hooks;
};

// How a view was made, for in-place ops on it that require grad (torch's CreationMeta): in grad
// mode by a single-output view op; in no_grad mode (modifying it in place with grad enabled is
// refused); by an op returning several views (unbind/split/chunk: refused too).
enum class ViewCreation : uint8_t { kDefault, kNoGrad, kMultiOutput };

struct TensorImpl {
  Shape shape;
  DimVector strides;
  int64_t offset = 0;  // elements
  DType dtype = DType::kF32;
  Device device;
  std::shared_ptr<Storage> storage;        // null for lazy tensors
  std::shared_ptr<AutogradMeta> autograd;  // null until needed
  bool is_view = false;
  // Views made by a view op: the root tensor (never a view) whose storage this one reads, how it
  // was made, and the storage version its grad_fn belongs to. When the version moved on (the
  // base or another view of it was changed in place), requires_grad/grad_fn/is_leaf first
  // regenerate the history from the base (an as_strided view of it), as torch does.
  std::shared_ptr<TensorImpl> view_base;
  ViewCreation view_creation = ViewCreation::kDefault;
  int view_output_nr = 0;               // kMultiOutput: which output of that op
  const char* view_multi_fn = nullptr;  // kMultiOutput: torch's node name ("UnbindBackward0")
  int64_t view_version = 0;
  int64_t lazy_id = -1;            // value id in the active trace (lazy tensors)
  std::shared_ptr<void> lazy_ctx;  // the trace this lazy value belongs to
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  // A new contiguous tensor whose storage is allocated when its first writer runs.
  static Tensor Empty(const Shape& shape, DType dtype, Device device);
  // A view of `base` sharing its storage (no autograd history attached).
  static Tensor MakeView(const Tensor& base, Shape shape, DimVector strides, int64_t offset);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  const Shape& shape() const { return impl_->shape; }
  const DimVector& strides() const { return impl_->strides; }
  int64_t offset() const { return impl_->offset; }
  int64_t ndim() const { return impl_->shape.ndim(); }
  int64_t numel() const { return impl_->shape.numel(); }
  int64_t dim(int64_t i) const { return impl_->shape[i]; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  bool is_contiguous() const { return IsContiguous(impl_->shape, impl_->strides); }
  bool is_lazy() const { return impl_->lazy_id >= 0; }
  bool is_view() const { return impl_->is_view; }
  const vm::BlobPtr& blob() const { return impl_->storage->blob(); }
  int64_t version() const { return impl_->storage ? impl_->storage->version().load() : 0; }
  void bump_version() const {
    if (impl_->storage) impl_->storage->version().fetch_add(1);
  }
  std::string meta_string() const { return ShapeString(dtype(), shape()); }  // "f32[3,4]"
  bool same(const Tensor& o) const { return impl_ == o.impl_; }

  // Autograd accessors.
  bool requires_grad() const {
    SyncView();
    return impl_->autograd && impl_->autograd->requires_grad;
  }
  Status set_requires_grad(bool r);
  bool is_leaf() const {
    SyncView();
    return !impl_->autograd || !impl_->autograd->grad_fn;
  }
  const std::shared_ptr<Node>& grad_fn() const;
  Tensor grad() const;
  void set_grad(const Tensor& g);
  AutogradMeta* autograd_meta() const { return impl_->autograd.get(); }
  AutogradMeta* mutable_autograd_meta();
  // Same storage and view, no autograd history.
  Tensor detach() const;

 private:
  // A view whose base changed in place since its grad_fn was recorded: regenerate it first.
  void SyncView() const {
    if (impl_->view_base && impl_->storage &&
        impl_->storage->version().load() != impl_->view_version)
      RefreshView();
  }
  void RefreshView() const;
  std::shared_ptr<TensorImpl> impl_;
};

// Installed by the autograd engine: regenerates a view's grad_fn from its base (see
// TensorImpl::view_base); Tensor::RefreshView calls it. False: not now (grad mode is off), ask
// again next time.
using ViewRefreshFn = bool (*)(const Tensor& view);
void SetViewRefresh(ViewRefreshFn fn);

using TensorList = std::vector<Tensor>;
// A borrowed run of tensors: a TensorList, a braced list `{a, b}` or one tensor. Dispatch and the
// ops' schemas take their inputs this way, so building the input list copies no handles.
using TensorSpan = absl::Span<const Tensor>;

}  // namespace oneflow_like
