#include "oneflow_like/base/blas_threads.h"

#include <cblas.h>

#include <vector>

#include "gtest/gtest.h"

namespace oneflow_like {
namespace {

// Parking stops OpenBLAS's pool; the next threaded call restarts it and computes correctly.
TEST(BlasThreadsTest, GemmAfterParkingIsCorrect) {
  InitBlasThreads();
  const int n = 192;
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (int i = 0; i < n * n; ++i) a[i] = static_cast<float>(i % 7) - 3.f, b[i] = static_cast<float>(i % 5) - 2.f;
  for (int round = 0; round < 3; ++round) {
    ParkBlasThreads();
    ParkBlasThreads();  // twice: harmless
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    for (int i : {0, n + 3, n * n - 1}) {
      double ref = 0;
      for (int p = 0; p < n; ++p) ref += double(a[(i / n) * n + p]) * b[p * n + i % n];
      EXPECT_FLOAT_EQ(c[i], static_cast<float>(ref)) << "round " << round << " element " << i;
    }
  }
}

}  // namespace
}  // namespace oneflow_like
