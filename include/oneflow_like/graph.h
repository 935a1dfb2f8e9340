// Graph: a compiled graph artifact (.oflx) exported from Python with `flow.export` (an inference
// model or a training step), run without Python. Load() reads, checks, upgrades and compiles the
// file (Error::Kind::kNotFound when it is missing, kValue when it is corrupt); Run() queues one
// job and returns the outputs in the order the exporter flattened them (a training graph updates
// its parameters in place and returns the loss).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/tensor.h"

namespace oneflow_like {
inline namespace v1 {

class Graph {
 public:
  static Graph Load(const std::string& path);
  std::vector<Tensor> Run(const std::vector<Tensor>& inputs) const;
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const { return Run(inputs); }
  const std::string& path() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  bool training() const;
  // The file's tensors: parameters, buffers and optimizer state, by their exported names.
  std::vector<std::pair<std::string, Tensor>> named_tensors() const;

 private:
  std::shared_ptr<void> impl_;
};

}  // namespace v1
}  // namespace oneflow_like
