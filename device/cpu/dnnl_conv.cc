#include "device/cpu/dnnl_conv.h"

#include "device/cpu/omp_threads.h"

#include <unordered_map>
#include <utility>

namespace oneflow_like {
namespace cpu {

using dnnl::memory;

dnnl::engine& DnnlEngine() {
  static auto* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

memory::desc PlainDesc(const DnnlDims& d, memory::format_tag tag) {
  return memory::desc(d, memory::data_type::f32, tag);
}
DnnlDims ConvSrcDims(const ConvGeom& q) {
  return q.vol ? DnnlDims{q.n, q.c, q.d, q.h, q.w} : DnnlDims{q.n, q.c, q.h, q.w};
}
DnnlDims ConvDstDims(const ConvGeom& q) {
  return q.vol ? DnnlDims{q.n, q.k, q.od, q.oh, q.ow} : DnnlDims{q.n, q.k, q.oh, q.ow};
}
DnnlDims ConvWeiDims(const ConvGeom& q) {
  DnnlDims d = q.g == 1 ? DnnlDims{q.k, q.c} : DnnlDims{q.g, q.kg(), q.cg()};
  if (q.vol) d.push_back(q.t);
  d.push_back(q.r);
  d.push_back(q.s);
  return d;
}
memory::format_tag ConvWeiTag(const ConvGeom& q) {
  using T = memory::format_tag;
  if (q.vol) return q.g == 1 ? T::oidhw : T::goidhw;
  return q.g == 1 ? T::oihw : T::goihw;
}
memory::format_tag ConvDataTag(const ConvGeom& q) {
  return q.vol ? memory::format_tag::ncdhw : memory::format_tag::nchw;
}

namespace {

// Strides, dilations (oneDNN counts from 0), left and right padding (the right one makes the
// output size match floor semantics), and the "any"-layout descs of src, weights, dst.
struct DnnlGeom {
  DnnlDims st, dl, pl, pr;
  memory::desc src, wei, dst;
  explicit DnnlGeom(const ConvGeom& q)
      : st{q.sh, q.sw},
        dl{q.dh - 1, q.dw - 1},
        pl{q.ph, q.pw},
        pr{(q.oh - 1) * q.sh + (q.r - 1) * q.dh + 1 - q.h - q.ph,
           (q.ow - 1) * q.sw + (q.s - 1) * q.dw + 1 - q.w - q.pw},
        src(ConvSrcDims(q), memory::data_type::f32, memory::format_tag::any),
        wei(ConvWeiDims(q), memory::data_type::f32, memory::format_tag::any),
        dst(ConvDstDims(q), memory::data_type::f32, memory::format_tag::any) {
    if (!q.vol) return;
    st.insert(st.begin(), q.sd);
    dl.insert(dl.begin(), q.dd - 1);
    pl.insert(pl.begin(), q.pd);
    pr.insert(pr.begin(), (q.od - 1) * q.sd + (q.t - 1) * q.dd + 1 - q.d - q.pd);
  }
};

}  // namespace

dnnl::convolution_forward::desc ConvFwdDesc(const ConvGeom& q, bool bias) {
  DnnlGeom d(q);
  auto fwd = dnnl::prop_kind::forward_training;
  auto algo = dnnl::algorithm::convolution_direct;
  if (bias)
    return dnnl::convolution_forward::desc(
        fwd, algo, d.src, d.wei, memory::desc({q.k}, memory::data_type::f32, memory::format_tag::x),
        d.dst, d.st, d.dl, d.pl, d.pr);
  return dnnl::convolution_forward::desc(fwd, algo, d.src, d.wei, d.dst, d.st, d.dl, d.pl, d.pr);
}

dnnl::convolution_backward_data::desc ConvBwdDataDesc(const ConvGeom& q) {
  DnnlGeom g(q);
  return dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, g.src, g.wei,
                                               g.dst, g.st, g.dl, g.pl, g.pr);
}

dnnl::convolution_backward_weights::desc ConvBwdWeightsDesc(const ConvGeom& q) {
  DnnlGeom g(q);
  return dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, g.src, g.wei,
                                                  g.dst, g.st, g.dl, g.pl, g.pr);
}

Status DnnlExecute(const char* op, const dnnl::primitive& prim, const std::vector<DnnlArg>& args,
                   const DnnlTempAlloc& temp) {
  auto& eng = DnnlEngine();
  UseIntraOpThreadsForOpenMP();
  OFL_DNNL_CALL(op, {
    dnnl::stream strm(eng);
    std::unordered_map<int, memory> margs;
    std::vector<std::pair<memory, memory>> outs;  // (prim's, user's) to reorder back
    for (const DnnlArg& a : args) {
      memory user(a.user, eng, a.data);
      if (a.want == a.user) {
        margs.emplace(a.arg, user);
        continue;
      }
      auto p = temp(a.want.get_size());
      if (!p.ok()) return p.status();
      memory m(a.want, eng, *p);
      if (!a.output)
        dnnl::reorder(user, m).execute(strm, user, m);
      else
        outs.emplace_back(m, user);
      margs.emplace(a.arg, m);
    }
    prim.execute(strm, margs);
    for (auto& o : outs) dnnl::reorder(o.first, o.second).execute(strm, o.first, o.second);
    strm.wait();
  });
  return Status();
}

}  // namespace cpu
}  // namespace oneflow_like
