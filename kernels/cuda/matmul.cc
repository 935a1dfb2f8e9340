// CUDA kernel of the linear algebra family (same op, attrs and dtypes as kernels/cpu):
// out = beta * bias + alpha * (a @ b), batched with broadcast batch dims, strided operands.
// f32/f64 go to cuBLAS (exact fp32 unless SetAllowTF32(true)); f16/bf16 too, accumulated in f32
// (tensor cores), as the CPU's oneDNN path; integers use matmul.cu.
// Row-major C = A B is computed as column-major C^T = B^T A^T; transposed views become
// cuBLAS transpose flags, other layouts are packed into scratch first.
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/matmul.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

using kernels::BlasLayout;  // kernels/layout.h: cuBLAS reads the row-major operand as its transpose

struct Mat {
  char* base;
  int64_t rows, cols, rs, cs;
  DimVector batch_strides;  // bytes, aligned to the output's batch dims, 0 where broadcast
};

Mat MakeMat(const TensorView& v, const Shape& out_batch) {
  Mat o;
  o.base = static_cast<char*>(v.data);
  int64_t nd = v.shape.ndim(), elem = DTypeSize(v.dtype);
  o.rows = v.shape[nd - 2];
  o.cols = v.shape[nd - 1];
  o.rs = v.strides[nd - 2];
  o.cs = v.strides[nd - 1];
  int64_t nb = out_batch.ndim(), off = nb - (nd - 2);
  o.batch_strides.assign(nb, 0);
  for (int64_t i = 0; i < nd - 2; ++i)
    o.batch_strides[i + off] = v.shape[i] == 1 ? 0 : v.strides[i] * elem;
  return o;
}

// Copies a strided rows x cols matrix into contiguous `dst` on the stream.
Status Pack(KernelContext& ctx, DType t, const char* src, const Mat& m, void* dst) {
  TensorView from, to;
  from.data = const_cast<char*>(src);
  from.dtype = to.dtype = t;
  from.shape = to.shape = Shape({m.rows, m.cols});
  from.strides = {m.rs, m.cs};
  to.data = dst;
  to.strides = {m.cols, 1};
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop("matmul", to.shape, {&to, &from}, &loop, ops));
  cudaError_t e = LaunchCast(ToScalarType(t), ToScalarType(t), loop, ops[0], ops[1],
                             static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus("matmul", e);
}

