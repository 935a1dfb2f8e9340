// Reduction family: schemas, gradient formulas and functional entries. Every reduction takes
// attrs dims (normalised, sorted) and keepdim; kernels are in kernels/cpu/reduce.cc.
#include "oneflow_like/ops/reduce.h"

#include <cmath>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/ternary.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {

Status InferReduce(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out,
                   DType dtype) {
  for (int64_t d : a.Ints("dims"))
    if (d < 0 || d >= std::max<int64_t>(in[0].ndim(), 1))
      return Internal("[reduce] dims not normalised");
  out->push_back(TensorMeta{ops::ReducedShape(in[0].shape(), a.Ints("dims"), a.Bool("keepdim")),
                            dtype, in[0].device()});
  return Status();
}
Status InferSameDtype(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferReduce(in, a, out, in[0].dtype());
}
// Sums and products of integers/bools widen to int64.
Status InferWidened(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferReduce(in, a, out, IsFloating(in[0].dtype()) ? in[0].dtype() : DType::kI64);
}
Status InferIndices(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferReduce(in, a, out, DType::kI64);
}
Status InferValuesIndices(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  RETURN_IF_ERROR(InferReduce(in, a, out, in[0].dtype()));
  out->push_back(TensorMeta{(*out)[0].shape, DType::kI64, in[0].device()});
  return Status();
}

// A reduction's output (or its gradient) with the reduced dims kept as size 1.
StatusOr<Tensor> KeepDims(const Tensor& t, const Tensor& x, const AttrMap& a) {
  if (a.Bool("keepdim")) return t;
  return functional::Reshape(t, ops::ReducedShape(x.shape(), a.Ints("dims"), true));
}
// The gradient of a reduction, broadcast back to the input's shape.
StatusOr<Tensor> ExpandGrad(const Tensor& g, const Tensor& x, const AttrMap& a) {
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(g, x, a));
  return functional::Expand(gk, x.shape());
}

// ---- internal ops used by gradient formulas -------------------------------------------

// reduce_eq_mask(x, m; signed): 1 where x == m (sign(x) where |x| == m when signed), else 0.
const OpDef kEqMask = OpSpec("reduce_eq_mask", ops::InferSameAsInput)
                          .StridedInputs()
                          .SaveInputs(false)
                          .SaveOutputs(false);

// reduce_index_scatter(g, idx; dim, shape): zeros of `shape` with g placed at idx along dim.
Status InferScatter(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  out->push_back(
      TensorMeta{Shape(absl::MakeConstSpan(a.Ints("shape"))), in[0].dtype(), in[0].device()});
  return Status();
}
// reduce_index_gather(x, idx; dim): x at idx along dim (the shape of idx).
Status InferGather(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[1].shape(), in[0].dtype(), in[0].device()});
  return Status();
}
extern const OpDef kIndexGather;
const OpDef kIndexScatter =
    OpSpec("reduce_index_scatter", InferScatter)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, Dispatch1(kIndexGather, {c.grad_outputs[0], c.inputs[1]},
                                               {{"dim", c.attrs.Int("dim")}}));
          return TensorList{g, Tensor()};
        })
        .SaveOutputs(false);
const OpDef kIndexGather =
    OpSpec("reduce_index_gather", InferGather)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          std::vector<int64_t> shape(c.inputs[0].shape().dims().begin(),
                                     c.inputs[0].shape().dims().end());
          ASSIGN_OR_RETURN(Tensor g, Dispatch1(kIndexScatter, {c.grad_outputs[0], c.inputs[1]},
                                               {{"dim", c.attrs.Int("dim")}, {"shape", shape}}));
          return TensorList{g, Tensor()};
        })
        .SaveOutputs(false);

// norm_backward(x, norm, g; p), norm and g with kept dims: the gradient of a finite-p norm.
const OpDef kNormBackward =
    OpSpec("norm_backward", ops::InferSameAsInput).SaveInputs(false).SaveOutputs(false);

