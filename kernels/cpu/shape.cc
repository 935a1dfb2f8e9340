// CPU kernels of the shape family: the copies (cat, flip, tril/triu, constant pad) and
// as_strided_scatter (the gradient of every view). View ops themselves run no kernel.
#include <cstring>

#include "kernels/cpu/strided.h"

namespace oneflow_like {
namespace kernels {
namespace {

// The sub-view of `v` starting at `start` along `dim` with `n` elements.
TensorView Narrowed(const TensorView& v, int64_t dim, int64_t start, int64_t n) {
  TensorView r = v;
  r.shape[dim] = n;
  r.data = static_cast<char*>(v.data) + start * v.strides[dim] * DTypeSize(v.dtype);
  return r;
}

Status FillZero(const TensorView& out) {
  std::memset(out.data, 0, out.numel() * DTypeSize(out.dtype));
  return Status();
}

Status CatKernel(KernelContext& ctx) {
  int64_t dim = ctx.attrs().Int("dim"), start = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorView& in = ctx.input(i);
    CopyStrided(Narrowed(ctx.output(0), dim, start, in.shape[dim]), in);
    start += in.shape[dim];
  }
  return Status();
}

// out = zeros; out.as_strided(shape, strides, offset) += in (overlaps accumulate).
Status AsStridedScatterKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const TensorView& in = ctx.input(0);
  FillZero(out);
  TensorView view;
  view.dtype = out.dtype;
  view.shape = in.shape;
  const auto& st = ctx.attrs().Ints("strides");
  view.strides.assign(st.begin(), st.end());
  view.data = static_cast<char*>(out.data) + ctx.attrs().Int("offset") * DTypeSize(out.dtype);
  if (view.numel() == 0) return Status();
  // Serial: an overlapping view would race under a parallel loop.
  Shape shape = view.shape;
  DimVector idx(shape.ndim(), 0);
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = view.ptr<scalar_t>();
    const scalar_t* s = in.ptr<const scalar_t>();
    for (int64_t n = 0, total = shape.numel(); n < total; ++n) {
      int64_t oo = 0, io = 0;
      for (int64_t d = 0; d < shape.ndim(); ++d) { oo += idx[d] * view.strides[d]; io += idx[d] * in.strides[d]; }
      o[oo] = AddValues(o[oo], s[io]);
      for (int64_t d = shape.ndim() - 1; d >= 0; --d) { if (++idx[d] < shape[d]) break; idx[d] = 0; }
    }
  });
  return Status();
}

Status FlipKernel(KernelContext& ctx) {
  TensorView in = ctx.input(0);
  for (int64_t d : ctx.attrs().Ints("dims")) {
    if (in.shape[d] == 0) return Status();
    in.data = static_cast<char*>(in.data) + (in.shape[d] - 1) * in.strides[d] * DTypeSize(in.dtype);
    in.strides[d] = -in.strides[d];
  }
  CopyStrided(ctx.output(0), in);
  return Status();
}

// tril/triu on contiguous input: the last two dims are (rows, cols).
Status TrilKernel(KernelContext& ctx) {
  const TensorView& in = ctx.input(0);
  const TensorView& out = ctx.output(0);
  int64_t nd = in.shape.ndim(), rows = in.shape[nd - 2], cols = in.shape[nd - 1];
  int64_t k = ctx.attrs().Int("diagonal");
  bool upper = ctx.attrs().Bool("upper");
  int64_t mats = rows * cols == 0 ? 0 : in.numel() / (rows * cols);
  OFL_SWITCH_ALL(in.dtype, {
    const scalar_t* x = in.ptr<const scalar_t>();
    scalar_t* o = out.ptr<scalar_t>();
    ParallelFor(mats * rows, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int64_t i = r % rows;
        for (int64_t j = 0; j < cols; ++j) {
          bool keep = upper ? j - i >= k : j - i <= k;
          o[r * cols + j] = keep ? x[r * cols + j] : scalar_t(0);
        }
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)));
  });
  return Status();
}

// Constant pad: fill, then copy the input into the interior.
Status PadKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const auto& p = ctx.attrs().Ints("pads");
  double v = ctx.attrs().Float("value");
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t x = FromDouble<scalar_t>(v);
    scalar_t* o = out.ptr<scalar_t>();
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) o[i] = x; });
  });
  TensorView interior = out;
  for (int64_t d = 0; d < out.shape.ndim(); ++d) interior = Narrowed(interior, d, p[2 * d], ctx.input(0).shape[d]);
  CopyStrided(interior, ctx.input(0));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(cat, kCPU, CatKernel);
OFL_REGISTER_KERNEL(as_strided_scatter, kCPU, AsStridedScatterKernel);
OFL_REGISTER_KERNEL(flip, kCPU, FlipKernel);
OFL_REGISTER_KERNEL(tril, kCPU, TrilKernel);
OFL_REGISTER_KERNEL(pad, kCPU, PadKernel);

}  // namespace kernels
}  // namespace oneflow_like
