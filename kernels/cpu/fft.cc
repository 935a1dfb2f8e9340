// CPU kernels of the discrete Fourier transforms (torch.fft), on FFTW3 (Debian's libfftw3-dev:
// fftw3 for complex128/float64, fftw3f for complex64/float32):
//   fft_c2c (complex -> complex), fft_r2c (real -> the onesided complex half of the last
//   transformed dim), fft_c2r (that half -> real, the last dim's size from the output).
// Attributes: dim (the transformed dims; for r2c/c2r the last one is the halved one), forward
// (the sign of the exponent: e^-i for forward), scale (the normalization, multiplied in after
// the unnormalized transform). One guru plan covers every transformed dim and every batch dim
// at once. Plans are created with FFTW_ESTIMATE (no timing runs) and FFTW_UNALIGNED (so a plan
// runs on any arrays), cached per (kind, dtype, direction, sizes and strides), and created under
// a mutex: FFTW's planner is not thread safe, its new-array execute functions are.
#include <fftw3.h>

#include <complex>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "kernels/kernel.h"

namespace oneflow_like {
namespace kernels {
namespace {

enum class FftKind { kC2C = 0, kR2C = 1, kC2R = 2 };

struct PlanIO {
  std::vector<fftw_iodim64> dims, batch;  // transformed dims; the other (batch) dims
};

// The guru dims of a transform of `dims` over contiguous in/out of shapes `in`, `out`.
PlanIO MakeIO(const Shape& in, const Shape& out, const std::vector<int64_t>& dims, FftKind kind) {
  const int64_t nd = in.ndim();
  std::vector<int64_t> is(nd), os(nd);
  int64_t si = 1, so = 1;
  for (int64_t d = nd - 1; d >= 0; --d) {
    is[d] = si;
    os[d] = so;
    si *= in[d];
    so *= out[d];
  }
  PlanIO io;
  std::vector<bool> transformed(nd, false);
  for (int64_t d : dims) {
    transformed[d] = true;
    // r2c / c2r: the logical (real) size of the halved dim
    const int64_t n = kind == FftKind::kC2R ? out[d] : in[d];
    io.dims.push_back(fftw_iodim64{n, is[d], os[d]});
  }
  for (int64_t d = 0; d < nd; ++d)
    if (!transformed[d]) io.batch.push_back(fftw_iodim64{in[d], is[d], os[d]});
  return io;
}

template <typename R>
struct Fftw;
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using cpx = fftw_complex;
  static plan C2C(const PlanIO& io, void* in, void* out, int sign) {
    return fftw_plan_guru64_dft(io.dims.size(), io.dims.data(), io.batch.size(), io.batch.data(),
                                static_cast<cpx*>(in), static_cast<cpx*>(out), sign,
                                FFTW_ESTIMATE | FFTW_UNALIGNED);
  }
  static plan R2C(const PlanIO& io, void* in, void* out) {
    return fftw_plan_guru64_dft_r2c(io.dims.size(), io.dims.data(), io.batch.size(),
                                    io.batch.data(), static_cast<double*>(in),
                                    static_cast<cpx*>(out), FFTW_ESTIMATE | FFTW_UNALIGNED);
  }
  static plan C2R(const PlanIO& io, void* in, void* out) {
    return fftw_plan_guru64_dft_c2r(io.dims.size(), io.dims.data(), io.batch.size(),
                                    io.batch.data(), static_cast<cpx*>(in),
                                    static_cast<double*>(out), FFTW_ESTIMATE | FFTW_UNALIGNED);
  }
  static void Run(FftKind k, plan p, void* in, void* out) {
    if (k == FftKind::kC2C)
      fftw_execute_dft(p, static_cast<cpx*>(in), static_cast<cpx*>(out));
    else if (k == FftKind::kR2C)
      fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<cpx*>(out));
    else
      fftw_execute_dft_c2r(p, static_cast<cpx*>(in), static_cast<double*>(out));
  }
};
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using cpx = fftwf_complex;
  static plan C2C(const PlanIO& io, void* in, void* out, int sign) {
    return fftwf_plan_guru64_dft(io.dims.size(), io.dims.data(), io.batch.size(), io.batch.data(),
                                 static_cast<cpx*>(in), static_cast<cpx*>(out), sign,
                                 FFTW_ESTIMATE | FFTW_UNALIGNED);
  }
  static plan R2C(const PlanIO& io, void* in, void* out) {
    return fftwf_plan_guru64_dft_r2c(io.dims.size(), io.dims.data(), io.batch.size(),
                                     io.batch.data(), static_cast<float*>(in),
                                     static_cast<cpx*>(out), FFTW_ESTIMATE | FFTW_UNALIGNED);
  }
  static plan C2R(const PlanIO& io, void* in, void* out) {
    return fftwf_plan_guru64_dft_c2r(io.dims.size(), io.dims.data(), io.batch.size(),
                                     io.batch.data(), static_cast<cpx*>(in),
                                     static_cast<float*>(out), FFTW_ESTIMATE | FFTW_UNALIGNED);
  }
  static void Run(FftKind k, plan p, void* in, void* out) {
    if (k == FftKind::kC2C)
      fftwf_execute_dft(p, static_cast<cpx*>(in), static_cast<cpx*>(out));
    else if (k == FftKind::kR2C)
      fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<cpx*>(out));
    else
      fftwf_execute_dft_c2r(p, static_cast<cpx*>(in), static_cast<float*>(out));
  }
};

