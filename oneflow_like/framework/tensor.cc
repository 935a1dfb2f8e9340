#include "oneflow_like/framework/tensor.h"

#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace {
// Every op output is a TensorImpl, a Storage and a Blob, each in one allocation with its
// shared_ptr control block: those come from per-thread free lists of blocks of their size (up to
// kMaxPooled each) instead of malloc. A block freed on another thread joins that thread's list.
// A list is trivially destructible, so frees while the thread's other thread_locals die still
// find it; at thread exit ListsFlusher frees the pooled blocks and closes the lists. Under ASan
// the pool is off, so use-after-free stays visible.
struct FreeList {
  void* head;
  int count;
  bool registered;
  bool closed;
};
constexpr int kMaxPooled = 64;

struct ListsFlusher {
  FreeList* lists[8];
  int n = 0;
  ~ListsFlusher() {
    for (int i = 0; i < n; ++i) {
      FreeList* l = lists[i];
      while (l->head != nullptr) {
        void* next = *static_cast<void**>(l->head);
        ::operator delete(l->head);
        l->head = next;
      }
      l->count = 0;
      l->closed = true;
    }
  }
};

template <size_t kSize>
FreeList& ThisThreadList() {
  static thread_local FreeList list;  // zero-initialised
  return list;
}

template <typename T>
struct PoolAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__ && sizeof(T) >= sizeof(void*));
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding, as allocate_shared does
  T* allocate(size_t n) {
#ifndef __SANITIZE_ADDRESS__
    FreeList& l = ThisThreadList<sizeof(T)>();
    if (n == 1 && l.head != nullptr) {
      void* p = l.head;
      l.head = *static_cast<void**>(p);
      --l.count;
      return static_cast<T*>(p);
    }
#endif
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
#ifndef __SANITIZE_ADDRESS__
    FreeList& l = ThisThreadList<sizeof(T)>();
    if (n == 1 && !l.closed && l.count < kMaxPooled) {
      if (!l.registered) {
        static thread_local ListsFlusher flusher;
        if (flusher.n == 8) {
          ::operator delete(p);
          return;
        }
        flusher.lists[flusher.n++] = &l;
        l.registered = true;
      }
      *reinterpret_cast<void**>(p) = l.head;
      l.head = p;
      ++l.count;
      return;
    }
#endif
    ::operator delete(p);
  }
};
template <typename T, typename U>
bool operator==(const PoolAllocator<T>&, const PoolAllocator<U>&) {
  return true;
}
template <typename T, typename U>
bool operator!=(const PoolAllocator<T>&, const PoolAllocator<U>&) {
  return false;
}
}  // namespace

Storage::Storage(Device device, size_t bytes)
    : blob_(std::allocate_shared<vm::Blob>(PoolAllocator<vm::Blob>(), device, bytes)) {}

Storage::~Storage() {
  vm::VirtualMachine::Get()->ReleaseBlob(std::move(blob_));
}

Tensor Tensor::Empty(const Shape& shape, DType dtype, Device device) {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->shape = shape;
  impl->strides = ContiguousStrides(shape);
  impl->dtype = dtype;
  impl->device = device;
  impl->storage = std::allocate_shared<Storage>(
      PoolAllocator<Storage>(), device, static_cast<size_t>(shape.numel() * DTypeSize(dtype)));
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
  if (impl->storage) {  // torch's _base: the root, never a view
    impl->view_base = base.impl()->view_base ? base.impl()->view_base : base.impl_ptr();
    impl->view_version = impl->storage->version().load();
  }
  return Tensor(std::move(impl));
}

namespace {
ViewRefreshFn g_view_refresh = nullptr;
}
void SetViewRefresh(ViewRefreshFn fn) {
  g_view_refresh = fn;
}
void Tensor::RefreshView() const {
  const int64_t version = impl_->storage->version().load();
  if (!g_view_refresh || g_view_refresh(*this)) impl_->view_version = version;
}

AutogradMeta* Tensor::mutable_autograd_meta() {
  if (!impl_->autograd) impl_->autograd = std::make_shared<AutogradMeta>();
  return impl_->autograd.get();
}

Status Tensor::set_requires_grad(bool r) {
  if (r && !IsFloating(dtype()) && !IsComplex(dtype()))
    return TypeError(
        "[requires_grad] only floating point and complex tensors can require gradients, got %s",
        meta_string());
  if (!r && !is_leaf())
    return InvalidArgument(
        "[requires_grad] cannot turn off requires_grad of a non-leaf tensor; use detach()");
  mutable_autograd_meta()->requires_grad = r;
  return Status();
}

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<Node> none;
  SyncView();
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
  impl->view_base.reset();  // as torch's detach: shares the storage but is no backward view
  return Tensor(std::move(impl));
}

}  // namespace oneflow_like
