// Scan and ordering family: schemas, gradient formulas and functional entries. Every op works on
// lines along one normalised `dim` (attr "dim"); kernels are in kernels/cpu/scan.cc.
#include "oneflow_like/ops/scan.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {
namespace F = functional;

Status InferValuesIndices(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  out->push_back(TensorMeta{in[0].shape(), DType::kI64, in[0].device()});
  return Status();
}

// The gradient of an op whose values are x gathered at `indices` along dim: scatter-add into
// zeros of x's shape (the gradient's shape with attr "n", topk's line length, along dim).
StatusOr<TensorList> GatheredGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  int64_t dim = c.attrs.Int("dim");
  std::vector<int64_t> dims(g.shape().dims().begin(), g.shape().dims().end());
  if (!dims.empty()) dims[dim] = c.attrs.Int("n", dims[dim]);
  ASSIGN_OR_RETURN(Tensor z, F::Zeros(Shape(absl::MakeConstSpan(dims)), g.dtype(), g.device()));
  ASSIGN_OR_RETURN(Tensor dx, F::ScatterAdd(z, dim, c.outputs[1], g));
  return TensorList{dx};
}

// cumsum(x; dim, reverse): running sums (from the end when reverse). Its gradient is the running
// sum the other way.
const OpDef kCumsum =
    OpSpec("cumsum", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, Dispatch1(kCumsum, {c.grad_outputs[0]},
                                               {{"dim", c.attrs.Int("dim")},
                                                {"reverse", !c.attrs.Bool("reverse")}}));
          return TensorList{g};
        })
        .SaveInputs(false)
        .SaveOutputs(false);

// cumprod_grad(x, out, g; dim): exact with zeros in x (no division by a zero), O(n) per line.
const OpDef kCumprodGrad = OpSpec("cumprod_grad", ops::InferSameAsInput);
const OpDef kCumprod =
    OpSpec("cumprod", ops::InferSameAsInput).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(Tensor g,
                       Dispatch1(kCumprodGrad, {c.inputs[0], c.outputs[0], c.grad_outputs[0]},
                                 {{"dim", c.attrs.Int("dim")}}));
      return TensorList{g};
    });

// logcumsumexp_grad(x, out, g; dim): dx_i = sum_{j>=i} g_j exp(x_i - out_j), by a stable
// reverse recurrence.
const OpDef kLogCumSumExpGrad = OpSpec("logcumsumexp_grad", ops::InferSameAsInput);
const OpDef kLogCumSumExp =
    OpSpec("logcumsumexp", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(
              Tensor g, Dispatch1(kLogCumSumExpGrad, {c.inputs[0], c.outputs[0], c.grad_outputs[0]},
                                  {{"dim", c.attrs.Int("dim")}}));
          return TensorList{g};
        });

// cummax/cummin(x; dim) -> (values, indices); sort(x; dim, descending) -> (values, indices).
const OpDef kCummax = OpSpec("cummax", InferValuesIndices).Grad(GatheredGrad).SaveInputs(false);
const OpDef kCummin = OpSpec("cummin", InferValuesIndices).Grad(GatheredGrad).SaveInputs(false);
const OpDef kSort = OpSpec("sort", InferValuesIndices).Grad(GatheredGrad).SaveInputs(false);

// topk(x; dim, k, largest) -> (values, indices), k along dim, sorted best first.
const OpDef kTopk =
    OpSpec("topk",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             std::vector<int64_t> dims(in[0].shape().dims().begin(), in[0].shape().dims().end());
             if (!dims.empty()) dims[a.Int("dim")] = a.Int("k");
             Shape s(absl::MakeConstSpan(dims));
             out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
             out->push_back(TensorMeta{s, DType::kI64, in[0].device()});
             return Status();
           })
        .Grad(GatheredGrad)
        .SaveInputs(false);

// f16/bf16 compute in f32 (Dispatch); nothing to reject here.
Status CheckOrderable(const char*, const Tensor&) {
  return Status();
}

// Integer and bool inputs of cumsum/cumprod accumulate in int64 (PyTorch's promotion).
StatusOr<Tensor> ScanInput(const char* op, const Tensor& x, std::optional<DType> dtype) {
  Tensor t = x;
  if (dtype) {
    ASSIGN_OR_RETURN(t, F::Cast(x, *dtype));
  } else if (!IsFloating(x.dtype())) {
    ASSIGN_OR_RETURN(t, F::Cast(x, DType::kI64));
  }
  RETURN_IF_ERROR(CheckOrderable(op, t));
  return t;
}

