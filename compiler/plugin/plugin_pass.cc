#include "compiler/plugin/plugin_pass.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "compiler/plugin/dispatch_config.h"
#include "compiler/plugin/graph_view.h"
#include "compiler/plugin/partitioner.h"

namespace oneflow_like::hlo::plugin {
namespace {

// Ops that do work (what the coverage counts): not parameters, constants, tuple plumbing or
// bitcasts (free views).
bool IsComputeOp(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast: return false;
    default: return true;
  }
}

int64_t ResultBytes(const HloInstruction& i) {
  if (i.shape().is_array()) return i.shape().ByteSize();
  int64_t b = 0;
  for (const HloShape& s : i.shape().tuple_shapes())
    if (s.is_array()) b += s.ByteSize();
  return b;
}

std::string BaseDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

int64_t OpFlops(const HloInstruction& i) {
  if (!i.shape().is_array()) return 0;
  const int64_t n = i.shape().numel();
  switch (i.opcode()) {
    case HloOpcode::kDot: {
      int64_t k = 1;
      for (int64_t d : i.attrs().dot.lhs_contracting) k *= i.operand(0)->shape().dim(d);
      return 2 * n * k;
    }
    case HloOpcode::kReduce: return i.operand(0)->shape().numel();
    case HloOpcode::kConvolution: {
      int64_t window = 1;
      const HloShape& k = i.operand(1)->shape();
      for (int64_t d = 0; d < k.rank(); ++d)
        if (d != i.attrs().conv.k_out) window *= k.dim(d);
      return 2 * n * window / std::max<int64_t>(1, i.attrs().feature_group_count);
    }
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kCopy:
    case HloOpcode::kBitcast:
    case HloOpcode::kIota: return 0;
    default: return IsComputeOp(i) ? n : 0;
  }
}

std::string PluginReport::ToString() const {
  int64_t ops = 0, flops = 0, bytes = 0;
  for (const Backend& b : backends) {
    ops += b.ops;
    flops += b.flops;
    bytes += b.bytes;
  }
  auto share = [](int64_t x, int64_t total) { return total ? 100.0 * x / total : 0.0; };
  std::string s = "plugin coverage (compute ops, bytes they produce, flops):\n";
  for (const Backend& b : backends)
    absl::StrAppendFormat(
        &s, "  %-40s ops %5d (%5.1f%%)  bytes %10d (%5.1f%%)  flops %12d (%5.1f%%)\n", b.name,
        b.ops, share(b.ops, ops), b.bytes, share(b.bytes, bytes), b.flops, share(b.flops, flops));
  for (const PartitionInfo& p : partitions)
    absl::StrAppendFormat(&s,
                          "  partition %s -> %s entry %s: %d ops, %d inputs, %d outputs, "
                          "%d bytes of bytecode\n",
                          p.name, p.plugin, p.entry_point, p.ops, p.inputs, p.outputs,
                          p.bytecode_bytes);
  for (const Fallback& f : fallbacks)
    absl::StrAppendFormat(&s, "  cpu: %s (%s): %s\n", f.op, f.opcode, f.reason);
  return s;
}

StatusOr<bool> ApplyCompilerPlugins(
    HloModule* module, const std::vector<std::shared_ptr<CompilerPluginLibrary>>& plugins,
    PluginReport* report) {
  PluginReport local;
  PluginReport& r = report ? *report : local;
  r = PluginReport{};
  HloComputation* entry = module->entry_computation();
  absl::flat_hash_map<std::string, std::string> reasons;  // op name -> why it stayed on the CPU
  bool changed = false;
  int64_t next_partition = 0;
  for (const auto& plugin : plugins) {
    PluginReport::Backend backend{plugin->DisplayName()};
    std::vector<Partition> partitions;
    {
      GraphView view(*entry);
      const int32_t n = view.view().num_ops;
      std::vector<int32_t> index(n, OFL_NOT_SELECTED);
      std::vector<const char*> why(n, nullptr);
      OflSelection selection{n, index.data(), why.data()};
      RETURN_IF_ERROR(plugin->Partition(view.view(), &selection));
      absl::flat_hash_map<const HloInstruction*, int32_t> selected;
      for (int32_t k = 0; k < n; ++k) {
        const HloInstruction* i = view.instructions()[k];
        const std::string framework = NonPartitionableReason(*i);
        if (index[k] != OFL_NOT_SELECTED && framework.empty()) {
          selected[i] = index[k];  // bitcasts too: they may join partitions, free either way
          continue;
        }
        if (!IsComputeOp(*i)) continue;
        std::string& reason = reasons[i->name()];
        if (!reason.empty()) absl::StrAppend(&reason, "; ");
        absl::StrAppend(&reason, plugin->manufacturer(), ": ",
                        !framework.empty() ? framework
                        : why[k]           ? why[k]
                                           : "not selected");
      }
      partitions = GroupPartitions(*entry, selected);
      // A partition of bitcasts only would be a dispatch doing a copy: leave those alone.
      partitions.erase(std::remove_if(partitions.begin(), partitions.end(),
                                      [](const Partition& p) {
                                        return std::none_of(p.members.begin(), p.members.end(),
                                                            [](const HloInstruction* m) {
                                                              return IsComputeOp(*m);
                                                            });
                                      }),
                       partitions.end());
    }
    if (partitions.empty()) {
      r.backends.push_back(backend);
      continue;
    }
    std::vector<std::unique_ptr<HloModule>> outlined;
    std::vector<std::unique_ptr<GraphView>> views;
    std::vector<const OflGraphView*> view_ptrs;
    for (const Partition& p : partitions) {
      const std::string name = absl::StrCat(module->name(), "_plugin_p", next_partition++);
      ASSIGN_OR_RETURN(auto m, OutlinePartition(p, name));
      views.push_back(std::make_unique<GraphView>(*m->entry_computation()));
      view_ptrs.push_back(&views.back()->view());
      outlined.push_back(std::move(m));
    }
    ASSIGN_OR_RETURN(std::vector<CompiledPartition> compiled, plugin->Compile(view_ptrs));
    // Replacing a partition removes its outputs, which later partitions may read: map them.
    absl::flat_hash_map<HloInstruction*, HloInstruction*> replaced;
    for (size_t k = 0; k < partitions.size(); ++k) {
      Partition& p = partitions[k];
      for (HloInstruction*& in : p.inputs)
        if (auto it = replaced.find(in); it != replaced.end()) in = it->second;
      PluginReport::PartitionInfo info{outlined[k]->name(), plugin->DisplayName(),
                                       compiled[k].entry_point};
      for (const HloInstruction* m : p.members) {
        if (!IsComputeOp(*m)) continue;
        ++info.ops;
        ++backend.ops;
        backend.bytes += ResultBytes(*m);
        backend.flops += OpFlops(*m);
      }
      info.inputs = static_cast<int64_t>(p.inputs.size());
      info.outputs = static_cast<int64_t>(p.outputs.size());
      info.bytecode_bytes = static_cast<int64_t>(compiled[k].bytecode.size());
      DispatchConfig config{plugin->DisplayName(),           plugin->dispatch_library(),
                            BaseDir(plugin->path()),         compiled[k].entry_point,
                            std::move(compiled[k].bytecode), outlined[k]->ToString()};
      std::vector<HloInstruction*> outputs = p.outputs;
      ASSIGN_OR_RETURN(std::vector<HloInstruction*> values,
                       ReplaceWithDispatch(entry, p, absl::StrCat("dispatch.", outlined[k]->name()),
                                           config.Encode()));
      for (size_t o = 0; o < outputs.size(); ++o) replaced[outputs[o]] = values[o];
      r.partitions.push_back(std::move(info));
    }
    r.backends.push_back(backend);
    changed = true;
  }
  PluginReport::Backend cpu{"cpu"};
  for (const HloInstruction* i : entry->MakeInstructionPostOrder()) {
    if (!IsComputeOp(*i) ||
        (i->opcode() == HloOpcode::kCustomCall && i->attrs().custom_call_target == kDispatchTarget))
      continue;
    ++cpu.ops;
    cpu.bytes += ResultBytes(*i);
    cpu.flops += OpFlops(*i);
    auto it = reasons.find(i->name());
    r.fallbacks.push_back({i->name(), HloOpcodeString(i->opcode()),
                           it != reasons.end() ? it->second : "no plugin saw it"});
  }
  r.backends.push_back(cpu);
  return changed;
}

}  // namespace oneflow_like::hlo::plugin
