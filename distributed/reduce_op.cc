#include "distributed/reduce_op.h"

#include <algorithm>
#include <cstdint>

namespace oneflow_like {
namespace distributed {

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "SUM";
    case ReduceOp::kAvg: return "AVG";
    case ReduceOp::kProduct: return "PRODUCT";
    case ReduceOp::kMin: return "MIN";
    case ReduceOp::kMax: return "MAX";
  }
  return "?";
}

namespace {
// S: storage type, C: the type the arithmetic runs in (float for the 16-bit floats).
template <typename S, typename C, typename F>
ReduceFn Elementwise(F f) {
  return [f](void* out, const void* a, const void* b, size_t n) {
    S* o = static_cast<S*>(out);
    const S* x = static_cast<const S*>(a);
    const S* y = static_cast<const S*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = S(f(C(x[i]), C(y[i])));
  };
}

template <typename S, typename C>
ReduceFn ForOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return Elementwise<S, C>([](C a, C b) { return a + b; });
    case ReduceOp::kProduct: return Elementwise<S, C>([](C a, C b) { return a * b; });
    case ReduceOp::kMin: return Elementwise<S, C>([](C a, C b) { return std::min(a, b); });
    case ReduceOp::kMax: return Elementwise<S, C>([](C a, C b) { return std::max(a, b); });
  }
  return nullptr;
}

ReduceFn ForBool(ReduceOp op) {
  const bool any = op == ReduceOp::kSum || op == ReduceOp::kMax;
  return [any](void* out, const void* a, const void* b, size_t n) {
    auto* o = static_cast<uint8_t*>(out);
    auto* x = static_cast<const uint8_t*>(a);
    auto* y = static_cast<const uint8_t*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = any ? (x[i] | y[i]) != 0 : (x[i] & y[i]) != 0;
  };
}

template <typename S>
void Divide(void* data, size_t n, int d) {
  S* p = static_cast<S*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = S(float(p[i]) / float(d));
}
}  // namespace

StatusOr<ReduceFn> MakeReduceFn(DType dtype, ReduceOp op, const char* op_name) {
  if (op == ReduceOp::kAvg && !IsFloating(dtype))
    return TypeError("[%s] ReduceOp.AVG needs a floating tensor: got %s", op_name,
                     DTypeLongName(dtype));
  switch (dtype) {
    case DType::kBool: return ForBool(op);
    case DType::kU8: return ForOp<uint8_t, uint8_t>(op);
    case DType::kI8: return ForOp<int8_t, int8_t>(op);
    case DType::kI16: return ForOp<int16_t, int16_t>(op);
    case DType::kI32: return ForOp<int32_t, int32_t>(op);
    case DType::kI64: return ForOp<int64_t, int64_t>(op);
    case DType::kF16: return ForOp<float16, float>(op);
    case DType::kBF16: return ForOp<bfloat16, float>(op);
    case DType::kF32: return ForOp<float, float>(op);
    case DType::kF64: return ForOp<double, double>(op);
    default: break;  // complex and the limited dtypes
  }
  return TypeError("[%s] unsupported dtype %s", op_name, DTypeLongName(dtype));
}

void DivideInPlace(void* data, DType dtype, size_t n, int divisor) {
  switch (dtype) {
    case DType::kF16: return Divide<float16>(data, n, divisor);
    case DType::kBF16: return Divide<bfloat16>(data, n, divisor);
    case DType::kF32: return Divide<float>(data, n, divisor);
    case DType::kF64: {
      double* p = static_cast<double*>(data);
      for (size_t i = 0; i < n; ++i) p[i] /= divisor;
      return;
    }
    default: return;
  }
}

}  // namespace distributed
}  // namespace oneflow_like
