#include "oneflow_like/framework/op.h"
#include "oneflow_like/framework/inplace_multi.h"

#include <atomic>
#include <cstring>
#include <string_view>

#include "oneflow_like/framework/autocast.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/framework/trace_dtypes.h"
#include "oneflow_like/ops/copy.h"
#include "vm/instructions_builder.h"

// Profiler hooks, declared weakly (Note [Profiler recording], base/trace_recorder.h).
namespace oneflow_like::profiler {
extern std::atomic<bool> g_enabled __attribute__((weak));
bool RecordShapes() __attribute__((weak));
void AppendJsonEscaped(std::string* out, const char* s, size_t n) __attribute__((weak));
struct ThreadRecorder;
ThreadRecorder* BeginOpCall(uint64_t* previous) __attribute__((weak));
void EndOpCall(ThreadRecorder* recorder, const char* op_name, int64_t begin, uint64_t previous,
               std::string_view args) __attribute__((weak));
}  // namespace oneflow_like::profiler

namespace oneflow_like {
StatusOr<kernels::KernelFn> OpDef::Kernel(DeviceType device) const {
  std::atomic<kernels::KernelFn>& slot = kernel_cache_[static_cast<int>(device)];
  kernels::KernelFn fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  ASSIGN_OR_RETURN(fn, kernels::FindKernel(name, device));
  slot.store(fn, std::memory_order_release);
  return fn;
}

namespace {

LazyDispatchFn g_lazy_dispatch = nullptr;

struct ViewSpec {
  vm::Blob* blob;
  DType dtype;
  Shape shape;
  DimVector strides;
  int64_t offset;
};

ViewSpec SpecOf(const Tensor& t) {
  return ViewSpec{t.blob().get(), t.dtype(), t.shape(), t.strides(), t.offset()};
}

// The kernel's view, built in place (one copy of the shape and strides).
void AppendView(vm::Blob* blob, DType dtype, const Shape& shape, const DimVector& strides,
                int64_t offset, absl::InlinedVector<kernels::TensorView, 4>* views) {
  // Copy-constructed, not assigned: an inline DimVector's copy is a memcpy, its assignment a
  // generic element loop (about 60 instructions per view field).
  views->push_back(kernels::TensorView{static_cast<char*>(blob->data()) + offset * DTypeSize(dtype),
                                       dtype, shape, strides});
}
void AppendView(const ViewSpec& s, absl::InlinedVector<kernels::TensorView, 4>* views) {
  AppendView(s.blob, s.dtype, s.shape, s.strides, s.offset, views);
}
void AppendView(const Tensor& t, absl::InlinedVector<kernels::TensorView, 4>* views) {
  AppendView(t.blob().get(), t.dtype(), t.shape(), t.strides(), t.offset(), views);
}

// The OpCall the VM runs: resolves the blobs' addresses (allocated in Prepare) and calls the
// kernel.
class KernelCall : public vm::OpKernelCall {
 public:
  KernelCall(const OpDef* op, AttrMap attrs, Device device, kernels::KernelFn fn, int64_t cost)
      : op_(op), attrs_(std::move(attrs)), device_(device), fn_(fn), cost_(cost) {}
  const char* op_name() const override { return op_->name; }
  int64_t CostHint() const override { return cost_; }
  Status Compute(oneflow_like::Stream* stream) override {
    absl::InlinedVector<kernels::TensorView, 4> in, out;
    for (auto& s : ins) AppendView(s, &in);
    for (auto& s : outs) AppendView(s, &out);
    kernels::KernelContext ctx(op_->name, device_, attrs_, in, out, stream);
    return fn_(ctx);
  }
  absl::InlinedVector<ViewSpec, 4> ins;
  absl::InlinedVector<ViewSpec, 2> outs;

