#include "oneflow_like/base/blas_threads.h"

#include <cblas.h>

#include <mutex>

namespace oneflow_like {

void InitBlasThreads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

}  // namespace oneflow_like
