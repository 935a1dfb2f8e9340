// CPU kernels of the convolution family (NCHW, weights [K, C/g, R, S]; conv3d: NCDHW, weights
// [K, C/g, T, R, S], the same code with a depth dimension).
// f32 runs on oneDNN with primitives cached per shape (the layouts oneDNN picks are reached by
// reorders); f64 (and f32 where oneDNN fails) runs im2col + BLAS GEMM per sample and group.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/cpu/dnnl_conv.h"
#include "device/cpu/gemm.h"
#include "kernels/cpu/blas_gemm.h"
#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/conv.h"

namespace oneflow_like {
namespace kernels {
// The CPU device layer (device/cpu): GEMM and oneDNN convolution helpers.
using cpu::ConvBwdDataDesc;
using cpu::ConvBwdWeightsDesc;
using cpu::ConvDataTag;
using cpu::ConvDstDims;
using cpu::ConvFwdDesc;
using cpu::ConvGeom;
using cpu::ConvSrcDims;
using cpu::ConvWeiDims;
using cpu::ConvWeiTag;
using cpu::DnnlArg;
using cpu::DnnlEngine;
using cpu::DnnlExecute;
using cpu::PlainDesc;
namespace {

// 4-d shapes give a 2-D geometry, 5-d ones a 3-D geometry (depth first).
ConvGeom GeomOf(const AttrMap& attrs, const Shape& x, const Shape& w, const Shape& y) {
  const auto a = opdefs::ReadAttrs<opdefs::ConvAttrs>(attrs);
  const auto &st = a.stride, &pd = a.padding, &dl = a.dilation;
  int o = x.ndim() == 5 ? 1 : 0;  // offset of H, W in the spatial dims
  ConvGeom q{x[0],     x[1],     x[2 + o], x[3 + o],  w[0],  w[2 + o],  w[3 + o], y[2 + o],
             y[3 + o], a.groups, st[o],    st[1 + o], pd[o], pd[1 + o], dl[o],    dl[1 + o]};
  if (o) {
    q.vol = true;
    q.d = x[2], q.t = w[2], q.od = y[2], q.sd = st[0], q.pd = pd[0], q.dd = dl[0];
  }
  return q;
}

// ---- im2col + GEMM ---------------------------------------------------------------------------

// col[((c*T + t)*R + r)*S + s, (od*OH + oh)*OW + ow] =
//   x[c, od*sd - pd + t*dd, oh*sh - ph + r*dh, ow*sw - pw + s*dw] (0 outside); T = 1 in 2-D.
template <typename T>
void Im2Col(const T* x, const ConvGeom& q, T* col) {
  ParallelFor(
      q.crs(),
      [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t s = row % q.s, r = (row / q.s) % q.r, t = (row / (q.r * q.s)) % q.t,
                  c = row / (q.t * q.r * q.s);
          for (int64_t od = 0; od < q.od; ++od) {
            T* out = col + row * q.ohw() + od * q.oh * q.ow;
            int64_t id = od * q.sd - q.pd + t * q.dd;
            if (id < 0 || id >= q.d) {
              std::fill(out, out + q.oh * q.ow, T(0));
              continue;
            }
            const T* xc = x + (c * q.d + id) * q.h * q.w;
            for (int64_t oh = 0; oh < q.oh; ++oh) {
              int64_t ih = oh * q.sh - q.ph + r * q.dh;
              T* o = out + oh * q.ow;
              if (ih < 0 || ih >= q.h) {
                std::fill(o, o + q.ow, T(0));
                continue;
              }
              const T* xr = xc + ih * q.w;
              int64_t iw0 = -q.pw + s * q.dw;
              for (int64_t ow = 0; ow < q.ow; ++ow) {
                int64_t iw = iw0 + ow * q.sw;
                o[ow] = iw >= 0 && iw < q.w ? xr[iw] : T(0);
              }
            }
          }
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(q.ohw(), 1)));
}

// dx[c, id, ih, iw] += col[...] (the adjoint of Im2Col); parallel over channels (no write races).
template <typename T>
void Col2Im(const T* col, const ConvGeom& q, T* dx) {
  ParallelFor(
      q.cg(),
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          for (int64_t t = 0; t < q.t; ++t)
            for (int64_t r = 0; r < q.r; ++r)
              for (int64_t s = 0; s < q.s; ++s) {
                const T* in = col + (((c * q.t + t) * q.r + r) * q.s + s) * q.ohw();
                for (int64_t od = 0; od < q.od; ++od) {
                  int64_t id = od * q.sd - q.pd + t * q.dd;
                  if (id < 0 || id >= q.d) continue;
                  T* xc = dx + (c * q.d + id) * q.h * q.w;
                  for (int64_t oh = 0; oh < q.oh; ++oh) {
                    int64_t ih = oh * q.sh - q.ph + r * q.dh;
                    if (ih < 0 || ih >= q.h) continue;
                    T* xr = xc + ih * q.w;
                    const T* o = in + (od * q.oh + oh) * q.ow;
                    for (int64_t ow = 0; ow < q.ow; ++ow) {
                      int64_t iw = ow * q.sw - q.pw + s * q.dw;
                      if (iw >= 0 && iw < q.w) xr[iw] += o[ow];
                    }
                  }
                }
              }
      },
      1);
}

bool IsPointwise(const ConvGeom& q) {
  return q.t == 1 && q.r == 1 && q.s == 1 && q.sd == 1 && q.sh == 1 && q.sw == 1 && q.pd == 0 &&
         q.ph == 0 && q.pw == 0;
}

template <typename T>
Status GemmForward(KernelContext& ctx, const ConvGeom& q) {
  const T *x = ctx.input(0).ptr<const T>(), *w = ctx.input(1).ptr<const T>();
  const T* bias = ctx.num_inputs() > 2 ? ctx.input(2).ptr<const T>() : nullptr;
  T* y = ctx.output(0).ptr<T>();
  T* col = nullptr;
  if (!IsPointwise(q)) {
    ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(sizeof(T) * q.crs() * q.ohw()));
    col = static_cast<T*>(p);
  }
  for (int64_t n = 0; n < q.n; ++n)
    for (int64_t g = 0; g < q.g; ++g) {
      const T* xg = x + (n * q.c + g * q.cg()) * q.hw();
      if (col) Im2Col(xg, q, col);
      T* yg = y + (n * q.k + g * q.kg()) * q.ohw();
      (void)Gemm(false, false, q.kg(), q.ohw(), q.crs(), T(1), w + g * q.kg() * q.crs(), q.crs(),
                 col ? col : xg, q.ohw(), T(0), yg, q.ohw());
      if (bias)
        for (int64_t k = 0; k < q.kg(); ++k) {
          T bv = bias[g * q.kg() + k];
          for (int64_t i = 0; i < q.ohw(); ++i) yg[k * q.ohw() + i] += bv;
        }
    }
  return Status();
}

template <typename T>
Status GemmGradInput(KernelContext& ctx, const ConvGeom& q) {
  const T *dy = ctx.input(0).ptr<const T>(), *w = ctx.input(1).ptr<const T>();
  T* dx = ctx.output(0).ptr<T>();
  ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(sizeof(T) * q.crs() * q.ohw()));
  T* col = static_cast<T*>(p);
  bool pointwise = IsPointwise(q);
  if (!pointwise) std::fill(dx, dx + q.n * q.c * q.hw(), T(0));
  for (int64_t n = 0; n < q.n; ++n)
    for (int64_t g = 0; g < q.g; ++g) {
      T* dxg = dx + (n * q.c + g * q.cg()) * q.hw();
      (void)Gemm(true, false, q.crs(), q.ohw(), q.kg(), T(1), w + g * q.kg() * q.crs(), q.crs(),
                 dy + (n * q.k + g * q.kg()) * q.ohw(), q.ohw(), T(0), pointwise ? dxg : col,
                 q.ohw());
      if (!pointwise) Col2Im(col, q, dxg);
    }
  return Status();
}

