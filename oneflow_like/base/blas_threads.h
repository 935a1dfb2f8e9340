// OpenBLAS thread policy shared by everything that calls BLAS (device/cpu/gemm.cc, the f64
// paths of the matmul/conv kernels and of the compiler's GEMM thunk).
//
// OpenBLAS runs single-threaded, on the calling thread; cpu::Sgemm spreads f32 GEMMs over the
// intra-op pool itself. OpenBLAS's own pool is never started: its idle workers spin for ~2^28
// cycles after every call and take the cores from whatever runs next (fused loops, oneDNN's
// OpenMP threads, other processes), which earlier versions worked around by stopping the pool
// before such work. Concurrent single-threaded calls from several threads are safe.
#pragma once

namespace oneflow_like {

// Sets OpenBLAS to one thread (once; cheap after the first call).
void InitBlasThreads();

}  // namespace oneflow_like
