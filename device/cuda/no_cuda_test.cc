// Stands in for the CUDA tests in a build without --config=cuda: reports them skipped.
#include <gtest/gtest.h>

TEST(Cuda, SkippedWithoutCudaBuild) {
  GTEST_SKIP() << "built without --config=cuda: the CUDA backend and its tests are not compiled";
}
