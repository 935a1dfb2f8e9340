// CUDA kernels of the NN miscellany (same op names, attrs, inputs and dtypes as
// kernels/cpu/nn_misc.cc): embedding (+grad), dropout, attn_bias. Embedding indices are checked
// on the device first; a bad one is the CPU's OutOfRange after the stream is done and nothing
// is written. dropout draws the CPU's mask: kernels/cuda/rng.h with the same (seed, i).
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// Starts the device check of idx[0, n) against [0, rows); Finish() reports the first bad one.
class RowCheck {
 public:
  Status Start(KernelContext& ctx, const char* op, const int64_t* idx, int64_t n, int64_t rows) {
    op_ = op;
    idx_ = idx;
    rows_ = rows;
    s_ = static_cast<CudaStream*>(ctx.stream());
    ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(sizeof(unsigned long long)));
    flag_ = static_cast<unsigned long long*>(p);
    RETURN_IF_ERROR(
        Launched(op, cudaMemsetAsync(flag_, 0xff, sizeof(unsigned long long), s_->get())));
    return Launched(op, LaunchCheckIndices(idx, n, 0, rows, flag_, s_->get()));
  }
  const unsigned long long* flag() const { return flag_; }
  Status Finish() {
    unsigned long long bad = kNoBadIndex;
    RETURN_IF_ERROR(Launched(
        op_, cudaMemcpyAsync(&bad, flag_, sizeof(bad), cudaMemcpyDeviceToHost, s_->get())));
    RETURN_IF_ERROR(s_->Synchronize());
    if (bad == kNoBadIndex) return Status();
    int64_t v = 0;
    RETURN_IF_ERROR(Launched(op_, cudaMemcpy(&v, idx_ + bad, sizeof(v), cudaMemcpyDeviceToHost)));
    return OutOfRange("[%s] index %d out of range for %d rows", op_, v, rows_);
  }

 private:
  const char* op_ = "";
  const int64_t* idx_ = nullptr;
  int64_t rows_ = 0;
  CudaStream* s_ = nullptr;
  unsigned long long* flag_ = nullptr;
};

// embedding(weight [V, D], indices (i64)) -> [*indices, D].
Status Embedding(KernelContext& ctx) {
  const TensorView &w = ctx.input(0), &iv = ctx.input(1), &out = ctx.output(0);
  if (!NnFloatSupported(ToScalarType(w.dtype)))
    return TypeError("[embedding] not supported for %s on cuda", DTypeName(w.dtype));
  int64_t rows = w.shape[0], dim = w.shape[1], n = iv.numel();
  const int64_t* idx = iv.ptr<const int64_t>();
  RowCheck check;
  RETURN_IF_ERROR(check.Start(ctx, "embedding", idx, n, rows));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  RETURN_IF_ERROR(Launched("embedding", LaunchEmbedding(ToScalarType(w.dtype), n, dim, idx, w.data,
                                                        out.data, check.flag(), s->get())));
  return check.Finish();
}

// embedding_grad(dy [*, D], indices; num_rows, padding_idx) -> dweight [V, D]. The CPU does not
// check the indices here (the forward did); a bad one would make the device write out of
// bounds, so it is checked and reported as the forward reports it.
Status EmbeddingGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &iv = ctx.input(1), &dw = ctx.output(0);
  if (!NnFloatSupported(ToScalarType(dy.dtype)))
    return TypeError("[embedding_grad] not supported for %s on cuda", DTypeName(dy.dtype));
  int64_t rows = dw.shape[0], dim = dw.shape[1], n = iv.numel(),
          pad = opdefs::ReadAttrs<opdefs::EmbeddingGradAttrs>(ctx.attrs()).padding_idx;
  const int64_t* idx = iv.ptr<const int64_t>();
  RowCheck check;
  RETURN_IF_ERROR(check.Start(ctx, "embedding_grad", idx, n, rows));
  size_t bytes = rows * dim > 0 ? EmbeddingGradScratchBytes(n, rows) : 0;
  void* scratch = nullptr;
  if (bytes > 0) {
    ASSIGN_OR_RETURN(scratch, ctx.AllocateTemp(bytes));
  }
  auto* s = static_cast<CudaStream*>(ctx.stream());
  RETURN_IF_ERROR(Launched(
      "embedding_grad", LaunchEmbeddingGrad(ToScalarType(dy.dtype), n, rows, dim, pad, idx, dy.data,
                                            dw.data, check.flag(), scratch, bytes, s->get())));
  return check.Finish();
}

// dropout(x; p, seed): x * keep(seed, i) / (1 - p), keep = RngUniform(seed, i) >= p.
Status Dropout(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  if (!NnFloatSupported(ToScalarType(x.dtype)))
    return TypeError("[dropout] not supported for %s on cuda", DTypeName(x.dtype));
  const opdefs::DropoutAttrs a = opdefs::ReadAttrs<opdefs::DropoutAttrs>(ctx.attrs());
  auto* s = static_cast<CudaStream*>(ctx.stream());
  return Launched(
      "dropout", LaunchDropout(ToScalarType(x.dtype), x.numel(), a.p, static_cast<uint64_t>(a.seed),
                               x.data, out.data, s->get()));
}

// attn_bias(q [, mask]; L, S, is_causal) -> bias (contiguous, trailing dims [L, S]).
Status AttnBias(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  if (!NnFloatSupported(ToScalarType(out.dtype)))
    return TypeError("[attn_bias] not supported for %s on cuda", DTypeName(out.dtype));
  bool causal = opdefs::ReadAttrs<opdefs::AttnBiasAttrs>(ctx.attrs()).is_causal,
       has_mask = ctx.num_inputs() > 1;
  int64_t nd = out.shape.ndim();
  if (nd < 2)
    return InvalidArgument("[attn_bias] expected an output with at least 2 dims, got %s",
                           out.shape.ToString());
  auto* s = static_cast<CudaStream*>(ctx.stream());
  LoopShape loop;
  Operand ops[2];
  bool is_bool = false;
  if (has_mask) {
    TensorView m = BroadcastTo(ctx.input(1), out.shape);
    is_bool = m.dtype == DType::kBool;
    if (!is_bool && m.dtype != out.dtype)
      return TypeError("[attn_bias] mask %s does not match the bias dtype %s on cuda",
                       DTypeName(m.dtype), DTypeName(out.dtype));
    RETURN_IF_ERROR(MakeLoop("attn_bias", out.shape, {&out, &m}, &loop, ops));
  } else {
    RETURN_IF_ERROR(MakeLoop("attn_bias", out.shape, {&out}, &loop, ops));
  }
  return Launched("attn_bias", LaunchAttnBias(ToScalarType(out.dtype), out.shape[nd - 2],
                                              out.shape[nd - 1], causal, is_bool, loop, ops[0],
                                              has_mask ? &ops[1] : nullptr, s->get()));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(embedding, Embedding);
OFL_REGISTER_CUDA_KERNEL(embedding_grad, EmbeddingGrad);
OFL_REGISTER_CUDA_KERNEL(dropout, Dropout);
OFL_REGISTER_CUDA_KERNEL(attn_bias, AttnBias);

}  // namespace cuda
}  // namespace oneflow_like
