// oneDNN helpers for 2-D f32 convolutions, shared by the eager conv kernels (kernels/cpu/conv.cc)
// and the graph compiler's ConvolutionThunk (compiler/backends/cpu/conv_thunk.cc): the geometry
// of a convolution in the forward op's terms, oneDNN descriptors built from it, and running a
// primitive on caller buffers in plain (possibly strided) layouts, reordering into and out of
// the layouts oneDNN picked. Depends on //oneflow_like/base and oneDNN only.
#pragma once
#include <dnnl.hpp>
#include <functional>
#include <vector>

#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace cpu {

// A forward convolution y[n, k, oh, ow] = sum w[k, c', r, s] * x[n, g*cg + c', oh*sh - ph + r*dh,
// ow*sw - pw + s*dw] (x zero outside [0,h) x [0,w)), groups g; the backward ops use the same
// geometry (x and w are what the forward op read, y what it wrote).
// A 3-D convolution (`vol`) adds a leading depth: input depth d, kernel depth t, output depth
// od, stride sd, padding pd, dilation dd (the defaults make a 2-D geometry).
struct ConvGeom {
  int64_t n, c, h, w, k, r, s, oh, ow, g;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t d = 1, t = 1, od = 1, sd = 1, pd = 0, dd = 1;
  bool vol = false;
  int64_t cg() const { return c / g; }
  int64_t kg() const { return k / g; }
  int64_t crs() const { return cg() * t * r * s; }
  int64_t ohw() const { return od * oh * ow; }  // output pixels (voxels) per channel
  int64_t hw() const { return d * h * w; }      // input pixels (voxels) per channel
};

// Wraps oneDNN's exceptions into Status (inside a function returning Status or StatusOr).
#define OFL_DNNL_CALL(op, ...)                                                             \
  try {                                                                                    \
    __VA_ARGS__;                                                                           \
  } catch (const dnnl::error& e) {                                                         \
    return Internal("[%s] oneDNN error %d: %s", op, static_cast<int>(e.status), e.what()); \
  }

// The process-wide CPU engine.
dnnl::engine& DnnlEngine();

using DnnlDims = dnnl::memory::dims;
DnnlDims ConvSrcDims(const ConvGeom& q);  // {n, c, h, w} ({n, c, d, h, w} when vol)
DnnlDims ConvDstDims(const ConvGeom& q);  // {n, k, oh, ow} ({n, k, od, oh, ow} when vol)
DnnlDims ConvWeiDims(const ConvGeom& q);  // {k, c, r, s}, or {g, k/g, c/g, r, s} when grouped
dnnl::memory::format_tag ConvWeiTag(const ConvGeom& q);   // oihw / goihw (oidhw / goidhw)
dnnl::memory::format_tag ConvDataTag(const ConvGeom& q);  // nchw / ncdhw
dnnl::memory::desc PlainDesc(const DnnlDims& d, dnnl::memory::format_tag tag);

// Operation descriptors with "any" layouts (oneDNN picks them); right padding is derived from
// the output size (floor semantics), so it can be negative.
dnnl::convolution_forward::desc ConvFwdDesc(const ConvGeom& q, bool bias);
dnnl::convolution_backward_data::desc ConvBwdDataDesc(const ConvGeom& q);
dnnl::convolution_backward_weights::desc ConvBwdWeightsDesc(const ConvGeom& q);

// One primitive argument: the layout the primitive wants and the caller's buffer in its own
// (plain or strided) layout; outputs are reordered back after the primitive ran.
struct DnnlArg {
  int arg;
  dnnl::memory::desc want;
  dnnl::memory::desc user;
  void* data;
  bool output;
};
// Scratch for reorders, `bytes` long; valid until Execute returns.
using DnnlTempAlloc = std::function<StatusOr<void*>(size_t bytes)>;
// Runs `prim` on `args` (reordering where `want` differs from `user`) and waits for it.
Status DnnlExecute(const char* op, const dnnl::primitive& prim, const std::vector<DnnlArg>& args,
                   const DnnlTempAlloc& temp);

}  // namespace cpu
}  // namespace oneflow_like
