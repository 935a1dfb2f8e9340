// CUDA kernels of the creation (arange, linspace, eye) and random families (same op names, attrs
// and dtypes as kernels/cpu/creation.cc and random.cc). Random ops draw the CPU's numbers for
// the same seed (kernels/cuda/rng.h); randperm's serial Fisher-Yates runs on the host with the
// same generator and is copied over.
#include <numeric>
#include <vector>

#include "kernels/cuda/kernel_util.h"
#include "kernels/cuda/rng.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/creation.h"
#include "oneflow_like/opdefs/random.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;
using opdefs::ReadAttrs;

Status Generate(KernelContext& ctx, GenOp op, const GenParams& p) {
  const TensorView& out = ctx.output(0);
  LoopShape loop;
  Operand o;
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out}, &loop, &o));
  cudaError_t e = LaunchGenerate(op, ToScalarType(out.dtype), p, loop, o,
                                 static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

// The op's seed (opdefs/random.def: drawn at dispatch from the device's generator).
template <typename A>
uint64_t Seed(const A& a) {
  return static_cast<uint64_t>(a.seed);
}

Status Arange(KernelContext& ctx) {
  const opdefs::ArangeAttrs a = ReadAttrs<opdefs::ArangeAttrs>(ctx.attrs());
  GenParams p;
  p.a = a.start;
  p.b = a.step;
  return Generate(ctx, GenOp::kArange, p);
}
Status Linspace(KernelContext& ctx) {
  const opdefs::LinspaceAttrs a = ReadAttrs<opdefs::LinspaceAttrs>(ctx.attrs());
  GenParams p;
  p.a = a.start;
  p.b = a.end;
  p.n = ctx.output(0).numel();
  return Generate(ctx, GenOp::kLinspace, p);
}
Status Eye(KernelContext& ctx) {
  GenParams p;
  p.b = static_cast<double>(ctx.output(0).shape[1]);
  return Generate(ctx, GenOp::kEye, p);
}
Status Uniform(KernelContext& ctx) {
  const opdefs::UniformAttrs a = ReadAttrs<opdefs::UniformAttrs>(ctx.attrs());
  GenParams p;
  p.seed = Seed(a);
  p.a = a.low;
  p.b = a.high;
  return Generate(ctx, GenOp::kUniform, p);
}
Status Normal(KernelContext& ctx) {
  const opdefs::NormalAttrs a = ReadAttrs<opdefs::NormalAttrs>(ctx.attrs());
  GenParams p;
  p.seed = Seed(a);
  p.a = a.mean;
  p.b = a.std;
  return Generate(ctx, GenOp::kNormal, p);
}
Status Randint(KernelContext& ctx) {
  const opdefs::RandintAttrs a = ReadAttrs<opdefs::RandintAttrs>(ctx.attrs());
  GenParams p;
  p.seed = Seed(a);
  p.n = a.low;
  p.span = static_cast<uint64_t>(a.high - p.n);
  if (p.span == 0) return InvalidArgument("[%s] empty range", ctx.op());
  return Generate(ctx, GenOp::kRandint, p);
}

Status Randperm(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  uint64_t s = Seed(ReadAttrs<opdefs::RandpermAttrs>(ctx.attrs()));
  std::vector<int64_t> perm(static_cast<size_t>(out.numel()));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  for (int64_t i = out.numel() - 1; i > 0; --i)
    std::swap(perm[i], perm[static_cast<int64_t>(RngBits(s, i) % static_cast<uint64_t>(i + 1))]);
  if (perm.empty()) return Status();
  ASSIGN_OR_RETURN(void* dev, ctx.AllocateTemp(perm.size() * sizeof(int64_t)));
  auto* stream = static_cast<CudaStream*>(ctx.stream());
  // Pageable source: the copy is staged before cudaMemcpyAsync returns, so `perm` may go.
  cudaError_t e = cudaMemcpyAsync(dev, perm.data(), perm.size() * sizeof(int64_t),
                                  cudaMemcpyHostToDevice, stream->get());
  if (e != cudaSuccess) return LaunchStatus("randperm", e);
  RETURN_IF_ERROR(stream->Synchronize());
  GenParams p;
  p.src = dev;
  return Generate(ctx, GenOp::kFromI64, p);
}

Status Bernoulli(KernelContext& ctx) {
  const TensorView& prob = ctx.input(0);
  if (prob.dtype != DType::kF32 && prob.dtype != DType::kF64)
    return Status();  // the CPU does nothing either
  auto* stream = static_cast<CudaStream*>(ctx.stream());
  ASSIGN_OR_RETURN(void* f, ctx.AllocateTemp(sizeof(unsigned long long)));
  auto* flag = static_cast<unsigned long long*>(f);
  cudaError_t e = cudaMemsetAsync(flag, 0xff, sizeof(*flag), stream->get());
  if (e == cudaSuccess)
    e = LaunchCheckProbabilities(ToScalarType(prob.dtype), prob.data, prob.numel(), flag,
                                 stream->get());
  if (e != cudaSuccess) return LaunchStatus("bernoulli", e);
  GenParams p;
  p.seed = Seed(ReadAttrs<opdefs::BernoulliAttrs>(ctx.attrs()));
  p.src = prob.data;
  p.src_type = ToScalarType(prob.dtype);
  p.flag = flag;
  RETURN_IF_ERROR(Generate(ctx, GenOp::kBernoulli, p));
  unsigned long long bad = kNoBadIndex;
  e = cudaMemcpyAsync(&bad, flag, sizeof(bad), cudaMemcpyDeviceToHost, stream->get());
  if (e != cudaSuccess) return LaunchStatus("bernoulli", e);
  RETURN_IF_ERROR(stream->Synchronize());
  if (bad == kNoBadIndex) return Status();
  double v = 0;
  size_t es = DTypeSize(prob.dtype);
  char buf[8];
  e = cudaMemcpy(buf, static_cast<const char*>(prob.data) + bad * es, es, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return LaunchStatus("bernoulli", e);
  v = prob.dtype == DType::kF32 ? *reinterpret_cast<float*>(buf) : *reinterpret_cast<double*>(buf);
  return OutOfRange("[bernoulli] probability %g at element %d is not in [0, 1]", v,
                    static_cast<int64_t>(bad));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(arange, Arange);
OFL_REGISTER_CUDA_KERNEL(linspace, Linspace);
OFL_REGISTER_CUDA_KERNEL(eye, Eye);
OFL_REGISTER_CUDA_KERNEL(uniform, Uniform);
OFL_REGISTER_CUDA_KERNEL(uniform_, Uniform);
OFL_REGISTER_CUDA_KERNEL(normal, Normal);
OFL_REGISTER_CUDA_KERNEL(normal_, Normal);
OFL_REGISTER_CUDA_KERNEL(randint, Randint);
OFL_REGISTER_CUDA_KERNEL(randint_, Randint);
OFL_REGISTER_CUDA_KERNEL(randperm, Randperm);
OFL_REGISTER_CUDA_KERNEL(bernoulli, Bernoulli);

}  // namespace cuda
}  // namespace oneflow_like