 private:
  const OpDef* op_;
  AttrMap attrs_;
  Device device_;
  kernels::KernelFn fn_;
  int64_t cost_;
};

// The profiler's clock (profiler::NowTicks in base/trace_recorder.h): the TSC.
inline int64_t Ticks() {
  return static_cast<int64_t>(__builtin_ia32_rdtsc());
}

// While profiling, an op's launch is a "cpu_op" span on the caller's thread; the instruction it
// issues (or the inline run) gets a flow arrow from it. Args: input shapes and dtypes, with the
// keys torch.profiler writes ("Input Dims", "Input type").
class ProfiledLaunch {
 public:
  ProfiledLaunch(const OpDef& op, absl::Span<const Tensor> ins)
      : on_(&profiler::g_enabled != nullptr && profiler::g_enabled.load(std::memory_order_relaxed)),
        op_(op),
        ins_(ins) {
    if (!on_) return;
    recorder_ = profiler::BeginOpCall(&previous_call_);
    begin_ = Ticks();
  }
  ~ProfiledLaunch() {
    if (!on_) return;
    if (!profiler::RecordShapes()) {
      profiler::EndOpCall(recorder_, op_.name, begin_, previous_call_, std::string_view());
      return;
    }
    std::string args = "\"Input Dims\": [";
    for (size_t i = 0; i < ins_.size(); ++i) {
      absl::StrAppend(&args, i ? ", [" : "[");
      const Shape& shape = ins_[i].shape();
      for (int64_t d = 0; d < shape.ndim(); ++d) absl::StrAppend(&args, d ? ", " : "", shape[d]);
      args += "]";
    }
    args += "], \"Input type\": [";
    for (size_t i = 0; i < ins_.size(); ++i) {
      const char* dt = DTypeLongName(ins_[i].dtype());
      absl::StrAppend(&args, i ? ", \"" : "\"");
      profiler::AppendJsonEscaped(&args, dt, std::strlen(dt));
      args += "\"";
    }
    args += "]";
    profiler::EndOpCall(recorder_, op_.name, begin_, previous_call_, args);
  }

 private:
  const bool on_;
  const OpDef& op_;
  absl::Span<const Tensor> ins_;
  profiler::ThreadRecorder* recorder_ = nullptr;
  uint64_t previous_call_ = 0;
  int64_t begin_ = 0;
};

int64_t CostOf(absl::Span<const Tensor> outputs, absl::Span<const Tensor> inputs) {
  int64_t n = 0;
  for (auto& t : outputs) n += t.numel();
  for (auto& t : inputs) n += t.numel();
  return n;
}

Status Launch(const OpDef& op, absl::Span<const Tensor> ins, const AttrMap& attrs,
              absl::Span<const Tensor> outs, Device device) {
  ProfiledLaunch profiled(op, ins);
  ASSIGN_OR_RETURN(kernels::KernelFn fn, op.Kernel(device.type()));
  int64_t cost = CostOf(outs, ins);
  vm::VirtualMachine* vm = vm::VirtualMachine::Get();
  if (device.is_cpu()) {
    // Small work on an idle CPU stream runs right here, without building an instruction.
    vm::DependenceVector in_deps, out_deps;
    for (auto& t : ins) in_deps.push_back(t.blob()->dependence());
    for (auto& t : outs) out_deps.push_back(t.blob()->dependence());
    bool ran = vm->TryRunInline(in_deps, out_deps, cost, [&]() -> Status {
      absl::InlinedVector<kernels::TensorView, 4> in, out;
      for (auto& t : outs) RETURN_IF_ERROR(t.blob()->EnsureAllocated());
      for (auto& t : ins) AppendView(t, &in);
      for (auto& t : outs) AppendView(t, &out);
      kernels::KernelContext ctx(op.name, device, attrs, in, out, nullptr);
      Status s = fn(ctx);
      if (!s.ok() && std::string(s.message()).rfind(absl::StrCat("[", op.name, "]"), 0) != 0)
        s = Status(s.code(), absl::StrCat("[", op.name, "] ", s.message()));
      return s;
    });
    if (ran) return Status();
  }
  auto call = std::make_unique<KernelCall>(&op, attrs, device, fn, cost);
  absl::InlinedVector<vm::BlobPtr, 4> in_blobs;
  absl::InlinedVector<vm::BlobPtr, 2> out_blobs;
  for (auto& t : ins) {
    call->ins.push_back(SpecOf(t));
    in_blobs.push_back(t.blob());
  }
  for (auto& t : outs) {
    call->outs.push_back(SpecOf(t));
    out_blobs.push_back(t.blob());
  }
  // Transfers run on the accelerator's compute stream, in order with its kernels: eager CUDA
  // is asynchronous (an instruction retires before its kernel ran), so a copy on a separate
  // H2D/D2H stream could read an output not yet written or overwrite memory a queued kernel
  // still reads (seen on the first GPU runs). The copy kernel waits for its stream
  // (Note [CUDA instruction completion], device/cuda/stream_policy.cc).
  return vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    return b->Call(device, std::move(in_blobs), std::move(out_blobs), std::move(call),
                   vm::StreamRole::kCompute);
  });
}

std::atomic<uint64_t> g_sequence_nr{0};