// ---- the reductions -------------------------------------------------------------------

const OpDef kSum =
    OpSpec("sum", InferWidened)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, ExpandGrad(c.grad_outputs[0], c.inputs[0], c.attrs));
          return TensorList{g};
        })
        .StridedInputs()
        .SaveOutputs(false);

// d prod / dx = prod / x (inputs with zeros give inf/nan there).
const OpDef kProd =
    OpSpec("prod", InferWidened)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], c.inputs[0], c.attrs));
          ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], c.inputs[0], c.attrs));
          ASSIGN_OR_RETURN(Tensor go, functional::Mul(gk, ok));
          ASSIGN_OR_RETURN(Tensor g, functional::Div(go, c.inputs[0]));
          return TensorList{g};
        })
        .StridedInputs();

// amax/amin: the gradient is shared evenly between the elements equal to the result.
StatusOr<TensorList> ExtremeGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor mask, Dispatch1(kEqMask, {x, ok}, {{"signed", false}}));
  ASSIGN_OR_RETURN(Tensor count, functional::Sum(mask, c.attrs.Ints("dims"), true));
  ASSIGN_OR_RETURN(Tensor share, functional::Div(gk, count));
  ASSIGN_OR_RETURN(Tensor g, functional::Mul(share, mask));
  return TensorList{g};
}
const OpDef kAmax = OpSpec("amax", InferSameDtype).Grad(ExtremeGrad).StridedInputs();
const OpDef kAmin = OpSpec("amin", InferSameDtype).Grad(ExtremeGrad).StridedInputs();

// max/min along one dim: (values, indices); the gradient goes to the selected index.
StatusOr<TensorList> ArgExtremeGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ik, KeepDims(c.outputs[1], x, c.attrs));
  int64_t dim = c.attrs.Ints("dims").empty() ? 0 : c.attrs.Ints("dims")[0];
  std::vector<int64_t> shape(x.shape().dims().begin(), x.shape().dims().end());
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kIndexScatter, {gk, ik}, {{"dim", dim}, {"shape", shape}}));
  return TensorList{g};
}
const OpDef kMaxDim = OpSpec("max_dim", InferValuesIndices).Grad(ArgExtremeGrad).StridedInputs();
const OpDef kMinDim = OpSpec("min_dim", InferValuesIndices).Grad(ArgExtremeGrad).StridedInputs();
const OpDef kArgmax =
    OpSpec("argmax", InferIndices).StridedInputs().SaveInputs(false).SaveOutputs(false);
const OpDef kArgmin =
    OpSpec("argmin", InferIndices).StridedInputs().SaveInputs(false).SaveOutputs(false);

int64_t ReducedCount(const Tensor& x, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.ndim() == 0 ? 1 : x.dim(d);
  return n;
}

// d var / dx = 2 (x - mean) / (N - correction); d std = d var / (2 std).
StatusOr<TensorList> VarStdGrad(const GradContext& c, bool is_std) {
  const Tensor& x = c.inputs[0];
  const auto& dims = c.attrs.Ints("dims");
  double denom = static_cast<double>(ReducedCount(x, dims)) - c.attrs.Float("correction", 1.0);
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor mean, functional::Mean(x, dims, true));
  ASSIGN_OR_RETURN(Tensor d, functional::Sub(x, mean));
  if (is_std) {
    ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
    ASSIGN_OR_RETURN(gk, functional::Div(gk, ok));
  }
  ASSIGN_OR_RETURN(Tensor gd, functional::Mul(d, gk));
  ASSIGN_OR_RETURN(Tensor g, functional::MulScalar(gd, (is_std ? 1.0 : 2.0) / denom));
  return TensorList{g};
}
const OpDef kVar = OpSpec("var", InferSameDtype)
                       .Grad([](const GradContext& c) { return VarStdGrad(c, false); })
                       .StridedInputs()
                       .SaveOutputs(false);
