// CPU kernels of the shape family: the copies (cat, flip, tril/triu, constant pad) and
// as_strided_scatter (the gradient of every view). View ops themselves run no kernel. The kernels
// read the attribute structs of oneflow_like/opdefs/shape.def.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/strided.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/shape.h"

namespace oneflow_like {
namespace kernels {
namespace {

using opdefs::ReadAttrs;

// The sub-view of `v` starting at `start` along `dim` with `n` elements.
TensorView Narrowed(const TensorView& v, int64_t dim, int64_t start, int64_t n) {
  TensorView r = v;
  r.shape[dim] = n;
  r.data = static_cast<char*>(v.data) + start * v.strides[dim] * DTypeSize(v.dtype);
  return r;
}

Status CatKernel(KernelContext& ctx) {
  int64_t dim = ReadAttrs<opdefs::CatAttrs>(ctx.attrs()).dim, start = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorView& in = ctx.input(i);
    CopyStrided(Narrowed(ctx.output(0), dim, start, in.shape[dim]), in);
    start += in.shape[dim];
  }
  return Status();
}

// True when no two elements of the view share an address: with the dims of size > 1 sorted by
// stride (all positive), each stride passes the extent of the dims below it. A sufficient test;
// views it rejects take the serial path.
bool ViewIsNonOverlapping(const TensorView& v) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (int64_t d = 0; d < v.shape.ndim(); ++d) {
    if (v.shape[d] == 1) continue;
    if (v.strides[d] <= 0) return false;
    dims.emplace_back(v.strides[d], v.shape[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t extent = 1;
  for (const auto& [stride, size] : dims) {
    if (stride < extent) return false;
    extent += (size - 1) * stride;
  }
  return true;
}

// out = zeros; out.as_strided(shape, strides, offset) += in (overlaps accumulate).
Status AsStridedScatterKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const TensorView& in = ctx.input(0);
  const int64_t esize = DTypeSize(out.dtype);
  char* bytes = static_cast<char*>(out.data);
  ParallelFor(
      out.numel() * esize, [&](int64_t b, int64_t e) { std::memset(bytes + b, 0, e - b); },
      kParallelGrain * 4);
  const auto a = ReadAttrs<opdefs::AsStridedScatterAttrs>(ctx.attrs());
  TensorView view;
  view.dtype = out.dtype;
  view.shape = in.shape;
  view.strides.assign(a.strides.begin(), a.strides.end());
  view.data = bytes + a.offset * esize;
  if (view.numel() == 0) return Status();
  if (ViewIsNonOverlapping(view)) {
    // Each output element receives one source element: 0 + s (not a plain copy, so a -0.0 source
    // still lands as +0.0 as the accumulation gives), rows in parallel, unit-stride runs
    // vectorised.
    std::array<const DimVector*, 2> strides{&view.strides, &in.strides};
    OFL_SWITCH_ALL(out.dtype, {
      using T = scalar_t;
      ForEachRow<2>(view.shape, strides,
                    {static_cast<char*>(view.data), static_cast<char*>(in.data)}, {esize, esize},
                    [](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                      T* __restrict o = reinterpret_cast<T*>(p[0]);
                      const T* __restrict x = reinterpret_cast<const T*>(p[1]);
                      if (s[0] == 1 && s[1] == 1) {
                        for (int64_t i = 0; i < n; ++i) o[i] = AddValues(T(0), x[i]);
                      } else {
                        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = AddValues(T(0), x[i * s[1]]);
                      }
                    });
    });
    return Status();
  }
  // Overlapping (or negative-stride) views: serial, since a parallel loop would race.
  Shape shape = view.shape;
  DimVector idx(shape.ndim(), 0);
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = view.ptr<scalar_t>();
    const scalar_t* s = in.ptr<const scalar_t>();
    for (int64_t n = 0, total = shape.numel(); n < total; ++n) {
      int64_t oo = 0, io = 0;
      for (int64_t d = 0; d < shape.ndim(); ++d) {
        oo += idx[d] * view.strides[d];
        io += idx[d] * in.strides[d];
      }
      o[oo] = AddValues(o[oo], s[io]);
      for (int64_t d = shape.ndim() - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  });
  return Status();
}

Status FlipKernel(KernelContext& ctx) {
  TensorView in = ctx.input(0);
  const auto a = ReadAttrs<opdefs::FlipAttrs>(ctx.attrs());
  for (int64_t d : a.dims) {
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
  const auto a = ReadAttrs<opdefs::TrilAttrs>(ctx.attrs());
  const int64_t k = a.diagonal;
  const bool upper = a.upper;
  int64_t mats = rows * cols == 0 ? 0 : in.numel() / (rows * cols);
  OFL_SWITCH_ALL(in.dtype, {
    const scalar_t* x = in.ptr<const scalar_t>();
    scalar_t* o = out.ptr<scalar_t>();
    ParallelFor(
        mats * rows,
        [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            int64_t i = r % rows;
            for (int64_t j = 0; j < cols; ++j) {
              bool keep = upper ? j - i >= k : j - i <= k;
              o[r * cols + j] = keep ? x[r * cols + j] : scalar_t(0);
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)));
  });
  return Status();
}

// Constant pad: fill, then copy the input into the interior.
Status PadKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const auto a = ReadAttrs<opdefs::PadAttrs>(ctx.attrs());
  const auto& p = a.pads;
  double v = a.value;
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t x = FromDouble<scalar_t>(v);
    scalar_t* o = out.ptr<scalar_t>();
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = x;
    });
  });
  TensorView interior = out;
  for (int64_t d = 0; d < out.shape.ndim(); ++d)
    interior = Narrowed(interior, d, p[2 * d], ctx.input(0).shape[d]);
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
