#include "oneflow_like/artifact/graph_artifact.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler/backends/cpu/cpu_jit.h"
#include "compiler/artifact/opset.h"
#include "compiler/ir/hlo_parser.h"
#include "oneflow_like/ops/creation.h"

namespace oneflow_like::artifact {
namespace {

ValueRecord ValueOf(const std::string& name, const TensorMeta& m) {
  return ValueRecord{name, m.dtype, m.shape.dims()};
}

std::string NameAt(const std::vector<std::string>& names, size_t i, const char* prefix) {
  return i < names.size() && !names[i].empty() ? names[i] : absl::StrCat(prefix, i);
}

Status CheckShape(const std::string& path, const std::string& what, const hlo::HloShape& s,
                  DType dtype, const DimVector& dims) {
  if (s.is_tuple() || s.dtype() != dtype || s.dims() != dims)
    return InvalidArgument("%s: %s is %s in the module but %s in the signature", path, what,
                           s.ToString(), ShapeString(dtype, Shape(dims)));
  return Status();
}

// The module's parameters and results must be what the signature says, or the run would read
// or write buffers of the wrong size.
Status CheckSignature(const LoadedArtifact& a, const hlo::HloModule& m) {
  const ArtifactContents& c = a.contents;
  const hlo::HloComputation* entry = m.entry_computation();
  const size_t params = c.inputs.size() + c.tensors.size() + (c.rng_seed_parameter ? 1 : 0);
  if (static_cast<size_t>(entry->num_parameters()) != params)
    return InvalidArgument("%s: the module has %d parameters, the signature %d", a.path,
                           int(entry->num_parameters()), int(params));
  for (size_t i = 0; i < c.inputs.size(); ++i)
    RETURN_IF_ERROR(CheckShape(a.path, absl::StrCat("input '", c.inputs[i].name, "'"),
                               entry->parameter(i)->shape(), c.inputs[i].dtype, c.inputs[i].shape));
  for (size_t i = 0; i < c.tensors.size(); ++i)
    RETURN_IF_ERROR(CheckShape(a.path, absl::StrCat("tensor '", c.tensors[i].name, "'"),
                               entry->parameter(c.inputs.size() + i)->shape(), c.tensors[i].dtype,
                               c.tensors[i].shape));
  if (c.rng_seed_parameter)
    RETURN_IF_ERROR(
        CheckShape(a.path, "the seed", entry->parameter(params - 1)->shape(), DType::kI32, {}));
  const hlo::HloShape& root = entry->root_instruction()->shape();
  const size_t results = c.outputs.size() + c.assigned.size();
  if (!root.is_tuple() || static_cast<size_t>(root.tuple_size()) != results)
    return InvalidArgument("%s: the module's result is %s, the signature has %d results", a.path,
                           root.ToString(), int(results));
  for (size_t i = 0; i < c.outputs.size(); ++i)
    RETURN_IF_ERROR(CheckShape(a.path, absl::StrCat("output '", c.outputs[i].name, "'"),
                               root.tuple_shape(i), c.outputs[i].dtype, c.outputs[i].shape));
  for (size_t k = 0; k < c.assigned.size(); ++k) {
    const TensorRecord& t = c.tensors[c.assigned[k]];
    RETURN_IF_ERROR(CheckShape(a.path, absl::StrCat("new value of '", t.name, "'"),
                               root.tuple_shape(c.outputs.size() + k), t.dtype, t.shape));
  }
  return Status();
}

// Writes each kernel library the JIT cache lacks (temporary file + rename: concurrent loaders
// never see a partial file). The cache key hashes compiler, flags and source, so a library is
// only used by a compile that generates the same source with the same compiler.
Status InstallKernels(const LoadedArtifact& a) {
  if (a.contents.kernels.empty()) return Status();
  const std::string dir = hlo::KernelCacheDir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const BlobRecord& k : a.contents.kernels) {
    const std::string dst = absl::StrCat(dir, "/", k.name);
    if (std::filesystem::exists(dst, ec)) continue;
    const std::string tmp = absl::StrCat(dst, ".", ::getpid(), ".artifact");
    {
      std::ofstream f(tmp, std::ios::binary);
      f.write(static_cast<const char*>(k.data), static_cast<std::streamsize>(k.nbytes));
      if (!f.good()) return Internal("%s: cannot write kernel library %s", a.path, tmp);
    }
    std::filesystem::permissions(tmp, std::filesystem::perms::owner_all, ec);
    std::filesystem::rename(tmp, dst, ec);
    if (ec) return Internal("%s: cannot install kernel library %s: %s", a.path, dst, ec.message());
  }
  return Status();
}

}  // namespace

