#include "device/cpu/omp_threads.h"

#include <omp.h>

#include "oneflow_like/base/intra_op_threads.h"

namespace oneflow_like {
namespace cpu {

void UseIntraOpThreadsForOpenMP() {
  thread_local int applied = 0;
  const int want = IntraOpThreads();
  if (applied != want) {
    omp_set_num_threads(want);
    applied = want;
  }
}

}  // namespace cpu
}  // namespace oneflow_like