bool AnyRequiresGrad(TensorSpan ts) {
  for (auto& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

// `save_as`: the tensors to save in the inputs' place (an in-place op's clone of its target's old
// value); empty: the inputs themselves.
StatusOr<std::shared_ptr<OpNode>> RecordNode(const OpDef& op, TensorSpan inputs,
                                             const AttrMap& attrs, TensorSpan outputs,
                                             TensorSpan save_as = {}) {
  auto node = std::make_shared<OpNode>(&op, attrs);
  node->sequence_nr = g_sequence_nr.fetch_add(1);
  node->num_outputs = static_cast<int>(outputs.size());
  node->output_hooks.resize(outputs.size());
  // One allocation each (push_back's growth would allocate twice for a binary op).
  node->input_metas.reserve(inputs.size());
  node->next_edges.reserve(inputs.size());
  uint64_t requiring = 0;  // bit i: input i requires grad
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    node->input_metas.push_back(TensorMeta{t.shape(), t.dtype(), t.device()});
    const bool r = t.requires_grad();
    node->next_edges.push_back(r ? GradientEdge(t) : Edge{});
    if (r && i < 64) requiring |= uint64_t{1} << i;
  }
  const TensorSpan values = save_as.empty() ? inputs : save_as;
  TensorSpan saved = op.save_inputs ? values : TensorSpan();
  TensorList some;  // OpSpec::InputReaders: only the inputs a gradient that will run reads
  if (op.save_inputs && op.input_readers) {
    some.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      some.push_back(InputIsRead(op.input_readers, i, requiring) ? values[i] : Tensor());
    saved = some;
  }
  RETURN_IF_ERROR(node->Save(saved, op.save_outputs ? outputs : TensorSpan()));
  SetHistory(outputs, node);
  return node;
}

Status CheckDefined(const OpDef& op, TensorSpan inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined())
      return InvalidArgument("[%s] input %d is an undefined tensor", op.name, int(i));
  return Status();
}

}  // namespace

void SetLazyDispatch(LazyDispatchFn fn) {
  g_lazy_dispatch = fn;
}

namespace {
thread_local bool t_tracing = false;
thread_local bool t_trace_complex = false;

// A lazy input while this thread records no trace. Keyed on t_tracing (per thread), not on
// g_lazy_dispatch: that is installed by the first nn.Graph and stays for the process, so
// testing it alone made the error depend on whether a graph had run before.
Status LazyOutsideTrace(const OpDef& op) {
  return Internal(
      "[%s] lazy tensor outside of a trace (a tensor traced by an nn.Graph used after "
      "it, or a sparse tensor passed to a dense function: use its methods, flow.sparse or "
      ".to_dense())",
      op.name);
}
}  // namespace
void SetTraceRecordsComplex(bool on) {
  t_trace_complex = on;
}
bool TraceRecordsComplex() {
  return t_trace_complex;
}
void SetTracingActive(bool active) {
  t_tracing = active;
}
bool TracingActive() {
  return t_tracing;
}

int64_t KernelCostHint(TensorSpan outputs, TensorSpan inputs) {
  return CostOf(outputs, inputs);
}

Status CheckSameDevice(const char* op, TensorSpan inputs) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].device() != inputs[0].device())
      return InvalidArgument(
          "[%s] expected all tensors on the same device, got %s on %s and %s on %s", op,
          inputs[0].meta_string(), inputs[0].device().ToString(), inputs[i].meta_string(),
          inputs[i].device().ToString());
  }
  return Status();
}

Status CheckFloating(const char* op, const Tensor& t) {
  if (!IsFloating(t.dtype()))
    return TypeError("[%s] expected a floating point tensor, got %s", op, t.meta_string());
  return Status();
}

Status CheckNumInputs(const char* op, TensorSpan inputs, size_t n) {
  if (inputs.size() != n)
    return InvalidArgument("[%s] expected %d inputs, got %d", op, int(n), int(inputs.size()));
  return Status();
}

// Every output must be countable: its element count and byte size fit in int64. A shape whose
// product overflows would otherwise wrap (to a small or zero size) and run kernels on garbage.
static Status CheckOutputsFit(const OpDef& op, const std::vector<TensorMeta>& metas) {
  for (const TensorMeta& m : metas) {
    int64_t n = 1;
    bool overflow = false, empty = false;
    for (int64_t d : m.shape.dims()) {
      if (d < 0)
        return InvalidArgument("[%s] output shape %s has a negative dimension", op.name,
                               m.shape.ToString());
      empty |= d == 0;
      overflow |= __builtin_mul_overflow(n, d, &n);
    }
    int64_t bytes = 0;
    overflow |= __builtin_mul_overflow(n, static_cast<int64_t>(DTypeSize(m.dtype)), &bytes);
    if (overflow && !empty)  // an empty tensor holds nothing, whatever its other dims
      return InvalidArgument(
          "[%s] output shape %s of %s is too large: its element count or byte size overflows "
          "int64",
          op.name, m.shape.ToString(), DTypeName(m.dtype));
  }
  return Status();
}

