// Reduction family: the OpDefs of oneflow_like/opdefs/reduce.def (generated below), their
// gradient formulas and the functional entries. Kernels: kernels/cpu/reduce.cc, kernels/cuda.
#include "oneflow_like/ops/reduce.h"

#include <cmath>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/ternary.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/reduce.h"

namespace oneflow_like {
namespace {

Status InferReduce(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out, DType dtype) {
  auto r = opdefs::ReadAttrs<opdefs::ReduceAttrs>(a);
  for (int64_t d : r.dims)
    if (d < 0 || d >= std::max<int64_t>(in[0].ndim(), 1))
      return Internal("[reduce] dims not normalised");
  out->push_back(
      TensorMeta{ops::ReducedShape(in[0].shape(), r.dims, r.keepdim), dtype, in[0].device()});
  return Status();
}
Status Infer_same(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferReduce(in, a, out, in[0].dtype());
}
// Sums and products of integers/bools widen to int64.
Status Infer_widened(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferReduce(in, a, out, IsFloating(in[0].dtype()) ? in[0].dtype() : DType::kI64);
}
Status Infer_i64(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  return InferReduce(in, a, out, DType::kI64);
}
Status Infer_values_i64(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  RETURN_IF_ERROR(InferReduce(in, a, out, in[0].dtype()));
  out->push_back(TensorMeta{(*out)[0].shape, DType::kI64, in[0].device()});
  return Status();
}

// A reduction's output (or its gradient) with the reduced dims kept as size 1.
StatusOr<Tensor> KeepDims(const Tensor& t, const Tensor& x, const AttrMap& a) {
  auto r = opdefs::ReadAttrs<opdefs::ReduceAttrs>(a);
  if (r.keepdim) return t;
  return functional::Reshape(t, ops::ReducedShape(x.shape(), r.dims, true));
}
// The gradient of a reduction, broadcast back to the input's shape.
StatusOr<Tensor> ExpandGrad(const Tensor& g, const Tensor& x, const AttrMap& a) {
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(g, x, a));
  return functional::Expand(gk, x.shape());
}

// ---- the internal ops of the gradient formulas (the table's OFL_REDUCE_INTERNAL lines) ------

// The out column: the output has input 0's dtype and its shape (like_input), the attribute
// struct's `shape` (attr_shape) or the shape of input 1, the index (index_shape).
template <typename Attrs>
Status InferAttrShape(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  auto shape = opdefs::ReadAttrs<Attrs>(a).shape;
  out->push_back(TensorMeta{Shape(absl::MakeConstSpan(shape)), in[0].dtype(), in[0].device()});
  return Status();
}
Status InferIndexShape(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[1].shape(), in[0].dtype(), in[0].device()});
  return Status();
}
#define OFL_REDUCE_INFER_like_input(Attrs) ops::InferSameAsInput
#define OFL_REDUCE_INFER_attr_shape(Attrs) InferAttrShape<opdefs::Attrs>
#define OFL_REDUCE_INFER_index_shape(Attrs) InferIndexShape

// Declared here for the gradient formulas, defined with the table's other ops below.
// clang-format off
#define OFL_ATTRS(...)
#define OFL_REDUCE(...)
#define OFL_REDUCE_API(...)
#define OFL_REDUCE_INTERNAL(name, Name, ...) extern const OpDef k##Name;
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE_API
#undef OFL_REDUCE
#undef OFL_ATTRS
// clang-format on

// ---- gradient formulas (the table's grad column) -----------------------------------------

constexpr GradFn NoGrad = nullptr;

std::vector<int64_t> ShapeInts(const Tensor& t) {
  return std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end());
}

// reduce_index_scatter and reduce_index_gather: each one's gradient is the other at the same
// indices.
// The internal ops' grad column, where it says none: reduce_eq_mask is piecewise constant (no
// gradient is right); norm_backward's own gradient is not implemented, so a gradient required
// through it fails (NormGrad uses differentiable ops instead whenever it is to be differentiated).
template <const OpDef& Self>
GradFn InternalGrad(GradFn declared) {
  if (declared == nullptr && &Self == &kNormBackward) return &ops::NoDoubleBackward<Self>;
  return declared;
}

StatusOr<TensorList> IndexScatterGrad(const GradContext& c) {
  opdefs::IndexGatherAttrs a{opdefs::ReadAttrs<opdefs::IndexScatterAttrs>(c.attrs).dim};
  ASSIGN_OR_RETURN(Tensor g,
                   Dispatch1(kIndexGather, {c.grad_outputs[0], c.inputs[1]}, opdefs::ToAttrMap(a)));
  return TensorList{g, Tensor()};
}
StatusOr<TensorList> IndexGatherGrad(const GradContext& c) {
  opdefs::IndexScatterAttrs a{opdefs::ReadAttrs<opdefs::IndexGatherAttrs>(c.attrs).dim,
                              ShapeInts(c.inputs[0])};
  ASSIGN_OR_RETURN(
      Tensor g, Dispatch1(kIndexScatter, {c.grad_outputs[0], c.inputs[1]}, opdefs::ToAttrMap(a)));
  return TensorList{g, Tensor()};
}

