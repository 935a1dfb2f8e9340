// Pooling family over NCHW (or CHW) inputs, and the *3d ops over NCDHW: max_pool2d (indices saved
// for backward), avg_pool2d (count_include_pad, divisor_override), adaptive_avg_pool2d.
#pragma once
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

struct Pool2dOptions {
  std::vector<int64_t> kernel_size;  // 1 or 2 values
  std::vector<int64_t> stride;       // empty: kernel_size
  std::vector<int64_t> padding{0};
  std::vector<int64_t> dilation{1};  // max_pool2d only
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only
  int64_t divisor_override = 0;   // avg_pool2d only; 0: none
};

StatusOr<Tensor> MaxPool2d(const Tensor& x, const Pool2dOptions& opt);
// Also returns the argmax indices (flat h * W + w within each input plane, int64).
StatusOr<std::pair<Tensor, Tensor>> MaxPool2dWithIndices(const Tensor& x, const Pool2dOptions& opt);
StatusOr<Tensor> AvgPool2d(const Tensor& x, const Pool2dOptions& opt);
// 1-d pooling over [N, C, L] or [C, L] (runs as the 2-d op over a height-1 image).
StatusOr<Tensor> MaxPool1d(const Tensor& x, const Pool2dOptions& opt);
StatusOr<Tensor> AvgPool1d(const Tensor& x, const Pool2dOptions& opt);
StatusOr<Tensor> AdaptiveAvgPool2d(const Tensor& x, const std::vector<int64_t>& output_size);
// 3-d pooling over [N, C, D, H, W] or [C, D, H, W] (options with 1 or 3 values; max indices flat
// (d * H + h) * W + w within each input volume).
StatusOr<std::pair<Tensor, Tensor>> MaxPool3dWithIndices(const Tensor& x, const Pool2dOptions& opt);
StatusOr<Tensor> AvgPool3d(const Tensor& x, const Pool2dOptions& opt);
StatusOr<Tensor> AdaptiveAvgPool3d(const Tensor& x, const std::vector<int64_t>& output_size);

}  // namespace functional
}  // namespace oneflow_like
