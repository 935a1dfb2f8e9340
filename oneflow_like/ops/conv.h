// Convolution family: conv1d/conv2d/conv3d with groups, stride, padding, dilation and optional
// bias. conv1d runs as conv2d over a height-1 image. Kernels: oneDNN for f32, im2col + BLAS GEMM
// otherwise (kernels/cpu/conv.cc); backward has its own data- and weight-gradient ops.
#pragma once
#include <vector>

#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/conv.h"

namespace oneflow_like {
namespace functional {

// stride, padding, dilation (one value, or one per spatial dim) and groups, with the defaults
// of oneflow_like/opdefs/conv.def.
using ConvOptions = opdefs::ConvAttrs;

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
