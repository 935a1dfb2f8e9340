#include "oneflow_like/ops/common.h"

#include <algorithm>

namespace oneflow_like {
namespace ops {

Status InferSameAsInput(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  return Status();
}

StatusOr<std::vector<int64_t>> NormalizeDims(const char* op, const std::vector<int64_t>& dims,
                                             int64_t ndim) {
  std::vector<int64_t> r;
  if (dims.empty()) {
    for (int64_t i = 0; i < ndim; ++i) r.push_back(i);
    return r;
  }
  for (int64_t d : dims) {
    ASSIGN_OR_RETURN(int64_t w, WrapDim(op, d, ndim));
    if (ndim == 0) continue;
    if (std::find(r.begin(), r.end(), w) != r.end())
      return InvalidArgument("[%s] dim %d appears twice", op, d);
    r.push_back(w);
  }
  std::sort(r.begin(), r.end());
  return r;
}

Shape ReducedShape(const Shape& s, const std::vector<int64_t>& dims, bool keepdim) {
  DimVector out;
  for (int64_t i = 0; i < s.ndim(); ++i) {
    bool red = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!red)
      out.push_back(s[i]);
    else if (keepdim)
      out.push_back(1);
  }
  return Shape(out);
}

bool DifferentiableBackward(std::initializer_list<Tensor> ts) {
  if (!GradModeEnabled()) return false;
  for (const Tensor& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

Status DoubleBackwardUnsupported(const char* op) {
  return Unimplemented(
      "[%s] double backward is not supported: a gradient was requested through this backward op "
      "(autograd.grad/backward with create_graph=True, then differentiated again), and its own "
      "gradient is not implemented",
      op);
}

}  // namespace ops
}  // namespace oneflow_like
