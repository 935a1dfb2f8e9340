// The C++ embedding API of oneflow_like: one include, the C++17 standard library only.
//   #include <oneflow_like/oneflow_like.h>
//   namespace ofl = oneflow_like;
//   ofl::Tensor x = ofl::randn({4, 3}).requires_grad_();
//   ofl::Tensor y = ofl::relu(x.matmul(ofl::ones({3, 2}))).sum();
//   y.backward(); std::cout << x.grad();
// README.md in this folder lists what is here and how to build against the installed library.
#pragma once
#include "oneflow_like/graph.h"
#include "oneflow_like/nn.h"
#include "oneflow_like/ops.h"
#include "oneflow_like/optim.h"
#include "oneflow_like/tensor.h"
#include "oneflow_like/types.h"
