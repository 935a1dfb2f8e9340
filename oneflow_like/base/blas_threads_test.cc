#include "oneflow_like/base/blas_threads.h"

#include <cblas.h>

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace oneflow_like {
namespace {

// After InitBlasThreads OpenBLAS uses one thread, and two threads calling it at once (as the
// intra-op pool does with the blocks of one GEMM) both get correct results.
TEST(BlasThreadsTest, SingleThreadedAndSafeToCallConcurrently) {
  InitBlasThreads();
  EXPECT_EQ(openblas_get_num_threads(), 1);
  const int n = 192;
  auto run = [n](int seed, bool* ok) {
    std::vector<float> a(n * n), b(n * n), c(n * n);
    for (int i = 0; i < n * n; ++i)
      a[i] = static_cast<float>((i + seed) % 7) - 3.f,
      b[i] = static_cast<float>((i * seed) % 5) - 2.f;
    *ok = true;
    for (int round = 0; round < 20; ++round) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n,
                  0.f, c.data(), n);
      for (int i : {0, n + 3, n * n - 1}) {
        double ref = 0;
        for (int p = 0; p < n; ++p) ref += double(a[(i / n) * n + p]) * b[p * n + i % n];
        *ok &= c[i] == static_cast<float>(ref);
      }
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread t(run, 1, &ok1);
  run(3, &ok2);
  t.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

}  // namespace
}  // namespace oneflow_like
