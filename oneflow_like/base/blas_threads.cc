#include "oneflow_like/base/blas_threads.h"

#include <cblas.h>

#include <mutex>

namespace oneflow_like {

void InitBlasThreads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

// At load time too, so no BLAS call of this process (one that bypasses cpu::Sgemm included)
// ever starts OpenBLAS's pool. OpenBLAS, a dependency, is initialised before this library.
[[maybe_unused]] const bool kSingleThreaded = (InitBlasThreads(), true);

}  // namespace oneflow_like
