// The public Tensor handle, value types, factories, autograd controls and printing.
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "device/cuda/cuda_api.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/random.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace F = ::oneflow_like::functional;

// ---- Errors and conversions.
Error::Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
Error::~Error() = default;

void ThrowStatus(const absl::Status& s) {
  std::string msg(s.message());
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument: throw Error(Error::Kind::kValue, msg);
    case absl::StatusCode::kOutOfRange: throw Error(Error::Kind::kIndex, msg);
    case absl::StatusCode::kFailedPrecondition: throw Error(Error::Kind::kType, msg);
    case absl::StatusCode::kResourceExhausted: throw Error(Error::Kind::kMemory, msg);
    case absl::StatusCode::kNotFound: throw Error(Error::Kind::kNotFound, msg);
    default: throw Error(Error::Kind::kRuntime, msg);
  }
}

const RT::RTTensor& InDefined(const Tensor& t, const char* op) {
  if (!t.defined())
    throw Error(Error::Kind::kValue, std::string("[") + op + "] got an undefined tensor");
  return In(t);
}
RT::RTTensorList In(const std::vector<Tensor>& ts) {
  RT::RTTensorList r;
  r.reserve(ts.size());
  for (const Tensor& t : ts) r.push_back(In(t));
  return r;
}
std::vector<Tensor> Out(const RT::RTTensorList& ts) {
  std::vector<Tensor> r;
  r.reserve(ts.size());
  for (const RT::RTTensor& t : ts) r.push_back(Out(t));
  return r;
}
RT::RTShape InShape(const IntList& s) {
  for (int64_t d : s)
    if (d < 0) {
      std::string dims;
      for (int64_t e : s) dims += (dims.empty() ? "" : ",") + std::to_string(e);
      throw Error(Error::Kind::kValue, "[shape] negative size in [" + dims + "]");
    }
  return RT::RTShape(absl::Span<const int64_t>(s));
}
IntList OutShape(const RT::RTShape& s) {
  IntList r(s.ndim());
  for (int64_t i = 0; i < s.ndim(); ++i) r[i] = s[i];
  return r;
}

// The public enum mirrors the runtime's (In/Out are casts).
static_assert(static_cast<int>(Dtype::kInt16) == static_cast<int>(RT::RTDType::kI16) &&
                  static_cast<int>(Dtype::kUInt64) == static_cast<int>(RT::RTDType::kU64) &&
                  static_cast<int>(Dtype::kFloat8_e5m2fnuz) ==
                      static_cast<int>(RT::RTDType::kF8E5M2FNUZ),
              "oneflow_like::Dtype must mirror the runtime's DType");
const char* dtype_name(Dtype d) {
  return DTypeLongName(In(d));
}
size_t element_size(Dtype d) {
  return static_cast<size_t>(DTypeSize(In(d)));
}
std::ostream& operator<<(std::ostream& os, Dtype d) {
  return os << dtype_name(d);
}

Device::Device(const std::string& spec) : Device(Out(Check(RT::RTDevice::Parse(spec)))) {}
std::string Device::str() const {
  return In(*this).ToString();
}
std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << d.str();
}
bool cuda_is_available() {
  return cuda::IsAvailable();
}
int cuda_device_count() {
  return cuda::GetDeviceCount();
}
Device default_device() {
  return cuda_is_available() ? Device(kCUDA, 0) : Device(kCPU);
}

// ---- Tensor basics.
// handle_ holds a runtime Tensor (TensorAccess, convert.h): these construct, copy and destroy it.
Tensor::Tensor() {
  new (TensorAccess::Bytes(*this)) RT::RTTensor();
}
Tensor::Tensor(const Tensor& o) {
  new (TensorAccess::Bytes(*this)) RT::RTTensor(In(o));
}
Tensor::Tensor(Tensor&& o) noexcept {
  new (TensorAccess::Bytes(*this)) RT::RTTensor(std::move(TensorAccess::Mut(o)));
}
Tensor& Tensor::operator=(const Tensor& o) {
  TensorAccess::Mut(*this) = In(o);
  return *this;
}
Tensor& Tensor::operator=(Tensor&& o) noexcept {
  TensorAccess::Mut(*this) = std::move(TensorAccess::Mut(o));
  return *this;
}
Tensor::~Tensor() {
  std::destroy_at(&TensorAccess::Mut(*this));
}