template <typename T>
Status GemmGradWeight(KernelContext& ctx, const ConvGeom& q) {
  const T *dy = ctx.input(0).ptr<const T>(), *x = ctx.input(1).ptr<const T>();
  T* dw = ctx.output(0).ptr<T>();
  T* col = nullptr;
  if (!IsPointwise(q)) {
    ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(sizeof(T) * q.crs() * q.ohw()));
    col = static_cast<T*>(p);
  }
  for (int64_t n = 0; n < q.n; ++n)
    for (int64_t g = 0; g < q.g; ++g) {
      const T* xg = x + (n * q.c + g * q.cg()) * q.hw();
      if (col) Im2Col(xg, q, col);
      (void)Gemm(false, true, q.kg(), q.crs(), q.ohw(), T(1), dy + (n * q.k + g * q.kg()) * q.ohw(),
                 q.ohw(), col ? col : xg, q.ohw(), n == 0 ? T(0) : T(1), dw + g * q.kg() * q.crs(),
                 q.crs());
    }
  if (q.n == 0) std::fill(dw, dw + q.k * q.crs(), T(0));
  return Status();
}

// ---- oneDNN (f32) ----------------------------------------------------------------------------

using dnnl::memory;

// Primitives are built on one thread and run on others (a VM worker, or inline on the issuing
// thread), so each owns no scratchpad: oneDNN's library-managed one is thread-local and sized on
// the thread that creates the primitive, and running it on another thread reads past the end of
// that thread's (smaller or absent) scratchpad. The scratchpad comes from the kernel's temps.
dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// Primitives for one convolution geometry; built on first use, then reused.
struct ConvPrims {
  dnnl::convolution_forward::primitive_desc fwd_pd;
  dnnl::convolution_forward fwd;
  std::unique_ptr<dnnl::convolution_backward_data::primitive_desc> bwd_data_pd;
  std::unique_ptr<dnnl::convolution_backward_data> bwd_data;
  std::unique_ptr<dnnl::convolution_backward_weights::primitive_desc> bwd_w_pd;
  std::unique_ptr<dnnl::convolution_backward_weights> bwd_w;
  std::mutex mu;  // one execution at a time per entry (its scratch layouts are shared)
};

