#include "oneflow_like/base/blas_threads.h"

#include <cblas.h>

#include <mutex>

#include "oneflow_like/base/thread_pool.h"

// OpenBLAS (pthreads build) exports this; its fork handler uses it to stop the worker threads.
// Weak, so another BLAS without it still links.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace oneflow_like {

void InitBlasThreads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(IntraOpPool()->num_threads()); });
}

void ParkBlasThreads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

}  // namespace oneflow_like
