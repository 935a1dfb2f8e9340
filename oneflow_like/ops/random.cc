#include "oneflow_like/ops/random.h"

#include <mutex>
#include <string>

#include "oneflow_like/framework/autograd.h"

namespace oneflow_like {
namespace functional {
namespace {

struct Generators {
  std::mutex mu;
  uint64_t seed = 0x5eed5eedULL;
  uint64_t counter[kNumDeviceTypes][16] = {};
};
Generators& Gen() {
  static Generators* g = new Generators();
  return *g;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Status InferRandom(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  for (int64_t d : a.Ints("shape"))
    if (d < 0) return InvalidArgument("[random] negative dimension %d in shape", d);
  ASSIGN_OR_RETURN(Device dev, Device::Parse(a.Str("device", "cpu")));
  out->push_back(TensorMeta{Shape(DimVector(a.Ints("shape").begin(), a.Ints("shape").end())),
                            a.Dtype("dtype"), dev});
  return Status();
}

// One op per distribution; attr "seed" comes from the device's generator at dispatch.
const OpDef kUniform = OpSpec("uniform", InferRandom);
const OpDef kNormal = OpSpec("normal", InferRandom);
const OpDef kRandint = OpSpec("randint", InferRandom);
const OpDef kRandperm = OpSpec("randperm", InferRandom);
// In place: no inputs, the (strided) target is the output.
const OpDef kUniformInplace = OpSpec("uniform_", InferRandom).StridedInputs();
const OpDef kNormalInplace = OpSpec("normal_", InferRandom).StridedInputs();
const OpDef kRandintInplace = OpSpec("randint_", InferRandom).StridedInputs();
const OpDef kBernoulli =
    OpSpec("bernoulli", [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
      if (!IsFloating(in[0].dtype()))
        return TypeError("[bernoulli] expects floating point probabilities, got %s",
                         in[0].meta_string());
      out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
      return Status();
    });

std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

AttrMap RandomAttrs(const Shape& shape, DType dtype, Device device) {
  return AttrMap{{"shape", Dims(shape)},
                 {"dtype", dtype},
                 {"device", device.ToString()},
                 {"seed", static_cast<int64_t>(NextSeed(device))}};
}

Status CheckFloatingDtype(const char* op, DType dtype) {
  if (!IsFloating(dtype))
    return TypeError("[%s] expects a floating point dtype, got %s", op, DTypeLongName(dtype));
  return Status();
}

// In-place random fills overwrite values autograd may need; refuse like PyTorch does for leaves.
Status CheckInplaceTarget(const char* op, const Tensor& x) {
  if (GradModeEnabled() && x.requires_grad())
    return InvalidArgument(
        "[%s] a tensor that requires grad is used in an in-place random fill; wrap it in no_grad()",
        op);
  return Status();
}

}  // namespace

void ManualSeed(uint64_t seed) {
  auto& g = Gen();
  std::lock_guard<std::mutex> l(g.mu);
  g.seed = seed;
  for (auto& d : g.counter)
    for (auto& c : d) c = 0;
}

uint64_t InitialSeed() {
  auto& g = Gen();
  std::lock_guard<std::mutex> l(g.mu);
  return g.seed;
}

uint64_t NextSeed(const Device& device) {
  auto& g = Gen();
  std::lock_guard<std::mutex> l(g.mu);
  uint64_t& c = g.counter[static_cast<int>(device.type())][device.index() & 15];
  return SplitMix64(g.seed ^ SplitMix64(c++ + (static_cast<uint64_t>(device.type()) << 56)));
}

StatusOr<Tensor> Rand(const Shape& shape, DType dtype, Device device) {
  RETURN_IF_ERROR(CheckFloatingDtype("rand", dtype));
  AttrMap a = RandomAttrs(shape, dtype, device);
  a.Set("low", 0.0).Set("high", 1.0);
  return Dispatch1(kUniform, {}, a);
}

StatusOr<Tensor> Normal(double mean, double std, const Shape& shape, DType dtype, Device device) {
  RETURN_IF_ERROR(CheckFloatingDtype("normal", dtype));
  if (std < 0) return InvalidArgument("[normal] expects std >= 0, got %g", std);
  AttrMap a = RandomAttrs(shape, dtype, device);
  a.Set("mean", mean).Set("std", std);
  return Dispatch1(kNormal, {}, a);
}

StatusOr<Tensor> Randn(const Shape& shape, DType dtype, Device device) {
  RETURN_IF_ERROR(CheckFloatingDtype("randn", dtype));
  return Normal(0.0, 1.0, shape, dtype, device);
}

StatusOr<Tensor> Randint(int64_t low, int64_t high, const Shape& shape, DType dtype,
                         Device device) {
  if (low >= high)
    return InvalidArgument("[randint] expects low < high, got low=%d high=%d", low, high);
  AttrMap a = RandomAttrs(shape, dtype, device);
  a.Set("low", low).Set("high", high);
  return Dispatch1(kRandint, {}, a);
}

StatusOr<Tensor> Randperm(int64_t n, DType dtype, Device device) {
  if (n < 0) return InvalidArgument("[randperm] n must be non-negative, got %d", n);
  return Dispatch1(kRandperm, {}, RandomAttrs(Shape{n}, dtype, device));
}

StatusOr<Tensor> Bernoulli(const Tensor& p) {
  return Dispatch1(kBernoulli, {p.detach()},
                   {{"seed", static_cast<int64_t>(NextSeed(p.device()))}});
}

Status Uniform_(const Tensor& x, double low, double high) {
  RETURN_IF_ERROR(CheckInplaceTarget("uniform_", x));
  if (low > high) return InvalidArgument("[uniform_] expects low <= high, got %g > %g", low, high);
  AttrMap a = RandomAttrs(x.shape(), x.dtype(), x.device());
  a.Set("low", low).Set("high", high);
  return DispatchInplace(kUniformInplace, {}, a, x);
}

Status Normal_(const Tensor& x, double mean, double std) {
  RETURN_IF_ERROR(CheckInplaceTarget("normal_", x));
  if (std < 0) return InvalidArgument("[normal_] expects std >= 0, got %g", std);
  AttrMap a = RandomAttrs(x.shape(), x.dtype(), x.device());
  a.Set("mean", mean).Set("std", std);
  return DispatchInplace(kNormalInplace, {}, a, x);
}

Status Random_(const Tensor& x, int64_t low, int64_t high) {
  RETURN_IF_ERROR(CheckInplaceTarget("random_", x));
  if (low >= high) return InvalidArgument("[random_] expects from < to, got %d >= %d", low, high);
  AttrMap a = RandomAttrs(x.shape(), x.dtype(), x.device());
  a.Set("low", low).Set("high", high);
  return DispatchInplace(kRandintInplace, {}, a, x);
}

}  // namespace functional
}  // namespace oneflow_like