struct ConvCache {
  std::mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<ConvPrims>> entries;
};
ConvCache& GetCache() {
  static ConvCache* c = new ConvCache();
  return *c;
}

std::shared_ptr<ConvPrims> GetPrims(const ConvGeom& q, bool bias) {
  std::vector<int64_t> key{q.n,  q.c,  q.h,  q.w, q.k, q.r,  q.s,  q.g,  q.sh,  q.sw, q.ph,
                           q.pw, q.dh, q.dw, q.d, q.t, q.sd, q.pd, q.dd, q.vol, bias};
  auto& cache = GetCache();
  std::lock_guard<std::mutex> l(cache.mu);
  auto it = cache.entries.find(key);
  if (it != cache.entries.end()) return it->second;
  if (cache.entries.size() >= 64) cache.entries.clear();  // a small cache: shapes change rarely
  auto pd = dnnl::convolution_forward::primitive_desc(ConvFwdDesc(q, bias), UserScratchpad(),
                                                      DnnlEngine());
  auto p = std::shared_ptr<ConvPrims>(
      new ConvPrims{pd, dnnl::convolution_forward(pd), nullptr, nullptr, nullptr, nullptr});
  cache.entries[key] = p;
  return p;
}

// Runs `prim` with user buffers in plain layouts; its scratchpad and the reorders' buffers come
// from the kernel's temps.
Status Execute(KernelContext& ctx, const char* op, const dnnl::primitive& prim,
               const memory::desc& scratchpad, std::vector<DnnlArg> args) {
  if (scratchpad.get_size() > 0) {
    ASSIGN_OR_RETURN(void* pad, ctx.AllocateTemp(scratchpad.get_size()));
    args.push_back({DNNL_ARG_SCRATCHPAD, scratchpad, scratchpad, pad, false});
  }
  return DnnlExecute(op, prim, args, [&](size_t bytes) { return ctx.AllocateTemp(bytes); });
}

Status DnnlForward(KernelContext& ctx, const ConvGeom& q) {
  bool bias = ctx.num_inputs() > 2;
  std::shared_ptr<ConvPrims> p;
  OFL_DNNL_CALL(ctx.op(), p = GetPrims(q, bias));
  std::lock_guard<std::mutex> l(p->mu);
  std::vector<DnnlArg> args{{DNNL_ARG_SRC, p->fwd_pd.src_desc(),
                             PlainDesc(ConvSrcDims(q), ConvDataTag(q)), ctx.input(0).data, false},
                            {DNNL_ARG_WEIGHTS, p->fwd_pd.weights_desc(),
                             PlainDesc(ConvWeiDims(q), ConvWeiTag(q)), ctx.input(1).data, false},
                            {DNNL_ARG_DST, p->fwd_pd.dst_desc(),
                             PlainDesc(ConvDstDims(q), ConvDataTag(q)), ctx.output(0).data, true}};
  if (bias)
    args.push_back({DNNL_ARG_BIAS, p->fwd_pd.bias_desc(), PlainDesc({q.k}, memory::format_tag::x),
                    ctx.input(2).data, false});
  return Execute(ctx, ctx.op(), p->fwd, p->fwd_pd.scratchpad_desc(), args);
}

