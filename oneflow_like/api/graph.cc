// Graph::Load / Run of the C++ API: a .oflx artifact loaded and compiled by
// oneflow_like/artifact (the same path as Python's flow.load_graph), run as one LaunchLazyJob.
#include <sys/stat.h>

#include "oneflow_like/artifact/graph_artifact.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {

namespace {
struct GraphState {
  std::string path;
  ::oneflow_like::artifact::LoadedGraph loaded;
};
const GraphState& State(const std::shared_ptr<void>& impl) {
  if (!impl) throw Error(Error::Kind::kValue, "[Graph] not loaded: use Graph::Load(path)");
  return *static_cast<const GraphState*>(impl.get());
}
}  // namespace

Graph Graph::Load(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)  // Python's message (FileNotFoundError)
    throw Error(Error::Kind::kNotFound, path + ": no such file");
  auto state = std::make_shared<GraphState>();
  state->path = path;
  state->loaded = Check(::oneflow_like::artifact::LoadGraph(path, /*install_kernels=*/true));
  Graph g;
  g.impl_ = std::move(state);
  return g;
}

std::vector<Tensor> Graph::Run(const std::vector<Tensor>& inputs) const {
  const GraphState& s = State(impl_);
  const auto& want = s.loaded.artifact.contents.inputs;
  if (inputs.size() != want.size()) {
    std::string names;
    for (const auto& v : want) names += (names.empty() ? "" : ", ") + v.name;
    throw Error(Error::Kind::kValue, s.path + ": expected " + std::to_string(want.size()) +
                                         " tensor inputs (" + names + "), got " +
                                         std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) InDefined(inputs[i], "Graph.Run");
  return Out(Check(s.loaded.graph->Run(In(inputs))));
}

const std::string& Graph::path() const {
  return State(impl_).path;
}
std::vector<std::string> Graph::input_names() const {
  std::vector<std::string> r;
  for (const auto& v : State(impl_).loaded.artifact.contents.inputs) r.push_back(v.name);
  return r;
}
std::vector<std::string> Graph::output_names() const {
  std::vector<std::string> r;
  for (const auto& v : State(impl_).loaded.artifact.contents.outputs) r.push_back(v.name);
  return r;
}
bool Graph::training() const {
  return State(impl_).loaded.artifact.contents.training;
}
std::vector<std::pair<std::string, Tensor>> Graph::named_tensors() const {
  const GraphState& s = State(impl_);
  std::vector<std::pair<std::string, Tensor>> r;
  const auto& recs = s.loaded.artifact.contents.tensors;
  for (size_t i = 0; i < recs.size() && i < s.loaded.tensors.size(); ++i)
    r.emplace_back(recs[i].name, Out(s.loaded.tensors[i]));
  return r;
}

}  // namespace v1
}  // namespace oneflow_like
