// Scan and ordering family: the OpDefs of oneflow_like/opdefs/scan.def (generated below from the
// table's out, grad and save columns, with their Run<Name> entries), their gradient formulas and
// the functional entries. Every op works on lines along one normalised `dim`; kernels are in
// kernels/cpu/scan.cc.
#include "oneflow_like/ops/scan.h"

#include <utility>
#include <vector>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/scan.h"

namespace oneflow_like {
namespace {
namespace F = functional;

using opdefs::CumsumAttrs;
using opdefs::ScanDimAttrs;
using opdefs::SortAttrs;
using opdefs::TopkAttrs;

// ---- the table's out column ---------------------------------------------------------------------

Status InferValuesIndices(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  out->push_back(TensorMeta{in[0].shape(), DType::kI64, in[0].device()});
  return Status();
}

// topk: (values, indices) with k along dim.
Status InferTopk(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const TopkAttrs a = opdefs::ReadAttrs<TopkAttrs>(m);
  std::vector<int64_t> dims(in[0].shape().dims().begin(), in[0].shape().dims().end());
  if (!dims.empty()) dims[a.dim] = a.k;
  Shape s(absl::MakeConstSpan(dims));
  out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
  out->push_back(TensorMeta{s, DType::kI64, in[0].device()});
  return Status();
}

#define OFL_SCAN_INFER_same ops::InferSameAsInput
#define OFL_SCAN_INFER_values_indices InferValuesIndices
#define OFL_SCAN_INFER_topk InferTopk

// ---- the backward ops (generated from scan.def) -------------------------------------------------

// cumprod_grad(x, out, g; dim): exact with zeros in x (no division by a zero), O(n) per line.
// logcumsumexp_grad(x, out, g; dim): dx_i = sum_{j>=i} g_j exp(x_i - out_j), by a stable reverse
// recurrence.
// clang-format off
#define OFL_ATTRS(...)
#define OFL_SCAN(...)
#define OFL_SCAN_API(...)
#define OFL_SCAN_GRAD(name, Name, Attrs)                                                   \
  const OpDef k##Name =                                                                    \
      OpSpec(#name, ops::InferSameAsInput).Grad(&ops::NoDoubleBackward<k##Name>).SaveInputs(false).SaveOutputs(false); \
  StatusOr<Tensor> Run##Name(const Tensor& x, const Tensor& out, const Tensor& g,          \
                             const opdefs::Attrs& a) {                                     \
    return Dispatch1(k##Name, {x, out, g}, opdefs::ToAttrMap(a));                          \
  }
#include "oneflow_like/opdefs/scan.def"
#undef OFL_SCAN_GRAD
#undef OFL_SCAN
// clang-format on

// ---- gradient formulas (the table's grad column) ------------------------------------------------

// Declared here, defined after the OpDefs they dispatch.
StatusOr<TensorList> CumsumGradFn(const GradContext& c);

// cumprod / logcumsumexp: their backward op on (x, out, g).
StatusOr<TensorList> CumprodGradFn(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, RunCumprodGrad(c.inputs[0], c.outputs[0], c.grad_outputs[0],
                                            opdefs::ReadAttrs<ScanDimAttrs>(c.attrs)));
  return TensorList{g};
}
StatusOr<TensorList> LogCumSumExpGradFn(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, RunLogCumSumExpGrad(c.inputs[0], c.outputs[0], c.grad_outputs[0],
                                                 opdefs::ReadAttrs<ScanDimAttrs>(c.attrs)));
  return TensorList{g};
}

// The length of the input's lines along dim: topk's attribute n; the gradient's own elsewhere.
template <typename A>
int64_t LineLength(const A&, int64_t grad_size) {
  return grad_size;
}
int64_t LineLength(const TopkAttrs& a, int64_t) {
  return a.n;
}

// The gradient of an op whose values are x gathered at `indices` along dim: scatter-add into
// zeros of x's shape (the gradient's shape with the line length along dim).
template <typename A>
StatusOr<TensorList> GatheredGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  const A a = opdefs::ReadAttrs<A>(c.attrs);
  std::vector<int64_t> dims(g.shape().dims().begin(), g.shape().dims().end());
  if (!dims.empty()) dims[a.dim] = LineLength(a, dims[a.dim]);
  ASSIGN_OR_RETURN(Tensor z, F::Zeros(Shape(absl::MakeConstSpan(dims)), g.dtype(), g.device()));
  ASSIGN_OR_RETURN(Tensor dx, F::ScatterAdd(z, a.dim, c.outputs[1], g));
  return TensorList{dx};
}

// ---- the OpDefs and Run<Name> (generated from scan.def) -----------------------------------------

#define OFL_SCAN_SAVE_IN_both true
#define OFL_SCAN_SAVE_OUT_both true
#define OFL_SCAN_SAVE_IN_outputs false
#define OFL_SCAN_SAVE_OUT_outputs true
#define OFL_SCAN_SAVE_IN_none false
#define OFL_SCAN_SAVE_OUT_none false
std::pair<Tensor, Tensor> Pair(TensorList r) {
  return std::make_pair(r[0], r[1]);
}
// Run<Name>(x, attrs): one tensor (out `same`) or the (values, indices) pair.
#define OFL_SCAN_RUN_ONE(Name, Attrs)                                   \
  StatusOr<Tensor> Run##Name(const Tensor& x, const opdefs::Attrs& a) { \
    return Dispatch1(k##Name, {x}, opdefs::ToAttrMap(a));               \
  }
