#include "compiler/codegen/prelude.h"

#include "compiler/codegen/fused_loop_emitter.h"

namespace oneflow_like::hlo::codegen {

std::string SharedPrelude() {
  return
      // Bitwise | (no short-circuit branch): the compiler emits compare + blend and vectorises;
      // with || a relu over random signs was a mispredicted branch per element (6x slower).
      "template <typename T> OFL_FN T ofl_max(T a, T b) { return ((a > b) | (a != a)) ? a : b; }\n"
      "template <typename T> OFL_FN T ofl_min(T a, T b) { return ((a < b) | (a != a)) ? a : b; }\n"
      "template <typename T> OFL_FN T ofl_sign(T x) { return x != x ? x : T((x > T(0)) - (x < "
      "T(0))); }\n"
      "template <typename T> OFL_FN T ofl_idiv(T a, T b) { return b == T(0) ? T(-1) : T(a / b); }\n"
      "template <typename T> OFL_FN T ofl_iabs(T a) { return a < T(0) ? T(-a) : a; }\n"
      // Wrapping i32/i64 arithmetic and logical right shifts (counter-based random numbers).
      "OFL_FN int32_t ofl_wadd(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); "
      "}\n"
      "OFL_FN int64_t ofl_wadd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); "
      "}\n"
      "OFL_FN int32_t ofl_wsub(int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); "
      "}\n"
      "OFL_FN int64_t ofl_wsub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); "
      "}\n"
      "OFL_FN int32_t ofl_wmul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); "
      "}\n"
      "OFL_FN int64_t ofl_wmul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); "
      "}\n"
      "OFL_FN int32_t ofl_shrl(int32_t a, int32_t s) { return s < 0 || s >= 32 ? 0 : "
      "int32_t(uint32_t(a) >> s); }\n"
      "OFL_FN int64_t ofl_shrl(int64_t a, int64_t s) { return s < 0 || s >= 64 ? 0 : "
      "int64_t(uint64_t(a) >> s); }\n"
      "OFL_FN int8_t ofl_shrl(int8_t a, int8_t s) { return s < 0 || s >= 8 ? 0 : int8_t(uint8_t(a) "
      ">> s); }\n"
      "OFL_FN uint8_t ofl_shrl(uint8_t a, uint8_t s) { return s >= 8 ? 0 : uint8_t(a >> s); }\n\n";
}

}  // namespace oneflow_like::hlo::codegen

namespace oneflow_like::hlo {

std::string KernelPrelude(KernelDialect dialect) {
  return (dialect == KernelDialect::kCpp ? codegen::CppPrelude() : codegen::CudaPrelude()) +
         codegen::SharedPrelude();
}

}  // namespace oneflow_like::hlo