// f16/bf16 inputs of an op whose kernels take only f32/f64: computed in f32 (casts recorded for
// autograd), outputs cast back unless the op was given an output dtype.
static StatusOr<TensorList> DispatchViaF32(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                                           DType low) {
  AutocastSuspend no_autocast;  // the inputs were already cast: f32 here is not a region's f32
  TensorList up;
  for (const Tensor& t : inputs) {
    if (t.defined() && (t.dtype() == DType::kF16 || t.dtype() == DType::kBF16)) {
      ASSIGN_OR_RETURN(Tensor c, functional::Cast(t, DType::kF32));
      up.push_back(c);
    } else {
      up.push_back(t);
    }
  }
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(op, up, attrs));
  if (attrs.Has("dtype")) return outs;
  for (Tensor& o : outs)
    if (o.dtype() == DType::kF32) {
      ASSIGN_OR_RETURN(o, functional::Cast(o, low));
    }
  return outs;
}

namespace {
// A container from a small per-thread pool of cleared ones (a dispatch's output metas, a braced
// input list): no heap allocation per call. Dispatches nest (a contiguous copy of an input, a
// gradient's ops), hence a pool rather than one.
template <typename T>
class Scratch {
 public:
  Scratch() : pool_(Pool()) {  // one thread-local lookup per scratch
    if (!pool_.empty()) {
      value_ = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  ~Scratch() {
    value_.clear();  // drops held references now, not when the container is reused
    if (pool_.size() < 8) pool_.push_back(std::move(value_));
  }
  T& get() { return value_; }

 private:
  static std::vector<T>& Pool() {
    static thread_local std::vector<T> pool;
    return pool;
  }
  std::vector<T>& pool_;
  T value_;
};
}  // namespace

namespace {
// Dispatch's body, writing the outputs into `outputs` (a TensorList, or one inline slot for
// Dispatch1: no heap vector per call).
// What DispatchTo asks of every input, found in one pass (the checks still run in its order).
struct InputScan {
  bool low = false;  // an f16/bf16 input
  bool mixed_devices = false;
  bool lazy = false;
  bool non_contiguous = false;
  bool requires_grad = false;
};

// Complex tensors reach only the kernels written for them (the copies' conversions, the
// transforms, complex_bmm and the LAPACK ops with complex paths, on the CPU) and views; every
// other kernel's dtype switch has no complex case, so the op is refused here, naming it, its
// dtype and the device.
bool HasComplexKernel(const OpDef& op) {
  static const char* const kOps[] = {
      "cast", "contiguous", "copy_", "to_device", "complex", "fft_c2c", "fft_r2c", "fft_c2r",
      "linalg_eig", "linalg_eig_backward", "complex_bmm",
      // the LAPACK family's c* / z* paths (kernels/cpu/linalg.cc)
      "linalg_inv", "linalg_inv_ex", "linalg_solve", "linalg_solve_ex", "linalg_slogdet",
      "linalg_cholesky", "linalg_cholesky_ex", "linalg_eigh", "linalg_qr", "linalg_svd"};
  for (const char* n : kOps)
    if (std::strcmp(op.name, n) == 0) return true;
  return false;
}
// The ordering ops raise torch's own error for complex values (a RuntimeError), not the generic
// "not supported".
Status ComplexOrderingError(const OpDef& op, DType t) {
  static const char* const kKernelNames[][2] = {
      {"sort", "sort"},         {"argsort", "sort"},      {"msort", "sort"},
      {"topk", "topk_cpu"},     {"amax", "max_all"},      {"amin", "min_all"},
      {"argmax", "argmax_cpu"}, {"argmin", "argmin_cpu"}, {"kthvalue", "kthvalue_cpu"},
      {"lt", "lt_cpu"},         {"le", "le_cpu"},         {"gt", "gt_cpu"},
      {"ge", "ge_cpu"},         {"lt_scalar", "lt_cpu"},  {"le_scalar", "le_cpu"},
      {"gt_scalar", "gt_cpu"},  {"ge_scalar", "ge_cpu"}};
  for (const auto& k : kKernelNames)
    if (std::strcmp(op.name, k[0]) == 0)
      return Unimplemented("\"%s\" not implemented for '%s'", k[1], DTypeTorchName(t));
  if (std::strcmp(op.name, "max_dim") == 0)
    return Unimplemented("max(): does not support complex input");
  if (std::strcmp(op.name, "min_dim") == 0)
    return Unimplemented("min(): does not support complex input");
  if (std::strcmp(op.name, "maximum") == 0 || std::strcmp(op.name, "minimum") == 0)
    return Unimplemented("%s not implemented for complex tensors.", op.name);
  if (std::strncmp(op.name, "clamp", 5) == 0)
    return Unimplemented("clamp is not supported for complex types");
  return Status();
}
Status CheckComplex(const OpDef& op, TensorSpan inputs, const std::vector<TensorMeta>& metas) {
  DType t = DType::kF32;
  bool any = false;
  Device device;
  for (const Tensor& x : inputs)
    if (IsComplex(x.dtype())) {
      t = x.dtype();
      device = x.device();
      any = true;
      break;
    }
  for (const TensorMeta& m : metas)
    if (IsComplex(m.dtype)) {
      if (!any) t = m.dtype;
      device = m.device;
      any = true;
    }
  if (!any || op.view) return Status();
  // to_device is a byte copy on every device; the other complex kernels are the CPU's
  const bool transfer = std::strcmp(op.name, "to_device") == 0;
  if (!HasComplexKernel(op)) RETURN_IF_ERROR(ComplexOrderingError(op, t));
  if ((!device.is_cpu() && !transfer) || !HasComplexKernel(op))
    return TypeError("[%s] not supported for %s on %s", op.name, DTypeLongName(t),
                     device.is_cpu() ? "cpu" : "cuda");
  return Status();
}

// torch 2.x's limited-support dtypes (u16/u32/u64 and float8) reach only the kernels written
// for them: on the CPU the copies' conversions, fills and (unsigned only) comparisons, bitwise
// ops and min/max; on CUDA the byte copies between devices. Every other op is refused here with
// torch's message ("add" not implemented for 'UInt16').
bool HasLimitedKernel(const OpDef& op, DType t, bool cpu) {
  static const char* const kCopies[] = {"cast",      "contiguous", "copy_",
                                        "to_device", "full",       "fill_"};
  static const char* const kUnsigned[] = {
      "eq",        "ne",        "lt",          "le",         "gt",          "ge",
      "eq_scalar", "ne_scalar", "lt_scalar",   "le_scalar",  "gt_scalar",   "ge_scalar",
      "maximum",   "minimum",   "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
      "amax",      "amin",      "max_dim",     "min_dim"};
  if (!cpu) return std::strcmp(op.name, "to_device") == 0;
  for (const char* n : kCopies)
    if (std::strcmp(op.name, n) == 0) return true;
  if (IsUnsignedWide(t))
    for (const char* n : kUnsigned)
      if (std::strcmp(op.name, n) == 0) return true;
  return false;
}
Status CheckLimited(const OpDef& op, TensorSpan inputs, const std::vector<TensorMeta>& metas) {
  if (op.view) return Status();
  for (const Tensor& x : inputs)
    if (IsLimited(x.dtype()) && !HasLimitedKernel(op, x.dtype(), x.device().is_cpu()))
      return LimitedNotImplemented(op.name, x.dtype());
  for (const TensorMeta& m : metas)
    if (IsLimited(m.dtype) && !HasLimitedKernel(op, m.dtype, m.device.is_cpu()))
      return LimitedNotImplemented(op.name, m.dtype);
  return Status();
}

Status ScanInputs(const OpDef& op, TensorSpan inputs, InputScan* scan) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) return CheckDefined(op, inputs);
    const DType dtype = t.dtype();
    scan->low |= dtype == DType::kF16 || dtype == DType::kBF16;
    scan->mixed_devices |= t.device() != inputs[0].device();
    scan->lazy |= t.is_lazy();
    if (!op.strided_inputs) scan->non_contiguous |= !t.is_contiguous();
    scan->requires_grad |= t.requires_grad();
  }
  return Status();
}

