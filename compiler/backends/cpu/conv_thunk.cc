#include "compiler/backends/cpu/conv_thunk.h"

#include <cstdlib>
#include <cstring>

namespace oneflow_like::hlo {

using dnnl::memory;

namespace {

DimVector RowMajorStrides(const DimVector& dims) {
  DimVector s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// Strides of {a, b, spatial0, spatial1} picked out of `st`.
std::vector<int64_t> Pick(const DimVector& st, int64_t a, int64_t b, const DimVector& spatial) {
  return {st[a], st[b], st[spatial[0]], st[spatial[1]]};
}

// Weight strides in oneDNN's order: {o, i, r, s}, or {g, o/g, i, r, s} where moving one group
// moves `group_stride` elements.
std::vector<int64_t> WeightStrides(int64_t groups, int64_t group_stride, int64_t o, int64_t i,
                                   int64_t r, int64_t s) {
  if (groups == 1) return {o, i, r, s};
  return {group_stride, o, i, r, s};
}

}  // namespace

const char* ConvPlanKindString(ConvPlan::Kind k) {
  switch (k) {
    case ConvPlan::Kind::kForward: return "forward";
    case ConvPlan::Kind::kBackwardData: return "backward_data";
    case ConvPlan::Kind::kBackwardWeights: return "backward_weights";
  }
  return "?";
}

StatusOr<ConvPlan> ClassifyConvolution(const HloInstruction& conv) {
  const HloShape &in = conv.operand(0)->shape(), &ks = conv.operand(1)->shape(), &os = conv.shape();
  const std::string shapes =
      absl::StrCat(in.ToString(), " and ", ks.ToString(), " -> ", os.ToString());
  if (in.dtype() != DType::kF32 || ks.dtype() != DType::kF32 || os.dtype() != DType::kF32)
    return Unimplemented("[convolution %s] oneDNN runs f32 only: %s", conv.name(), shapes);
  const ConvDims& d = conv.attrs().conv;
  if (d.in_spatial.size() != 2)
    return Unimplemented("[convolution %s] oneDNN path is 2-D, got %d spatial dims: %s",
                         conv.name(), static_cast<int64_t>(d.in_spatial.size()), shapes);
  if (!in.HasDefaultLayout() || !ks.HasDefaultLayout() || !os.HasDefaultLayout())
    return Unimplemented("[convolution %s] non-default layout: %s", conv.name(), shapes);
  if (in.numel() == 0 || ks.numel() == 0 || os.numel() == 0)
    return Unimplemented("[convolution %s] empty operand: %s", conv.name(), shapes);
  std::vector<WindowDim> win = conv.attrs().window;
  if (win.empty())
    for (int64_t s : d.k_spatial) win.push_back(WindowDim{ks.dim(s)});
  const int64_t groups = conv.attrs().feature_group_count;
  const DimVector ist = RowMajorStrides(in.dims()), kst = RowMajorStrides(ks.dims()),
                  ost = RowMajorStrides(os.dims());
  bool lhs_dilated = false, unit_stride = true;
  for (const WindowDim& w : win) {
    lhs_dilated |= w.lhs_dilation != 1;
    unit_stride &= w.stride == 1;
  }
  const int64_t kernel_area = ks.dim(d.k_spatial[0]) * ks.dim(d.k_spatial[1]);
  const int64_t out_area = os.dim(d.out_spatial[0]) * os.dim(d.out_spatial[1]);

  ConvPlan p;
  cpu::ConvGeom& q = p.geom;
  q.g = groups;
  if (lhs_dilated) {
    if (!unit_stride)
      return Unimplemented(
          "[convolution %s] lhs dilation with a window stride is no oneDNN primitive: %s",
          conv.name(), shapes);
    p.kind = ConvPlan::Kind::kBackwardData;
    q.n = in.dim(d.in_batch), q.k = in.dim(d.in_feature);
    q.oh = in.dim(d.in_spatial[0]), q.ow = in.dim(d.in_spatial[1]);
    q.c = os.dim(d.out_feature), q.h = os.dim(d.out_spatial[0]), q.w = os.dim(d.out_spatial[1]);
    q.r = ks.dim(d.k_spatial[0]), q.s = ks.dim(d.k_spatial[1]);
    q.sh = win[0].lhs_dilation, q.sw = win[1].lhs_dilation;
    q.dh = win[0].rhs_dilation, q.dw = win[1].rhs_dilation;
    q.ph = (q.r - 1) * q.dh - win[0].pad_lo, q.pw = (q.s - 1) * q.dw - win[1].pad_lo;
    p.dst_strides = Pick(ist, d.in_batch, d.in_feature, d.in_spatial);
    p.src_strides = Pick(ost, d.out_batch, d.out_feature, d.out_spatial);
    // Forward weights [g][k/g][c/g] are the kernel's (i = k/g, o = g*c/g + c').
    p.wei_strides = WeightStrides(groups, q.cg() * kst[d.k_out], kst[d.k_in], kst[d.k_out],
                                  kst[d.k_spatial[0]], kst[d.k_spatial[1]]);
    p.wei_reversed = true;
  } else if (groups == 1 &&
             (kernel_area > out_area || (kernel_area == out_area && d.in_feature < d.in_batch))) {
    // (a tie goes by the labels: activations with feature before batch are the lowering's x^T)
    p.kind = ConvPlan::Kind::kBackwardWeights;
    q.n = in.dim(d.in_feature), q.c = in.dim(d.in_batch);
    q.h = in.dim(d.in_spatial[0]), q.w = in.dim(d.in_spatial[1]);
    q.k = ks.dim(d.k_out), q.oh = ks.dim(d.k_spatial[0]), q.ow = ks.dim(d.k_spatial[1]);
    q.r = os.dim(d.out_spatial[0]), q.s = os.dim(d.out_spatial[1]);
    q.sh = win[0].rhs_dilation, q.sw = win[1].rhs_dilation;
    q.dh = win[0].stride, q.dw = win[1].stride;
    q.ph = win[0].pad_lo, q.pw = win[1].pad_lo;
    p.src_strides = Pick(ist, d.in_feature, d.in_batch, d.in_spatial);
    p.dst_strides = Pick(kst, d.k_in, d.k_out, d.k_spatial);
    p.wei_strides = Pick(ost, d.out_feature, d.out_batch, d.out_spatial);
  } else {
    p.kind = ConvPlan::Kind::kForward;
    q.n = in.dim(d.in_batch), q.c = in.dim(d.in_feature);
    q.h = in.dim(d.in_spatial[0]), q.w = in.dim(d.in_spatial[1]);
    q.k = ks.dim(d.k_out), q.r = ks.dim(d.k_spatial[0]), q.s = ks.dim(d.k_spatial[1]);
    q.oh = os.dim(d.out_spatial[0]), q.ow = os.dim(d.out_spatial[1]);
    q.sh = win[0].stride, q.sw = win[1].stride;
    q.dh = win[0].rhs_dilation, q.dw = win[1].rhs_dilation;
    q.ph = win[0].pad_lo, q.pw = win[1].pad_lo;
    p.src_strides = Pick(ist, d.in_batch, d.in_feature, d.in_spatial);
    p.dst_strides = Pick(ost, d.out_batch, d.out_feature, d.out_spatial);
    p.wei_strides = WeightStrides(groups, q.kg() * kst[d.k_out], kst[d.k_out], kst[d.k_in],
                                  kst[d.k_spatial[0]], kst[d.k_spatial[1]]);
  }
  if (q.ph < 0 || q.pw < 0)
    return Unimplemented("[convolution %s] %s reading needs negative padding %dx%d: %s",
                         conv.name(), ConvPlanKindString(p.kind), q.ph, q.pw, shapes);
  if (p.kind != ConvPlan::Kind::kBackwardData) {
    // Rows/columns of src past the last window (floor output size: negative right padding, which
    // oneDNN rejects for some primitives) are never read: hand oneDNN the src without them.
    // (backward_data cannot do this: those rows of dx must be written as zeros.)
    const int64_t reach_h = (q.oh - 1) * q.sh + (q.r - 1) * q.dh + 1 - q.ph;
    const int64_t reach_w = (q.ow - 1) * q.sw + (q.s - 1) * q.dw + 1 - q.pw;
    if (reach_h >= 1 && reach_h < q.h) q.h = reach_h;
    if (reach_w >= 1 && reach_w < q.w) q.w = reach_w;
  }
  return p;
}

ConvolutionThunk::ConvolutionThunk(const HloInstruction& conv, ConvPlan plan, BufferSlice input,
                                   BufferSlice kernel, BufferSlice output)
    : Thunk(Kind::kConvolution, conv.name()),
      plan_(std::move(plan)),
      input_(input),
      kernel_(kernel),
      output_(output) {}

StatusOr<std::unique_ptr<ConvolutionThunk>> ConvolutionThunk::Create(const HloInstruction& conv,
                                                                     BufferSlice input,
                                                                     BufferSlice kernel,
                                                                     BufferSlice output) {
  ASSIGN_OR_RETURN(ConvPlan plan, ClassifyConvolution(conv));
  std::unique_ptr<ConvolutionThunk> t(
      new ConvolutionThunk(conv, std::move(plan), input, kernel, output));
  RETURN_IF_ERROR(t->Build());
  return t;
}

Status ConvolutionThunk::Build() {
  const cpu::ConvGeom& q = plan_.geom;
  const std::string op = absl::StrCat("convolution ", name());
  auto& eng = cpu::DnnlEngine();
  // The thunk owns the scratchpad: oneDNN's library-managed one is thread-local and sized when a
  // primitive is created, and graphs are compiled on one thread and run on another.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  OFL_DNNL_CALL(op.c_str(), {
    dnnl::convolution_forward::primitive_desc fwd(cpu::ConvFwdDesc(q, false), attr, eng);
    switch (plan_.kind) {
      case ConvPlan::Kind::kForward:
        src_want_ = fwd.src_desc(), wei_want_ = fwd.weights_desc(), dst_want_ = fwd.dst_desc();
        scratchpad_want_ = fwd.scratchpad_desc();
        prim_ = dnnl::convolution_forward(fwd);
        break;
      case ConvPlan::Kind::kBackwardData: {
        dnnl::convolution_backward_data::primitive_desc pd(cpu::ConvBwdDataDesc(q), attr, eng, fwd);
        src_want_ = pd.diff_src_desc(), wei_want_ = pd.weights_desc(),
        dst_want_ = pd.diff_dst_desc();
        scratchpad_want_ = pd.scratchpad_desc();
        prim_ = dnnl::convolution_backward_data(pd);
        break;
      }
      case ConvPlan::Kind::kBackwardWeights: {
        dnnl::convolution_backward_weights::primitive_desc pd(cpu::ConvBwdWeightsDesc(q), attr, eng,
                                                              fwd);
        src_want_ = pd.src_desc(), wei_want_ = pd.diff_weights_desc(),
        dst_want_ = pd.diff_dst_desc();
        scratchpad_want_ = pd.scratchpad_desc();
        prim_ = dnnl::convolution_backward_weights(pd);
        break;
      }
    }
  });
  if (plan_.wei_reversed) weights_.resize(q.k * q.cg() * q.r * q.s);
  return absl::OkStatus();
}

