// oneDNN (Debian's libdnnl) parallelises a primitive with OpenMP, whose team size is a per-thread
// setting. Each thread that runs a primitive calls this first, so the team follows
// flow.set_num_threads (IntraOpThreads()) on VM workers and issuing threads alike.
#pragma once

namespace oneflow_like {
namespace cpu {

// Sets this thread's OpenMP team size to IntraOpThreads() when it differs (a thread-local
// compare otherwise).
void UseIntraOpThreadsForOpenMP();

}  // namespace cpu
}  // namespace oneflow_like
