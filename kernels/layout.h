// Layout helpers shared by the CPU and CUDA kernels (host code only): broadcast views, the
// (outer, d, inner) split around a dim, and the BLAS operand layout of a strided matrix.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/kernel.h"

namespace oneflow_like {
namespace kernels {

// The view of `v` broadcast to `shape` (stride 0 on broadcast dims); shapes were checked by the
// schema.
inline TensorView BroadcastTo(const TensorView& v, const Shape& shape) {
  TensorView r = v;
  int64_t n = shape.ndim(), off = n - v.shape.ndim();
  r.shape = shape;
  r.strides.assign(n, 0);
  for (int64_t i = 0; i < v.shape.ndim(); ++i)
    r.strides[i + off] = v.shape[i] == 1 && shape[i + off] != 1 ? 0 : v.strides[i];
  return r;
}

// `s` viewed as (outer, d, inner) around `dim` (softmax, norms); a 0-d shape is (1, 1, 1).
struct DimLayout {
  int64_t outer = 1, d = 1, inner = 1;
};
inline DimLayout LayoutOf(const Shape& s, int64_t dim) {
  DimLayout l;
  if (s.ndim() == 0) return l;
  for (int64_t i = 0; i < dim; ++i) l.outer *= s[i];
  l.d = s[dim];
  for (int64_t i = dim + 1; i < s.ndim(); ++i) l.inner *= s[i];
  return l;
}

// A row-major rows x cols matrix with element strides (rs, cs) as a row-major BLAS operand:
// `trans` and leading dimension `ld`; false: pack it first. (cuBLAS, column-major, reads the
// same operand as its transpose with the same flags.)
inline bool BlasLayout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool* trans,
                       int64_t* ld) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = std::max<int64_t>(cols, 1);
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) {
    *trans = false;
    *ld = rs;
    return true;
  }
  if (rows == 1 || cols == 1) return false;
  if (rs == 1 && cs >= rows) {
    *trans = true;
    *ld = cs;
    return true;
  }
  return false;
}

}  // namespace kernels
}  // namespace oneflow_like
