// HloShape: element type + dims + optional layout (minor-to-major), or a tuple of shapes.
// Printed `f32[10,20,30]{2,0,1}`; a shape with no layout prints without braces; tuples `(a, b)`.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/shape.h"

namespace oneflow_like::hlo {

class HloShape {
 public:
  HloShape() = default;
  HloShape(DType dtype, DimVector dims) : dtype_(dtype), dims_(std::move(dims)) {}
  HloShape(DType dtype, std::initializer_list<int64_t> dims) : dtype_(dtype), dims_(dims) {}
  static HloShape Scalar(DType dtype) { return HloShape(dtype, DimVector{}); }
  static HloShape Tuple(std::vector<HloShape> elements);
  // Array shape with the default (row-major) layout {rank-1, ..., 0}.
  static HloShape WithDefaultLayout(DType dtype, DimVector dims);

  bool is_tuple() const { return is_tuple_; }
  bool is_array() const { return !is_tuple_; }
  DType dtype() const { return dtype_; }
  void set_dtype(DType t) { dtype_ = t; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const DimVector& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  DimVector& mutable_dims() { return dims_; }
  int64_t numel() const;
  int64_t ByteSize() const;  // arrays only; tuples 0 (they own no storage here)

  const std::vector<HloShape>& tuple_shapes() const { return tuple_; }
  std::vector<HloShape>& mutable_tuple_shapes() { return tuple_; }
  const HloShape& tuple_shape(int64_t i) const { return tuple_[i]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }

  // Layout: minor-to-major permutation of dims. Scalars always have one.
  bool has_layout() const { return rank() == 0 || !minor_to_major_.empty(); }
  const DimVector& minor_to_major() const { return minor_to_major_; }
  void set_minor_to_major(DimVector m2m) { minor_to_major_ = std::move(m2m); }
  void clear_layout() { minor_to_major_.clear(); }
  void SetDefaultLayout();        // recursively, for tuples too
  bool HasDefaultLayout() const;  // {rank-1, ..., 0}; true for scalars
  bool IsLayoutComplete() const;  // every array leaf has a layout

  // Same type and dims (and tuple structure); layouts ignored.
  bool Compatible(const HloShape& o) const;
  // Compatible and same layouts.
  bool operator==(const HloShape& o) const;
  bool operator!=(const HloShape& o) const { return !(*this == o); }
  std::string ToString(bool print_layout = true) const;

 private:
  DType dtype_ = DType::kF32;
  DimVector dims_;
  DimVector minor_to_major_;
  bool is_tuple_ = false;
  std::vector<HloShape> tuple_;
};

DimVector DefaultMinorToMajor(int64_t rank);
// Physical dims of `s` in major-to-minor order (what the bytes look like row-major).
DimVector PhysicalDims(const HloShape& s);
// Row-major linear index of `index` in `dims`.
int64_t LinearIndex(absl::Span<const int64_t> dims, absl::Span<const int64_t> index);
// Linear offset (in elements) of logical `index` in storage laid out by `s`'s layout.
int64_t PhysicalOffset(const HloShape& s, absl::Span<const int64_t> index);
// Calls fn(index) for every index of `dims` in row-major order; returns early if fn returns false.
void ForEachIndex(absl::Span<const int64_t> dims, const std::function<bool(const DimVector&)>& fn);

}  // namespace oneflow_like::hlo
