// The shape ops and hardtanh that no table row generates (expand, repeat: variadic in Python);
// ops_tables.cc has the generated ones, ops.cc the unary table and the operators.
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
