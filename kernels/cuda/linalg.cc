// The linalg family on cuda (the ops of oneflow_like/opdefs/linalg.def): each runs the CPU's
// LAPACK kernel (kernels/cpu/linalg.cc) on a host copy of its operands, then copies the results
// back, in stream order, waiting for the device on both sides. Same op names, attrs, dtypes,
// results and error messages as the CPU, so every linalg op works on cuda tensors (eager and
// inside nn.Graph's kernel calls); it is synchronous, as the CPU's inv/cholesky/solve already are
// (they read LAPACK's info), and costs two transfers per call. cuSOLVER kernels would replace it
// op by op (kernels/cuda/README.md).
#include <algorithm>
#include <vector>

#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// Elements from a view's first element to its last (strides >= 0), 0 when empty.
size_t SpanBytes(const TensorView& v) {
  if (v.numel() == 0) return 0;
  int64_t last = 0;
  for (int64_t i = 0; i < v.shape.ndim(); ++i) last += (v.shape[i] - 1) * v.strides[i];
  return static_cast<size_t>(last + 1) * DTypeSize(v.dtype);
}

Status Copy(const char* op, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
            cudaStream_t s) {
  if (bytes == 0) return Status();
  return Launched(op, cudaMemcpyAsync(dst, src, bytes, kind, s));
}

Status OnHost(KernelContext& ctx) {
  const char* op = ctx.op();
  ASSIGN_OR_RETURN(kernels::KernelFn cpu, kernels::FindKernel(op, DeviceType::kCPU));
  auto* stream = static_cast<CudaStream*>(ctx.stream());
  cudaStream_t s = stream->get();
  const int nin = ctx.num_inputs(), nout = ctx.num_outputs();
  std::vector<std::vector<char>> buf(nin + nout);
  std::vector<TensorView> in(nin), out(nout);
  auto stage = [&](const TensorView& v, std::vector<char>* b, TensorView* h) {
    b->resize(std::max<size_t>(SpanBytes(v), 1));
    *h = v;
    h->data = b->data();
    return Copy(op, b->data(), v.data, SpanBytes(v), cudaMemcpyDeviceToHost, s);
  };
  for (int i = 0; i < nin; ++i) RETURN_IF_ERROR(stage(ctx.input(i), &buf[i], &in[i]));
  // Outputs too: a kernel that writes part of an output keeps the rest as it was.
  for (int i = 0; i < nout; ++i) RETURN_IF_ERROR(stage(ctx.output(i), &buf[nin + i], &out[i]));
  RETURN_IF_ERROR(stream->Synchronize());
  {
    KernelContext host(op, Device::CPU(), ctx.attrs(), in, out, nullptr);
    RETURN_IF_ERROR(cpu(host));
  }
  for (int i = 0; i < nout; ++i)
    RETURN_IF_ERROR(Copy(op, ctx.output(i).data, out[i].data, SpanBytes(ctx.output(i)),
                         cudaMemcpyHostToDevice, s));
  return stream->Synchronize();  // the host buffers are freed on return
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(linalg_cholesky, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_inv, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_slogdet, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_solve, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_eigh, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_qr, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_svd, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_cholesky_ex, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_inv_ex, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_solve_ex, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_lu_factor_ex, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_lu_permutation, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_solve_triangular, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_householder_product, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_geqrf, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_ormqr, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_ldl_factor_ex, OnHost);
OFL_REGISTER_CUDA_KERNEL(linalg_ldl_solve, OnHost);

}  // namespace cuda
}  // namespace oneflow_like
