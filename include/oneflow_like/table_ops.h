// Functional ops generated from the op tables (oneflow_like/opdefs/<family>.def) other than the
// unary one (ops.h has that): every row of a table's Python API (OFL_<FAMILY>_API, or the api
// column of binary.def / ternary.def) becomes a C++ function here, with the C++ signature of its
// sig (or api) column. table_sigs.h has one macro per signature kind; a new table row therefore
// appears in C++ with no new line of C++. Defaults come from the tables' attribute structs,
// expanded below into `oneflow_like::attrs` (public types only). Functions returning two or three
// results return std::pair / std::tuple (Python's namedtuples, libtorch's tuples).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "oneflow_like/tensor.h"

namespace oneflow_like {
inline namespace v1 {
// The tables' attribute structs with their defaults, as the tables write them. Only the defaults
// are read here (the library converts arguments to the runtime's structs).
namespace attrs {
using Ints = std::vector<int64_t>;
using NoAttrs = ::oneflow_like::v1::NoAttrs;
// The tables' dtype spellings (the runtime's DType) for their defaults.
struct DType {
  constexpr DType(Dtype d) : value(d) {}              // NOLINT
  constexpr operator Dtype() const { return value; }  // NOLINT
  static constexpr Dtype kBool = Dtype::kBool, kU8 = Dtype::kUInt8, kI8 = Dtype::kInt8,
                         kI32 = Dtype::kInt32, kI64 = Dtype::kInt64, kF16 = Dtype::kFloat16,
                         kBF16 = Dtype::kBFloat16, kF32 = Dtype::kFloat32, kF64 = Dtype::kFloat64;
  Dtype value;
};
// loss.def's reduction codes (opdefs/loss.h; the library checks they agree) and their names.
enum : int64_t { kReductionNone = 0, kReductionMean = 1, kReductionSum = 2 };
inline const char* reduction_name(int64_t r) {
  return r == kReductionNone ? "none" : r == kReductionSum ? "sum" : "mean";
}

// clang-format off
#define OFL_ATTR(type, name, def) type name = def;
#define OFL_ATTR_NAMED(type, field, name, def) type field = def;
#define OFL_ATTRS(Struct, fields) struct Struct { fields };
#define OFL_BINARY(...)
#define OFL_BINARY_SCALAR(...)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#define OFL_TERNARY(...)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#define OFL_REDUCE(...)
#define OFL_REDUCE_INTERNAL(...)
#define OFL_REDUCE_API(...)
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE_API
#define OFL_SCAN(...)
#define OFL_SCAN_GRAD(...)
#define OFL_SCAN_API(...)
#include "oneflow_like/opdefs/scan.def"
#undef OFL_SCAN
#undef OFL_SCAN_GRAD
#undef OFL_SCAN_API
#define OFL_INDEX(...)
#define OFL_INDEX_API(...)
#include "oneflow_like/opdefs/index.def"
#undef OFL_INDEX
#undef OFL_INDEX_API
#define OFL_SHAPE(...)
#define OFL_SHAPE_API(...)
#include "oneflow_like/opdefs/shape.def"
#undef OFL_SHAPE
#undef OFL_SHAPE_API
#define OFL_COPY(...)
#define OFL_COPY_API(...)
#include "oneflow_like/opdefs/copy.def"
#undef OFL_COPY
#undef OFL_COPY_API
#define OFL_CREATION(...)
#define OFL_CREATION_API(...)
#include "oneflow_like/opdefs/creation.def"
#undef OFL_CREATION
#undef OFL_CREATION_API
#define OFL_RANDOM(...)
#define OFL_RANDOM_API(...)
#include "oneflow_like/opdefs/random.def"
#undef OFL_RANDOM
#undef OFL_RANDOM_API
#define OFL_LINALG(...)
#define OFL_LINALG_API(...)
#include "oneflow_like/opdefs/linalg.def"
#undef OFL_LINALG
#undef OFL_LINALG_API
#define OFL_MATMUL(...)
#define OFL_MATMUL_API(...)
#include "oneflow_like/opdefs/matmul.def"
#undef OFL_MATMUL
#undef OFL_MATMUL_API
#define OFL_CONV(...)
#define OFL_CONV_GRAD(...)
#define OFL_CONV_API(...)
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV
#undef OFL_CONV_GRAD
#undef OFL_CONV_API
#define OFL_POOL(...)
#define OFL_POOL_GRAD(...)
#define OFL_POOL_API(...)
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL
#undef OFL_POOL_GRAD
#undef OFL_POOL_API
#define OFL_NORM(...)
#define OFL_NORM_GRAD(...)
#define OFL_NORM_API(...)
#include "oneflow_like/opdefs/norm.def"
#undef OFL_NORM
#undef OFL_NORM_GRAD
#undef OFL_NORM_API
#define OFL_SOFTMAX(...)
#define OFL_SOFTMAX_GRAD(...)
#define OFL_SOFTMAX_API(...)
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX_API
#define OFL_LOSS(...)
#define OFL_LOSS_GRAD(...)
#define OFL_LOSS_API(...)
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS
#undef OFL_LOSS_GRAD
#undef OFL_LOSS_API
#define OFL_NN_MISC(...)
#define OFL_NN_MISC_API(...)
#include "oneflow_like/opdefs/nn_misc.def"
#undef OFL_NN_MISC
#undef OFL_NN_MISC_API
#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_API(...)
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_API
#undef OFL_ATTRS
#undef OFL_ATTR
#undef OFL_ATTR_NAMED
// clang-format on
}  // namespace attrs

// The generated functions: declared with their defaults (OFL_D); the library includes the same
// file to define them.
// clang-format off
#define OFL_D(...) = __VA_ARGS__
#define OFL_BODY(...) ;
#include "oneflow_like/table_sigs.h"
#undef OFL_D
#undef OFL_BODY
// clang-format on

}  // namespace v1
}  // namespace oneflow_like
