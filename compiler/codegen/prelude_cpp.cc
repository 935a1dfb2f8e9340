#include "compiler/codegen/prelude.h"

namespace oneflow_like::hlo::codegen {

std::string CppPrelude() {
  return "#include <cmath>\n#include <cstdint>\n#include <cstdlib>\n#include <limits>\n#define "
         "OFL_FN static inline\n"
         "template <typename T> OFL_FN T ofl_nan() { return std::numeric_limits<T>::quiet_NaN(); "
         "}\n"
         "template <typename T> OFL_FN T ofl_inf() { return std::numeric_limits<T>::infinity(); }\n"
         // exp for float, branch-free so loops vectorise: n = round(x log2 e), r = x - n ln2 (ln2
         // in two parts), exp(r) by a degree-6 polynomial on [-ln2/2, ln2/2] (Cephes expf
         // coefficients), times 2^n as two exponent-field scalings so results reach denormals.
         // Max error 1 ulp against exp in double over [-110, 90]; NaN -> NaN, inf -> inf, -inf ->
         // 0.
         "OFL_FN float ofl_expf(float x) {\n"
         "  const float xc = x != x ? 0.f : (x < -104.f ? -104.f : (x > 89.f ? 89.f : x));\n"
         "  const float n = __builtin_floorf(xc * 1.44269504088896341f + 0.5f);\n"
         "  float r = xc - n * 0.693359375f;\n"
         "  r = r - n * -2.12194440e-4f;\n"
         "  float p = 1.9875691500e-4f;\n"
         "  p = p * r + 1.3981999507e-3f;\n"
         "  p = p * r + 8.3334519073e-3f;\n"
         "  p = p * r + 4.1665795894e-2f;\n"
         "  p = p * r + 1.6666665459e-1f;\n"
         "  p = p * r + 5.0000001201e-1f;\n"
         "  p = p * r * r + r + 1.0f;\n"
         "  const int32_t ni = static_cast<int32_t>(n), n1 = ni / 2, n2 = ni - n1;\n"
         "  const uint32_t b1 = static_cast<uint32_t>(n1 + 127) << 23, b2 = "
         "static_cast<uint32_t>(n2 + 127) << 23;\n"
         "  float s1, s2;\n"
         "  __builtin_memcpy(&s1, &b1, 4);\n"
         "  __builtin_memcpy(&s2, &b2, 4);\n"
         "  const float v = p * s1 * s2;\n"
         "  return x != x ? x : (x > 88.72283905206835f ? __builtin_inff() : v);\n"
         "}\n";
}

}  // namespace oneflow_like::hlo::codegen
