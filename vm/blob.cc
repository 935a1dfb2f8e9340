#include "vm/blob.h"

namespace oneflow_like {
namespace vm {

Status Blob::EnsureAllocated() {
  if (ptr_ != nullptr || bytes_ == 0) return Status();
  Allocator* a = GetAllocator(device_);
  if (a == nullptr)
    return Unimplemented("[allocator] no allocator for device %s (backend not built or no device)",
                         device_.ToString());
  ASSIGN_OR_RETURN(void* p, a->Allocate(bytes_));
  ptr_ = p;
  allocator_ = a;
  return Status();
}

void Blob::AdoptExternal(void* ptr, std::shared_ptr<void> keep_alive) {
  Free();
  ptr_ = ptr;
  external_ = std::move(keep_alive);
}

void Blob::Free() {
  if (allocator_ != nullptr && ptr_ != nullptr) allocator_->Deallocate(ptr_, bytes_);
  allocator_ = nullptr;
  ptr_ = nullptr;
  external_.reset();
}

}  // namespace vm
}  // namespace oneflow_like