template <typename Outputs>
Status DispatchTo(const OpDef& op, TensorSpan inputs, const AttrMap& attrs, Outputs* out_list) {
  Outputs& outputs = *out_list;
  InputScan scan;
  RETURN_IF_ERROR(ScanInputs(op, inputs, &scan));
  if (AutocastMaybeActive()) {
    ASSIGN_OR_RETURN(std::optional<TensorList> cast, AutocastInputs(op, inputs));
    if (cast) {
      ASSIGN_OR_RETURN(TensorList r, Dispatch(op, *cast, attrs));
      outputs.assign(std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
      return Status();
    }
  }
  DType low;
  if (scan.low && NeedsF32Compute(op, inputs, &low)) {
    ASSIGN_OR_RETURN(TensorList r, DispatchViaF32(op, inputs, attrs, low));
    outputs.assign(std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
    return Status();
  }
  if (!op.cross_device && scan.mixed_devices) RETURN_IF_ERROR(CheckSameDevice(op.name, inputs));
  Scratch<std::vector<TensorMeta>> scratch;
  std::vector<TensorMeta>& metas = scratch.get();
  RETURN_IF_ERROR(op.infer(inputs, attrs, &metas));
  RETURN_IF_ERROR(CheckOutputsFit(op, metas));
  RETURN_IF_ERROR(CheckComplex(op, inputs, metas));
  RETURN_IF_ERROR(CheckLimited(op, inputs, metas));
  if (t_tracing || scan.lazy) {
    // The graph compiler has no complex or limited types: name the op and dtype instead of
    // lowering.
    // (vmap's trace records complex ops: it replays them eagerly, trace_dtypes.h)
    const bool complex_ok = t_tracing && t_trace_complex;
    for (const auto& m : metas)
      if ((IsComplex(m.dtype) && !complex_ok) || IsLimited(m.dtype))
        return TypeError("[%s] nn.Graph does not support %s tensors (they run eagerly only)",
                         op.name, DTypeLongName(m.dtype));
    for (const auto& t : inputs)
      if ((IsComplex(t.dtype()) && !complex_ok) || IsLimited(t.dtype()))
        return TypeError("[%s] nn.Graph does not support %s tensors (they run eagerly only)",
                         op.name, DTypeLongName(t.dtype()));
    if (!g_lazy_dispatch || !t_tracing) return LazyOutsideTrace(op);
    ASSIGN_OR_RETURN(TensorList r, g_lazy_dispatch(op, inputs, attrs, metas, nullptr));
    outputs.assign(std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  } else if (op.view) {
    Shape shape;
    DimVector strides;
    int64_t offset = 0;
    RETURN_IF_ERROR(op.view(inputs[0], attrs, &shape, &strides, &offset));
    outputs.push_back(Tensor::MakeView(inputs[0], std::move(shape), std::move(strides), offset));
    outputs.back().impl()->dtype = metas[0].dtype;  // view_as_real / view_as_complex
    if (!GradModeEnabled()) {
      // torch: a view made in no_grad mode of a tensor that requires grad requires grad too (a
      // leaf without grad_fn, whose gradient goes nowhere: GradientEdge), so ops on it in grad
      // mode record, and changing it in place with grad enabled is refused (CheckViewInplace).
      // Unlike torch's, which asks the base each time, the flag is the base's at creation.
      Tensor& v = outputs.back();
      v.impl()->view_creation = ViewCreation::kNoGrad;
      if (inputs[0].requires_grad() && (IsFloating(v.dtype()) || IsComplex(v.dtype())))
        v.mutable_autograd_meta()->requires_grad = true;
    }
  } else {
    TensorList kin;
    TensorSpan ins = inputs;
    if (!op.strided_inputs) {
      if (scan.non_contiguous) {
        NoGradGuard g;
        for (auto& t : inputs) {
          if (t.is_contiguous()) {
            kin.push_back(t);
            continue;
          }
          ASSIGN_OR_RETURN(Tensor c, functional::Contiguous(t));
          kin.push_back(c);
        }
        ins = kin;
      }
    }
    outputs.reserve(metas.size());
    for (auto& m : metas) outputs.push_back(Tensor::Empty(m.shape, m.dtype, m.device));
    Device device = !metas.empty() ? metas[0].device : inputs[0].device();
    // Transfers run on the accelerator's side (its copy kernels can reach both memories).
    if (op.cross_device && device.is_cpu() && !inputs.empty()) device = inputs[0].device();
    RETURN_IF_ERROR(Launch(op, ins, attrs, outputs, device));
  }
  if (op.grad && scan.requires_grad && GradModeEnabled())
    RETURN_IF_ERROR(RecordNode(op, inputs, attrs, outputs).status());
  return Status();
}
}  // namespace

StatusOr<TensorList> Dispatch(const OpDef& op, TensorSpan inputs, const AttrMap& attrs) {
  TensorList outputs;
  RETURN_IF_ERROR(DispatchTo(op, inputs, attrs, &outputs));
  return outputs;
}

StatusOr<Tensor> Dispatch1(const OpDef& op, TensorSpan inputs, const AttrMap& attrs) {
  absl::InlinedVector<Tensor, 1> outputs;
  RETURN_IF_ERROR(DispatchTo(op, inputs, attrs, &outputs));
  if (outputs.empty()) return Internal("[%s] produced no output", op.name);
  return std::move(outputs[0]);
}

Status DispatchInplace(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                       const Tensor& out) {
  RETURN_IF_ERROR(CheckDefined(op, inputs));
  if (!out.defined()) return InvalidArgument("[%s] in-place target is undefined", op.name);
  DType low;
  if (NeedsF32Compute(op, inputs, &low)) {
    ASSIGN_OR_RETURN(TensorList r, DispatchViaF32(op, inputs, attrs, low));
    return functional::CopyInto(out, r[0]);
  }
  if (!op.cross_device) RETURN_IF_ERROR(CheckSameDevice(op.name, inputs));
  if (!inputs.empty() && out.device() != inputs[0].device())
    return InvalidArgument("[%s] in-place target on %s but inputs on %s", op.name,
                           out.device().ToString(), inputs[0].device().ToString());
  Scratch<std::vector<TensorMeta>> scratch;
  std::vector<TensorMeta>& metas = scratch.get();
  RETURN_IF_ERROR(op.infer(inputs, attrs, &metas));
  if (metas.size() != 1 || metas[0].shape != out.shape())
    return InvalidArgument("[%s] in-place result of shape %s does not match the target %s", op.name,
                           metas.empty() ? "()" : metas[0].shape.ToString(), out.meta_string());
  if (metas[0].dtype != out.dtype())
    return TypeError("[%s] in-place result type %s can't be cast to the target's %s", op.name,
                     DTypeLongName(metas[0].dtype), DTypeLongName(out.dtype()));
  RETURN_IF_ERROR(CheckComplex(op, inputs, metas));
  RETURN_IF_ERROR(CheckLimited(op, inputs, metas));
  // A view of a base that requires grad counts as requiring it (a view made in no_grad mode has
  // no history of its own, and torch refuses to change it in place with grad enabled).
  const TensorImpl* view = out.impl();
  bool track = op.grad && GradModeEnabled() &&
               (AnyRequiresGrad(inputs) || out.requires_grad() ||
                (view->view_base && Tensor(view->view_base).requires_grad()));
  // (a view's own refusals come first, CheckViewInplace: as torch's check_inplace)
  if (GradModeEnabled() && out.requires_grad() && out.is_leaf() && !view->view_base)
    return InvalidArgument("[%s] a leaf tensor that requires grad is used in an in-place operation",
                           op.name);
  if (track && !op.grad) return InvalidArgument("[%s] in-place op is not differentiable", op.name);
  bool lazy = t_tracing || out.is_lazy();
  for (auto& t : inputs) lazy |= t.is_lazy();
  // A view of a tracked base: the base's history is rebased after the op (RebaseHistory).
  const bool rebase = track && !lazy && out.impl()->view_base != nullptr;
  if (rebase) RETURN_IF_ERROR(CheckViewInplace(op.name, out));
  if (track && lazy && out.is_view())
    return Unimplemented(
        "[%s] in-place modification of a view that requires grad is not supported inside an "
        "nn.Graph trace; use an out-of-place op",
        op.name);
  // The target's old value, when a gradient that will run reads it, is saved as a copy made
  // before the op overwrites it (torch's original_self): b.mul_(w) with both requiring grad.
  TensorList save_as;
  if (track && op.save_inputs && !lazy) {
    uint64_t requiring = 0;
    for (size_t i = 0; i < inputs.size() && i < 64; ++i)
      if (inputs[i].requires_grad()) requiring |= uint64_t{1} << i;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].same(out) || !InputIsRead(op.input_readers, i, requiring)) continue;
      if (save_as.empty()) save_as.assign(inputs.begin(), inputs.end());
      // recorded: double backward reaches the old value's history through the copy
      ASSIGN_OR_RETURN(save_as[i], functional::Clone(inputs[i]));
    }
  }
  std::shared_ptr<OpNode> node;
  bool bumped = false;
  if (lazy) {
    if (!g_lazy_dispatch || !t_tracing) return LazyOutsideTrace(op);
    ASSIGN_OR_RETURN(TensorList r, g_lazy_dispatch(op, inputs, attrs, metas, &out));
    (void)r;
  } else if (!op.strided_inputs && !out.is_contiguous()) {
    // A kernel that writes contiguous memory, into a strided target (a transposed view): the
    // result computed out of place, then copied in (copy_ bumps the version once). Recorded
    // first, so saved inputs (maybe `out`) keep their pre-op version.
    if (track) {
      ASSIGN_OR_RETURN(node, RecordNode(op, inputs, attrs, {out}, save_as));
    }
    NoGradGuard g;
    ASSIGN_OR_RETURN(Tensor r, Dispatch1(op, inputs, attrs));
    RETURN_IF_ERROR(functional::CopyInto(out, r));
    bumped = true;
  } else {
    TensorList copies;  // only when an input must be made contiguous
    TensorSpan ins = inputs;
    if (!op.strided_inputs) {
      NoGradGuard g;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (!inputs[i].is_contiguous()) {
          if (copies.empty()) copies.assign(inputs.begin(), inputs.end());
          ASSIGN_OR_RETURN(copies[i], functional::Contiguous(inputs[i]));
          ins = copies;
        }
    }
    RETURN_IF_ERROR(Launch(op, ins, attrs, absl::MakeConstSpan(&out, 1), out.device()));
  }
  // Record before the version bump: saved inputs (maybe `out` itself) keep their pre-op version.
  if (track && !node) {
    ASSIGN_OR_RETURN(node, RecordNode(op, inputs, attrs, {out}, save_as));
  }
  if (!bumped) out.bump_version();
  if (node) node->RefreshOutputVersions();
  if (node && rebase) RETURN_IF_ERROR(RebaseHistory(out, node));
  return Status();
}

