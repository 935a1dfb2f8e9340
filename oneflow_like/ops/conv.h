// Convolution family: conv1d/conv2d/conv3d with groups, stride, padding, dilation and optional
// bias. conv1d runs as conv2d over a height-1 image. Kernels: oneDNN for f32, im2col + BLAS GEMM
// otherwise (kernels/cpu/conv.cc); backward has its own data- and weight-gradient ops.
#pragma once
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

struct ConvOptions {
  std::vector<int64_t> stride{1}, padding{0}, dilation{1};  // one value, or one per spatial dim
  int64_t groups = 1;
};

// x [N, C, L], w [K, C/groups, S], bias [K] or undefined -> [N, K, L'].
StatusOr<Tensor> Conv1d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt = {});
// x [N, C, H, W], w [K, C/groups, R, S], bias [K] or undefined -> [N, K, H', W'].
StatusOr<Tensor> Conv2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt = {});
// x [N, C, D, H, W], w [K, C/groups, T, R, S], bias [K] or undefined -> [N, K, D', H', W'].
StatusOr<Tensor> Conv3d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const ConvOptions& opt = {});

}  // namespace functional
}  // namespace oneflow_like
