// CPU library thunks: GEMM (OpenBLAS cblas), direct convolution, library custom calls
// (compiler/library), and an evaluator thunk that runs any single op through the reference
// evaluator (the fallback for ops with no kernel yet; slow, reported by the compile stats).
#pragma once
#include <atomic>
#include <mutex>

#include "compiler/ir/hlo_instruction.h"
#include "compiler/thunks/thunk.h"
#include "device/cpu/gemm.h"

namespace oneflow_like::hlo {

// out[B,M,N] = lhs[B,M,K] x rhs[B,K,N]; each operand may be stored transposed in its last
// two dims. f32 runs cpu::Sgemm (the eager matmul's GEMM), with the implementation (OpenBLAS
// or oneDNN) autotuned on the first run; f64 OpenBLAS.
class GemmThunk : public Thunk {
 public:
  struct Config {
    DType dtype = DType::kF32;
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool lhs_transposed = false, rhs_transposed = false;
  };
  GemmThunk(std::string name, Config c, BufferSlice lhs, BufferSlice rhs, BufferSlice out)
      : Thunk(Kind::kGemm, std::move(name)), c_(c), lhs_(lhs), rhs_(rhs), out_(out) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;

 protected:
  std::string Details() const override;

 private:
  cpu::GemmShape Shape() const;
  Config c_;
  std::once_flag tuned_;
  std::atomic<cpu::GemmImpl> impl_{cpu::GemmImpl::kAuto};  // "auto" until the first run
  BufferSlice lhs_, rhs_, out_;
};
// The GEMM config of a canonical dot (see DotDecomposer), or an error.
StatusOr<GemmThunk::Config> GemmConfigFor(const HloInstruction& dot);

// Ops described by their instruction, executed on row-major buffers: convolution (f32/f64),
// custom calls into compiler/library (f32/f64), or anything via the reference evaluator.
class InstructionThunk : public Thunk {
 public:
  InstructionThunk(Kind kind, const HloInstruction* inst, std::vector<BufferSlice> operands,
                   std::vector<BufferSlice> results)
      : Thunk(kind, inst->name()),
        inst_(inst),
        operands_(std::move(operands)),
        results_(std::move(results)) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;

 protected:
  std::string Details() const override;

 private:
  Status RunConvolution(const ExecuteParams& p);
  Status RunLibraryCall(const ExecuteParams& p);
  Status RunEvaluator(const ExecuteParams& p);
  const HloInstruction* inst_;  // owned by the executable's module
  std::vector<BufferSlice> operands_, results_;
};

}  // namespace oneflow_like::hlo
