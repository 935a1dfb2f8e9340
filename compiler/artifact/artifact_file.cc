#include "compiler/artifact/artifact_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "compiler/artifact/artifact_generated.h"
#include "compiler/artifact/opset.h"

namespace oneflow_like::artifact {
namespace {

namespace fbs = ::oneflow_like::artifact::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

uint64_t AlignUp(uint64_t x) {
  return (x + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

Offset<fbs::Module> BuildModule(FlatBufferBuilder& b, const VModule& m) {
  std::vector<Offset<fbs::Computation>> comps;
  for (const VComputation& c : m.computations) {
    std::vector<Offset<fbs::Inst>> insts;
    for (const VInst& i : c.insts) {
      std::vector<Offset<fbs::Attr>> attrs;
      for (const VAttr& a : i.attrs)
        attrs.push_back(fbs::CreateAttrDirect(b, a.name.c_str(), a.value.c_str()));
      insts.push_back(fbs::CreateInstDirect(b, i.name.c_str(), i.op, i.shape.c_str(), &i.operands,
                                            &attrs, i.literal.c_str(), i.parameter, i.root));
    }
    comps.push_back(fbs::CreateComputationDirect(b, c.name.c_str(), c.entry, &insts));
  }
  return fbs::CreateModuleDirect(b, m.name.c_str(), &comps);
}

std::vector<int64_t> Dims(const DimVector& d) {
  return std::vector<int64_t>(d.begin(), d.end());
}

// The payload flatbuffer and each tensor's offset in the data region.
std::string BuildPayload(const ArtifactContents& c, std::vector<uint64_t>* offsets,
                         uint64_t* data_size) {
  FlatBufferBuilder b;
  b.ForceDefaults(true);
  auto module = BuildModule(b, c.module);
  std::vector<Offset<fbs::Tensor>> tensors;
  uint64_t off = 0;
  for (const TensorRecord& t : c.tensors) {
    offsets->push_back(off);
    auto shape = Dims(t.shape);
    tensors.push_back(fbs::CreateTensorDirect(b, t.name.c_str(), t.role.c_str(), DTypeName(t.dtype),
                                              &shape, off, t.nbytes, t.requires_grad));
    off = AlignUp(off + t.nbytes);
  }
  std::vector<Offset<fbs::Blob>> kernels;
  for (const BlobRecord& k : c.kernels) {
    offsets->push_back(off);
    kernels.push_back(fbs::CreateBlobDirect(b, k.name.c_str(), off, k.nbytes));
    off = AlignUp(off + k.nbytes);
  }
  *data_size = off;
  auto values = [&](const std::vector<ValueRecord>& vs) {
    std::vector<Offset<fbs::Value>> out;
    for (const ValueRecord& v : vs) {
      auto shape = Dims(v.shape);
      out.push_back(fbs::CreateValueDirect(b, v.name.c_str(), DTypeName(v.dtype), &shape));
    }
    return out;
  };
  auto inputs = values(c.inputs), outputs = values(c.outputs);
  auto payload = fbs::CreatePayloadDirect(
      b, module, &tensors, &inputs, &outputs, &c.assigned, c.rng_seed_parameter, c.random,
      c.training, c.metadata.c_str(), c.kernels.empty() ? nullptr : &kernels);
  b.Finish(payload);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

std::string BuildHeader(const ArtifactContents& c, const std::string& payload, uint64_t checksum,
                        uint64_t data_offset, uint64_t data_size) {
  FlatBufferBuilder b;
  b.ForceDefaults(true);
  // The nested payload holds int64 vectors: align its start to 8 bytes in the file (the reader
  // rejects a misaligned one), so no read is ever misaligned.
  b.ForceVectorAlignment(payload.size(), 1, 8);
  auto bytes = b.CreateVector(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  auto root = fbs::CreateArtifact(
      b, kFormatVersion, b.CreateString(c.producer.empty() ? ProducerString() : c.producer),
      c.module.opset, c.producer_opset ? c.producer_opset : kCurrentOpset, checksum, data_offset,
      data_size, bytes);
  fbs::FinishArtifactBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace

const char* ProducerString() {
  return "oneflow_like 0.12";
}

uint64_t Fnv1a64(const uint8_t* data, size_t size, uint64_t h) {
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ULL;
  return h;
}

StatusOr<std::string> SerializeArtifact(const ArtifactContents& c) {
  RETURN_IF_ERROR(Validate(c.module));
  std::vector<uint64_t> offsets;
  uint64_t data_size = 0;
  std::string payload = BuildPayload(c, &offsets, &data_size);
  std::string data(data_size, '\0');
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    if (c.tensors[i].nbytes > 0)
      std::memcpy(&data[offsets[i]], c.tensors[i].data, c.tensors[i].nbytes);
  }
  for (size_t i = 0; i < c.kernels.size(); ++i) {
    if (c.kernels[i].nbytes > 0)
      std::memcpy(&data[offsets[c.tensors.size() + i]], c.kernels[i].data, c.kernels[i].nbytes);
  }
  uint64_t sum = Fnv1a64(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  sum = Fnv1a64(reinterpret_cast<const uint8_t*>(data.data()), data.size(), sum);
  // Scalars are forced, so the header's size does not depend on their values.
  const uint64_t data_offset = AlignUp(BuildHeader(c, payload, 0, 0, 0).size());
  std::string file = BuildHeader(c, payload, sum, data_offset, data_size);
  file.resize(data_offset, '\0');
  file += data;
  return file;
}

Status WriteArtifact(const ArtifactContents& c, const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, SerializeArtifact(c));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return InvalidArgument("%s: cannot open for writing", path);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f.good()) return Internal("%s: write failed", path);
  return Status();
}

StatusOr<LoadedArtifact> ReadArtifact(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return InvalidArgument("%s: cannot open: %s", path, std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("%s: not a regular file", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return InvalidArgument("%s: empty file, not an .oflx artifact", path);
  }
  // Private and writable: a training graph writes its parameters in place (copy on write).
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return Internal("%s: mmap failed: %s", path, std::strerror(errno));
  std::shared_ptr<void> mapping(p, [size](void* q) { ::munmap(q, size); });
  return ParseArtifact(static_cast<const uint8_t*>(p), size, path, std::move(mapping));
}

}  // namespace oneflow_like::artifact
