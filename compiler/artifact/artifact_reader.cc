// ParseArtifact: every check between untrusted bytes and a module the compiler may see. Any input
// gives an artifact or an error naming the file (the loader fuzzer, artifact_fuzzer.cc).
#include <cctype>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/artifact/artifact_file.h"
#include "compiler/artifact/artifact_generated.h"
#include "compiler/artifact/opset.h"

namespace oneflow_like::artifact {
namespace {

namespace fbs = ::oneflow_like::artifact::fb;

std::string Str(const flatbuffers::String* s) {
  return s ? s->str() : std::string();
}

StatusOr<DimVector> ReadDims(const flatbuffers::Vector<int64_t>* v) {
  DimVector d;
  if (v == nullptr) return d;
  if (v->size() > 16) return InvalidArgument("rank %d is too large", int(v->size()));
  // flatbuffers' verifier checks a vector's length word is 4-byte aligned, not that its int64
  // elements are 8-byte aligned: read them bytewise.
  for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
    int64_t x;
    std::memcpy(&x, v->Data() + i * sizeof(int64_t), sizeof(x));
    if (x < 0 || x > (int64_t{1} << 40)) return InvalidArgument("bad dimension %d", x);
    d.push_back(x);
  }
  return d;
}

StatusOr<DType> ReadDType(const flatbuffers::String* s) {
  auto t = DTypeFromName(Str(s));
  if (!t.ok()) return InvalidArgument("unknown dtype '%s'", Str(s));
  return *t;
}

StatusOr<VModule> ReadModule(const fbs::Module* m, int opset) {
  if (m == nullptr || m->computations() == nullptr) return InvalidArgument("no module");
  VModule out;
  out.name = Str(m->name());
  out.opset = opset;
  for (const fbs::Computation* c : *m->computations()) {
    VComputation vc;
    vc.name = Str(c->name());
    vc.entry = c->entry();
    if (c->insts() != nullptr) {
      for (const fbs::Inst* i : *c->insts()) {
        VInst v;
        v.name = Str(i->name());
        v.op = i->op();
        v.shape = Str(i->shape());
        if (i->operands()) v.operands.assign(i->operands()->begin(), i->operands()->end());
        if (i->attrs()) {
          for (const fbs::Attr* a : *i->attrs())
            v.attrs.push_back({Str(a->name()), Str(a->value())});
        }
        v.literal = Str(i->literal());
        v.parameter = i->parameter();
        v.root = i->root();
        vc.insts.push_back(std::move(v));
      }
    }
    out.computations.push_back(std::move(vc));
  }
  RETURN_IF_ERROR(Validate(out));
  return out;
}

StatusOr<std::vector<ValueRecord>> ReadValues(
    const flatbuffers::Vector<flatbuffers::Offset<fbs::Value>>* vs) {
  std::vector<ValueRecord> out;
  if (vs == nullptr) return out;
  for (const fbs::Value* v : *vs) {
    ValueRecord r;
    r.name = Str(v->name());
    ASSIGN_OR_RETURN(r.dtype, ReadDType(v->dtype()));
    ASSIGN_OR_RETURN(r.shape, ReadDims(v->shape()));
    out.push_back(std::move(r));
  }
  return out;
}

// Tensor table: dtypes, shapes and [offset, offset + nbytes) inside the data region.
Status ReadTensors(const fbs::Payload* p, const uint8_t* data, uint64_t data_size,
                   ArtifactContents* c) {
  if (p->tensors() == nullptr) return Status();
  for (const fbs::Tensor* t : *p->tensors()) {
    TensorRecord r;
    r.name = Str(t->name());
    r.role = Str(t->role());
    ASSIGN_OR_RETURN(r.dtype, ReadDType(t->dtype()));
    ASSIGN_OR_RETURN(r.shape, ReadDims(t->shape()));
    uint64_t numel = 1;
    for (int64_t d : r.shape) {
      if (d != 0 && numel > (uint64_t{1} << 50) / static_cast<uint64_t>(d))
        return InvalidArgument("tensor '%s' is too large", r.name);
      numel *= static_cast<uint64_t>(d);
    }
    r.nbytes = t->nbytes();
    if (r.nbytes != numel * static_cast<uint64_t>(DTypeSize(r.dtype)))
      return InvalidArgument("tensor '%s' has %d bytes, its shape needs %d", r.name, r.nbytes,
                             numel * DTypeSize(r.dtype));
    const uint64_t off = t->offset();
    if (off % kTensorAlignment != 0)
      return InvalidArgument("tensor '%s' offset %d is not %d-byte aligned", r.name, off,
                             int(kTensorAlignment));
    if (off > data_size || r.nbytes > data_size - off)
      return InvalidArgument("tensor '%s' [%d, %d) lies outside the data region of %d bytes",
                             r.name, off, off + r.nbytes, data_size);
    r.data = data + off;
    r.requires_grad = t->requires_grad();
    c->tensors.push_back(std::move(r));
  }
  if (p->kernels()) {
    for (const fbs::Blob* k : *p->kernels()) {
      BlobRecord r{Str(k->name()), nullptr, k->nbytes()};
      bool ok =
          r.name.size() == 21 && r.name.rfind("k_", 0) == 0 && r.name.compare(18, 3, ".so") == 0;
      for (size_t i = 2; ok && i < 18; ++i)
        ok = std::isxdigit(static_cast<unsigned char>(r.name[i]));
      if (!ok)
        return InvalidArgument("kernel library name '%s' is not k_<16 hex digits>.so", r.name);
      const uint64_t off = k->offset();
      if (off > data_size || r.nbytes > data_size - off)
        return InvalidArgument("kernel library '%s' lies outside the data region", r.name);
      r.data = data + off;
      c->kernels.push_back(std::move(r));
    }
  }
  if (p->assigned()) {
    for (uint32_t a : *p->assigned()) {
      if (a >= c->tensors.size())
        return InvalidArgument("assigned tensor index %d out of range", int(a));
      c->assigned.push_back(a);
    }
  }
  return Status();
}

}  // namespace