#define OFL_SCAN_RUN_PAIR(Name, Attrs)                                                     \
  StatusOr<std::pair<Tensor, Tensor>> Run##Name(const Tensor& x, const opdefs::Attrs& a) { \
    ASSIGN_OR_RETURN(TensorList r, Dispatch(k##Name, {x}, opdefs::ToAttrMap(a)));          \
    return Pair(std::move(r));                                                             \
  }
#define OFL_SCAN_RUN_same(Name, Attrs) OFL_SCAN_RUN_ONE(Name, Attrs)
#define OFL_SCAN_RUN_values_indices(Name, Attrs) OFL_SCAN_RUN_PAIR(Name, Attrs)
#define OFL_SCAN_RUN_topk(Name, Attrs) OFL_SCAN_RUN_PAIR(Name, Attrs)
// clang-format off
#define OFL_SCAN_GRAD(...)
#define OFL_SCAN(name, Name, Attrs, out, grad, save)                    \
  const OpDef k##Name = OpSpec(#name, OFL_SCAN_INFER_##out)             \
                            .Grad(grad)                                 \
                            .SaveInputs(OFL_SCAN_SAVE_IN_##save)        \
                            .SaveOutputs(OFL_SCAN_SAVE_OUT_##save);     \
  OFL_SCAN_RUN_##out(Name, Attrs)
#include "oneflow_like/opdefs/scan.def"
#undef OFL_SCAN
#undef OFL_SCAN_GRAD
#undef OFL_SCAN_API
#undef OFL_ATTRS
// clang-format on

// cumsum's gradient is the running sum the other way.
StatusOr<TensorList> CumsumGradFn(const GradContext& c) {
  CumsumAttrs a = opdefs::ReadAttrs<CumsumAttrs>(c.attrs);
  a.reverse = !a.reverse;
  ASSIGN_OR_RETURN(Tensor g, RunCumsum(c.grad_outputs[0], a));
  return TensorList{g};
}

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

ScanDimAttrs AtDim(int64_t dim) {
  ScanDimAttrs a;
  a.dim = dim;
  return a;
}

// topk's attributes: k of the line's `n` elements along dim, largest or smallest first.
TopkAttrs TopkOf(int64_t dim, int64_t k, bool largest, int64_t n) {
  TopkAttrs a;
  a.dim = dim;
  a.k = k;
  a.largest = largest;
  a.n = n;
  return a;
}

}  // namespace

namespace functional {

StatusOr<Tensor> Cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cumsum", dim, x.ndim()));
  if (IsComplex(x.dtype()) && (!dtype || *dtype == x.dtype())) return ComplexCumsum(x, d);
  ASSIGN_OR_RETURN(Tensor t, ScanInput("cumsum", x, dtype));
  CumsumAttrs a;
  a.dim = d;
  return RunCumsum(t, a);
}

StatusOr<Tensor> Cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cumprod", dim, x.ndim()));
  if (IsComplex(x.dtype()) && (!dtype || *dtype == x.dtype())) return ComplexCumprod(x, d);
  ASSIGN_OR_RETURN(Tensor t, ScanInput("cumprod", x, dtype));
  return RunCumprod(t, AtDim(d));
}

StatusOr<Tensor> LogCumSumExp(const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckFloating("logcumsumexp", x));
  RETURN_IF_ERROR(CheckOrderable("logcumsumexp", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("logcumsumexp", dim, x.ndim()));
  return RunLogCumSumExp(x, AtDim(d));
}

StatusOr<std::pair<Tensor, Tensor>> Cummax(const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckOrderable("cummax", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cummax", dim, x.ndim()));
  return RunCummax(x, AtDim(d));
}

StatusOr<std::pair<Tensor, Tensor>> Cummin(const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckOrderable("cummin", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cummin", dim, x.ndim()));
  return RunCummin(x, AtDim(d));
}

StatusOr<std::pair<Tensor, Tensor>> Sort(const Tensor& x, int64_t dim, bool descending) {
  RETURN_IF_ERROR(CheckOrderable("sort", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("sort", dim, x.ndim()));
  SortAttrs a;
  a.dim = d;
  a.descending = descending;
  return RunSort(x, a);
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
  return RunTopk(x, TopkOf(d, k, largest, size));
}

StatusOr<std::pair<Tensor, Tensor>> Kthvalue(const Tensor& x, int64_t k, int64_t dim,
                                             bool keepdim) {
  RETURN_IF_ERROR(CheckOrderable("kthvalue", x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim("kthvalue", dim, x.ndim()));
  int64_t size = x.ndim() == 0 ? 1 : x.dim(d);
  if (k < 1 || k > size)
    return OutOfRange("[kthvalue] k (%d) out of range for dim %d of size %d (input %s)", k, dim,
                      size, x.meta_string());
  ASSIGN_OR_RETURN(auto r, RunTopk(x, TopkOf(d, k, false, size)));
  if (x.ndim() == 0) return r;
  ASSIGN_OR_RETURN(Tensor v, Narrow(r.first, d, k - 1, 1));
  ASSIGN_OR_RETURN(Tensor i, Narrow(r.second, d, k - 1, 1));
  if (!keepdim) {
    ASSIGN_OR_RETURN(v, Squeeze(v, std::vector<int64_t>{d}));
    ASSIGN_OR_RETURN(i, Squeeze(i, std::vector<int64_t>{d}));
  }
  return std::make_pair(v, i);
}

}  // namespace functional
}  // namespace oneflow_like
