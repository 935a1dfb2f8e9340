#include "compiler/ir/literal.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_join.h"

namespace oneflow_like::hlo {

Literal::Literal(HloShape s) : shape(std::move(s)) {
  if (shape.is_array()) data.assign(shape.numel(), 0.0);
}

Literal::Literal(HloShape s, std::vector<double> values)
    : shape(std::move(s)), data(std::move(values)) {}

Literal Literal::Scalar(DType t, double v) {
  return Literal(HloShape::Scalar(t), {RoundToDType(t, v)});
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  std::vector<HloShape> shapes;
  for (auto& e : elements) shapes.push_back(e.shape);
  Literal l;
  l.shape = HloShape::Tuple(std::move(shapes));
  l.elements = std::move(elements);
  return l;
}

double RoundToDType(DType t, double v) {
  switch (t) {
    case DType::kBool: return v != 0 ? 1 : 0;
    case DType::kU8:
      return std::isfinite(v) ? static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)))
                              : 0;
    case DType::kI8:
      return std::isfinite(v) ? static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)))
                              : 0;
    case DType::kI16:
      return std::isfinite(v) ? static_cast<double>(static_cast<int16_t>(static_cast<int64_t>(v)))
                              : 0;
    case DType::kI32:
      return std::isfinite(v) ? static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)))
                              : 0;
    case DType::kI64: return std::isfinite(v) ? static_cast<double>(static_cast<int64_t>(v)) : 0;
    case DType::kF16: return static_cast<float>(float16(static_cast<float>(v)));
    case DType::kBF16: return static_cast<float>(bfloat16(static_cast<float>(v)));
    case DType::kF32: return static_cast<double>(static_cast<float>(v));
    case DType::kF64: return v;
    default: break;  // complex and the limited dtypes never reach the compiler (op.cc refuses)
  }
  return v;
}

void Literal::RoundToType() {
  for (auto& e : elements) e.RoundToType();
  if (shape.is_array())
    for (double& v : data) v = RoundToDType(shape.dtype(), v);
}

bool Literal::IsAll(double v) const {
  if (!shape.is_array()) return false;
  for (double x : data)
    if (x != v) return false;
  return true;
}

bool Literal::operator==(const Literal& o) const {
  if (!shape.Compatible(o.shape) || elements.size() != o.elements.size()) return false;
  for (size_t i = 0; i < elements.size(); ++i)
    if (!(elements[i] == o.elements[i])) return false;
  if (data.size() != o.data.size()) return false;
  for (size_t i = 0; i < data.size(); ++i) {
    bool both_nan = std::isnan(data[i]) && std::isnan(o.data[i]);
    if (!both_nan && data[i] != o.data[i]) return false;
  }
  return true;
}

std::string FormatValue(DType t, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (t == DType::kBool) return v != 0 ? "true" : "false";
  if (IsIntegral(t)) return absl::StrCat(static_cast<int64_t>(v));
  char buf[64];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (RoundToDType(t, std::strtod(buf, nullptr)) == v) break;
  }
  return buf;
}

std::string Literal::ValuesToString() const {
  if (shape.rank() == 0 && data.size() == 1) return FormatValue(shape.dtype(), data[0]);
  std::vector<std::string> parts;
  parts.reserve(data.size());
  for (double v : data) parts.push_back(FormatValue(shape.dtype(), v));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

namespace {
template <typename T>
void StoreAs(double v, char* p) {
  T x = static_cast<T>(v);
  std::memcpy(p, &x, sizeof(T));
}
template <typename T>
double LoadAs(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return static_cast<double>(static_cast<float>(x));
}
template <typename T>
double LoadExact(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return static_cast<double>(x);
}
}  // namespace

std::vector<char> Literal::ToBytes() const {
  const int64_t es = DTypeSize(shape.dtype());
  std::vector<char> out(shape.numel() * es);
  int64_t i = 0;
  ForEachIndex(shape.dims(), [&](const DimVector& idx) {
    char* p = out.data() + PhysicalOffset(shape, idx) * es;
    double v = data[i++];
    switch (shape.dtype()) {
      case DType::kBool: StoreAs<bool>(v != 0, p); break;
      case DType::kU8: StoreAs<uint8_t>(v, p); break;
      case DType::kI8: StoreAs<int8_t>(v, p); break;
      case DType::kI16: StoreAs<int16_t>(v, p); break;
      case DType::kI32: StoreAs<int32_t>(v, p); break;
      case DType::kI64: StoreAs<int64_t>(v, p); break;
      case DType::kF16: {
        float16 h(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kBF16: {
        bfloat16 h(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kF32: StoreAs<float>(v, p); break;
      case DType::kF64: StoreAs<double>(v, p); break;
      default: break;  // complex and the limited dtypes never reach the compiler
    }
    return true;
  });
  return out;
}

Literal Literal::FromBytes(const HloShape& shape, const void* bytes) {
  Literal l(shape);
  const int64_t es = DTypeSize(shape.dtype());
  const char* base = static_cast<const char*>(bytes);
  int64_t i = 0;
  ForEachIndex(shape.dims(), [&](const DimVector& idx) {
    const char* p = base + PhysicalOffset(shape, idx) * es;
    double& v = l.data[i++];
    switch (shape.dtype()) {
      case DType::kBool: v = LoadExact<bool>(p); break;
      case DType::kU8: v = LoadExact<uint8_t>(p); break;
      case DType::kI8: v = LoadExact<int8_t>(p); break;
      case DType::kI16: v = LoadExact<int16_t>(p); break;
      case DType::kI32: v = LoadExact<int32_t>(p); break;
      case DType::kI64: v = LoadExact<int64_t>(p); break;
      case DType::kF16: v = LoadAs<float16>(p); break;
      case DType::kBF16: v = LoadAs<bfloat16>(p); break;
      case DType::kF32: v = LoadExact<float>(p); break;
      case DType::kF64: v = LoadExact<double>(p); break;
      default: break;  // complex and the limited dtypes never reach the compiler
    }
    return true;
  });
  return l;
}

}  // namespace oneflow_like::hlo
