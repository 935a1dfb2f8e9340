// Thunk: one unit of work of a compiled program (a kernel launch, a library call, a copy, a
// control-flow construct). Lifecycle, in order, each at most once per executable:
//   Prepare(params)          declare resources (GPU: scratch, streams); no device work
//   Initialize(params)       acquire them: resolve compiled kernels, build command buffers
//   ExecuteOnStream(params)  run, any number of times, on `params.stream` with the buffers of
//                            this run. On the CPU the "stream" is the calling thread: the work
//                            is done when the call returns. A GPU backend enqueues instead.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/passes/buffer_assignment.h"

namespace oneflow_like {
class Stream;  // base/stream.h
}  // namespace oneflow_like

namespace oneflow_like::hlo {

// Base address of every allocation for one run; slices resolve against it.
class BufferAllocations {
 public:
  explicit BufferAllocations(std::vector<char*> bases) : bases_(std::move(bases)) {}
  char* Get(const BufferSlice& s) const { return bases_[s.allocation] + s.offset; }

 private:
  std::vector<char*> bases_;
};

// Compiled kernels by name (CPU: a loaded shared object; GPU: a loaded module).
class KernelLibrary {
 public:
  virtual ~KernelLibrary() = default;
  virtual StatusOr<void*> Resolve(const std::string& name) const = 0;
};

class Thunk {
 public:
  enum class Kind {
    kKernel,
    kGemm,
    kConvolution,
    kCopy,
    kMemset,
    kSequential,
    kWhile,
    kConditional,
    kLibraryCall,
    kEvaluator,
    kDispatch  // a compiler plugin's partition, run by its dispatch library
  };
  struct PrepareParams {};
  struct InitializeParams {
    const KernelLibrary* kernels = nullptr;
  };
  struct ExecuteParams {
    const BufferAllocations* buffers = nullptr;
    void* stream = nullptr;  // GPU: the CUDA stream; CPU: unused (calling thread)
    // The runtime's stream object behind `stream` (DeviceExecutable::Run), for library calls
    // that run the runtime's kernels; null when the executable runs on a bare stream.
    oneflow_like::Stream* runtime_stream = nullptr;
  };

  Thunk(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  virtual ~Thunk() = default;
  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }

  virtual Status Prepare(const PrepareParams&) { return absl::OkStatus(); }
  virtual Status Initialize(const InitializeParams&) { return absl::OkStatus(); }
  virtual Status ExecuteOnStream(const ExecuteParams& params) = 0;
  // One line per thunk (nested sequences indented).
  virtual std::string ToString(int indent) const;

 protected:
  // Extra detail after the kind and name, e.g. slices.
  virtual std::string Details() const { return ""; }

 private:
  Kind kind_;
  std::string name_;
};

using ThunkSequence = std::vector<std::unique_ptr<Thunk>>;
const char* ThunkKindString(Thunk::Kind k);
std::string ThunkSequenceToString(const ThunkSequence& seq, int indent = 0);
Status PrepareAll(ThunkSequence& seq, const Thunk::PrepareParams& p);
Status InitializeAll(ThunkSequence& seq, const Thunk::InitializeParams& p);
Status ExecuteAll(ThunkSequence& seq, const Thunk::ExecuteParams& p);

}  // namespace oneflow_like::hlo
