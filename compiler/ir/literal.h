// Literal: a host value of an HloShape for constants and the reference evaluator.
// Elements are doubles in logical row-major order whatever the layout (integers and pred too:
// exact up to 2^53). Tuples hold element literals.
#pragma once
#include <string>
#include <vector>

#include "compiler/ir/hlo_shape.h"

namespace oneflow_like::hlo {

struct Literal {
  HloShape shape;
  std::vector<double> data;       // arrays: numel() values
  std::vector<Literal> elements;  // tuples

  Literal() = default;
  explicit Literal(HloShape s);  // zero-filled
  Literal(HloShape s, std::vector<double> values);
  static Literal Scalar(DType t, double v);
  static Literal MakeTuple(std::vector<Literal> elements);

  double Get(absl::Span<const int64_t> index) const {
    return data[LinearIndex(shape.dims(), index)];
  }
  void Set(absl::Span<const int64_t> index, double v) {
    data[LinearIndex(shape.dims(), index)] = v;
  }
  // Rounds every value to what the element type can hold (float rounding, integer truncation).
  void RoundToType();
  bool IsAll(double v) const;  // every element equals v (arrays only)
  bool operator==(const Literal& o) const;
  // Values as printed inside `constant(...)`: `1.5` for scalars, `{1, 2, 3}` for arrays.
  std::string ValuesToString() const;

  // Physical bytes (by the shape's layout) <-> logical literal; only arrays.
  std::vector<char> ToBytes() const;
  static Literal FromBytes(const HloShape& shape, const void* bytes);
};

// Rounds v as stored in type t (f32 rounding, integer wrap/truncate, pred != 0).
double RoundToDType(DType t, double v);
// Shortest text that parses back to the same value of type t.
std::string FormatValue(DType t, double v);

}  // namespace oneflow_like::hlo