StatusOr<void*> ConvolutionThunk::Scratch(size_t index, size_t bytes) {
  if (index >= scratch_.size()) {
    scratch_.emplace_back(nullptr, &std::free);
    scratch_bytes_.push_back(0);
  }
  if (scratch_bytes_[index] < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    scratch_[index].reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
    if (scratch_[index] == nullptr)
      return OutOfMemory("[convolution %s] scratch of %d bytes", name(), rounded);
    scratch_bytes_[index] = rounded;
  }
  return static_cast<void*>(scratch_[index].get());
}

Status ConvolutionThunk::ExecuteOnStream(const ExecuteParams& p) {
  const cpu::ConvGeom& q = plan_.geom;
  std::lock_guard<std::mutex> l(mu_);
  char* wei = p.buffers->Get(plan_.kind == ConvPlan::Kind::kBackwardWeights ? output_ : kernel_);
  if (plan_.wei_reversed) {
    // Un-reverse into plain (g)oihw: weights_[g][o][i][r][s] = kernel[... R-1-r, S-1-s].
    const float* k = reinterpret_cast<const float*>(wei);
    const auto& st = plan_.wei_strides;
    const bool grouped = q.g > 1;
    const int64_t so = st[grouped], si = st[grouped + 1], sr = st[grouped + 2],
                  ss = st[grouped + 3];
    const int64_t sg = grouped ? st[0] : 0;
    float* w = weights_.data();
    for (int64_t g = 0; g < q.g; ++g)
      for (int64_t o = 0; o < q.kg(); ++o)
        for (int64_t i = 0; i < q.cg(); ++i)
          for (int64_t r = 0; r < q.r; ++r) {
            const float* row = k + g * sg + o * so + i * si + (q.r - 1 - r) * sr + (q.s - 1) * ss;
            for (int64_t s = 0; s < q.s; ++s) *w++ = row[-s * ss];
          }
    wei = reinterpret_cast<char*>(weights_.data());
  }
  auto desc = [](const memory::dims& dims, const memory::dims& strides) {
    return memory::desc(dims, memory::data_type::f32, strides);
  };
  const memory::desc src_user = desc(cpu::ConvSrcDims(q), plan_.src_strides);
  const memory::desc dst_user = desc(cpu::ConvDstDims(q), plan_.dst_strides);
  const memory::desc wei_user = plan_.wei_reversed
                                    ? cpu::PlainDesc(cpu::ConvWeiDims(q), cpu::ConvWeiTag(q))
                                    : desc(cpu::ConvWeiDims(q), plan_.wei_strides);
  char *in = p.buffers->Get(input_), *kernel = p.buffers->Get(kernel_),
       *out = p.buffers->Get(output_);
  std::vector<cpu::DnnlArg> args;
  switch (plan_.kind) {
    case ConvPlan::Kind::kForward:
      args = {{DNNL_ARG_SRC, src_want_, src_user, in, false},
              {DNNL_ARG_WEIGHTS, wei_want_, wei_user, wei, false},
              {DNNL_ARG_DST, dst_want_, dst_user, out, true}};
      break;
    case ConvPlan::Kind::kBackwardData:
      args = {{DNNL_ARG_DIFF_DST, dst_want_, dst_user, in, false},
              {DNNL_ARG_WEIGHTS, wei_want_, wei_user, wei, false},
              {DNNL_ARG_DIFF_SRC, src_want_, src_user, out, true}};
      break;
    case ConvPlan::Kind::kBackwardWeights:
      args = {{DNNL_ARG_SRC, src_want_, src_user, in, false},
              {DNNL_ARG_DIFF_DST, dst_want_, dst_user, kernel, false},
              {DNNL_ARG_DIFF_WEIGHTS, wei_want_, wei_user, out, true}};
      break;
  }
  size_t next = 0;
  if (scratchpad_want_.get_size() > 0) {
    ASSIGN_OR_RETURN(void* pad, Scratch(next++, scratchpad_want_.get_size()));
    args.push_back({DNNL_ARG_SCRATCHPAD, scratchpad_want_, scratchpad_want_, pad, false});
  }
  return cpu::DnnlExecute(name().c_str(), prim_, args,
                          [&](size_t bytes) { return Scratch(next++, bytes); });
}

std::string ConvolutionThunk::Details() const {
  const cpu::ConvGeom& q = plan_.geom;
  return absl::StrFormat(
      "onednn %s n=%d c=%d %dx%d k=%d %dx%d -> %dx%d g=%d stride=%dx%d pad=%dx%d dilation=%dx%d "
      "in=%s kernel=%s out=%s",
      ConvPlanKindString(plan_.kind), q.n, q.c, q.h, q.w, q.k, q.r, q.s, q.oh, q.ow, q.g, q.sh,
      q.sw, q.ph, q.pw, q.dh, q.dw, input_.ToString(), kernel_.ToString(), output_.ToString());
}

}  // namespace oneflow_like::hlo