StatusOr<TensorList> SumGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, ExpandGrad(c.grad_outputs[0], c.inputs[0], c.attrs));
  return TensorList{g};
}

// d prod / dx = prod / x (inputs with zeros give inf/nan there).
StatusOr<TensorList> ProdGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], c.inputs[0], c.attrs));
  ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], c.inputs[0], c.attrs));
  ASSIGN_OR_RETURN(Tensor go, functional::Mul(gk, ok));
  ASSIGN_OR_RETURN(Tensor g, functional::Div(go, c.inputs[0]));
  return TensorList{g};
}

// amax/amin: the gradient is shared evenly between the elements equal to the result.
StatusOr<TensorList> ExtremeGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor mask,
                   Dispatch1(kEqMask, {x, ok}, opdefs::ToAttrMap(opdefs::EqMaskAttrs{false})));
  ASSIGN_OR_RETURN(
      Tensor count,
      functional::Sum(mask, opdefs::ReadAttrs<opdefs::ReduceAttrs>(c.attrs).dims, true));
  ASSIGN_OR_RETURN(Tensor share, functional::Div(gk, count));
  ASSIGN_OR_RETURN(Tensor g, functional::Mul(share, mask));
  return TensorList{g};
}

// (values, indices) along one dim (max/min, nanmedian): the gradient goes to the selected index.
StatusOr<TensorList> IndexGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ik, KeepDims(c.outputs[1], x, c.attrs));
  auto dims = opdefs::ReadAttrs<opdefs::ReduceAttrs>(c.attrs).dims;
  opdefs::IndexScatterAttrs a{dims.empty() ? 0 : dims[0], ShapeInts(x)};
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kIndexScatter, {gk, ik}, opdefs::ToAttrMap(a)));
  return TensorList{g};
}

int64_t ReducedCount(const Tensor& x, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.ndim() == 0 ? 1 : x.dim(d);
  return n;
}

// d var / dx = 2 (x - mean) / (N - correction); d std = d var / (2 std).
StatusOr<TensorList> VarStdGrad(const GradContext& c, bool is_std) {
  const Tensor& x = c.inputs[0];
  auto a = opdefs::ReadAttrs<opdefs::VarAttrs>(c.attrs);
  double denom = static_cast<double>(ReducedCount(x, a.dims)) - a.correction;
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor mean, functional::Mean(x, a.dims, true));
  ASSIGN_OR_RETURN(Tensor d, functional::Sub(x, mean));
  if (is_std) {
    ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
    ASSIGN_OR_RETURN(gk, functional::Div(gk, ok));
  }
  ASSIGN_OR_RETURN(Tensor gd, functional::Mul(d, gk));
  ASSIGN_OR_RETURN(Tensor g, functional::MulScalar(gd, (is_std ? 1.0 : 2.0) / denom));
  return TensorList{g};
}
StatusOr<TensorList> VarGrad(const GradContext& c) {
  return VarStdGrad(c, false);
}
StatusOr<TensorList> StdGrad(const GradContext& c) {
  return VarStdGrad(c, true);
}

