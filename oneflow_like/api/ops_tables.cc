// The C++ API's functions generated from the op tables (include/oneflow_like/table_sigs.h, which
// table_ops.h expands into declarations): each signature kind's body below, one out-of-line
// function per table row, calling the row's functional entry (oneflow_like/ops/<family>.h).
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "oneflow_like/opdefs/loss.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/conv.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/linalg.h"
#include "oneflow_like/ops/loss.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/nn_misc.h"
#include "oneflow_like/ops/norm.h"
#include "oneflow_like/ops/pool.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/rnn.h"
#include "oneflow_like/ops/scan.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/softmax.h"
#include "oneflow_like/ops/ternary.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace F = ::oneflow_like::functional;

// The public header's copies of the runtime's constants.
static_assert(int64_t{attrs::kReductionNone} == int64_t{opdefs::kReductionNone} &&
                  int64_t{attrs::kReductionMean} == int64_t{opdefs::kReductionMean} &&
                  int64_t{attrs::kReductionSum} == int64_t{opdefs::kReductionSum},
              "attrs:: reduction codes must be opdefs/loss.h's");
static_assert(static_cast<int>(attrs::DType::kF32) == static_cast<int>(RT::RTDType::kF32) &&
                  static_cast<int>(attrs::DType::kI64) == static_cast<int>(RT::RTDType::kI64) &&
                  static_cast<int>(attrs::DType::kBool) == static_cast<int>(RT::RTDType::kBool) &&
                  static_cast<int>(attrs::DType::kBF16) == static_cast<int>(RT::RTDType::kBF16),
              "attrs::DType must spell the runtime's DType");

// The default instances table_ops.h declares (one per attribute struct of the tables).
namespace attrs {
// clang-format off
#define OFL_ATTR(...)
#define OFL_ATTR_NAMED(...)
#define OFL_ATTRS(Struct, fields) const Struct k##Struct{};
#include "oneflow_like/table_attrs.h"
#undef OFL_ATTRS
#undef OFL_ATTR
#undef OFL_ATTR_NAMED
// clang-format on
}  // namespace attrs

