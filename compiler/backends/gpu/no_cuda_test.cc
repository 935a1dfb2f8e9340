// Stands in for the GPU backend's tests in a build without --config=cuda: reports them skipped.
#include <gtest/gtest.h>

TEST(GpuBackend, SkippedWithoutCudaBuild) {
  GTEST_SKIP() << "built without --config=cuda: compiler/backends/gpu is not compiled";
}