StatusOr<TensorList> NormGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  auto a = opdefs::ReadAttrs<opdefs::NormAttrs>(c.attrs);
  double p = a.p;
  if (p == 0) {
    ASSIGN_OR_RETURN(Tensor z, functional::ZerosLike(x));
    return TensorList{z};
  }
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
  if (std::isinf(p)) {  // sign(x) at the elements with |x| == norm, shared evenly
    ASSIGN_OR_RETURN(Tensor smask,
                     Dispatch1(kEqMask, {x, ok}, opdefs::ToAttrMap(opdefs::EqMaskAttrs{true})));
    ASSIGN_OR_RETURN(Tensor hits, functional::Mul(smask, smask));
    ASSIGN_OR_RETURN(Tensor count, functional::Sum(hits, a.dims, true));
    ASSIGN_OR_RETURN(Tensor share, functional::Div(gk, count));
    ASSIGN_OR_RETURN(Tensor g, functional::Mul(share, smask));
    return TensorList{g};
  }
  if (ops::DifferentiableBackward({gk, x, ok})) {
    // Double backward: sign(x) |x|^(p-1) / norm^(p-1) with differentiable ops (0 where the norm
    // is 0, as norm_backward gives; the norm is re-attached to this node by the engine).
    namespace F = functional;
    ASSIGN_OR_RETURN(Tensor zero, F::CompareScalar(F::CompareOp::kEq, ok, 0.0));
    ASSIGN_OR_RETURN(Tensor safe, F::WhereScalarInput(zero, 1.0, ok));
    ASSIGN_OR_RETURN(Tensor r, F::Div(x, safe));  // p == 2
    if (p != 2) {
      ASSIGN_OR_RETURN(Tensor ax, F::Abs(x));
      ASSIGN_OR_RETURN(Tensor sx, F::Sign(x));
      ASSIGN_OR_RETURN(Tensor num, F::PowScalar(ax, p - 1));
      ASSIGN_OR_RETURN(num, F::Mul(sx, num));
      ASSIGN_OR_RETURN(Tensor den, F::PowScalar(safe, p - 1));
      ASSIGN_OR_RETURN(r, F::Div(num, den));
    }
    ASSIGN_OR_RETURN(Tensor gr, F::Mul(gk, r));
    ASSIGN_OR_RETURN(Tensor g, F::WhereScalarInput(zero, 0.0, gr));
    return TensorList{g};
  }
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNormBackward, {x, ok, gk},
                                       opdefs::ToAttrMap(opdefs::NormBackwardAttrs{p})));
  return TensorList{g};
}

