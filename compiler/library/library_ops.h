// Library ops behind `custom-call` targets, written once over T = float (CPU backend) and
// T = double (reference evaluator). Buffers are contiguous row-major. Config is `key=value;...`.
//   softmax, log_softmax      (x)                  axis=k (default last)
//   layer_norm                (x[, gamma, beta])   normalises the last dim; eps=1e-5
//   max_pool2d, avg_pool2d    (x: NCHW)            kernel=kh,kw; stride=sh,sw; pad=ph,pw
//   max_pool2d_grad           (x, dy)              same config; routes dy to each window's argmax
#pragma once
#include <string>
#include <vector>

#include "oneflow_like/base/shape.h"

namespace oneflow_like::library {

struct Operand {
  const void* data;
  DimVector dims;
};

// Result dims of `target`, or an error naming the target for unknown targets / bad operands.
StatusOr<DimVector> LibraryCallResultDims(const std::string& target, const std::string& config,
                                          const std::vector<DimVector>& operand_dims);
bool IsLibraryCall(const std::string& target);

// Runs `target` with T = float or double.
template <typename T>
Status RunLibraryCall(const std::string& target, const std::string& config,
                      const std::vector<Operand>& operands, T* out, const DimVector& out_dims);

}  // namespace oneflow_like::library