namespace {
RT::RTTensorImpl& Impl(const Tensor& t, const char* what) {
  if (!t.defined())
    throw Error(Error::Kind::kValue, std::string("[") + what + "] undefined tensor");
  return *In(t).impl();
}
}  // namespace

bool Tensor::defined() const {
  return In(*this).defined();
}
IntList Tensor::sizes() const {
  return OutShape(Impl(*this, "sizes").shape);
}
int64_t Tensor::size(int64_t d) const {
  const RT::RTShape& s = Impl(*this, "size").shape;
  int64_t n = s.ndim();
  if (d < -n || d >= n)
    throw Error(Error::Kind::kIndex, "[size] dimension " + std::to_string(d) +
                                         " out of range for a " + std::to_string(n) + "-d tensor");
  return s[d < 0 ? d + n : d];
}
IntList Tensor::strides() const {
  const auto& st = Impl(*this, "strides").strides;
  return IntList(st.begin(), st.end());
}
int64_t Tensor::dim() const {
  return Impl(*this, "dim").shape.ndim();
}
int64_t Tensor::numel() const {
  return Impl(*this, "numel").shape.numel();
}
Dtype Tensor::dtype() const {
  return Out(Impl(*this, "dtype").dtype);
}
Device Tensor::device() const {
  return Out(Impl(*this, "device").device);
}
bool Tensor::is_contiguous() const {
  return InDefined(*this, "is_contiguous").is_contiguous();
}
bool Tensor::same(const Tensor& o) const {
  return In(*this).same(In(o));
}

Tensor Tensor::to(Device device) const {
  return Out(F::To(InDefined(*this, "to"), In(device)));
}
Tensor Tensor::to(Dtype dtype) const {
  return Out(F::Cast(InDefined(*this, "to"), In(dtype)));
}
Tensor Tensor::to(Device device, Dtype dtype) const {
  return to(device).to(dtype);
}
Tensor Tensor::contiguous() const {
  return Out(F::Contiguous(InDefined(*this, "contiguous")));
}
Tensor Tensor::clone() const {
  return Out(F::Clone(InDefined(*this, "clone")));
}
Tensor Tensor::detach() const {
  return Out(InDefined(*this, "detach").detach());
}

// ---- Host access.
namespace {
// A contiguous host copy of `t` converted to `dtype`, into `dst` (numel elements).
void CopyAs(const Tensor& t, Dtype dtype, void* dst, const char* op) {
  RT::RTTensor x = InDefined(t, op);
  if (x.dtype() != In(dtype)) {
    RT::RTNoGradGuard ng;
    x = Check(F::Cast(x, In(dtype)));
  }
  Check(F::CopyToHost(x, dst));
}
}  // namespace

template <typename T>
T Tensor::item() const {
  if (numel() != 1)
    throw Error(Error::Kind::kValue, "[item] a tensor with " + std::to_string(numel()) +
                                         " elements cannot be converted to a scalar: got " +
                                         In(*this).meta_string());
  T v{};
  CopyAs(*this, DtypeOf<T>::value, &v, "item");
  return v;
}
template <>
bool Tensor::item<bool>() const {
  return item<uint8_t>() != 0;
}
template <typename T>
std::vector<T> Tensor::to_vector() const {
  std::vector<T> v(static_cast<size_t>(numel()));
  if (!v.empty()) CopyAs(*this, DtypeOf<T>::value, v.data(), "to_vector");
  return v;
}
namespace {
// The element at `x`'s offset, after every pending reader and writer (write mode, so the caller
// may write too). Not a template: the callback's std::function must not be exported.
void* SyncedData(const Tensor& t, Dtype want) {
  RT::RTTensor x = InDefined(t, "data");
  if (x.dtype() != In(want))
    throw Error(Error::Kind::kType, std::string("[data] requested ") + dtype_name(want) +
                                        " elements of " + x.meta_string());
  if (!x.device().is_cpu())
    throw Error(Error::Kind::kValue,
                "[data] the tensor is on " + x.device().ToString() + "; call .cpu() first");
  if (x.is_lazy()) throw Error(Error::Kind::kValue, "[data] a lazy tensor has no data");
  if (x.numel() == 0) return nullptr;
  void* base = nullptr;
  Check(vm::SyncAccessBlob(x.blob(), vm::AccessMode::kWrite, [&](void* p) {
    base = p;
    return absl::Status();
  }));
  return static_cast<char*>(base) + x.offset() * DTypeSize(x.dtype());
}
}  // namespace
template <typename T>
T* Tensor::data() const {
  return static_cast<T*>(SyncedData(*this, DtypeOf<T>::value));
}
// clang-format off
#define OFL_API_HOST_TYPES(X) X(float) X(double) X(int64_t) X(int32_t) X(int16_t) X(int8_t) \
  X(uint8_t) X(uint16_t) X(uint32_t) X(uint64_t)
