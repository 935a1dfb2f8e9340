// Reduction family: schemas, gradient formulas and functional entries.
#include "oneflow_like/ops/reduce.h"

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {

Status InferReduce(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out, DType dtype) {
  for (int64_t d : a.Ints("dims"))
    if (d < 0 || d >= std::max<int64_t>(in[0].ndim(), 1)) return Internal("[reduce] dims not normalised");
  out->push_back(TensorMeta{ops::ReducedShape(in[0].shape(), a.Ints("dims"), a.Bool("keepdim")), dtype, in[0].device()});
  return Status();
}

// The gradient of a reduction, broadcast back to the input's shape.
StatusOr<Tensor> ExpandGrad(const Tensor& g, const Tensor& x, const AttrMap& a) {
  Tensor gk = g;
  if (!a.Bool("keepdim")) {
    ASSIGN_OR_RETURN(gk, functional::Reshape(g, ops::ReducedShape(x.shape(), a.Ints("dims"), true)));
  }
  return functional::Expand(gk, x.shape());
}

// sum(x; dims (normalised, sorted), keepdim). Integer/bool inputs sum in int64.
const OpDef kSum{"sum",
                 [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
                   return InferReduce(in, a, out, IsFloating(in[0].dtype()) ? in[0].dtype() : DType::kI64);
                 },
                 [](const GradContext& c) -> StatusOr<TensorList> {
                   ASSIGN_OR_RETURN(Tensor g, ExpandGrad(c.grad_outputs[0], c.inputs[0], c.attrs));
                   return TensorList{g};
                 },
                 nullptr, /*strided_inputs=*/true, false, true, false};

}  // namespace

namespace functional {

StatusOr<Tensor> Sum(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims("sum", dims, x.ndim()));
  return Dispatch1(kSum, {x}, {{"dims", nd}, {"keepdim", keepdim}});
}

StatusOr<Tensor> Mean(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (!IsFloating(x.dtype())) return TypeError("[mean] expected a floating point tensor, got %s", x.meta_string());
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims("mean", dims, x.ndim()));
  int64_t count = 1;
  for (int64_t d : nd) count *= x.ndim() == 0 ? 1 : x.dim(d);
  ASSIGN_OR_RETURN(Tensor s, Dispatch1(kSum, {x}, {{"dims", nd}, {"keepdim", keepdim}}));
  return MulScalar(s, 1.0 / static_cast<double>(std::max<int64_t>(count, 1)));
}

StatusOr<Tensor> SumToShape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  int64_t lead = x.ndim() - shape.ndim();
  if (lead < 0) return InvalidArgument("[sum_to_shape] cannot reduce %s to %s", x.meta_string(), shape.ToString());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (i < lead) { dims.push_back(i); continue; }
    int64_t want = shape[i - lead];
    if (want == 1 && x.dim(i) != 1) dims.push_back(i);
    else if (want != x.dim(i))
      return InvalidArgument("[sum_to_shape] cannot reduce %s to %s", x.meta_string(), shape.ToString());
  }
  Tensor r = x;
  if (!dims.empty()) { ASSIGN_OR_RETURN(r, Dispatch1(kSum, {x}, {{"dims", dims}, {"keepdim", true}})); }
  return Reshape(r, shape);
}

}  // namespace functional
}  // namespace oneflow_like