StatusOr<ArtifactContents> ContentsOf(const lazy::CompiledGraph& graph, const ExportSpec& spec,
                                      std::vector<std::string>* storage) {
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module,
                   hlo::ParseHloModule(graph.info().hlo_before));
  ArtifactContents c;
  ASSIGN_OR_RETURN(c.module, Legalize(*module));
  const int target = spec.target_opset == 0 ? kCurrentOpset : spec.target_opset;
  if (target > kCurrentOpset)
    return InvalidArgument(
        "target_version %d is newer than this build's op-set %d (it can write op-sets %d to %d)",
        target, kCurrentOpset, kMinSupportedOpset, kCurrentOpset);
  if (target < c.module.opset) RETURN_IF_ERROR(Downgrade(&c.module, target));
  for (size_t i = 0; i < graph.input_metas().size(); ++i)
    c.inputs.push_back(ValueOf(NameAt(spec.input_names, i, "input_"), graph.input_metas()[i]));
  for (size_t i = 0; i < graph.output_metas().size(); ++i)
    c.outputs.push_back(ValueOf(NameAt(spec.output_names, i, "output_"), graph.output_metas()[i]));
  const TensorList& captured = graph.captured();
  storage->reserve(captured.size() + 1);  // r.data points into the strings: never reallocate
  storage->resize(captured.size());
  for (size_t i = 0; i < captured.size(); ++i) {
    const Tensor& t = captured[i];
    TensorRecord r;
    r.name = NameAt(spec.capture_names, i, "tensor_");
    r.role = i < spec.capture_roles.size() ? spec.capture_roles[i] : "buffer";
    r.dtype = t.dtype();
    r.shape = t.shape().dims();
    r.nbytes = static_cast<uint64_t>(t.numel() * DTypeSize(t.dtype()));
    r.requires_grad = t.requires_grad();
    (*storage)[i].resize(r.nbytes);
    if (r.nbytes > 0) RETURN_IF_ERROR(functional::CopyToHost(t, (*storage)[i].data()));
    r.data = (*storage)[i].data();
    c.tensors.push_back(std::move(r));
  }
  for (int64_t a : graph.assigned()) c.assigned.push_back(static_cast<uint32_t>(a));
  c.rng_seed_parameter = graph.info().lower.rng_seed_parameter;
  c.random = graph.has_random();
  c.training = spec.training;
  c.metadata = spec.metadata;
  // The CPU kernels' shared object (a graph compiled for a device has none to embed).
  const std::string lib = graph.device().is_cpu() ? graph.executable().stats().jit_library : "";
  if (spec.embed_kernels && !lib.empty()) {
    std::ifstream f(lib, std::ios::binary);
    std::ostringstream bytes;
    bytes << f.rdbuf();
    if (!f.good()) return Internal("cannot read the kernel library %s", lib);
    storage->push_back(bytes.str());
    c.kernels.push_back({std::filesystem::path(lib).filename().string(), storage->back().data(),
                         storage->back().size()});
  }
  return c;
}