const OpDef kStd = OpSpec("std", InferSameDtype)
                       .Grad([](const GradContext& c) { return VarStdGrad(c, true); })
                       .StridedInputs();

StatusOr<TensorList> NormGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  double p = c.attrs.Float("p", 2.0);
  if (p == 0) {
    ASSIGN_OR_RETURN(Tensor z, functional::ZerosLike(x));
    return TensorList{z};
  }
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
  if (std::isinf(p)) {  // sign(x) at the elements with |x| == norm, shared evenly
    ASSIGN_OR_RETURN(Tensor smask, Dispatch1(kEqMask, {x, ok}, {{"signed", true}}));
    ASSIGN_OR_RETURN(Tensor hits, functional::Mul(smask, smask));
    ASSIGN_OR_RETURN(Tensor count, functional::Sum(hits, c.attrs.Ints("dims"), true));
    ASSIGN_OR_RETURN(Tensor share, functional::Div(gk, count));
    ASSIGN_OR_RETURN(Tensor g, functional::Mul(share, smask));
    return TensorList{g};
  }
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNormBackward, {x, ok, gk}, {{"p", p}}));
  return TensorList{g};
}
const OpDef kNorm = OpSpec("norm", InferSameDtype).Grad(NormGrad).StridedInputs();

// d logsumexp / dx = exp(x - logsumexp).
const OpDef kLogSumExp = OpSpec("logsumexp", InferSameDtype)
                             .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                               const Tensor& x = c.inputs[0];
                               ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
                               ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
                               ASSIGN_OR_RETURN(Tensor d, functional::Sub(x, ok));
                               ASSIGN_OR_RETURN(Tensor e, functional::Exp(d));
                               ASSIGN_OR_RETURN(Tensor g, functional::Mul(e, gk));
                               return TensorList{g};
                             })
                             .StridedInputs();

// Runs `op` over normalised `dims`; `what` names the op in errors.
StatusOr<TensorList> Run(const OpDef& op, const char* what, const Tensor& x,
                         const std::vector<int64_t>& dims, bool keepdim, AttrMap attrs = {}) {
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims(what, dims, x.ndim()));
  attrs.Set("dims", nd).Set("keepdim", keepdim);
  return Dispatch(op, {x}, attrs);
}
StatusOr<Tensor> Run1(const OpDef& op, const char* what, const Tensor& x,
                      const std::vector<int64_t>& dims, bool keepdim, AttrMap attrs = {}) {
  ASSIGN_OR_RETURN(TensorList r, Run(op, what, x, dims, keepdim, std::move(attrs)));
  return r[0];
}

Status CheckNonEmpty(const char* what, const Tensor& x, const std::vector<int64_t>& dims) {
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims(what, dims, x.ndim()));
  if (ReducedCount(x, nd) == 0)
    return InvalidArgument("[%s] cannot reduce over an empty dimension: got %s", what,
                           x.meta_string());
  return Status();
}
}  // namespace

namespace functional {

StatusOr<Tensor> Sum(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return Run1(kSum, "sum", x, dims, keepdim);
}

StatusOr<Tensor> Mean(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (!IsFloating(x.dtype()))
    return TypeError("[mean] expected a floating point tensor, got %s", x.meta_string());
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims("mean", dims, x.ndim()));
  int64_t count = ReducedCount(x, nd);
  ASSIGN_OR_RETURN(Tensor s, Dispatch1(kSum, {x}, {{"dims", nd}, {"keepdim", keepdim}}));
  return MulScalar(s, count == 0 ? NAN : 1.0 / static_cast<double>(count));
}

StatusOr<Tensor> SumToShape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  int64_t lead = x.ndim() - shape.ndim();
  if (lead < 0)
    return InvalidArgument("[sum_to_shape] cannot reduce %s to %s", x.meta_string(),
                           shape.ToString());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (i < lead) {
      dims.push_back(i);
      continue;
    }
    int64_t want = shape[i - lead];
    if (want == 1 && x.dim(i) != 1)
      dims.push_back(i);
    else if (want != x.dim(i))
      return InvalidArgument("[sum_to_shape] cannot reduce %s to %s", x.meta_string(),
                             shape.ToString());
  }
  Tensor r = x;
  if (!dims.empty()) {
    ASSIGN_OR_RETURN(r, Dispatch1(kSum, {x}, {{"dims", dims}, {"keepdim", true}}));
  }
  return Reshape(r, shape);
}