Status DispatchInplaceMulti(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                            TensorSpan outs) {
  RETURN_IF_ERROR(CheckDefined(op, inputs));
  if (outs.empty()) return InvalidArgument("[%s] no in-place target", op.name);
  for (size_t i = 0; i < outs.size(); ++i)
    if (!outs[i].defined())
      return InvalidArgument("[%s] in-place target %d is undefined", op.name, int(i));
  bool lazy = t_tracing;
  for (auto& t : inputs) lazy |= t.is_lazy();
  for (auto& t : outs) lazy |= t.is_lazy();
  if (lazy)
    return Unimplemented(
        "[%s] updates its tensors in place eagerly and is not supported inside an "
        "nn.Graph trace",
        op.name);
  if (GradModeEnabled()) {
    for (auto& t : outs)
      if (t.requires_grad())
        return InvalidArgument(
            "[%s] in-place op is not differentiable, but target %s requires grad", op.name,
            t.meta_string());
  }
  RETURN_IF_ERROR(CheckSameDevice(op.name, inputs));
  const Device device = outs[0].device();
  for (auto& t : outs)
    if (t.device() != device || (!inputs.empty() && t.device() != inputs[0].device()))
      return InvalidArgument(
          "[%s] expected all tensors on the same device, got %s on %s and %s on %s", op.name,
          outs[0].meta_string(), device.ToString(), t.meta_string(), t.device().ToString());
  for (auto& t : inputs)
    if (!t.is_contiguous())
      return InvalidArgument("[%s] expects contiguous tensors, got %s", op.name, t.meta_string());
  for (auto& t : outs)
    if (!t.is_contiguous())
      return InvalidArgument("[%s] expects contiguous tensors, got %s", op.name, t.meta_string());
  Scratch<std::vector<TensorMeta>> scratch;
  std::vector<TensorMeta>& metas = scratch.get();
  RETURN_IF_ERROR(op.infer(inputs, attrs, &metas));
  if (metas.size() != outs.size())
    return Internal("[%s] infers %d results for %d in-place targets", op.name, int(metas.size()),
                    int(outs.size()));
  for (size_t i = 0; i < outs.size(); ++i)
    if (metas[i].shape != outs[i].shape() || metas[i].dtype != outs[i].dtype())
      return InvalidArgument(
          "[%s] in-place result %d (%s of shape %s) does not match the target %s", op.name, int(i),
          DTypeLongName(metas[i].dtype), metas[i].shape.ToString(), outs[i].meta_string());
  RETURN_IF_ERROR(CheckComplex(op, inputs, metas));
  RETURN_IF_ERROR(CheckLimited(op, inputs, metas));
  RETURN_IF_ERROR(Launch(op, inputs, attrs, outs, device));
  for (auto& t : outs) t.bump_version();
  return Status();
}

}  // namespace oneflow_like