// The plan cache (plans live as long as the process: FFTW plans are small).
std::mutex g_plan_mu;
std::map<std::vector<int64_t>, void*> g_plans;

template <typename R>
StatusOr<typename Fftw<R>::plan> GetPlan(const char* op, FftKind kind, bool forward,
                                         const PlanIO& io, void* in, void* out) {
  std::vector<int64_t> key = {static_cast<int64_t>(kind), static_cast<int64_t>(sizeof(R)),
                              forward ? 1 : 0, static_cast<int64_t>(io.dims.size())};
  for (const auto* v : {&io.dims, &io.batch})
    for (const fftw_iodim64& d : *v) key.insert(key.end(), {d.n, d.is, d.os});
  std::lock_guard<std::mutex> lock(g_plan_mu);
  auto it = g_plans.find(key);
  if (it != g_plans.end()) return static_cast<typename Fftw<R>::plan>(it->second);
  typename Fftw<R>::plan p = nullptr;
  if (kind == FftKind::kC2C)
    p = Fftw<R>::C2C(io, in, out, forward ? FFTW_FORWARD : FFTW_BACKWARD);
  else if (kind == FftKind::kR2C)
    p = Fftw<R>::R2C(io, in, out);
  else
    p = Fftw<R>::C2R(io, in, out);
  if (p == nullptr) return Internal("[%s] FFTW could not plan this transform", op);
  g_plans.emplace(std::move(key), static_cast<void*>(p));
  return p;
}

template <typename R>
Status RunFft(KernelContext& ctx, FftKind kind) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  if (out.numel() == 0) return Status();
  const std::vector<int64_t>& dims = ctx.attrs().Ints("dim");
  const bool forward = ctx.attrs().Bool("forward", true);
  const double scale = ctx.attrs().Float("scale", 1.0);
  PlanIO io = MakeIO(in.shape, out.shape, dims, kind);
  void* src = in.data;
  if (kind == FftKind::kC2R) {  // FFTW's c2r overwrites its input: transform a copy
    const size_t bytes = in.numel() * DTypeSize(in.dtype);
    ASSIGN_OR_RETURN(void* tmp, ctx.AllocateTemp(bytes));
    std::memcpy(tmp, in.data, bytes);
    src = tmp;
  }
  ASSIGN_OR_RETURN(auto plan, GetPlan<R>(ctx.op(), kind, forward, io, src, out.data));
  Fftw<R>::Run(kind, plan, src, out.data);
  if (scale != 1.0) {
    R* o = static_cast<R*>(out.data);
    const int64_t n = out.numel() * (kind == FftKind::kC2R ? 1 : 2);
    const R s = static_cast<R>(scale);
    for (int64_t i = 0; i < n; ++i) o[i] *= s;
  }
  return Status();
}

template <FftKind kKind>
Status FftKernel(KernelContext& ctx) {
  // c2r reads complex and writes real; the real side's dtype picks the precision.
  const DType real = kKind == FftKind::kC2C   ? ToRealDType(ctx.input(0).dtype)
                     : kKind == FftKind::kR2C ? ctx.input(0).dtype
                                              : ctx.output(0).dtype;
  if (real == DType::kF64) return RunFft<double>(ctx, kKind);
  if (real == DType::kF32) return RunFft<float>(ctx, kKind);
  return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeLongName(ctx.input(0).dtype));
}

}  // namespace

OFL_REGISTER_KERNEL(fft_c2c, kCPU, FftKernel<FftKind::kC2C>);
OFL_REGISTER_KERNEL(fft_r2c, kCPU, FftKernel<FftKind::kR2C>);
OFL_REGISTER_KERNEL(fft_c2r, kCPU, FftKernel<FftKind::kC2R>);

}  // namespace kernels
}  // namespace oneflow_like
