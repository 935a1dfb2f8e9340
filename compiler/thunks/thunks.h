// Backend-neutral thunks: kernel launch, copy, memset, sequence, while, conditional.
#pragma once
#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo {

// Runs a compiled loop kernel `kernel_name` over `num_elements` output elements.
// CPU ABI: extern "C" void kernel(char** args, int64_t begin, int64_t end). Every output element
// is independent, so large loops are split into [begin, end) ranges run by IntraOpPool();
// `work` (elementary operations, e.g. input elements read by a reduction) sets the grain; a
// kernel that exports `const int64_t <kernel_name>_row` (C++ row loops) is split at whole rows
// when a row fits in a chunk.
class KernelThunk : public Thunk {
 public:
  using CpuKernelFn = void (*)(char**, int64_t, int64_t);
  KernelThunk(std::string name, std::string kernel_name, std::vector<BufferSlice> args,
              int64_t num_elements, int64_t work = 0)
      : Thunk(Kind::kKernel, std::move(name)),
        kernel_name_(std::move(kernel_name)),
        args_(std::move(args)),
        num_elements_(num_elements),
        work_(work > num_elements ? work : num_elements) {}
  // Below this much work a loop runs serially on the calling thread.
  static constexpr int64_t kParallelWork = 32768;
  Status Initialize(const InitializeParams& p) override;
  Status ExecuteOnStream(const ExecuteParams& p) override;
  int64_t work() const { return work_; }

 protected:
  std::string Details() const override;

 private:
  std::string kernel_name_;
  std::vector<BufferSlice> args_;
  int64_t num_elements_, work_;
  int64_t row_ = 1;  // set by Initialize from the kernel library
  CpuKernelFn fn_ = nullptr;
};

class CopyThunk : public Thunk {
 public:
  CopyThunk(std::string name, BufferSlice src, BufferSlice dst)
      : Thunk(Kind::kCopy, std::move(name)), src_(src), dst_(dst) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;

 protected:
  std::string Details() const override;

 private:
  BufferSlice src_, dst_;
};

class MemsetThunk : public Thunk {
 public:
  MemsetThunk(std::string name, BufferSlice dst, uint8_t byte = 0)
      : Thunk(Kind::kMemset, std::move(name)), dst_(dst), byte_(byte) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;

 private:
  BufferSlice dst_;
  uint8_t byte_;
};

class SequentialThunk : public Thunk {
 public:
  SequentialThunk(std::string name, ThunkSequence thunks)
      : Thunk(Kind::kSequential, std::move(name)), thunks_(std::move(thunks)) {}
  Status Prepare(const PrepareParams& p) override { return PrepareAll(thunks_, p); }
  Status Initialize(const InitializeParams& p) override { return InitializeAll(thunks_, p); }
  Status ExecuteOnStream(const ExecuteParams& p) override { return ExecuteAll(thunks_, p); }
  std::string ToString(int indent) const override;

 private:
  ThunkSequence thunks_;
};

// Copies `init` into the loop state, then: run condition, read its pred, run body, copy the
// body's results into the state, until the pred is false.
class WhileThunk : public Thunk {
 public:
  WhileThunk(std::string name, std::vector<BufferSlice> init, std::vector<BufferSlice> state,
             ThunkSequence condition, BufferSlice pred, ThunkSequence body,
             std::vector<BufferSlice> body_results)
      : Thunk(Kind::kWhile, std::move(name)),
        init_(std::move(init)),
        state_(std::move(state)),
        condition_(std::move(condition)),
        pred_(pred),
        body_(std::move(body)),
        results_(std::move(body_results)) {}
  Status Prepare(const PrepareParams& p) override;
  Status Initialize(const InitializeParams& p) override;
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::string ToString(int indent) const override;

 private:
  std::vector<BufferSlice> init_, state_;
  ThunkSequence condition_;
  BufferSlice pred_;
  ThunkSequence body_;
  std::vector<BufferSlice> results_;
};

// Runs branch `index` (pred: true -> 0, false -> 1; s32 out of range -> last) and copies its
// results into the conditional's buffers.
class ConditionalThunk : public Thunk {
 public:
  ConditionalThunk(std::string name, BufferSlice index, bool index_is_pred,
                   std::vector<ThunkSequence> branches,
                   std::vector<std::vector<BufferSlice>> branch_results,
                   std::vector<BufferSlice> results)
      : Thunk(Kind::kConditional, std::move(name)),
        index_(index),
        is_pred_(index_is_pred),
        branches_(std::move(branches)),
        branch_results_(std::move(branch_results)),
        results_(std::move(results)) {}
  Status Prepare(const PrepareParams& p) override;
  Status Initialize(const InitializeParams& p) override;
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::string ToString(int indent) const override;

 private:
  BufferSlice index_;
  bool is_pred_;
  std::vector<ThunkSequence> branches_;
  std::vector<std::vector<BufferSlice>> branch_results_;
  std::vector<BufferSlice> results_;
};

}  // namespace oneflow_like::hlo