StatusOr<LoadedArtifact> ParseArtifact(const uint8_t* data, size_t size, const std::string& label,
                                       std::shared_ptr<void> keep, bool verify_checksum) {
  auto fail = [&](const Status& s) {
    return Status(s.code(), absl::StrCat(label, ": ", s.message()));
  };
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0)
    return fail(Internal("buffer at a misaligned address (the loader maps files page-aligned)"));
  if (size < 8 || !fbs::ArtifactBufferHasIdentifier(data))
    return fail(InvalidArgument("not an .oflx artifact (bad magic; %d bytes)", int64_t(size)));
  const size_t verify_size = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  flatbuffers::Verifier header_check(data, verify_size);
  if (!fbs::VerifyArtifactBuffer(header_check))
    return fail(InvalidArgument("corrupted or truncated header"));
  const fbs::Artifact* a = fbs::GetArtifact(data);
  LoadedArtifact out;
  out.path = label;
  out.format_version = a->format_version();
  out.producer = Str(a->producer());
  out.producer_opset = a->producer_opset();
  out.checksum = a->checksum();
  out.file_size = size;
  out.data_offset = a->data_offset();
  out.data_size = a->data_size();
  if (out.format_version != kFormatVersion)
    return fail(
        InvalidArgument("format version %d is not readable by this build (reads %d; "
                        "written by %s)",
                        int(out.format_version), int(kFormatVersion), out.producer));
  const int opset = static_cast<int>(a->opset_version());
  if (opset > kCurrentOpset)
    return fail(
        InvalidArgument("written in op-set %d by %s; this build reads op-sets %d to %d "
                        "(export with target_version=%d or use a newer release)",
                        opset, out.producer, kMinSupportedOpset, kCurrentOpset, kCurrentOpset));
  if (opset < kMinSupportedOpset)
    return fail(InvalidArgument("op-set %d is older than the oldest this build reads (%d)", opset,
                                kMinSupportedOpset));
  if (out.data_offset % kTensorAlignment != 0 || out.data_offset > size ||
      out.data_size > size - out.data_offset)
    return fail(InvalidArgument("truncated: the data region [%d, +%d) exceeds the file's %d bytes",
                                out.data_offset, out.data_size, int64_t(size)));
  const flatbuffers::Vector<uint8_t>* payload = a->payload();
  if (payload == nullptr) return fail(InvalidArgument("no payload"));
  if (reinterpret_cast<uintptr_t>(payload->data()) % 8 != 0)
    return fail(InvalidArgument("corrupted header: the payload is not 8-byte aligned"));
  const uint8_t* region = data + out.data_offset;
  uint64_t sum = Fnv1a64(payload->data(), payload->size());
  sum = Fnv1a64(region, out.data_size, sum);
  if (verify_checksum && sum != out.checksum)
    return fail(
        InvalidArgument("checksum mismatch (stored %016x, computed %016x): the file is "
                        "corrupted",
                        out.checksum, sum));
  flatbuffers::Verifier payload_check(payload->data(), payload->size());
  if (!payload_check.VerifyBuffer<fbs::Payload>(nullptr))
    return fail(InvalidArgument("corrupted payload"));
  const fbs::Payload* p = a->payload_nested_root();
  ArtifactContents& c = out.contents;
  auto module = ReadModule(p->module_(), opset);
  if (!module.ok()) return fail(module.status());
  c.module = std::move(*module);
  Status st = ReadTensors(p, region, out.data_size, &c);
  if (!st.ok()) return fail(st);
  auto inputs = ReadValues(p->inputs());
  if (!inputs.ok()) return fail(inputs.status());
  auto outputs = ReadValues(p->outputs());
  if (!outputs.ok()) return fail(outputs.status());
  c.inputs = std::move(*inputs);
  c.outputs = std::move(*outputs);
  c.rng_seed_parameter = p->rng_seed_parameter();
  c.random = p->random();
  c.training = p->training();
  c.metadata = Str(p->metadata());
  out.mapping = std::move(keep);
  return out;
}

}  // namespace oneflow_like::artifact
