#include "oneflow_like/lazy/graph.h"

#include <atomic>
#include <chrono>
#include <string_view>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/lazy/launch_lazy_job_instruction_policy.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/random.h"
#include "vm/instructions_builder.h"

// Profiler hooks, declared weakly (Note [Profiler recording], base/trace_recorder.h).
namespace oneflow_like::profiler {
extern std::atomic<bool> g_enabled __attribute__((weak));
int64_t ThisThreadTrack() __attribute__((weak));
void RecordSpan(int64_t track, std::string_view name, const char* category, int64_t begin_ns,
                int64_t end_ns, uint64_t flow_in, uint64_t call_id, std::string_view args)
    __attribute__((weak));
uint64_t CurrentCallId() __attribute__((weak));
uint64_t EnterCall() __attribute__((weak));
void ExitCall(uint64_t previous) __attribute__((weak));
}  // namespace oneflow_like::profiler

namespace oneflow_like {
namespace lazy {
namespace {

// The profiler's clock (profiler::NowTicks in base/trace_recorder.h): the TSC.
inline int64_t Ticks() {
  return static_cast<int64_t>(__builtin_ia32_rdtsc());
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

BufferRef RefOf(const Tensor& t) {
  return BufferRef{t.blob(), t.offset() * DTypeSize(t.dtype()), t.numel() * DTypeSize(t.dtype())};
}

}  // namespace

StatusOr<std::shared_ptr<CompiledGraph>> CompiledGraph::Compile(const std::shared_ptr<Trace>& trace,
                                                                const std::string& name,
                                                                const PluginPaths& plugins) {
  auto g = std::shared_ptr<CompiledGraph>(new CompiledGraph());
  g->name_ = name;
  for (auto& v : trace->values()) {
    if (v.kind == TracedValue::kInput) g->input_metas_.push_back(v.meta);
  }
  for (int64_t v : trace->output_values()) g->output_metas_.push_back(trace->values()[v].meta);
  g->captured_ = trace->captured();
  for (const TracedOp& op : trace->ops()) g->has_random_ |= op.attrs.Has("seed");
  for (auto& [capture, v] : trace->Assignments()) g->assigned_.push_back(capture);
  RETURN_IF_ERROR(g->FindDevice());
  auto t0 = std::chrono::steady_clock::now();
  LowerOptions lower;
  lower.device = g->device_;
  ASSIGN_OR_RETURN(auto module, LowerTrace(*trace, name, &g->info_.lower, lower));
  g->info_.lower_seconds = Since(t0);
  g->info_.hlo_before = module->ToString();
  RETURN_IF_ERROR(g->Finish(std::move(module), plugins, trace.get()));
  return g;
}

StatusOr<std::shared_ptr<CompiledGraph>> CompiledGraph::FromModule(
    std::unique_ptr<hlo::HloModule> module, ModuleSpec spec, const std::string& name,
    const PluginPaths& plugins) {
  auto g = std::shared_ptr<CompiledGraph>(new CompiledGraph());
  g->name_ = name;
  g->input_metas_ = std::move(spec.inputs);
  g->output_metas_ = std::move(spec.outputs);
  g->captured_ = std::move(spec.captured);
  g->assigned_ = std::move(spec.assigned);
  g->has_random_ = spec.random;
  g->info_.lower.rng_seed_parameter = spec.rng_seed_parameter;
  g->info_.hlo_before = module->ToString();
  for (int64_t c : g->assigned_) {
    if (c < 0 || c >= static_cast<int64_t>(g->captured_.size()))
      return InvalidArgument("[nn.Graph %s] assigned capture %d out of range", name, int(c));
  }
  RETURN_IF_ERROR(g->FindDevice());
  RETURN_IF_ERROR(g->Finish(std::move(module), plugins, nullptr));
  return g;
}

Status CompiledGraph::FindDevice() {
  captured_metas_.clear();
  for (const Tensor& c : captured_) captured_metas_.push_back({c.shape(), c.dtype(), c.device()});
  // Every input, capture and output on one device (as in eager mode, where an op's tensors must
  // share theirs): the first one names it.
  std::vector<std::pair<Device, std::string>> all;
  for (size_t i = 0; i < input_metas_.size(); ++i)
    all.push_back({input_metas_[i].device, absl::StrCat("input ", i)});
  for (size_t i = 0; i < captured_.size(); ++i)
    all.push_back({captured_[i].device(),
                   absl::StrCat("captured tensor ", i, " (", captured_[i].meta_string(), ")")});
  for (size_t i = 0; i < output_metas_.size(); ++i)
    all.push_back({output_metas_[i].device, absl::StrCat("output ", i)});
  if (all.empty()) return Status();
  device_ = all[0].first;
  for (const auto& [d, what] : all) {
    if (d != device_)
      return InvalidArgument(
          "[nn.Graph %s] %s is on %s and %s on %s: a graph runs on one device (move the "
          "tensors with .to())",
          name_, all[0].second, device_.ToString(), what, d.ToString());
  }
  return Status();
}

Status CompiledGraph::CompileOnDevice(std::unique_ptr<hlo::HloModule> module,
                                      const hlo::CompileOptions& options, const Trace* trace) {
  auto exe = hlo::CompileForDevice(std::move(module), options, device_);
  if (!exe.ok() && absl::IsUnimplemented(exe.status()) && trace != nullptr) {
    // Something the device's code generator lacks: every op as a call of its device kernel.
    info_.device_fallback = std::string(exe.status().message());
    info_.lower = LowerStats{};
    LowerOptions lower;
    lower.device = device_;
    lower.all_kernel_calls = true;
    ASSIGN_OR_RETURN(auto again, LowerTrace(*trace, name_, &info_.lower, lower));
    info_.hlo_before = again->ToString();
    exe = hlo::CompileForDevice(std::move(again), options, device_);
  }
  if (!exe.ok())
    return Status(exe.status().code(),
                  absl::StrCat("[nn.Graph ", name_, "] compiling for ", device_.ToString(), ": ",
                               exe.status().message()));
  dev_exe_ = std::move(exe).value();
  info_.hlo_after = dev_exe_->module().ToString();
  info_.thunks = dev_exe_->ThunksToString();
  info_.device_stats = dev_exe_->StatsString();
  return Status();
}

Status CompiledGraph::Finish(std::unique_ptr<hlo::HloModule> module, const PluginPaths& plugins,
                             const Trace* trace) {
  auto t0 = std::chrono::steady_clock::now();
  // Offer every assigned capture's parameter as the buffer of its new value (in-place updates:
  // no scratch buffer, no write to memory the run does not read; on a device the parameters
  // also keep their addresses, so command buffers replay); the compiler accepts the pairs it
  // can prove safe on the scheduled module.
  hlo::CompileOptions options;
  const int64_t first_assigned = static_cast<int64_t>(output_metas_.size());
  for (size_t k = 0; k < assigned_.size(); ++k)
    options.donated.push_back({first_assigned + static_cast<int64_t>(k),
                               static_cast<int64_t>(input_metas_.size()) + assigned_[k]});
  const std::vector<std::pair<int64_t, int64_t>>* aliases = nullptr;
  if (!device_.is_cpu()) {
    // No compiler plugins: their partitions run on the CPU or OpenCL, not beside a device graph.
    RETURN_IF_ERROR(CompileOnDevice(std::move(module), options, trace));
    aliases = &dev_exe_->output_parameter_aliases();
  } else {
    if (plugins.has_value()) {
      for (const std::string& path : *plugins) {
        ASSIGN_OR_RETURN(auto lib, hlo::plugin::CompilerPluginLibrary::Load(path));
        options.pipeline.plugins.push_back(std::move(lib));
      }
    } else {
      ASSIGN_OR_RETURN(options.pipeline.plugins, hlo::plugin::PluginsFromEnv());
    }
    options.pipeline.plugin_report = &info_.plugin_report;
    ASSIGN_OR_RETURN(std::unique_ptr<hlo::Executable> exe,
                     hlo::Compile(std::move(module), options));
    info_.hlo_after = exe->module().ToString();
    info_.thunks = exe->ThunksToString();
    exe_ = std::move(exe);
    aliases = &exe_->output_parameter_aliases();
  }
  info_.compile_seconds = Since(t0);
  scratch_ = std::make_shared<AssignScratch>();
  for (int64_t capture : assigned_) {
    const Tensor& c = captured_[capture];
    if (!c.is_contiguous())
      return InvalidArgument(
          "[nn.Graph] the graph writes a non-contiguous tensor %s in place; not supported",
          c.meta_string());
  }
  in_place_.assign(assigned_.size(), false);
  for (auto [k, p] : *aliases) in_place_[k - first_assigned] = true;
  return Status();
}

StatusOr<TensorList> CompiledGraph::Run(const TensorList& inputs) {
  if (inputs.size() != input_metas_.size())
    return InvalidArgument("[nn.Graph %s] expected %d inputs, got %d", name_,
                           int(input_metas_.size()), int(inputs.size()));
  std::vector<BufferRef> args, outs, assigned;
  TensorList keep;  // contiguous copies must live until the instruction is built
  {
    NoGradGuard ng;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorMeta& m = input_metas_[i];
      if (inputs[i].shape() != m.shape || inputs[i].dtype() != m.dtype ||
          inputs[i].device() != m.device)
        return InvalidArgument(
            "[nn.Graph %s] input %d is %s on %s, the graph was compiled for %s on %s", name_,
            int(i), inputs[i].meta_string(), inputs[i].device().ToString(),
            ShapeString(m.dtype, m.shape), m.device.ToString());
      ASSIGN_OR_RETURN(Tensor c, functional::Contiguous(inputs[i]));
      keep.push_back(c);
      args.push_back(RefOf(c));
    }
    for (size_t i = 0; i < captured_.size(); ++i) {
      const Tensor& c = captured_[i];
      const TensorMeta& m = captured_metas_[i];
      if (c.shape() != m.shape || c.dtype() != m.dtype || c.device() != m.device)
        return InvalidArgument(
            "[nn.Graph %s] captured tensor %d (a parameter, buffer or other tensor build() "
            "read) is now %s on %s, but the graph was compiled when it was %s on %s (changed by "
            "`.data =`, resize_ or set_?): build a new graph for the new shapes",
            name_, int(i), c.meta_string(), c.device().ToString(), ShapeString(m.dtype, m.shape),
            m.device.ToString());
      ASSIGN_OR_RETURN(Tensor cc, functional::Contiguous(c));
      keep.push_back(cc);
      args.push_back(RefOf(cc));
    }
  }
  TensorList results;
  for (auto& m : output_metas_) {
    results.push_back(Tensor::Empty(m.shape, m.dtype, m.device));
    outs.push_back(RefOf(results.back()));
  }
  // Fresh random numbers on every run (dropout masks, rand...), reproducible under manual_seed:
  // kernel calls mix the nonce into their traced seeds, lowered random ops read it as the
  // module's last parameter.
  const uint64_t nonce = has_random_ ? functional::NextSeed(Device::CPU()) | 1 : 0;
  if (info_.lower.rng_seed_parameter) {
    NoGradGuard ng;
    const int32_t seed = static_cast<int32_t>(static_cast<uint32_t>(nonce ^ (nonce >> 32)));
    ASSIGN_OR_RETURN(Tensor s,
                     functional::Full(Shape{}, static_cast<double>(seed), DType::kI32, device_));
    keep.push_back(s);
    args.push_back(RefOf(s));
  }
  for (int64_t idx : assigned_) assigned.push_back(RefOf(captured_[idx]));
  auto policy =
      dev_exe_
          ? std::make_unique<LaunchLazyJobInstructionPolicy>(
                name_, dev_exe_, std::move(args), std::move(outs), std::move(assigned), scratch_)
          : std::make_unique<LaunchLazyJobInstructionPolicy>(
                name_, exe_, std::move(args), std::move(outs), std::move(assigned), scratch_);
  policy->set_in_place(in_place_);
  if (has_random_) policy->set_random_nonce(nonce);
  // While profiling, the launch is a span on the caller's thread with a flow arrow to the
  // LaunchLazyJob instruction (whose thunks nest under it on the stream's track).
  const bool profiled =
      &profiler::g_enabled != nullptr && profiler::g_enabled.load(std::memory_order_relaxed);
  const uint64_t previous_call = profiled ? profiler::EnterCall() : 0;
  const uint64_t call = profiled ? profiler::CurrentCallId() : 0;
  const int64_t begin = profiled ? Ticks() : 0;
  Status pushed = vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    return b->Push(device_, vm::StreamRole::kCompute, std::move(policy));
  });
  if (profiled) {
    profiler::ExitCall(previous_call);
    profiler::RecordSpan(profiler::ThisThreadTrack(), absl::StrCat("nn.Graph ", name_), "cpu_op",
                         begin, Ticks(), 0, call, "");
  }
  RETURN_IF_ERROR(pushed);
  for (int64_t idx : assigned_) captured_[idx].bump_version();
  return results;
}

}  // namespace lazy
}  // namespace oneflow_like
