#include "compiler/plugin/dispatch_thunk.h"

#include <cstdio>

#include "absl/strings/str_join.h"

namespace oneflow_like::hlo::plugin {
namespace {
CpuPartitionCompiler g_cpu_compiler = nullptr;
}  // namespace

void SetCpuPartitionCompiler(CpuPartitionCompiler compiler) {
  g_cpu_compiler = compiler;
}

StatusOr<std::unique_ptr<DispatchThunk>> DispatchThunk::Create(const HloInstruction& dispatch,
                                                               std::vector<BufferSlice> inputs,
                                                               std::vector<BufferSlice> outputs) {
  auto t = std::unique_ptr<DispatchThunk>(new DispatchThunk(dispatch.name()));
  ASSIGN_OR_RETURN(t->config_, DispatchConfig::Decode(dispatch.attrs().backend_config));
  t->inputs_ = std::move(inputs);
  t->outputs_ = std::move(outputs);
  auto lib = DispatchLibrary::Load(t->config_.dispatch_library, t->config_.search_dir);
  if (!lib.ok() && !t->config_.original.empty() && g_cpu_compiler != nullptr) {
    auto cpu = g_cpu_compiler(t->config_.original);
    if (!cpu.ok()) return t->Fail(cpu.status());
    t->cpu_ = std::move(cpu).value();
    t->fallback_reason_ =
        absl::StrCat(lib.status().message(), "; running the partition's original HLO on the CPU");
    std::fprintf(stderr, "oneflow_like: [plugin %s] partition %s: %s\n", t->config_.plugin.c_str(),
                 t->name().c_str(), t->fallback_reason_.c_str());
    return t;
  }
  if (!lib.ok()) return t->Fail(lib.status());
  t->lib_ = *lib;
  const DispatchLibrary& l = *t->lib_;
  if (OflStatus s = l.context_create(&t->context_); s != kOflOk)
    return t->Fail(l.Error("DeviceContextCreate", s));
  if (OflStatus s =
          l.load_bytecode(t->context_, t->config_.bytecode.data(), t->config_.bytecode.size(),
                          t->config_.entry_point.c_str(), &t->invocation_);
      s != kOflOk)
    return t->Fail(l.Error("LoadBytecode", s));
  const int32_t ni = l.num_inputs(t->invocation_), no = l.num_outputs(t->invocation_);
  if (ni != static_cast<int32_t>(t->inputs_.size()) ||
      no != static_cast<int32_t>(t->outputs_.size()))
    return t->Fail(Internal("the bytecode takes %d inputs and %d outputs, the op has %d and %d", ni,
                            no, static_cast<int>(t->inputs_.size()),
                            static_cast<int>(t->outputs_.size())));
  return t;
}

DispatchThunk::~DispatchThunk() {
  if (lib_ == nullptr) return;
  if (invocation_ != nullptr) lib_->unload_bytecode(invocation_);
  if (context_ != nullptr) lib_->context_destroy(context_);
}

Status DispatchThunk::Fail(const Status& s) const {
  return Status(s.code(), absl::StrCat("[plugin ", config_.plugin, "] partition ", name(),
                                       " (entry ", config_.entry_point, "): ", s.message()));
}

Status DispatchThunk::ExecuteOnStream(const ExecuteParams& p) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cpu_ != nullptr) {
    std::vector<const void*> in;
    std::vector<void*> out;
    for (const BufferSlice& s : inputs_) in.push_back(p.buffers->Get(s));
    for (const BufferSlice& s : outputs_) out.push_back(p.buffers->Get(s));
    Status s = cpu_->Run(in, out);
    return s.ok() ? s : Fail(s);
  }
  const DispatchLibrary& l = *lib_;
  for (size_t k = 0; k < inputs_.size(); ++k)
    if (OflStatus s = l.bind_input(invocation_, static_cast<int32_t>(k), p.buffers->Get(inputs_[k]),
                                   inputs_[k].size);
        s != kOflOk)
      return Fail(l.Error("BindInput", s));
  for (size_t k = 0; k < outputs_.size(); ++k)
    if (OflStatus s = l.bind_output(invocation_, static_cast<int32_t>(k),
                                    p.buffers->Get(outputs_[k]), outputs_[k].size);
        s != kOflOk)
      return Fail(l.Error("BindOutput", s));
  if (OflStatus s = l.invoke(invocation_); s != kOflOk) return Fail(l.Error("Invoke", s));
  if (OflStatus s = l.wait(invocation_); s != kOflOk) return Fail(l.Error("Wait", s));
  return absl::OkStatus();
}

std::string DispatchThunk::Details() const {
  std::vector<std::string> in, out;
  for (const BufferSlice& s : inputs_) in.push_back(s.ToString());
  for (const BufferSlice& s : outputs_) out.push_back(s.ToString());
  return absl::StrCat("plugin=\"", config_.plugin, "\" entry=", config_.entry_point,
                      cpu_ ? " (cpu fallback)" : "", " bytecode=", config_.bytecode.size(),
                      "B in=[", absl::StrJoin(in, ", "), "] out=[", absl::StrJoin(out, ", "), "]");
}

}  // namespace oneflow_like::hlo::plugin
