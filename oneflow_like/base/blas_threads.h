// OpenBLAS thread plumbing shared by the eager matmul kernel and the compiler's GEMM thunk.
//
// OpenBLAS keeps its own pthreads pool whose idle workers spin for ~2^28 cycles after every call.
// On machines with as many threads as cores the spinners take cores from whatever runs next, so
// callers park the pool before long non-BLAS work (ParkBlasThreads). (Tried and dropped: small
// batched products on oneDNN's batched matmul; in-process it was no faster than the BLAS loop,
// 0.73-0.87 ms vs 0.69-0.87 ms for 32 x [128x64]x[64x128] on 2 cores.)
#pragma once

namespace oneflow_like {

// Sizes OpenBLAS's pool to the intra-op thread count (once).
void InitBlasThreads();
// Stops OpenBLAS's worker threads (they restart on the next threaded call, ~70 us). No-op when
// the linked BLAS is not OpenBLAS or the pool is already stopped.
void ParkBlasThreads();

}  // namespace oneflow_like
