#include "oneflow_like/base/shape.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_join.h"

namespace oneflow_like {

std::string Shape::ToString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

// a * b, or INT64_MAX where that overflows: an empty tensor may have dims whose product does not
// fit (flow.zeros(2**62, 4, 0)); its strides are never used to address memory (UBSan found the
// signed overflow here).
static int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

DimVector ContiguousStrides(const Shape& shape) {
  DimVector s(shape.ndim());
  int64_t acc = 1;
  for (int64_t i = shape.ndim() - 1; i >= 0; --i) {
    s[i] = acc;
    acc = SaturatingMul(acc, std::max<int64_t>(shape[i], 1));
  }
  return s;
}

bool IsContiguous(const Shape& shape, absl::Span<const int64_t> strides) {
  int64_t acc = 1;
  for (int64_t i = shape.ndim() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != acc) return false;
    acc = SaturatingMul(acc, shape[i]);
  }
  return true;
}

std::string ShapeString(DType dtype, const Shape& shape) {
  return absl::StrCat(DTypeName(dtype), shape.ToString());
}

StatusOr<Shape> BroadcastShapes(const char* op, const Shape& a, const Shape& b) {
  if (a == b) return a;
  int64_t n = std::max(a.ndim(), b.ndim());
  DimVector out(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.ndim() ? 1 : a[i - (n - a.ndim())];
    int64_t db = i < n - b.ndim() ? 1 : b[i - (n - b.ndim())];
    if (da != db && da != 1 && db != 1)
      return InvalidArgument("[%s] shapes cannot be broadcast: got %s and %s", op, a.ToString(),
                             b.ToString());
    out[i] = da == 1 ? db : da;
  }
  return Shape(std::move(out));
}

StatusOr<int64_t> WrapDim(const char* op, int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    return OutOfRange("[%s] dim %d out of range for a tensor of %d dims", op, dim, ndim);
  return dim < 0 ? dim + n : dim;
}

}  // namespace oneflow_like