Status DnnlGradInput(KernelContext& ctx, const ConvGeom& q) {
  std::shared_ptr<ConvPrims> p;
  OFL_DNNL_CALL(ctx.op(), p = GetPrims(q, false));
  std::lock_guard<std::mutex> l(p->mu);
  if (!p->bwd_data) {
    OFL_DNNL_CALL(ctx.op(), {
      p->bwd_data_pd.reset(new dnnl::convolution_backward_data::primitive_desc(
          ConvBwdDataDesc(q), UserScratchpad(), DnnlEngine(), p->fwd_pd));
      p->bwd_data.reset(new dnnl::convolution_backward_data(*p->bwd_data_pd));
    });
  }
  auto& pd = *p->bwd_data_pd;
  return Execute(ctx, ctx.op(), *p->bwd_data, pd.scratchpad_desc(),
                 {{DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), PlainDesc(ConvDstDims(q), ConvDataTag(q)),
                   ctx.input(0).data, false},
                  {DNNL_ARG_WEIGHTS, pd.weights_desc(), PlainDesc(ConvWeiDims(q), ConvWeiTag(q)),
                   ctx.input(1).data, false},
                  {DNNL_ARG_DIFF_SRC, pd.diff_src_desc(), PlainDesc(ConvSrcDims(q), ConvDataTag(q)),
                   ctx.output(0).data, true}});
}

Status DnnlGradWeight(KernelContext& ctx, const ConvGeom& q) {
  std::shared_ptr<ConvPrims> p;
  OFL_DNNL_CALL(ctx.op(), p = GetPrims(q, false));
  std::lock_guard<std::mutex> l(p->mu);
  if (!p->bwd_w) {
    OFL_DNNL_CALL(ctx.op(), {
      p->bwd_w_pd.reset(new dnnl::convolution_backward_weights::primitive_desc(
          ConvBwdWeightsDesc(q), UserScratchpad(), DnnlEngine(), p->fwd_pd));
      p->bwd_w.reset(new dnnl::convolution_backward_weights(*p->bwd_w_pd));
    });
  }
  auto& pd = *p->bwd_w_pd;
  return Execute(ctx, ctx.op(), *p->bwd_w, pd.scratchpad_desc(),
                 {{DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), PlainDesc(ConvDstDims(q), ConvDataTag(q)),
                   ctx.input(0).data, false},
                  {DNNL_ARG_SRC, pd.src_desc(), PlainDesc(ConvSrcDims(q), ConvDataTag(q)),
                   ctx.input(1).data, false},
                  {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc(),
                   PlainDesc(ConvWeiDims(q), ConvWeiTag(q)), ctx.output(0).data, true}});
}

// ONEFLOW_LIKE_CONV=gemm forces the im2col path for f32 (to compare the two).
bool UseDnnl(DType dt) {
  static const bool gemm = [] {
    const char* e = std::getenv("ONEFLOW_LIKE_CONV");
    return e && std::string(e) == "gemm";
  }();
  return dt == DType::kF32 && !gemm;
}

#define OFL_CONV_KERNEL(Name, DnnlFn, GemmFn, xshape, wshape, yshape)                              \
  Status Name(KernelContext& ctx) {                                                                \
    ConvGeom q = GeomOf(ctx.attrs(), xshape, wshape, yshape);                                      \
    if (UseDnnl(ctx.input(0).dtype)) {                                                             \
      Status s = DnnlFn(ctx, q);                                                                   \
      if (s.ok()) return s;                                                                        \
    }                                                                                              \
    if (ctx.input(0).dtype == DType::kF32) return GemmFn<float>(ctx, q);                           \
    if (ctx.input(0).dtype == DType::kF64) return GemmFn<double>(ctx, q);                          \
    return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(ctx.input(0).dtype)); \
  }

OFL_CONV_KERNEL(ConvForwardKernel, DnnlForward, GemmForward, ctx.input(0).shape, ctx.input(1).shape,
                ctx.output(0).shape)
OFL_CONV_KERNEL(ConvGradInputKernel, DnnlGradInput, GemmGradInput, ctx.output(0).shape,
                ctx.input(1).shape, ctx.input(0).shape)
OFL_CONV_KERNEL(ConvGradWeightKernel, DnnlGradWeight, GemmGradWeight, ctx.input(1).shape,
                ctx.output(0).shape, ctx.input(0).shape)

}  // namespace

OFL_REGISTER_KERNEL(conv2d, kCPU, ConvForwardKernel);
OFL_REGISTER_KERNEL(conv2d_grad_input, kCPU, ConvGradInputKernel);
OFL_REGISTER_KERNEL(conv2d_grad_weight, kCPU, ConvGradWeightKernel);
OFL_REGISTER_KERNEL(conv3d, kCPU, ConvForwardKernel);
OFL_REGISTER_KERNEL(conv3d_grad_input, kCPU, ConvGradInputKernel);
OFL_REGISTER_KERNEL(conv3d_grad_weight, kCPU, ConvGradWeightKernel);

}  // namespace kernels
}  // namespace oneflow_like