StatusOr<Tensor> NanSum(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (!IsFloating(x.dtype())) return Sum(x, std::move(dims), keepdim);
  ASSIGN_OR_RETURN(Tensor nan, Compare(CompareOp::kNe, x, x));
  ASSIGN_OR_RETURN(Tensor zeroed, WhereScalarInput(nan, 0.0, x));
  return Sum(zeroed, std::move(dims), keepdim);
}

StatusOr<Tensor> Prod(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (x.dtype() == DType::kBool) {
    ASSIGN_OR_RETURN(Tensor i, Cast(x, DType::kI64));
    return Prod(i, dims, keepdim);
  }
  return Run1(kProd, "prod", x, dims, keepdim);
}

StatusOr<Tensor> Amax(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  RETURN_IF_ERROR(CheckNonEmpty("amax", x, dims));
  return Run1(kAmax, "amax", x, dims, keepdim);
}
StatusOr<Tensor> Amin(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  RETURN_IF_ERROR(CheckNonEmpty("amin", x, dims));
  return Run1(kAmin, "amin", x, dims, keepdim);
}

StatusOr<std::pair<Tensor, Tensor>> MaxDim(const Tensor& x, int64_t dim, bool keepdim) {
  RETURN_IF_ERROR(CheckNonEmpty("max", x, {dim}));
  ASSIGN_OR_RETURN(TensorList r, Run(kMaxDim, "max", x, {dim}, keepdim));
  return std::make_pair(r[0], r[1]);
}
StatusOr<std::pair<Tensor, Tensor>> MinDim(const Tensor& x, int64_t dim, bool keepdim) {
  RETURN_IF_ERROR(CheckNonEmpty("min", x, {dim}));
  ASSIGN_OR_RETURN(TensorList r, Run(kMinDim, "min", x, {dim}, keepdim));
  return std::make_pair(r[0], r[1]);
}

StatusOr<Tensor> Argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  std::vector<int64_t> dims = dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{};
  RETURN_IF_ERROR(CheckNonEmpty("argmax", x, dims));
  return Run1(kArgmax, "argmax", x, dims, keepdim);
}
StatusOr<Tensor> Argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  std::vector<int64_t> dims = dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{};
  RETURN_IF_ERROR(CheckNonEmpty("argmin", x, dims));
  return Run1(kArgmin, "argmin", x, dims, keepdim);
}

StatusOr<Tensor> Var(const Tensor& x, std::vector<int64_t> dims, double correction, bool keepdim) {
  RETURN_IF_ERROR(CheckFloating("var", x));
  return Run1(kVar, "var", x, dims, keepdim, {{"correction", correction}});
}
StatusOr<Tensor> Std(const Tensor& x, std::vector<int64_t> dims, double correction, bool keepdim) {
  RETURN_IF_ERROR(CheckFloating("std", x));
  return Run1(kStd, "std", x, dims, keepdim, {{"correction", correction}});
}

StatusOr<Tensor> Norm(const Tensor& x, double p, std::vector<int64_t> dims, bool keepdim) {
  RETURN_IF_ERROR(CheckFloating("norm", x));
  if (std::isnan(p)) return InvalidArgument("[norm] p must be a number, got nan");
  return Run1(kNorm, "norm", x, dims, keepdim, {{"p", p}});
}

StatusOr<Tensor> LogSumExp(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  RETURN_IF_ERROR(CheckFloating("logsumexp", x));
  return Run1(kLogSumExp, "logsumexp", x, dims, keepdim);
}

}  // namespace functional
}  // namespace oneflow_like
