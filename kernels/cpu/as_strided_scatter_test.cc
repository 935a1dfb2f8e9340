// as_strided_scatter's CPU kernel on views Python cannot make (overlapping windows; as_strided is
// not exposed): its fast path must only take views whose elements are all distinct, and every
// view must match a naive accumulation.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/kernel.h"

namespace oneflow_like {
namespace kernels {
namespace {

// Runs the kernel: out (size n) = zeros, out.as_strided(shape, strides, offset) += src
// (contiguous).
std::vector<float> Scatter(int64_t n, const Shape& shape, const std::vector<int64_t>& strides,
                           int64_t offset, std::vector<float>* src_out = nullptr) {
  std::vector<float> src(shape.numel()), out(n, -1.0f);
  for (size_t i = 0; i < src.size(); ++i) src[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
  std::vector<TensorView> in{TensorView{src.data(), DType::kF32, shape, ContiguousStrides(shape)}};
  std::vector<TensorView> o{TensorView{out.data(), DType::kF32, Shape{n}, DimVector{1}}};
  AttrMap attrs{{"strides", strides}, {"offset", offset}};
  KernelContext ctx("as_strided_scatter", Device::CPU(), attrs, in, o, nullptr);
  auto fn = FindKernel("as_strided_scatter", DeviceType::kCPU);
  EXPECT_TRUE(fn.ok());
  EXPECT_TRUE((*fn)(ctx).ok());
  if (src_out) *src_out = src;
  return out;
}

std::vector<float> Naive(int64_t n, const Shape& shape, const std::vector<int64_t>& strides,
                         int64_t offset, const std::vector<float>& src) {
  std::vector<float> out(n, 0.0f);
  DimVector idx(shape.ndim(), 0);
  for (int64_t k = 0; k < shape.numel(); ++k) {
    int64_t o = offset;
    for (int64_t d = 0; d < shape.ndim(); ++d) o += idx[d] * strides[d];
    out[o] += src[k];
    for (int64_t d = shape.ndim() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

void Check(int64_t n, const Shape& shape, const std::vector<int64_t>& strides, int64_t offset) {
  std::vector<float> src;
  std::vector<float> got = Scatter(n, shape, strides, offset, &src);
  EXPECT_EQ(got, Naive(n, shape, strides, offset, src)) << shape.ToString();
}

TEST(AsStridedScatterCpu, OverlappingWindowsAccumulate) {
  Check(10, Shape{7, 4}, {1, 1}, 0);        // sliding windows (unfold)
  Check(12, Shape{3, 4}, {2, 1}, 1);        // rows overlap by half
  Check(9, Shape{3, 3}, {0, 3}, 0);         // a repeated (stride 0) dim
  Check(40, Shape{5, 3, 2}, {6, 1, 4}, 2);  // interleaved strides, a collision in the middle
  Check(20, Shape{4, 5}, {5, 0}, 0);        // stride 0 innermost
}

TEST(AsStridedScatterCpu, DisjointViews) {
  Check(3 * 300 * 257, Shape{300, 257}, {771, 1}, 257);  // column block
  Check(37 * 101, Shape{15, 101}, {101, 1}, 505);        // row block
  Check(41 * 67, Shape{20, 22}, {134, 3}, 69);           // step slices
  Check(60, Shape{3, 4, 5}, {1, 15, 3}, 0);              // a permuted, interleaved cover
  Check(24, Shape{4, 6}, {1, 4}, 0);                     // transposed whole
  Check(100000, Shape{1, 99991, 1}, {5, 1, 7}, 3);       // size-1 dims with odd strides
  Check(5, Shape{0, 3}, {1, 1}, 0);                      // empty
}

}  // namespace
}  // namespace kernels
}  // namespace oneflow_like