// clang-format on
#define OFL_API_INSTANTIATE(T)                          \
  template T Tensor::item<T>() const;                   \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T* Tensor::data<T>() const;
OFL_API_HOST_TYPES(OFL_API_INSTANTIATE)
template bool* Tensor::data<bool>() const;
#undef OFL_API_INSTANTIATE

// ---- Autograd.
Tensor& Tensor::requires_grad_(bool r) {
  RT::RTTensor x = InDefined(*this, "requires_grad_");
  Check(x.set_requires_grad(r));
  return *this;
}
bool Tensor::requires_grad() const {
  return InDefined(*this, "requires_grad").requires_grad();
}
bool Tensor::is_leaf() const {
  return InDefined(*this, "is_leaf").is_leaf();
}
Tensor Tensor::grad() const {
  return Out(InDefined(*this, "grad").grad());
}
void Tensor::set_grad(const Tensor& g) {
  RT::RTTensor x = InDefined(*this, "set_grad");
  x.set_grad(In(g));
}
void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  RT::RTTensorList grads;
  if (gradient.defined()) grads.push_back(In(gradient));
  Check(Backward({InDefined(*this, "backward")}, grads, retain_graph, create_graph));
}

NoGradGuard::NoGradGuard() : prev_(GradModeEnabled()) {
  SetGradMode(false);
}
NoGradGuard::~NoGradGuard() {
  SetGradMode(prev_);
}
bool is_grad_enabled() {
  return GradModeEnabled();
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool create_graph) {
  return Out(Check(::oneflow_like::Grad(In(outputs), In(inputs), In(grad_outputs), retain_graph,
                                        create_graph, /*allow_unused=*/true)));
}

void manual_seed(uint64_t seed) {
  F::ManualSeed(seed);
}
void synchronize() {
  Check(vm::VirtualMachine::Get()->SyncAll());
}

// ---- Factories.
Tensor Finish(RT::RTTensor t, const TensorOptions& o) {
  if (o.requires_grad()) Check(t.set_requires_grad(true));
  return Out(t);
}

Tensor from_blob(void* data, const IntList& shape, Dtype dtype,
                 std::function<void(void*)> deleter) {
  std::shared_ptr<void> keep;
  if (deleter) keep = std::shared_ptr<void>(data, std::move(deleter));
  return Out(F::WrapHost(data, InShape(shape), In(dtype), std::move(keep)));
}
Tensor from_data(const void* data, const IntList& shape, const TensorOptions& o) {
  return Finish(Check(F::FromHost(data, InShape(shape), In(o.dtype()), In(o.device()))), o);
}
namespace {
template <typename T>
Tensor FromVector(const std::vector<T>& v, const TensorOptions& o) {
  Tensor t = from_data(v.data(), {static_cast<int64_t>(v.size())},
                       TensorOptions(DtypeOf<T>::value).device(o.device()));
  if (o.dtype() != DtypeOf<T>::value) t = t.to(o.dtype());
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace
Tensor tensor(const std::vector<float>& v, const TensorOptions& o) {
  return FromVector(v, o);
}
Tensor tensor(const std::vector<double>& v, const TensorOptions& o) {
  return FromVector(v, o);
}
Tensor tensor(const std::vector<int64_t>& v, const TensorOptions& o) {
  return FromVector(v, o);
}
Tensor scalar_tensor(double value, const TensorOptions& o) {
  return full({}, value, o);
}

}  // namespace v1
}  // namespace oneflow_like