Status Matmul(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  DType t = out.dtype;
  const bool half = t == DType::kF16 || t == DType::kBF16;
  bool is_float = t == DType::kF32 || t == DType::kF64 || half;
  if (!is_float && !IntGemmSupported(ToScalarType(t)))
    return TypeError("[matmul] not supported for %s on cuda", DTypeName(t));
  auto* stream = static_cast<CudaStream*>(ctx.stream());
  const auto attrs = opdefs::ReadAttrs<opdefs::MatmulAttrs>(ctx.attrs());
  const double alpha = attrs.alpha, beta = attrs.beta;
  int64_t nd = out.shape.ndim(), m = out.shape[nd - 2], n = out.shape[nd - 1];
  int64_t k = ctx.input(0).shape[ctx.input(0).shape.ndim() - 1];
  Shape batch(absl::MakeConstSpan(out.shape.dims().data(), nd - 2));
  int64_t elem = DTypeSize(t);
  bool has_bias = ctx.num_inputs() == 3 && beta != 0.0;
  if (out.numel() == 0) return Status();
  if (has_bias) {  // out = beta * bias (broadcast), then the GEMMs accumulate
    TensorView bias = BroadcastTo(ctx.input(2), out.shape);
    LoopShape loop;
    Operand ops[2];
    RETURN_IF_ERROR(MakeLoop("matmul", out.shape, {&out, &bias}, &loop, ops));
    // f16/bf16 (no elementwise arithmetic on the device): out = bias, and the GEMM's beta scales
    // it in f32 (below)
    cudaError_t e =
        half ? LaunchCast(ToScalarType(t), ToScalarType(t), loop, ops[0], ops[1], stream->get())
             : LaunchBinaryScalarTable(opdefs::BinaryId::mul_scalar, ToScalarType(t), beta, loop,
                                       ops[0], ops[1], stream->get());
    if (e != cudaSuccess) return LaunchStatus("matmul", e);
  } else if (k == 0) {
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out.data, 0, out.numel() * elem, stream->get()));
  }
  if (k == 0) return Status();
  Mat A = MakeMat(ctx.input(0), batch), B = MakeMat(ctx.input(1), batch);
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  void *pa = nullptr, *pb = nullptr;
  if (is_float) {
    if (!BlasLayout(m, k, A.rs, A.cs, &ta, &lda)) {
      ASSIGN_OR_RETURN(pa, ctx.AllocateTemp(m * k * elem));
      ta = false, lda = k;
    }
    if (!BlasLayout(k, n, B.rs, B.cs, &tb, &ldb)) {
      ASSIGN_OR_RETURN(pb, ctx.AllocateTemp(k * n * elem));
      tb = false, ldb = n;
    }
  }
  cublasHandle_t h = nullptr;
  if (is_float) {
    ASSIGN_OR_RETURN(h, stream->cublas());
  }
  const float alpha_f = static_cast<float>(alpha), one_f = 1.0f, zero_f = 0.0f,
              beta_f = static_cast<float>(beta);
  const double one_d = 1.0, zero_d = 0.0;
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                          op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  // `count` products whose operands lie sa / sb bytes apart and whose outputs follow each other.
  auto gemm = [&](const char* a, const char* b, char* c, int64_t sa, int64_t sb,
                  int64_t count) -> Status {
    if (half) {
      const cudaDataType_t ht = t == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
      CUBLAS_RETURN_IF_ERROR(
          cublasGemmStridedBatchedEx(h, op_b, op_a, n, m, k, &alpha_f, b, ht, ldb, sb / elem, a, ht,
                                     lda, sa / elem, has_bias ? &beta_f : &zero_f, c, ht, n, m * n,
                                     count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (t == DType::kF32) {
      cublasComputeType_t ct = AllowTF32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      CUBLAS_RETURN_IF_ERROR(cublasGemmStridedBatchedEx(
          h, op_b, op_a, n, m, k, &alpha_f, b, CUDA_R_32F, ldb, sb / elem, a, CUDA_R_32F, lda,
          sa / elem, has_bias ? &one_f : &zero_f, c, CUDA_R_32F, n, m * n, count, ct,
          CUBLAS_GEMM_DEFAULT));
    } else {
      CUBLAS_RETURN_IF_ERROR(cublasGemmStridedBatchedEx(
          h, op_b, op_a, n, m, k, &alpha, b, CUDA_R_64F, ldb, sb / elem, a, CUDA_R_64F, lda,
          sa / elem, has_bias ? &one_d : &zero_d, c, CUDA_R_64F, n, m * n, count,
          CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    }
    return Status();
  };
  // Unpacked float operands: the innermost run of batch dims [j, nbd) over which both operands'
  // offsets are index * stride (the whole batch for contiguous or broadcast operands) is one
  // strided-batched cuBLAS call; attention's [batch * heads] products were one call each before
  // (2000 launches per TransformerEncoderLayer training step on the H200). Otherwise (integers,
  // packed operands) each product is its own call: run = 1.
  const int64_t nb = batch.numel(), nbd = batch.ndim();
  int64_t j = nbd, run = 1, sa = 0, sb = 0;
  if (is_float && !pa && !pb) {
    bool have = false;
    for (int64_t d = nbd - 1; d >= 0; --d) {
      if (batch[d] == 1) {
        j = d;
        continue;
      }
      if (!have) {
        sa = A.batch_strides[d], sb = B.batch_strides[d], have = true;
      } else if (A.batch_strides[d] != sa * run || B.batch_strides[d] != sb * run) {
        break;
      }
      run *= batch[d];
      j = d;
    }
  }
  DimVector idx(j, 0);
  for (int64_t o = 0; o < nb / run; ++o) {
    int64_t oa = 0, ob = 0;
    for (int64_t d = 0; d < j; ++d)
      oa += idx[d] * A.batch_strides[d], ob += idx[d] * B.batch_strides[d];
    const char* a = A.base + oa;
    const char* b = B.base + ob;
    char* c = static_cast<char*>(out.data) + o * run * m * n * elem;
    if (!is_float) {
      cudaError_t e =
          LaunchIntGemm(ToScalarType(t), m, n, k, alpha, has_bias, GemmOperand{a, A.rs, A.cs},
                        GemmOperand{b, B.rs, B.cs}, c, stream->get());
      if (e != cudaSuccess) return LaunchStatus("matmul", e);
    } else {
      // Scratch is reused per product: same-stream order makes the previous GEMM finish first.
      if (pa) {
        RETURN_IF_ERROR(Pack(ctx, t, a, A, pa));
        a = static_cast<const char*>(pa);
      }
      if (pb) {
        RETURN_IF_ERROR(Pack(ctx, t, b, B, pb));
        b = static_cast<const char*>(pb);
      }
      RETURN_IF_ERROR(gemm(a, b, c, sa, sb, run));
    }
    for (int64_t d = j - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return Status();
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(matmul, Matmul);

}  // namespace cuda
}  // namespace oneflow_like