Status ExportGraph(const lazy::CompiledGraph& graph, const ExportSpec& spec,
                   const std::string& path) {
  std::vector<std::string> storage;
  auto contents = ContentsOf(graph, spec, &storage);
  if (!contents.ok())
    return Status(contents.status().code(),
                  absl::StrCat(path, ": export failed: ", contents.status().message()));
  return WriteArtifact(*contents, path);
}

StatusOr<std::unique_ptr<hlo::HloModule>> VerifyArtifact(const LoadedArtifact& artifact) {
  VModule module = artifact.contents.module;
  Status st = Upgrade(&module);
  auto hlo = st.ok() ? LowerToHlo(module) : StatusOr<std::unique_ptr<hlo::HloModule>>(st);
  if (!hlo.ok())
    return Status(hlo.status().code(), absl::StrCat(artifact.path, ": ", hlo.status().message()));
  RETURN_IF_ERROR(CheckSignature(artifact, **hlo));
  return std::move(*hlo);
}

StatusOr<hlo::plugin::PluginReport> ApplyPlugins(const std::string& in,
                                                 const std::vector<std::string>& plugins,
                                                 const std::string& out) {
  ASSIGN_OR_RETURN(LoadedArtifact a, ReadArtifact(in));
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> hlo, VerifyArtifact(a));
  hlo::plugin::PluginReport report;
  hlo::PipelineOptions options;
  for (const std::string& p : plugins) {
    ASSIGN_OR_RETURN(auto lib, hlo::plugin::CompilerPluginLibrary::Load(p));
    options.plugins.push_back(std::move(lib));
  }
  if (options.plugins.empty()) return InvalidArgument("%s: apply_plugin needs a plugin", in);
  options.plugin_report = &report;
  options.stop_after_plugins = true;
  Status st = hlo::RunHloPasses(hlo.get(), options);
  if (!st.ok()) return Status(st.code(), absl::StrCat(in, ": ", st.message()));
  ArtifactContents c = a.contents;  // tensors still point into a's mapping
  ASSIGN_OR_RETURN(c.module, Legalize(*hlo));
  c.kernels.clear();  // the JIT's kernels of the old module would not match
  RETURN_IF_ERROR(WriteArtifact(c, out));
  return report;
}

StatusOr<LoadedGraph> LoadGraph(const std::string& path, bool install_kernels) {
  LoadedGraph g;
  ASSIGN_OR_RETURN(g.artifact, ReadArtifact(path));
  ArtifactContents& c = g.artifact.contents;
  auto prefixed = [&](const Status& s) {
    return Status(s.code(), absl::StrCat(path, ": ", s.message()));
  };
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> hlo, VerifyArtifact(g.artifact));
  if (install_kernels) RETURN_IF_ERROR(InstallKernels(g.artifact));
  lazy::CompiledGraph::ModuleSpec spec;
  for (const ValueRecord& v : c.inputs)
    spec.inputs.push_back(TensorMeta{Shape(v.shape), v.dtype, Device::CPU()});
  for (const ValueRecord& v : c.outputs)
    spec.outputs.push_back(TensorMeta{Shape(v.shape), v.dtype, Device::CPU()});
  for (const TensorRecord& t : c.tensors) {
    // The mapping is private and writable; the tensor aliases it (no copy).
    ASSIGN_OR_RETURN(Tensor x, functional::WrapHost(const_cast<void*>(t.data), Shape(t.shape),
                                                    t.dtype, g.artifact.mapping));
    if (t.requires_grad) RETURN_IF_ERROR(x.set_requires_grad(true));
    g.tensors.push_back(x);
  }
  spec.captured = g.tensors;
  for (uint32_t a : c.assigned) spec.assigned.push_back(a);
  spec.rng_seed_parameter = c.rng_seed_parameter;
  spec.random = c.random;
  auto graph = lazy::CompiledGraph::FromModule(std::move(hlo), std::move(spec), c.module.name);
  if (!graph.ok()) return prefixed(graph.status());
  g.graph = std::move(*graph);
  return g;
}

}  // namespace oneflow_like::artifact
