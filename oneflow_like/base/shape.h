// Shape and strides (in elements), small inline vectors; printing as `f32[3,4]`.
#pragma once
#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "oneflow_like/base/dtype.h"

namespace oneflow_like {

using DimVector = absl::InlinedVector<int64_t, 6>;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}
  explicit Shape(DimVector dims) : dims_(std::move(dims)) {}

  int64_t ndim() const { return static_cast<int64_t>(dims_.size()); }
  int64_t operator[](int64_t i) const { return dims_[i]; }
  int64_t& operator[](int64_t i) { return dims_[i]; }
  int64_t at(int64_t i) const { return dims_.at(i); }
  // In unsigned arithmetic: an empty shape may hold dims whose product overflows before its 0
  // (flow.zeros(2**62, 4, 0); UBSan found the signed overflow). Shapes of tensors that hold data
  // fit in int64 (checked at dispatch), where this is the same product.
  int64_t numel() const {
    uint64_t n = 1;
    for (auto d : dims_) n *= static_cast<uint64_t>(d);
    return static_cast<int64_t>(n);
  }
  const DimVector& dims() const { return dims_; }
  DimVector& mutable_dims() { return dims_; }
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string ToString() const;  // "[3,4]"

 private:
  DimVector dims_;
};

// Row-major strides of a contiguous tensor of `shape`.
DimVector ContiguousStrides(const Shape& shape);
bool IsContiguous(const Shape& shape, absl::Span<const int64_t> strides);
// "f32[3,4]"
std::string ShapeString(DType dtype, const Shape& shape);
// Broadcast two shapes NumPy-style; error names `op` and both shapes.
StatusOr<Shape> BroadcastShapes(const char* op, const Shape& a, const Shape& b);
// Wraps a possibly negative dim into [0, ndim); error names `op`.
StatusOr<int64_t> WrapDim(const char* op, int64_t dim, int64_t ndim);

}  // namespace oneflow_like
