#include "oneflow_like/framework/autocast.h"

#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "oneflow_like/framework/op.h"
#include "oneflow_like/ops/copy.h"

namespace oneflow_like {
namespace {

struct ThreadAutocast {
  AutocastState state[kNumDeviceTypes];
  bool suspended = false;
  int nesting = 0;
  // Weight-cast cache: a leaf that requires grad, cast to a dtype, at a storage version.
  struct Entry {
    Tensor source, cast;
    int64_t version;
  };
  std::vector<Entry> cache;
  ~ThreadAutocast();
};
thread_local ThreadAutocast t_autocast;

bool IsLow(DType t) {
  return t == DType::kF16 || t == DType::kBF16;
}

using PolicyMap = absl::flat_hash_map<std::string_view, AutocastPolicy>;

// PyTorch's autocast lists (aten/src/ATen/autocast_mode.cpp), spelled with this runtime's op
// names, space-separated; an op missing here runs in its inputs' types. Losses written as
// composites name themselves through AutocastArgs.
constexpr const char* kLowerOps =
    "matmul linear conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu "
    "scaled_dot_product_attention";
// CUDA adds the whole-sequence RNN (PyTorch's _cudnn_rnn); the CPU's rnn_seq kernel is f32/f64.
constexpr const char* kLowerOpsCuda = "rnn_seq";
constexpr const char* kF32Ops =  // losses, linear algebra, products (both devices)
    "nll_loss binary_cross_entropy binary_cross_entropy_with_logits mse_loss l1_loss "
    "smooth_l1_loss huber_loss kl_div cross_entropy_loss margin_ranking_loss soft_margin_loss "
    "hinge_embedding_loss cosine_embedding_loss triplet_margin_loss multi_margin_loss "
    "poisson_nll_loss prod cdist linalg_inv linalg_solve linalg_cholesky linalg_qr linalg_svd "
    "linalg_eigh";
constexpr const char* kF32OpsCpu = "avg_pool3d max_pool3d adaptive_avg_pool3d";
// CUDA adds the numerically sensitive pointwise ops, norms and reductions.
constexpr const char* kF32OpsCuda =
    "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
    "pow_scalar softplus layer_norm group_norm norm cosine_similarity logsumexp softmax "
    "log_softmax sum cumsum cumprod";
constexpr const char* kPromoteOps = "cat stack index_put scatter_add addcmul addcdiv atan2 dot";

void AddAll(PolicyMap* m, std::string_view names, AutocastPolicy p) {
  while (!names.empty()) {
    size_t end = names.find(' ');
    if (end != 0) (*m)[names.substr(0, end)] = p;
    if (end == std::string_view::npos) break;
    names.remove_prefix(end + 1);
  }
}
PolicyMap MakePolicies(DeviceType device) {
  PolicyMap m;
  AddAll(&m, kLowerOps, AutocastPolicy::kLower);
  if (device == DeviceType::kCUDA) AddAll(&m, kLowerOpsCuda, AutocastPolicy::kLower);
  AddAll(&m, kF32Ops, AutocastPolicy::kF32);
  AddAll(&m, device == DeviceType::kCUDA ? kF32OpsCuda : kF32OpsCpu, AutocastPolicy::kF32);
  AddAll(&m, kPromoteOps, AutocastPolicy::kPromote);
  return m;
}

StatusOr<Tensor> CastCached(const Tensor& t, DType to, bool cache_enabled) {
  const bool cacheable = cache_enabled && t.is_leaf() && t.requires_grad();
  if (cacheable) {
    for (auto& e : t_autocast.cache)
      if (e.source.impl() == t.impl() && e.cast.dtype() == to && e.version == t.version())
        return e.cast;
  }
  ASSIGN_OR_RETURN(Tensor c, functional::Cast(t, to));
  if (cacheable) t_autocast.cache.push_back({t, c, t.version()});
  return c;
}

// Casts each floating input selected by `pick` to `to`; returns whether any changed.
template <typename Pick>
StatusOr<bool> CastFloating(TensorSpan in, DType to, bool cache, Pick pick, TensorList* out) {
  bool changed = false;
  out->clear();
  for (const Tensor& t : in) {
    if (t.defined() && IsFloating(t.dtype()) && t.dtype() != to && pick(t.dtype())) {
      ASSIGN_OR_RETURN(Tensor c, CastCached(t, to, cache));
      out->push_back(c);
      changed = true;
    } else {
      out->push_back(t);
    }
  }
  return changed;
}

StatusOr<std::optional<TensorList>> ApplyPolicy(AutocastPolicy p, const AutocastState& s,
                                                TensorSpan inputs) {
  TensorList out;
  bool changed = false;
  if (p == AutocastPolicy::kLower) {
    ASSIGN_OR_RETURN(changed, CastFloating(
                                  inputs, s.dtype, s.cache_enabled,
                                  [](DType t) { return t == DType::kF32; }, &out));
  } else if (p == AutocastPolicy::kF32) {
    ASSIGN_OR_RETURN(changed,
                     CastFloating(
                         inputs, DType::kF32, false, [](DType t) { return IsLow(t); }, &out));
  } else if (p == AutocastPolicy::kPromote) {
    DType widest = DType::kBool;
    bool any = false;
    for (const Tensor& t : inputs)
      if (t.defined() && IsFloating(t.dtype())) {
        widest = any ? PromoteTypes(widest, t.dtype()) : t.dtype();
        any = true;
      }
    if (!any) return std::optional<TensorList>();
    ASSIGN_OR_RETURN(changed, CastFloating(
                                  inputs, widest, false, [](DType) { return true; }, &out));
  }
  if (!changed) return std::optional<TensorList>();
  return std::optional<TensorList>(std::move(out));
}

// The device type an op's floating inputs live on, if autocast is on there.
const AutocastState* ActiveStateFor(TensorSpan inputs, DeviceType* device) {
  if (t_autocast.suspended) return nullptr;
  for (const Tensor& t : inputs) {
    if (!t.defined() || !IsFloating(t.dtype())) continue;
    *device = t.device().type();
    const AutocastState& s = t_autocast.state[static_cast<int>(*device)];
    return s.enabled ? &s : nullptr;
  }
  return nullptr;
}

// The region's state as one call applies it: a traced call (nn.Graph) records the same casts as
// eager, but the weight-cast cache holds eager tensors only (a lazy cast belongs to one trace).
AutocastState ForThisCall(const AutocastState& s, TensorSpan inputs) {
  AutocastState r = s;
  bool lazy = TracingActive();
  for (const Tensor& t : inputs) lazy |= t.defined() && t.is_lazy();
  if (lazy) r.cache_enabled = false;
  return r;
}

}  // namespace

AutocastState GetAutocastState(DeviceType device) {
  return t_autocast.state[static_cast<int>(device)];
}
std::atomic<int> g_autocast_enabled_states{0};

ThreadAutocast::~ThreadAutocast() {  // a thread that exits inside a region
  for (const AutocastState& s : state)
    if (s.enabled) g_autocast_enabled_states.fetch_sub(1, std::memory_order_relaxed);
}

void SetAutocastState(DeviceType device, const AutocastState& state) {
  AutocastState& s = t_autocast.state[static_cast<int>(device)];
  if (s.enabled != state.enabled)
    g_autocast_enabled_states.fetch_add(state.enabled ? 1 : -1, std::memory_order_relaxed);
  s = state;
}
int AutocastIncrementNesting() {
  return ++t_autocast.nesting;
}
int AutocastDecrementNesting() {
  return --t_autocast.nesting;
}
void ClearAutocastCache() {
  t_autocast.cache.clear();
}

AutocastSuspend::AutocastSuspend() : prev_(t_autocast.suspended) {
  t_autocast.suspended = true;
}
AutocastSuspend::~AutocastSuspend() {
  t_autocast.suspended = prev_;
}

AutocastPolicy AutocastPolicyOf(const char* op_name, DeviceType device) {
  static const PolicyMap* maps[kNumDeviceTypes] = {new PolicyMap(MakePolicies(DeviceType::kCPU)),
                                                   new PolicyMap(MakePolicies(DeviceType::kCUDA))};
  const PolicyMap& m = *maps[static_cast<int>(device)];
  auto it = m.find(op_name);
  return it == m.end() ? AutocastPolicy::kNone : it->second;
}

StatusOr<std::optional<TensorList>> AutocastInputs(const OpDef& op, TensorSpan inputs) {
  DeviceType device;
  const AutocastState* s = ActiveStateFor(inputs, &device);
  if (s == nullptr) return std::optional<TensorList>();
  AutocastPolicy p = AutocastPolicyOf(op.name, device);
  if (p == AutocastPolicy::kNone) return std::optional<TensorList>();
  return ApplyPolicy(p, ForThisCall(*s, inputs), inputs);
}

StatusOr<TensorList> AutocastArgs(const char* op_name, const TensorList& inputs) {
  DeviceType device;
  const AutocastState* s = ActiveStateFor(inputs, &device);
  if (s == nullptr) return inputs;
  ASSIGN_OR_RETURN(auto r,
                   ApplyPolicy(AutocastPolicyOf(op_name, device), ForThisCall(*s, inputs), inputs));
  return r ? *r : inputs;
}

namespace {
// Ops whose CPU kernels take bfloat16 themselves (kernels/cpu/bf16_loops.h: the elementwise
// tables, softmax, sum), eager calls only: the hot non-GEMM ops of an autocast training step,
// which would otherwise be computed through f32 tensors (a cast of each input and of the output).
// The elementwise ops and softmax give the same values (f32 math, one rounding); sum accumulates
// in f32 (torch's bf16 sum) where the f32 kernel accumulates in f64. dropout (forward and, being
// its own gradient, backward) masks and scales in f32 and rounds once: the same values.
// layer_norm and layer_norm_grad take float32 (or bf16) weight and bias beside bf16 x, keep the
// statistics in f32 and round y and dx once: the f32 path's y; dx from f32 statistics (that path
// rounds them to bf16 first), dweight/dbias in the parameters' dtype.
constexpr const char* kCpuBf16Ops =
    "add sub mul div add_scalar mul_scalar rsub_scalar rdiv_scalar neg relu relu_grad gelu "
    "gelu_grad silu silu_grad tanh tanh_grad sigmoid sigmoid_grad softmax softmax_grad "
    "log_softmax log_softmax_grad sum dropout layer_norm layer_norm_grad";

bool CpuBf16Native(const OpDef& op, TensorSpan inputs) {
  static const PolicyMap* names = [] {
    auto* m = new PolicyMap;
    AddAll(m, kCpuBf16Ops, AutocastPolicy::kNone);
    return m;
  }();
  if (!names->contains(op.name) || TracingActive()) return false;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (t.is_lazy() || t.device().type() != DeviceType::kCPU) return false;
    if (IsLow(t.dtype()) && t.dtype() != DType::kBF16) return false;
  }
  return true;
}
}  // namespace

bool NeedsF32Compute(const OpDef& op, TensorSpan inputs, DType* low) {
  if (op.view != nullptr) return false;
  for (const Tensor& t : inputs) {
    if (!t.defined() || !IsLow(t.dtype())) continue;
    if (op.low_precision_devices & (1u << static_cast<int>(t.device().type()))) return false;
    if (CpuBf16Native(op, inputs)) return false;
    *low = t.dtype();
    return true;
  }
  return false;
}

}  // namespace oneflow_like
