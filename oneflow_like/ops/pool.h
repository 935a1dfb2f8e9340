// Pooling family over NCHW (or CHW) inputs, and the *3d ops over NCDHW: max_pool2d (indices saved
// for backward), avg_pool2d (count_include_pad, divisor_override), adaptive_avg_pool2d. The ops,
// their attributes and these entries are declared in oneflow_like/opdefs/pool.def.
#pragma once
#include <vector>

#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/pool.h"

namespace oneflow_like {
namespace functional {

// The table's PoolAttrs defaults (built once).
inline const opdefs::PoolAttrs& PoolDefaults() {
  static const opdefs::PoolAttrs d;
  return d;
}

// The window attributes of opdefs::PoolAttrs under their torch names (kernel_size is the
// attribute `kernel`), with the table's defaults. Each list holds 1 value or one per spatial dim.
struct Pool2dOptions {
  std::vector<int64_t> kernel_size = PoolDefaults().kernel;
  std::vector<int64_t> stride = PoolDefaults().stride;  // empty: kernel_size
  std::vector<int64_t> padding = PoolDefaults().padding;
  std::vector<int64_t> dilation = PoolDefaults().dilation;  // max pools only
  bool ceil_mode = PoolDefaults().ceil_mode;
  bool count_include_pad = PoolDefaults().count_include_pad;   // avg pools only
  int64_t divisor_override = PoolDefaults().divisor_override;  // avg_pool2d/3d only; 0: none
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