namespace {
using RTPair = std::pair<RT::RTTensor, RT::RTTensor>;
using RTTriple = std::tuple<RT::RTTensor, RT::RTTensor, RT::RTTensor>;

// A functional entry's result as the public types.
Tensor Res(absl::StatusOr<RT::RTTensor>&& r) {
  return Out(Check(std::move(r)));
}
std::pair<Tensor, Tensor> Res(absl::StatusOr<RTPair>&& r) {
  RTPair p = Check(std::move(r));
  return {Out(std::move(p.first)), Out(std::move(p.second))};
}
std::tuple<Tensor, Tensor, Tensor> Res(absl::StatusOr<RTTriple>&& r) {
  RTTriple t = Check(std::move(r));
  return {Out(std::move(std::get<0>(t))), Out(std::move(std::get<1>(t))),
          Out(std::move(std::get<2>(t)))};
}
std::vector<Tensor> Res(absl::StatusOr<RT::RTTensorList>&& r) {
  return Out(Check(std::move(r)));
}
// The first of a (values, indices) result.
Tensor First(absl::StatusOr<RTPair>&& r) {
  return Out(std::move(Check(std::move(r)).first));
}

// ternary.def's and rnn.def's attribute structs, public -> runtime (same fields, both from the
// table).
// clang-format off
[[maybe_unused]] opdefs::NoAttrs Internal(const NoAttrs&) { return {}; }
#define OFL_ATTR(type, name, def) r.name = a.name;
#define OFL_ATTRS(Struct, fields)                                      \
  [[maybe_unused]] opdefs::Struct Internal(const attrs::Struct& a) {  \
    opdefs::Struct r;                                                  \
    (void)a;                                                           \
    fields return r;                                                   \
  }
#define OFL_TERNARY(...)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
// rnn.def's (the whole-sequence op takes its struct).
#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN_API(...)
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_RNN_API
#undef OFL_ATTRS
#undef OFL_ATTR
// clang-format on

std::optional<RT::RTDType> InDtype(std::optional<Dtype> d) {
  if (!d) return std::nullopt;
  return In(*d);
}
// `input`, cast to dtype first when one is given (reductions' dtype=).
RT::RTTensor WithDtype(const Tensor& input, std::optional<Dtype> dtype, const char* op) {
  const RT::RTTensor& x = A(input, op);
  if (!dtype || In(*dtype) == x.dtype()) return x;
  return Check(F::Cast(x, In(*dtype)));
}
// alpha * src (index_add's alpha).
RT::RTTensor Scaled(const Tensor& src, double alpha, const char* op) {
  const RT::RTTensor& s = A(src, op);
  if (alpha == 1.0) return s;
  return Check(F::MulScalar(s, alpha));
}
// scatter's reduce: "none" (false) or "add" (true).
bool IsAdd(const std::string& reduce, const char* op) {
  if (reduce == "add") return true;
  if (reduce == attrs::kScatterAttrs.reduce) return false;
  throw Error(Error::Kind::kValue,
              std::string("[") + op + "] reduce must be 'none' or 'add', got '" + reduce + "'");
}
std::vector<int64_t> OptDims(std::optional<int64_t> dim) {
  if (!dim) return {};
  return {*dim};
}
RT::DimVector InStrides(const IntList& s) {
  return RT::DimVector(s.begin(), s.end());
}
// as_strided's storage offset relative to the input's own (PyTorch counts from the storage).
int64_t RelativeOffset(const Tensor& input, std::optional<int64_t> storage_offset, const char* op) {
  int64_t own = A(input, op).offset();
  if (!storage_offset) return attrs::kAsStridedAttrs.offset;
  if (*storage_offset < own)
    throw Error(Error::Kind::kIndex, std::string("[") + op + "] storage_offset " +
                                         std::to_string(*storage_offset) +
                                         " precedes the input's offset " + std::to_string(own));
  return *storage_offset - own;
}
F::ConvOptions ConvOptions(const IntList& stride, const IntList& padding, const IntList& dilation,
                           int64_t groups) {
  F::ConvOptions o;
  o.stride = Dims(stride);
  o.padding = Dims(padding);
  o.dilation = Dims(dilation);
  o.groups = groups;
  return o;
}
// The window of every pool; max pools add dilation, avg pools count_include_pad and the divisor.
F::Pool2dOptions PoolWindow(const IntList& kernel_size, const IntList& stride,
                            const IntList& padding, bool ceil_mode) {
  F::Pool2dOptions o;
  o.kernel_size = Dims(kernel_size);
  o.stride = Dims(stride);
  o.padding = Dims(padding);
  o.ceil_mode = ceil_mode;
  return o;
}
F::Pool2dOptions MaxPoolOptions(const IntList& kernel_size, const IntList& stride,
                                const IntList& padding, const IntList& dilation, bool ceil_mode) {
  F::Pool2dOptions o = PoolWindow(kernel_size, stride, padding, ceil_mode);
  o.dilation = Dims(dilation);
  return o;
}
F::Pool2dOptions AvgPoolOptions(const IntList& kernel_size, const IntList& stride,
                                const IntList& padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor_override = std::nullopt) {
  F::Pool2dOptions o = PoolWindow(kernel_size, stride, padding, ceil_mode);
  o.count_include_pad = count_include_pad;
  if (divisor_override) o.divisor_override = *divisor_override;
  return o;
}
F::NllOptions NllOptions(const std::string& reduction, double label_smoothing, const Tensor& weight,
                         int64_t ignore_index) {
  F::NllOptions o;
  o.reduction = reduction;
  o.label_smoothing = label_smoothing;
  o.weight = In(weight);
  o.ignore_index = ignore_index;
  return o;
}
// random_()'s upper bound: 2^24 for floats (every integer below is exact), else 2^31.
int64_t RandomBound(const Tensor& t) {
  Dtype d = t.dtype();
  bool floating = d == kFloat16 || d == kBFloat16 || d == kFloat32 || d == kFloat64;
  return floating ? (int64_t(1) << 24) : (int64_t(1) << 31);
}

}  // namespace

// The bodies, by kind (table_sigs.h names the kind of each signature).
// clang-format off
#define OFL_B_res(...) return Res(__VA_ARGS__);
#define OFL_B_first(...) return First(__VA_ARGS__);
#define OFL_B_inplace(self, ...) Check(__VA_ARGS__); return self;
#define OFL_B_options(options, ...) return Finish(Check(__VA_ARGS__), options);
#define OFL_B_idx_fn_method(entry, args) return Res(F::entry args);
#define OFL_B_idx_method_(entry, args) Check(F::entry##_ args); return input;
#define OFL_B_idx_fn_method_reduce(entry, args, add) \
  return Res((add) ? F::entry##Add args : F::entry args);
#define OFL_B_idx_method__reduce(entry, args, add) \
  Check((add) ? F::entry##Add_ args : F::entry##_ args); return input;
#define OFL_D(...)
#define OFL_BODY(kind, ...) { OFL_B_##kind(__VA_ARGS__) }
#include "oneflow_like/table_sigs.h"
#undef OFL_D
#undef OFL_BODY
// clang-format on

}  // namespace v1
}  // namespace oneflow_like
