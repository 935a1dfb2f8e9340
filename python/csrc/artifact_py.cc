// Bindings of .oflx graph artifacts (oneflow_like/artifact, compiler/artifact), used by
// python/oneflow_like/artifact: export of a compiled graph, load, inspection and rewriting.
#include "compiler/artifact/opset.h"
#include "oneflow_like/artifact/graph_artifact.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

using artifact::ArtifactContents;
using artifact::LoadedArtifact;

py::list Values(const std::vector<artifact::ValueRecord>& vs) {
  py::list out;
  for (const auto& v : vs)
    out.append(py::make_tuple(v.name, DTypeLongName(v.dtype),
                              std::vector<int64_t>(v.shape.begin(), v.shape.end())));
  return out;
}

py::dict Describe(const LoadedArtifact& a) {
  const ArtifactContents& c = a.contents;
  py::dict d;
  d["path"] = a.path;
  d["format_version"] = a.format_version;
  d["producer"] = a.producer;
  d["opset_version"] = c.module.opset;
  d["producer_opset"] = a.producer_opset;
  d["checksum"] = a.checksum;
  d["file_size"] = a.file_size;
  d["data_offset"] = a.data_offset;
  d["data_size"] = a.data_size;
  d["module"] = c.module.name;
  d["inputs"] = Values(c.inputs);
  d["outputs"] = Values(c.outputs);
  py::list tensors;
  const auto* base = static_cast<const uint8_t*>(a.mapping.get());
  for (const auto& t : c.tensors)
    tensors.append(py::make_tuple(t.name, t.role, DTypeLongName(t.dtype),
                                  std::vector<int64_t>(t.shape.begin(), t.shape.end()),
                                  static_cast<uint64_t>(static_cast<const uint8_t*>(t.data) - base),
                                  t.nbytes));
  d["tensors"] = tensors;
  d["assigned"] = c.assigned;
  d["training"] = c.training;
  d["random"] = c.random;
  d["rng_seed_parameter"] = c.rng_seed_parameter;
  d["metadata"] = c.metadata;
  py::list kernels;
  for (const auto& k : c.kernels) kernels.append(py::make_tuple(k.name, k.nbytes));
  d["kernels"] = kernels;
  return d;
}

struct PyLoaded {
  artifact::LoadedGraph g;
};

void BindArtifact(py::module_& m, TensorClass&) {
  m.def("_artifact_opset", [] {
    return py::make_tuple(artifact::kMinSupportedOpset, artifact::kCurrentOpset,
                          artifact::kFormatVersion);
  });
  m.def("_artifact_opset_table", [] { return artifact::OpsetTableString(); });
  m.def("_graph_captured", [](const lazy::CompiledGraph& g) { return g.captured(); });
  m.def("_artifact_export",
        [](const lazy::CompiledGraph& g, const std::string& path, artifact::ExportSpec spec) {
          py::gil_scoped_release nogil;
          Check(artifact::ExportGraph(g, spec, path));
        });
  py::class_<artifact::ExportSpec>(m, "_ArtifactExportSpec")
      .def(py::init<>())
      .def_readwrite("input_names", &artifact::ExportSpec::input_names)
      .def_readwrite("output_names", &artifact::ExportSpec::output_names)
      .def_readwrite("capture_names", &artifact::ExportSpec::capture_names)
      .def_readwrite("capture_roles", &artifact::ExportSpec::capture_roles)
      .def_readwrite("training", &artifact::ExportSpec::training)
      .def_readwrite("metadata", &artifact::ExportSpec::metadata)
      .def_readwrite("target_opset", &artifact::ExportSpec::target_opset)
      .def_readwrite("embed_kernels", &artifact::ExportSpec::embed_kernels);
  // Header, signature and tensor table; raises on anything ReadArtifact rejects.
  m.def("_artifact_describe",
        [](const std::string& path) { return Describe(Unwrap(artifact::ReadArtifact(path))); });
  // The module as HLO text, upgraded to the current op set and verified.
  m.def("_artifact_hlo_text", [](const std::string& path) {
    LoadedArtifact a = Unwrap(artifact::ReadArtifact(path));
    return Unwrap(artifact::VerifyArtifact(a))->ToString();
  });
  // Rewrites `src` to `dst` in op-set `target` (upgrade or downgrade; tensors unchanged).
  m.def("_artifact_rewrite", [](const std::string& src, const std::string& dst, int target) {
    py::gil_scoped_release nogil;
    LoadedArtifact a = Unwrap(artifact::ReadArtifact(src));
    ArtifactContents c = a.contents;
    Check(artifact::Upgrade(&c.module));
    if (target < c.module.opset) {
      Status s = artifact::Downgrade(&c.module, target);
      if (!s.ok()) Check(Status(s.code(), absl::StrCat(src, ": ", s.message())));
    } else if (target > c.module.opset) {
      Check(InvalidArgument("%s: op-set %d is newer than this build's %d", src, target,
                            c.module.opset));
    }
    if (target == a.contents.module.opset) {  // same op-set: same bytes, producer included
      c.producer = a.producer;
      c.producer_opset = a.producer_opset;
    }
    Check(artifact::WriteArtifact(c, dst));
  });
  py::class_<PyLoaded, std::shared_ptr<PyLoaded>>(m, "_LoadedArtifact")
      .def_property_readonly("graph", [](PyLoaded& l) { return l.g.graph; })
      .def_property_readonly("tensors", [](PyLoaded& l) { return l.g.tensors; })
      .def("describe", [](PyLoaded& l) { return Describe(l.g.artifact); });
  m.def("_artifact_load", [](const std::string& path, bool install_kernels) {
    auto l = std::make_shared<PyLoaded>();
    {
      py::gil_scoped_release nogil;
      l->g = Unwrap(artifact::LoadGraph(path, install_kernels));
    }
    return l;
  });
}

}  // namespace
OFL_PY_BINDING(BindArtifact);
}  // namespace python
}  // namespace oneflow_like
