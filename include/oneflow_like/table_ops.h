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
// The tables' attribute structs with their defaults, as the tables write them, and one default
// instance of each (kTopkAttrs, ...; defined in the library) that the functions' default arguments
// read, so that no call builds a struct.
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
#define OFL_ATTRS(Struct, fields) struct Struct { fields }; extern const Struct k##Struct;
#include "oneflow_like/table_attrs.h"
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