// d logsumexp / dx = exp(x - logsumexp).
StatusOr<TensorList> LogSumExpGrad(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  ASSIGN_OR_RETURN(Tensor gk, KeepDims(c.grad_outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor ok, KeepDims(c.outputs[0], x, c.attrs));
  ASSIGN_OR_RETURN(Tensor d, functional::Sub(x, ok));
  ASSIGN_OR_RETURN(Tensor e, functional::Exp(d));
  ASSIGN_OR_RETURN(Tensor g, functional::Mul(e, gk));
  return TensorList{g};
}

// ---- the table's ops --------------------------------------------------------------------

// The table's check column, on the normalised dims.
Status Check_any(const char*, const Tensor&, const std::vector<int64_t>&) {
  return Status();
}
Status Check_nonempty(const char* what, const Tensor& x, const std::vector<int64_t>& dims) {
  if (ReducedCount(x, dims) == 0)
    return InvalidArgument("[%s] cannot reduce over an empty dimension: got %s", what,
                           x.meta_string());
  return Status();
}
Status Check_float(const char* what, const Tensor& x, const std::vector<int64_t>&) {
  return CheckFloating(what, x);
}

// The op over normalised dims after the table's input check; `what` names the op in errors.
using CheckFn = Status (*)(const char*, const Tensor&, const std::vector<int64_t>&);
template <typename Attrs>
StatusOr<TensorList> RunOp(const OpDef& op, CheckFn check, const char* what, const Tensor& x,
                           Attrs a) {
  ASSIGN_OR_RETURN(a.dims, ops::NormalizeDims(what, a.dims, x.ndim()));
  RETURN_IF_ERROR(check(what, x, a.dims));
  return Dispatch(op, {x}, opdefs::ToAttrMap(a));
}

#define OFL_REDUCE_SAVE_IN_both true
#define OFL_REDUCE_SAVE_OUT_both true
#define OFL_REDUCE_SAVE_IN_inputs true
#define OFL_REDUCE_SAVE_OUT_inputs false
#define OFL_REDUCE_SAVE_IN_none false
#define OFL_REDUCE_SAVE_OUT_none false
#define OFL_REDUCE_STRIDED_strided true
#define OFL_REDUCE_STRIDED_contiguous false
// clang-format off
#define OFL_ATTRS(...)
#define OFL_REDUCE_API(...)
#define OFL_REDUCE(name, Name, Attrs, out, grad, save, layout, check)                  \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                                   \
                            .Grad(grad)                                              \
                            .StridedInputs(OFL_REDUCE_STRIDED_##layout)              \
                            .SaveInputs(OFL_REDUCE_SAVE_IN_##save)                   \
                            .SaveOutputs(OFL_REDUCE_SAVE_OUT_##save);                \
  StatusOr<TensorList> Run##Name(const char* what, const Tensor& x, opdefs::Attrs a) { \
    return RunOp(k##Name, Check_##check, what, x, std::move(a));                     \
  }
#define OFL_REDUCE_INTERNAL(name, Name, Attrs, out, grad, save, layout)                \
  const OpDef k##Name = OpSpec(#name, OFL_REDUCE_INFER_##out(Attrs))                   \
                            .Grad(InternalGrad<k##Name>(grad))                         \
                            .StridedInputs(OFL_REDUCE_STRIDED_##layout)                \
                            .SaveInputs(OFL_REDUCE_SAVE_IN_##save)                     \
                            .SaveOutputs(OFL_REDUCE_SAVE_OUT_##save);
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE
#undef OFL_REDUCE_API
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> First(StatusOr<TensorList> r) {
  if (!r.ok()) return r.status();
  return (*r)[0];
}
StatusOr<std::pair<Tensor, Tensor>> Pair(StatusOr<TensorList> r) {
  if (!r.ok()) return r.status();
  return std::make_pair((*r)[0], (*r)[1]);
}
opdefs::ReduceAttrs Over(std::vector<int64_t> dims, bool keepdim) {
  opdefs::ReduceAttrs a;
  a.dims = std::move(dims);
  a.keepdim = keepdim;
  return a;
}
}  // namespace

namespace functional {

StatusOr<Tensor> Sum(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (IsComplex(x.dtype())) return ComplexSum(x, std::move(dims), keepdim);
  return First(RunSum("sum", x, Over(std::move(dims), keepdim)));
}

StatusOr<Tensor> Mean(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (IsComplex(x.dtype())) return ComplexSum(x, std::move(dims), keepdim, /*mean=*/true);
  if (!IsFloating(x.dtype()))
    return TypeError("[mean] expected a floating point tensor, got %s", x.meta_string());
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims("mean", dims, x.ndim()));
  int64_t count = ReducedCount(x, nd);
  ASSIGN_OR_RETURN(Tensor s, First(RunSum("mean", x, Over(nd, keepdim))));
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
  if (!dims.empty() && IsComplex(x.dtype())) {
    ASSIGN_OR_RETURN(r, ComplexSum(x, dims, true));
  } else if (!dims.empty()) {
    ASSIGN_OR_RETURN(r, Dispatch1(kSum, {x}, opdefs::ToAttrMap(Over(dims, true))));
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
  if (IsComplex(x.dtype())) return ComplexProd(x, std::move(dims), keepdim);
  return First(RunProd("prod", x, Over(std::move(dims), keepdim)));
}

StatusOr<Tensor> Amax(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return First(RunAmax("amax", x, Over(std::move(dims), keepdim)));
}
StatusOr<Tensor> Amin(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return First(RunAmin("amin", x, Over(std::move(dims), keepdim)));
}
StatusOr<Tensor> Max(const Tensor& x) {
  return First(RunAmax("max", x, {}));
}
StatusOr<Tensor> Min(const Tensor& x) {
  return First(RunAmin("min", x, {}));
}

StatusOr<std::pair<Tensor, Tensor>> MaxDim(const Tensor& x, int64_t dim, bool keepdim) {
  return Pair(RunMaxDim("max", x, Over({dim}, keepdim)));
}
StatusOr<std::pair<Tensor, Tensor>> MinDim(const Tensor& x, int64_t dim, bool keepdim) {
  return Pair(RunMinDim("min", x, Over({dim}, keepdim)));
}

StatusOr<Tensor> Argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return First(RunArgmax("argmax", x,
                         Over(dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{}, keepdim)));
}
StatusOr<Tensor> Argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return First(RunArgmin("argmin", x,
                         Over(dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{}, keepdim)));
}

StatusOr<Tensor> Var(const Tensor& x, std::vector<int64_t> dims, double correction, bool keepdim) {
  return First(RunVar("var", x, {std::move(dims), keepdim, correction}));
}
StatusOr<Tensor> Std(const Tensor& x, std::vector<int64_t> dims, double correction, bool keepdim) {
  return First(RunStd("std", x, {std::move(dims), keepdim, correction}));
}

StatusOr<Tensor> Norm(const Tensor& x, double p, std::vector<int64_t> dims, bool keepdim) {
  if (std::isnan(p)) return InvalidArgument("[norm] p must be a number, got nan");
  return First(RunNorm("norm", x, {std::move(dims), keepdim, p}));
}

StatusOr<Tensor> LogSumExp(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return First(RunLogSumExp("logsumexp", x, Over(std::move(dims), keepdim)));
}

StatusOr<std::pair<Tensor, Tensor>> NanMedianDim(const Tensor& x, int64_t dim, bool keepdim) {
  return Pair(RunNanMedianDim("nanmedian", x, Over({dim}, keepdim)));
}
StatusOr<Tensor> NanMedian(const Tensor& x) {
  ASSIGN_OR_RETURN(Tensor flat, Reshape(x, Shape({x.numel()})));
  ASSIGN_OR_RETURN(auto r, NanMedianDim(flat, 0, false));
  return r.first;
}

}  // namespace functional
}  // namespace oneflow_like
