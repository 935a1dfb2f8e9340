#include "compiler/codegen/prelude.h"

namespace oneflow_like::hlo::codegen {

std::string CudaPrelude() {
  return "typedef long long int64_t; typedef int int32_t; typedef signed char int8_t; typedef "
         "unsigned char uint8_t;\n"
         "typedef unsigned long long uint64_t; typedef unsigned int uint32_t;\n"
         "#define OFL_FN static __device__ inline\n"
         "template <typename T> OFL_FN T ofl_nan() { return "
         "T(__longlong_as_double(0x7ff8000000000000LL)); }\n"
         "template <typename T> OFL_FN T ofl_inf() { return "
         "T(__longlong_as_double(0x7ff0000000000000LL)); }\n";
}

}  // namespace oneflow_like::hlo::codegen
