// Random family: the generators, the OpDefs of oneflow_like/opdefs/random.def (generated below
// from the table's out column, with their Run<Name> entries, which draw each op's seed) and the
// functional entries. Kernels: kernels/cpu/random.cc, kernels/cuda/random.*.
#include "oneflow_like/ops/random.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/random.h"
#include "oneflow_like/ops/complex.h"

namespace oneflow_like {
namespace functional {
namespace {

constexpr uint64_t kDefaultSeed = 0x5eed5eedULL;

struct Generators {
  std::mutex mu;
  std::shared_ptr<Generator> gens[kNumDeviceTypes][16];
};
Generators& Gens() {
  static Generators* g = new Generators();  // leaked: random ops may run during exit
  return *g;
}

thread_local std::shared_ptr<Generator> t_override;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- the table's out column ---------------------------------------------------------------------

// fresh / target: the shape, dtype and device attributes.
template <typename A>
Status InferFromAttrs(const char*, TensorSpan, const AttrMap& m, std::vector<TensorMeta>* out) {
  const A a = opdefs::ReadAttrs<A>(m);
  for (int64_t d : a.shape)
    if (d < 0) return InvalidArgument("[random] negative dimension %d in shape", d);
  ASSIGN_OR_RETURN(Device dev, Device::Parse(a.device));
  out->push_back(TensorMeta{Shape(DimVector(a.shape.begin(), a.shape.end())), a.dtype, dev});
  return Status();
}
template <typename A>
Status Infer_fresh(const char* op, TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  return InferFromAttrs<A>(op, in, m, out);
}
template <typename A>
Status Infer_target(const char* op, TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  return InferFromAttrs<A>(op, in, m, out);
}
// input: floating probabilities p -> draws of p's shape and dtype.
template <typename A>
Status Infer_input(const char* op, TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  if (!IsFloating(in[0].dtype()))
    return TypeError("[%s] expects floating point probabilities, got %s", op, in[0].meta_string());
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  return Status();
}

std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

// ---- the OpDefs and Run<Name> (generated from random.def) ---------------------------------------

// An in-place op writes its (strided) target, which is not among its inputs.
#define OFL_RANDOM_STRIDED_fresh false
#define OFL_RANDOM_STRIDED_target true
#define OFL_RANDOM_STRIDED_input false
// Run<Name>: fills in the output's description and the seed, drawn from the device's generator
// here (the caller's thread, in call order), and dispatches.
#define OFL_RANDOM_RUN_fresh(Name, Attrs)                                           \
  StatusOr<Tensor> Run##Name(const Shape& shape, DType dtype, const Device& device, \
                             opdefs::Attrs a) {                                     \
    a.shape = Dims(shape);                                                          \
    a.dtype = dtype;                                                                \
    a.device = device.ToString();                                                   \
    a.seed = static_cast<int64_t>(NextSeed(device));                                \
    return Dispatch1(k##Name, {}, opdefs::ToAttrMap(std::move(a)));                 \
  }
#define OFL_RANDOM_RUN_target(Name, Attrs)                                        \
  Status Run##Name(opdefs::Attrs a, const Tensor& target) {                       \
    a.shape = Dims(target.shape());                                               \
    a.dtype = target.dtype();                                                     \
    a.device = target.device().ToString();                                        \
    a.seed = static_cast<int64_t>(NextSeed(target.device()));                     \
    return DispatchInplace(k##Name, {}, opdefs::ToAttrMap(std::move(a)), target); \
  }
#define OFL_RANDOM_RUN_input(Name, Attrs)                          \
  StatusOr<Tensor> Run##Name(const Tensor& p, opdefs::Attrs a) {   \
    a.seed = static_cast<int64_t>(NextSeed(p.device()));           \
    return Dispatch1(k##Name, {p.detach()}, opdefs::ToAttrMap(a)); \
  }
// clang-format off
#define OFL_ATTRS(...)
#define OFL_RANDOM_API(...)
#define OFL_RANDOM(name, Name, Attrs, out)                                                         \
  Status Infer##Name(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* metas) {   \
    return Infer_##out<opdefs::Attrs>(#name, in, m, metas);                                      \
  }                                                                                              \
  const OpDef k##Name = OpSpec(#name, Infer##Name).StridedInputs(OFL_RANDOM_STRIDED_##out);      \
  OFL_RANDOM_RUN_##out(Name, Attrs)
#include "oneflow_like/opdefs/random.def"
#undef OFL_RANDOM
#undef OFL_RANDOM_API
#undef OFL_ATTRS
// clang-format on

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

void Generator::ManualSeed(uint64_t seed) {
  std::lock_guard<std::mutex> l(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::InitialSeed() const {
  std::lock_guard<std::mutex> l(mu_);
  return seed_;
}

uint64_t Generator::Next() {
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t c = offset_++;
  return SplitMix64(seed_ ^ SplitMix64(c + (static_cast<uint64_t>(device_.type()) << 56)));
}

Generator::State Generator::GetState() const {
  std::lock_guard<std::mutex> l(mu_);
  return State{seed_, offset_};
}

void Generator::SetState(State s) {
  std::lock_guard<std::mutex> l(mu_);
  seed_ = s.seed;
  offset_ = s.offset;
}

std::shared_ptr<Generator> DefaultGenerator(const Device& device) {
  auto& g = Gens();
  std::lock_guard<std::mutex> l(g.mu);
  auto& slot = g.gens[static_cast<int>(device.type())][device.index() & 15];
  if (slot == nullptr)
    slot = std::make_shared<Generator>(Device(device.type(), device.index() & 15), kDefaultSeed);
  return slot;
}

void ManualSeed(uint64_t seed) {
  for (int t = 0; t < kNumDeviceTypes; ++t)
    for (int i = 0; i < 16; ++i)
      DefaultGenerator(Device(static_cast<DeviceType>(t), i))->ManualSeed(seed);
}

uint64_t InitialSeed() {
  return DefaultGenerator(Device::CPU())->InitialSeed();
}

uint64_t NextSeed(const Device& device) {
  if (t_override != nullptr && t_override->device().type() == device.type())
    return t_override->Next();
  return DefaultGenerator(device)->Next();
}

GeneratorOverride::GeneratorOverride(std::shared_ptr<Generator> gen)
    : gen_(std::move(gen)), prev_(t_override) {
  if (gen_ != nullptr) t_override = gen_;
}

GeneratorOverride::~GeneratorOverride() {
  if (gen_ != nullptr) t_override = prev_;
}

Status CheckGeneratorDevice(const char* op, const Generator* gen, const Device& device) {
  if (gen != nullptr && gen->device().type() != device.type())
    return InvalidArgument("[%s] Expected a '%s' device type for generator but found '%s'", op,
                           device.type() == DeviceType::kCPU ? "cpu" : "cuda",
                           gen->device().type() == DeviceType::kCPU ? "cpu" : "cuda");
  return Status();
}

StatusOr<Tensor> Rand(const Shape& shape, DType dtype, Device device) {
  if (IsComplex(dtype)) return ComplexRand(shape, dtype, device);
  RETURN_IF_ERROR(CheckFloatingDtype("rand", dtype));
  opdefs::UniformAttrs a;
  a.low = 0.0;
  a.high = 1.0;
  return RunUniform(shape, dtype, device, a);
}

StatusOr<Tensor> Normal(double mean, double std, const Shape& shape, DType dtype, Device device) {
  if (IsComplex(dtype) && std >= 0) return ComplexNormal(mean, std, shape, dtype, device);
  RETURN_IF_ERROR(CheckFloatingDtype("normal", dtype));
  if (std < 0) return InvalidArgument("[normal] expects std >= 0, got %g", std);
  opdefs::NormalAttrs a;
  a.mean = mean;
  a.std = std;
  return RunNormal(shape, dtype, device, a);
}

StatusOr<Tensor> Randn(const Shape& shape, DType dtype, Device device) {
  if (!IsComplex(dtype)) RETURN_IF_ERROR(CheckFloatingDtype("randn", dtype));
  return Normal(0.0, 1.0, shape, dtype, device);
}

StatusOr<Tensor> Randint(int64_t low, int64_t high, const Shape& shape, DType dtype,
                         Device device) {
  if (low >= high)
    return InvalidArgument("[randint] expects low < high, got low=%d high=%d", low, high);
  opdefs::RandintAttrs a;
  a.low = low;
  a.high = high;
  return RunRandint(shape, dtype, device, a);
}

StatusOr<Tensor> Randperm(int64_t n, DType dtype, Device device) {
  if (n < 0) return InvalidArgument("[randperm] n must be non-negative, got %d", n);
  return RunRandperm(Shape{n}, dtype, device, opdefs::RandpermAttrs{});
}

StatusOr<Tensor> Bernoulli(const Tensor& p) {
  return RunBernoulli(p, opdefs::BernoulliAttrs{});
}

Status Uniform_(const Tensor& x, double low, double high) {
  RETURN_IF_ERROR(CheckInplaceTarget("uniform_", x));
  if (low > high) return InvalidArgument("[uniform_] expects low <= high, got %g > %g", low, high);
  if (IsComplex(x.dtype())) return ComplexUniform_(x, low, high);
  opdefs::UniformAttrs a;
  a.low = low;
  a.high = high;
  return RunUniformInplace(a, x);
}

Status Normal_(const Tensor& x, double mean, double std) {
  RETURN_IF_ERROR(CheckInplaceTarget("normal_", x));
  if (std < 0) return InvalidArgument("[normal_] expects std >= 0, got %g", std);
  if (IsComplex(x.dtype())) return ComplexNormal_(x, mean, std);
  opdefs::NormalAttrs a;
  a.mean = mean;
  a.std = std;
  return RunNormalInplace(a, x);
}

Status Random_(const Tensor& x, int64_t low, int64_t high) {
  RETURN_IF_ERROR(CheckInplaceTarget("random_", x));
  if (low >= high) return InvalidArgument("[random_] expects from < to, got %d >= %d", low, high);
  opdefs::RandintAttrs a;
  a.low = low;
  a.high = high;
  return RunRandintInplace(a, x);
}

}  // namespace functional
}  // namespace oneflow_like
