// Reading and writing .oflx files (artifact.fbs): a flatbuffer holding the header, the versioned
// module, the signature and the tensor table, then the tensor data, each tensor 64-byte aligned.
// Reading maps the file (MAP_PRIVATE): tensors point into the mapping, no copy; a graph that
// writes a parameter gets a private copy of that page from the kernel.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/artifact/versioned_module.h"
#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/shape.h"

namespace oneflow_like::artifact {

constexpr uint32_t kFormatVersion = 1;
constexpr size_t kTensorAlignment = 64;
const char* ProducerString();  // "oneflow_like <version>"

struct TensorRecord {
  std::string name, role;  // role: parameter, buffer, optimizer, hparam
  DType dtype = DType::kF32;
  DimVector shape;
  const void* data = nullptr;  // writer: the bytes to write; reader: into the mapping
  uint64_t nbytes = 0;
  bool requires_grad = false;
};

// A JIT kernel library (artifact.fbs Blob); the reader only accepts names `k_<16 hex>.so`.
struct BlobRecord {
  std::string name;
  const void* data = nullptr;
  uint64_t nbytes = 0;
};

struct ValueRecord {
  std::string name;
  DType dtype = DType::kF32;
  DimVector shape;
};

struct ArtifactContents {
  VModule module;  // written in module.opset
  std::vector<TensorRecord> tensors;
  std::vector<ValueRecord> inputs, outputs;
  std::vector<uint32_t> assigned;  // tensors the graph writes (result order after the outputs)
  bool rng_seed_parameter = false, random = false, training = false;
  std::string metadata;  // front-end JSON
  std::vector<BlobRecord> kernels;
  // Header fields; "" / 0: this build. A rewrite at the file's own op-set keeps the original's,
  // so it gives the same bytes in later releases too.
  std::string producer;
  uint32_t producer_opset = 0;
};

struct LoadedArtifact {
  std::string path, producer;
  uint32_t format_version = 0, producer_opset = 0;
  uint64_t checksum = 0, file_size = 0, data_offset = 0, data_size = 0;
  ArtifactContents contents;      // module as stored (contents.module.opset = the file's op set)
  std::shared_ptr<void> mapping;  // keeps the tensor data alive
};

// The file bytes for `contents` (deterministic: same contents, same bytes).
StatusOr<std::string> SerializeArtifact(const ArtifactContents& contents);
Status WriteArtifact(const ArtifactContents& contents, const std::string& path);
// Maps and checks `path`: errors start with the path and say what is wrong.
StatusOr<LoadedArtifact> ReadArtifact(const std::string& path);
// The same checks on bytes in memory; `keep` owns them. The fuzzer also runs it with
// `verify_checksum` false, so mutations reach the checks behind the checksum.
StatusOr<LoadedArtifact> ParseArtifact(const uint8_t* data, size_t size, const std::string& label,
                                       std::shared_ptr<void> keep, bool verify_checksum = true);
uint64_t Fnv1a64(const uint8_t* data, size_t size, uint64_t h = 14695981039346656037ULL);

}  // namespace oneflow_like::artifact