StatusOr<std::pair<Tensor, Tensor>> Pair(StatusOr<TensorList> r) {
  RETURN_IF_ERROR(r.status());
  return std::make_pair((*r)[0], (*r)[1]);
}

}  // namespace

namespace functional {

StatusOr<Tensor> Cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cumsum", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor t, ScanInput("cumsum", x, dtype));
  return Dispatch1(kCumsum, {t}, {{"dim", d}, {"reverse", false}});
}

StatusOr<Tensor> Cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cumprod", dim, x.ndim()));
  ASSIGN_OR_RETURN(Tensor t, ScanInput("cumprod", x, dtype));
  return Dispatch1(kCumprod, {t}, {{"dim", d}});
}

StatusOr<Tensor> LogCumSumExp(const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckFloating("logcumsumexp", x));
  RETURN_IF_ERROR(CheckOrderable("logcumsumexp", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("logcumsumexp", dim, x.ndim()));
  return Dispatch1(kLogCumSumExp, {x}, {{"dim", d}});
}

StatusOr<std::pair<Tensor, Tensor>> Cummax(const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckOrderable("cummax", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cummax", dim, x.ndim()));
  return Pair(Dispatch(kCummax, {x}, {{"dim", d}}));
}

StatusOr<std::pair<Tensor, Tensor>> Cummin(const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckOrderable("cummin", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cummin", dim, x.ndim()));
  return Pair(Dispatch(kCummin, {x}, {{"dim", d}}));
}

StatusOr<std::pair<Tensor, Tensor>> Sort(const Tensor& x, int64_t dim, bool descending) {
  RETURN_IF_ERROR(CheckOrderable("sort", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("sort", dim, x.ndim()));
  return Pair(Dispatch(kSort, {x}, {{"dim", d}, {"descending", descending}}));
}

StatusOr<Tensor> Argsort(const Tensor& x, int64_t dim, bool descending) {
  ASSIGN_OR_RETURN(auto r, Sort(x, dim, descending));
  return r.second;
}

StatusOr<std::pair<Tensor, Tensor>> Topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                         bool sorted) {
  (void)sorted;  // the k results always come back sorted (allowed when sorted=False)
  RETURN_IF_ERROR(CheckOrderable("topk", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("topk", dim, x.ndim()));
  int64_t size = x.ndim() == 0 ? 1 : x.dim(d);
  if (k < 0 || k > size)
    return OutOfRange("[topk] k (%d) out of range for dim %d of size %d (input %s)", k, dim, size,
                      x.meta_string());
  return Pair(Dispatch(kTopk, {x}, {{"dim", d}, {"k", k}, {"largest", largest}, {"n", size}}));
}

StatusOr<std::pair<Tensor, Tensor>> Kthvalue(const Tensor& x, int64_t k, int64_t dim,
                                             bool keepdim) {
  RETURN_IF_ERROR(CheckOrderable("kthvalue", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("kthvalue", dim, x.ndim()));
  int64_t size = x.ndim() == 0 ? 1 : x.dim(d);
  if (k < 1 || k > size)
    return OutOfRange("[kthvalue] k (%d) out of range for dim %d of size %d (input %s)", k, dim,
                      size, x.meta_string());
  ASSIGN_OR_RETURN(TensorList r,
                   Dispatch(kTopk, {x}, {{"dim", d}, {"k", k}, {"largest", false}, {"n", size}}));
  if (x.ndim() == 0) return std::make_pair(r[0], r[1]);
  ASSIGN_OR_RETURN(Tensor v, Narrow(r[0], d, k - 1, 1));
  ASSIGN_OR_RETURN(Tensor i, Narrow(r[1], d, k - 1, 1));
  if (!keepdim) {
    ASSIGN_OR_RETURN(v, Squeeze(v, std::vector<int64_t>{d}));
    ASSIGN_OR_RETURN(i, Squeeze(i, std::vector<int64_t>{d}));
  }
  return std::make_pair(v, i);
}

}  // namespace functional
}  // namespace oneflow_like
