// Tensor: a handle to a runtime tensor (copies share it, like libtorch's), its factories, and the
// autograd controls. Ops are asynchronous: a call validates its arguments and queues the work on
// the runtime's virtual machine; item(), data(), printing and synchronize() wait for it.
// Argument errors throw Error at the call; a kernel's failure throws at the next of those sync
// points that reads its result, and the runtime stays usable.
#pragma once
#include <cmath>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/types.h"

namespace oneflow_like {
inline namespace v1 {

using IntList = std::vector<int64_t>;

// Attribute structs of the table ops (oneflow_like/opdefs/unary.def): fields with defaults.
// clang-format off
#define OFL_ATTR(type, name, def) type name = def;
#define OFL_ATTRS(Struct, fields) struct Struct { fields };
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_ATTRS
#undef OFL_ATTR
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
// clang-format on

// dtype, device and requires_grad of a new tensor; a Dtype or Device converts to one.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(Dtype d) : dtype_(d) {}        // NOLINT
  TensorOptions(Device d) : device_(d) {}      // NOLINT
  TensorOptions(DeviceType t) : device_(t) {}  // NOLINT
  TensorOptions dtype(Dtype d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
  Dtype dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  Dtype dtype_ = kFloat32;
  Device device_;
  bool requires_grad_ = false;
};

class Tensor {
 public:
  Tensor();  // undefined
  Tensor(const Tensor&);
  Tensor(Tensor&&) noexcept;
  Tensor& operator=(const Tensor&);
  Tensor& operator=(Tensor&&) noexcept;
  ~Tensor();

  bool defined() const;
  IntList sizes() const;
  IntList shape() const { return sizes(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  IntList strides() const;          // in elements
  int64_t dim() const;
  int64_t numel() const;
  Dtype dtype() const;
  Device device() const;
  bool is_contiguous() const;
  bool same(const Tensor& other) const;  // the same runtime tensor (not just equal values)

  Tensor to(Device device) const;
  Tensor to(Dtype dtype) const;
  Tensor to(Device device, Dtype dtype) const;
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor contiguous() const;
  Tensor clone() const;   // a copy with its own storage (differentiable)
  Tensor detach() const;  // the same storage without autograd history

  // Waits for the value. item: a one-element tensor, converted to T. data: the first element of
  // a CPU tensor of dtype T (strided as strides() says), valid while this tensor lives; writes
  // through it are seen by ops issued afterwards.
  template <typename T>
  T item() const;
  template <typename T>
  T* data() const;
  // A contiguous host copy of the elements, converted to T.
  template <typename T>
  std::vector<T> to_vector() const;
  std::string str() const;  // what operator<< prints

  // Autograd.
  Tensor& requires_grad_(bool requires_grad = true);
  bool requires_grad() const;
  bool is_leaf() const;
  Tensor grad() const;             // undefined until a backward reaches this leaf
  void set_grad(const Tensor& g);  // an undefined tensor clears it
  // Accumulates d(this)/d(leaf) into each leaf's grad(); `gradient` is required unless this is
  // a one-element tensor.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false,
                bool create_graph = false) const;

  // Ops as methods: the same as the free functions of the same name below.
  // clang-format off
#define OFL_API_METHOD_gen(name, Attrs) Tensor name(const Attrs& attrs = {}) const;
#define OFL_API_METHOD_gen_ip(name, Attrs) \
  OFL_API_METHOD_gen(name, Attrs) Tensor& name##_(const Attrs& attrs = {});
#define OFL_API_METHOD_fn_only OFL_API_METHOD_gen_ip
#define OFL_API_METHOD_custom(name, Attrs)
#define OFL_API_METHOD_special(name, Attrs)  // torch.special: no Tensor method
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) OFL_API_METHOD_##api(name, Attrs)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
#undef OFL_API_METHOD_gen
#undef OFL_API_METHOD_gen_ip
#undef OFL_API_METHOD_fn_only
#undef OFL_API_METHOD_custom
#undef OFL_API_METHOD_special
  // clang-format on
  Tensor add(const Tensor& other, double alpha = 1.0) const;
  Tensor add(double other) const;
  Tensor sub(const Tensor& other, double alpha = 1.0) const;
  Tensor sub(double other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(double other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(double other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(double exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor clamp(std::optional<double> min, std::optional<double> max = std::nullopt) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor sum(const IntList& dims = {}, bool keepdim = false) const;
  Tensor mean(const IntList& dims = {}, bool keepdim = false) const;
  Tensor amax(const IntList& dims = {}, bool keepdim = false) const;
  Tensor amin(const IntList& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor reshape(const IntList& shape) const;  // one -1 allowed
  Tensor view(const IntList& shape) const {
    return reshape(shape);
  }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const {
    return transpose(0, 1);
  }
  Tensor permute(const IntList& dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(std::optional<int64_t> dim = std::nullopt) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor operator[](int64_t index) const {
    return select(0, index);
  }
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  // In place (autograd sees them; a leaf that requires grad refuses them outside NoGradGuard).
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& add_(double other);
  Tensor& sub_(const Tensor& other, double alpha = 1.0) {
    return add_(other, -alpha);
  }
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double other);
  Tensor& div_(const Tensor& other);
  Tensor& copy_(const Tensor& src);  // broadcasts and converts dtype/device
  Tensor& fill_(double value);
  Tensor& zero_() {
    return fill_(0.0);
  }

 private:
  friend struct TensorAccess;
  // The runtime's tensor handle (one shared pointer), built in place by the library: the API
  // hands it to the runtime by reference, with no reference-count round trip per op.
  alignas(void*) unsigned char handle_[2 * sizeof(void*)];
};

template <>
bool Tensor::item<bool>() const;  // any nonzero value is true
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- Factories. `shape` is a list of sizes: ones({2, 3}), randn({4}, kFloat64).
// The factories of the creation and random tables (empty zeros ones full *_like arange linspace
// eye rand randn randint randperm normal bernoulli ...) are generated in table_ops.h.
Tensor from_blob(void* data, const IntList& shape, Dtype dtype = kFloat32,
                 std::function<void(void*)> deleter = nullptr);
// Copies of host data (CPU unless `options` says otherwise).
Tensor tensor(const std::vector<float>& values, const TensorOptions& options = kFloat32);
Tensor tensor(const std::vector<double>& values, const TensorOptions& options = kFloat64);
Tensor tensor(const std::vector<int64_t>& values, const TensorOptions& options = kInt64);
Tensor from_data(const void* data, const IntList& shape, const TensorOptions& options);
Tensor scalar_tensor(double value, const TensorOptions& options = {});

// ---- Autograd and runtime controls.
// While alive, ops on this thread record no autograd history (like Python's `no_grad()`).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};
bool is_grad_enabled();
// d(sum of outputs * grad_outputs)/d(inputs), without touching .grad().
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool create_graph = false);
void manual_seed(uint64_t seed);  // seeds every device's generator
// Waits for everything queued so far; throws the first kernel error no read has raised yet.
void synchronize();

}  // namespace v1
}  // namespace oneflow_like
