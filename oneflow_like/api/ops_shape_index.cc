// Shape, indexing, reduction-with-indices and the remaining nn.functional ops of the C++ API
// (ops.cc has the unary table, elementwise, reductions and the digits models' ops).
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/loss.h"
#include "oneflow_like/ops/nn_misc.h"
#include "oneflow_like/ops/norm.h"
#include "oneflow_like/ops/pool.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/unary.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace F = ::oneflow_like::functional;

// ---- Shapes.
Tensor expand(const Tensor& x, const IntList& shape) {
  RT::RTTensor t = A(x, "expand");
  IntList s = shape;  // -1 keeps the input's size (aligned from the right)
  int64_t lead = static_cast<int64_t>(s.size()) - t.ndim();
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i)
    if (s[i] == -1 && i >= lead) s[i] = t.dim(i - lead);
  return Out(F::Expand(t, InShape(s)));
}
Tensor repeat(const Tensor& x, const IntList& r) {
  return Out(F::Repeat(A(x, "repeat"), Dims(r)));
}
Tensor hardtanh(const Tensor& x, double lo, double hi) {
  return Out(F::Hardtanh(A(x, "hardtanh"), lo, hi));
}

}  // namespace v1
}  // namespace oneflow_like
