// torch.set_num_threads / get_num_threads: how many threads run one CPU kernel. It sizes
// IntraOpPool() (the caller counts as one) and the OpenMP team of the oneDNN primitives
// (device/cpu/omp_threads.h). Kept apart from thread_pool.h, which most of the tree includes.
#pragma once

namespace oneflow_like {

// The intra-op thread count: hardware threads (at least 1) unless ONEFLOW_LIKE_NUM_THREADS or
// SetIntraOpThreads says otherwise.
int IntraOpThreads();
// Makes IntraOpPool() an n-thread pool (n >= 1) for the kernels that start after it. Pools of
// other sizes made earlier stay alive, idle (a kernel still running may hold one; one pool per
// size ever asked for, reused when that size is asked for again).
void SetIntraOpThreads(int n);

}  // namespace oneflow_like
