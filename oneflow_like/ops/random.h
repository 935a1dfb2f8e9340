// Random number generation: one default generator per device (manual_seed sets all), and
// user-made ones (torch.Generator) an op takes through generator=. Each random op
// takes a fresh 64-bit seed from its generator at dispatch time (on the caller's
// thread, so results do not depend on scheduling) and passes it to its kernel as attr "seed";
// kernels derive element i's numbers from (seed, i) with a counter-based hash (kernels/cpu/rng.h),
// so parallel and sequential runs agree.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// A generator: a seed and its offset, the number of per-op seeds handed out since seeding. Per-op
// seed i is a hash of (seed, i, device type), so (seed, offset) is the whole state: restoring it
// replays every later draw. Thread-safe.
class Generator {
 public:
  Generator(Device device, uint64_t seed) : device_(device), seed_(seed) {}
  const Device& device() const { return device_; }
  void ManualSeed(uint64_t seed);  // offset 0
  uint64_t InitialSeed() const;
  uint64_t Next();  // the next per-op seed
  struct State {
    uint64_t seed = 0, offset = 0;
  };
  State GetState() const;
  void SetState(State s);

 private:
  const Device device_;
  mutable std::mutex mu_;
  uint64_t seed_, offset_ = 0;
};

// The process-wide generator of `device` (devices of a type share one per index modulo 16).
std::shared_ptr<Generator> DefaultGenerator(const Device& device);
// Seeds every device's default generator.
void ManualSeed(uint64_t seed);
uint64_t InitialSeed();  // the CPU generator's
// The next per-op seed for an op on `device`: from the generator of the innermost
// GeneratorOverride of this thread (an op's generator= argument), else the device's default.
uint64_t NextSeed(const Device& device);

// While alive, the random ops this thread dispatches draw their seeds from `gen` (which must be
// of the ops' device type: CheckGeneratorDevice).
class GeneratorOverride {
 public:
  explicit GeneratorOverride(std::shared_ptr<Generator> gen);
  ~GeneratorOverride();
  GeneratorOverride(const GeneratorOverride&) = delete;
  GeneratorOverride& operator=(const GeneratorOverride&) = delete;

 private:
  std::shared_ptr<Generator> gen_, prev_;
};
// InvalidArgument unless `gen` (may be null) can serve an op of `op` on `device`.
Status CheckGeneratorDevice(const char* op, const Generator* gen, const Device& device);

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
