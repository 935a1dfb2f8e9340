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
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return Out(F::Narrow(A(x, "narrow"), dim, start, length));
}
Tensor flip(const Tensor& x, const IntList& dims) {
  return Out(F::Flip(A(x, "flip"), Dims(dims)));
}
Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims) {
  return Out(F::Roll(A(x, "roll"), Dims(shifts), Dims(dims)));
}
Tensor tril(const Tensor& x, int64_t d) {
  return Out(F::Tril(A(x, "tril"), d));
}
Tensor triu(const Tensor& x, int64_t d) {
  return Out(F::Triu(A(x, "triu"), d));
}
Tensor pad(const Tensor& x, const IntList& pads, const std::string& mode, double value) {
  return Out(F::Pad(A(x, "pad"), Dims(pads), mode, value));
}
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim) {
  return Out(Check(F::SplitEvery(A(x, "split"), size, dim)));
}
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  return Out(Check(F::Chunk(A(x, "chunk"), chunks, dim)));
}
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  return Out(Check(F::Unbind(A(x, "unbind"), dim)));
}

// ---- Indexing.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return Out(F::Scatter(A(x, "scatter"), dim, A(index, "scatter"), A(src, "scatter")));
}
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return Out(
      F::ScatterAdd(A(x, "scatter_add"), dim, A(index, "scatter_add"), A(src, "scatter_add")));
}
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return Out(F::IndexAdd(A(x, "index_add"), dim, A(index, "index_add"), A(src, "index_add")));
}
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  return Out(F::IndexPut(A(x, "index_put"), In(indices), A(values, "index_put"), accumulate));
}
Tensor masked_select(const Tensor& x, const Tensor& mask) {
  return Out(F::MaskedSelect(A(x, "masked_select"), A(mask, "masked_select")));
}
Tensor nonzero(const Tensor& x) {
  return Out(F::Nonzero(A(x, "nonzero")));
}

// ---- Reductions with indices, statistics.
Tensor std(const Tensor& x, const IntList& dims, double correction, bool keepdim) {
  return Out(F::Std(A(x, "std"), Dims(dims), correction, keepdim));
}
Tensor norm(const Tensor& x, double p, const IntList& dims, bool keepdim) {
  return Out(F::Norm(A(x, "norm"), p, Dims(dims), keepdim));
}
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  auto r = Check(F::MaxDim(A(x, "max"), dim, keepdim));
  return {Out(r.first), Out(r.second)};
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  auto r = Check(F::MinDim(A(x, "min"), dim, keepdim));
  return {Out(r.first), Out(r.second)};
}

// ---- Elementwise leftovers.
#define OFL_API_BINARY(name, Name)                 \
  Tensor name(const Tensor& a, const Tensor& b) {  \
    return Out(F::Name(A(a, #name), A(b, #name))); \
  }
OFL_API_BINARY(logical_xor, LogicalXor)
OFL_API_BINARY(bitwise_and, BitwiseAnd)
OFL_API_BINARY(bitwise_or, BitwiseOr)
OFL_API_BINARY(bitwise_xor, BitwiseXor)
OFL_API_BINARY(fmod, Fmod)
#undef OFL_API_BINARY
Tensor hardtanh(const Tensor& x, double lo, double hi) {
  return Out(F::Hardtanh(A(x, "hardtanh"), lo, hi));
}

// ---- nn.functional leftovers.
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& w, const Tensor& b, double eps) {
  return Out(F::GroupNorm(A(x, "group_norm"), groups, In(w), In(b), eps));
}
Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& size) {
  return Out(F::AdaptiveAvgPool2d(A(x, "adaptive_avg_pool2d"), Dims(size)));
}
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, double dropout_p, bool is_causal) {
  const char* op = "scaled_dot_product_attention";
  return Out(
      F::ScaledDotProductAttention(A(q, op), A(k, op), A(v, op), In(mask), dropout_p, is_causal));
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::string& reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  return Out(F::BinaryCrossEntropyWithLogits(A(input, op), A(target, op), RT::RTTensor(),
                                             RT::RTTensor(), reduction));
}

}  // namespace v1
}  // namespace oneflow_like
