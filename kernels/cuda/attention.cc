// CUDA kernels of the fused scaled-dot-product attention (same op names, inputs, attributes and
// dtypes as kernels/cpu/attention.cc): _scaled_dot_product_flash_attention(q, k, v [, mask]) ->
// (out, lse) and its backward op (dout, q, k, v, out, lse [, mask]) -> (dq, dk, dv). Head dims
// up to kAttnMaxHeadDim; the device code is kernels/cuda/attention.cu.
#include "kernels/cuda/attention_launch.h"
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// The launch parameters from the operands q, k, v (inputs q_in..q_in + 2) and the optional mask.
StatusOr<AttnParams> MakeParams(KernelContext& ctx, int q_in, int mask_in) {
  const TensorView &q = ctx.input(q_in), &k = ctx.input(q_in + 1), &v = ctx.input(q_in + 2);
  const DType t = q.dtype;
  if (t != DType::kF32 && t != DType::kF64 && t != DType::kF16 && t != DType::kBF16)
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(t));
  const opdefs::FlashAttnAttrs a = opdefs::ReadAttrs<opdefs::FlashAttnAttrs>(ctx.attrs());
  AttnParams p;
  const int64_t nd = q.shape.ndim();
  p.L = q.shape[nd - 2];
  p.E = q.shape[nd - 1];
  p.S = k.shape[nd - 2];
  p.Ev = v.shape[nd - 1];
  if (p.E > kAttnMaxHeadDim || p.Ev > kAttnMaxHeadDim)
    return InvalidArgument("[%s] head dims above %d are not supported on cuda, got q %s, v %s",
                           ctx.op(), kAttnMaxHeadDim, ShapeString(t, q.shape),
                           ShapeString(t, v.shape));
  // From the batch dims, not numel / (L * E): an empty L, S or E must not divide by zero.
  int64_t kbh = 1;
  p.BH = 1;
  for (int64_t d = 0; d < nd - 2; ++d) {
    p.BH *= q.shape[d];
    kbh *= k.shape[d];
  }
  p.group = kbh > 0 ? p.BH / kbh : 1;
  if (p.BH > kAttnMaxBatchHeads)
    return InvalidArgument(
        "[%s] at most %lld batch * heads on cuda (the grid's y dimension), got q %s", ctx.op(),
        static_cast<long long>(kAttnMaxBatchHeads), ShapeString(t, q.shape));
  p.scale = a.scale;
  p.causal = a.is_causal;
  p.dropout_p = a.dropout_p;
  p.seed = static_cast<uint64_t>(a.seed);
  if (ctx.num_inputs() > mask_in) {
    const TensorView& m = ctx.input(mask_in);  // contiguous, q's rank
    if (nd - 2 > kAttnMaxBatchDims)
      return InvalidArgument("[%s] a mask with more than %d batch dims is not supported on cuda",
                             ctx.op(), kAttnMaxBatchDims);
    DimVector st = ContiguousStrides(m.shape);
    for (int64_t d = 0; d < nd; ++d)
      if (m.shape[d] == 1) st[d] = 0;
    p.mask = m.data;
    p.mask_is_bool = m.dtype == DType::kBool;
    p.nbatch = static_cast<int>(nd - 2);
    for (int d = 0; d < p.nbatch; ++d) {
      p.batch[d] = q.shape[d];
      p.mask_stride[d] = st[d];
    }
    p.mask_stride_l = st[nd - 2];
    p.mask_stride_s = st[nd - 1];
  }
  return p;
}

// Refuses, naming the shapes, a problem whose kernels need more shared memory per block than the
// device can give (f64 with large head dims: dK/dV need 8 * (64 * (E + Ev) + 64) bytes).
Status CheckSmem(KernelContext& ctx, const AttnParams& p, int q_in, bool backward) {
  const DType t = ctx.input(q_in).dtype;
  const size_t need = FlashAttentionSmemBytes(ToScalarType(t), p, backward);
  int dev = 0, optin = 0;
  RETURN_IF_ERROR(Launched(ctx.op(), cudaGetDevice(&dev)));
  RETURN_IF_ERROR(Launched(
      ctx.op(), cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)));
  if (need > static_cast<size_t>(optin))
    return InvalidArgument(
        "[%s] needs %zu bytes of shared memory per block, the device has %d: q %s, v %s too "
        "large for the fused kernel on cuda (use the math path: sdpa_kernel(MATH))",
        ctx.op(), need, optin, ShapeString(t, ctx.input(q_in).shape),
        ShapeString(t, ctx.input(q_in + 2).shape));
  return Status();
}

Status FlashAttention(KernelContext& ctx) {
  ASSIGN_OR_RETURN(AttnParams p, MakeParams(ctx, 0, 3));
  RETURN_IF_ERROR(CheckSmem(ctx, p, 0, /*backward=*/false));
  return Launched(ctx.op(),
                  LaunchFlashAttention(ToScalarType(ctx.input(0).dtype), p, ctx.input(0).data,
                                       ctx.input(1).data, ctx.input(2).data, ctx.output(0).data,
                                       ctx.output(1).data, StreamOf(ctx)));
}

Status FlashAttentionBackward(KernelContext& ctx) {
  ASSIGN_OR_RETURN(AttnParams p, MakeParams(ctx, 1, 6));
  RETURN_IF_ERROR(CheckSmem(ctx, p, 1, /*backward=*/true));
  const DType t = ctx.input(1).dtype;
  ASSIGN_OR_RETURN(void* d, ctx.AllocateTemp(p.BH * p.L * (t == DType::kF64 ? 8 : 4)));
  return Launched(
      ctx.op(), LaunchFlashAttentionBackward(
                    ToScalarType(t), p, ctx.input(0).data, ctx.input(1).data, ctx.input(2).data,
                    ctx.input(3).data, ctx.input(4).data, ctx.input(5).data, d, ctx.output(0).data,
                    ctx.output(1).data, ctx.output(2).data, StreamOf(ctx)));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(_scaled_dot_product_flash_attention, FlashAttention);
OFL_REGISTER_CUDA_KERNEL(_scaled_dot_product_flash_attention_backward, FlashAttentionBackward);

}  // namespace cuda
}  // namespace oneflow_like
