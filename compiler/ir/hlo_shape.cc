#include "compiler/ir/hlo_shape.h"

#include <functional>

#include "absl/strings/str_join.h"

namespace oneflow_like::hlo {

HloShape HloShape::Tuple(std::vector<HloShape> elements) {
  HloShape s;
  s.is_tuple_ = true;
  s.tuple_ = std::move(elements);
  return s;
}

HloShape HloShape::WithDefaultLayout(DType dtype, DimVector dims) {
  HloShape s(dtype, std::move(dims));
  s.SetDefaultLayout();
  return s;
}

int64_t HloShape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t HloShape::ByteSize() const {
  return is_tuple_ ? 0 : numel() * DTypeSize(dtype_);
}

DimVector DefaultMinorToMajor(int64_t rank) {
  DimVector m(rank);
  for (int64_t i = 0; i < rank; ++i) m[i] = rank - 1 - i;
  return m;
}

void HloShape::SetDefaultLayout() {
  if (is_tuple_) {
    for (auto& t : tuple_) t.SetDefaultLayout();
    return;
  }
  minor_to_major_ = DefaultMinorToMajor(rank());
}

bool HloShape::HasDefaultLayout() const {
  if (is_tuple_) {
    for (auto& t : tuple_)
      if (!t.HasDefaultLayout()) return false;
    return true;
  }
  return rank() == 0 || minor_to_major_ == DefaultMinorToMajor(rank());
}

bool HloShape::IsLayoutComplete() const {
  if (is_tuple_) {
    for (auto& t : tuple_)
      if (!t.IsLayoutComplete()) return false;
    return true;
  }
  return has_layout();
}

bool HloShape::Compatible(const HloShape& o) const {
  if (is_tuple_ != o.is_tuple_) return false;
  if (is_tuple_) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!tuple_[i].Compatible(o.tuple_[i])) return false;
    return true;
  }
  return dtype_ == o.dtype_ && dims_ == o.dims_;
}

bool HloShape::operator==(const HloShape& o) const {
  if (!Compatible(o)) return false;
  if (is_tuple_) {
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (tuple_[i] != o.tuple_[i]) return false;
    return true;
  }
  return rank() == 0 || minor_to_major_ == o.minor_to_major_;
}

std::string HloShape::ToString(bool print_layout) const {
  if (is_tuple_) {
    std::vector<std::string> parts;
    for (auto& t : tuple_) parts.push_back(t.ToString(print_layout));
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  std::string s = absl::StrCat(DTypeName(dtype_), "[", absl::StrJoin(dims_, ","), "]");
  if (print_layout && rank() > 0 && !minor_to_major_.empty()) {
    absl::StrAppend(&s, "{", absl::StrJoin(minor_to_major_, ","), "}");
  }
  return s;
}

DimVector PhysicalDims(const HloShape& s) {
  DimVector m2m = s.has_layout() ? s.minor_to_major() : DefaultMinorToMajor(s.rank());
  DimVector out(s.rank());
  for (int64_t i = 0; i < s.rank(); ++i) out[s.rank() - 1 - i] = s.dim(m2m[i]);
  return out;
}

int64_t LinearIndex(absl::Span<const int64_t> dims, absl::Span<const int64_t> index) {
  int64_t lin = 0;
  for (size_t i = 0; i < dims.size(); ++i) lin = lin * dims[i] + index[i];
  return lin;
}

int64_t PhysicalOffset(const HloShape& s, absl::Span<const int64_t> index) {
  if (s.rank() == 0) return 0;
  const DimVector& m2m =
      s.minor_to_major().empty() ? DefaultMinorToMajor(s.rank()) : s.minor_to_major();
  int64_t off = 0, stride = 1;
  for (int64_t d : m2m) {
    off += index[d] * stride;
    stride *= s.dim(d);
  }
  return off;
}

void ForEachIndex(absl::Span<const int64_t> dims, const std::function<bool(const DimVector&)>& fn) {
  for (int64_t d : dims)
    if (d == 0) return;
  DimVector idx(dims.size(), 0);
  while (true) {
    if (!fn(idx)) return;
    int64_t i = static_cast<int64_t>(dims.size()) - 1;
    for (; i >= 0; --i) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

}  // namespace oneflow_like::hlo
