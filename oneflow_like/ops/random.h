// Random number generation: one generator per device (manual_seed sets all). Each random op
// takes a fresh 64-bit seed from its device's generator at dispatch time (on the caller's
// thread, so results do not depend on scheduling) and passes it to its kernel as attr "seed";
// kernels derive element i's numbers from (seed, i) with a counter-based hash (kernels/cpu/rng.h),
// so parallel and sequential runs agree.
#pragma once
#include <cstdint>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

void ManualSeed(uint64_t seed);
uint64_t InitialSeed();
// The next per-op seed of `device`'s generator.
uint64_t NextSeed(const Device& device);

// Fresh tensors: uniform [0, 1), standard normal, integers in [low, high), a permutation of [0, n).
StatusOr<Tensor> Rand(const Shape& shape, DType dtype, Device device);
StatusOr<Tensor> Randn(const Shape& shape, DType dtype, Device device);
StatusOr<Tensor> Normal(double mean, double std, const Shape& shape, DType dtype, Device device);
StatusOr<Tensor> Randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device);
StatusOr<Tensor> Randperm(int64_t n, DType dtype, Device device);
// 0/1 draws with probabilities `p` (same shape and dtype as p).
StatusOr<Tensor> Bernoulli(const Tensor& p);
// In place (any strides), used by nn.init: uniform [low, high), normal(mean, std), integers [low,
// high).
Status Uniform_(const Tensor& x, double low, double high);
Status Normal_(const Tensor& x, double mean, double std);
Status Random_(const Tensor& x, int64_t low, int64_t high);

}  // namespace functional
}  // namespace oneflow_like
