// The fused GradScaler ops: the OpDefs of oneflow_like/opdefs/amp.def (generated below from the
// table's kind column) and the functional entries, which check the operands with torch's rules
// and dispatch in place (framework/inplace_multi.h). Kernels: kernels/cpu/amp.cc,
// kernels/cuda/amp.{cc,cu}.
#include "oneflow_like/ops/amp.h"

#include <vector>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/framework/inplace_multi.h"
#include "oneflow_like/opdefs/amp.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/copy.h"

namespace oneflow_like {
namespace {

TensorMeta Like(const Tensor& t) {
  return TensorMeta{t.shape(), t.dtype(), t.device()};
}

// ---- the table's kind column: the results, one per in-place target ------------------------------

// (grads..., found_inf, inv_scale) -> (grads..., found_inf).
Status Infer_unscale(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  for (size_t i = 0; i + 1 < in.size(); ++i) out->push_back(Like(in[i]));
  return Status();
}
// (scale, growth_tracker, found_inf) -> (scale, growth_tracker).
Status Infer_update(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[0]));
  out->push_back(Like(in[1]));
  return Status();
}

// clang-format off
#define OFL_ATTRS(...)
#define OFL_AMP_API(...)
#define OFL_AMP(name, Name, Attrs, kind)                        \
  const OpDef k##Name = OpSpec(#name, Infer_##kind)             \
                            .SaveInputs(false)                  \
                            .SaveOutputs(false)                 \
                            .LowPrecision(kLowPrecisionAll);
#include "oneflow_like/opdefs/amp.def"
#undef OFL_AMP
#undef OFL_AMP_API
#undef OFL_ATTRS
// clang-format on

// A one-element tensor of `dtype` (torch's message names the tensor and what it must be).
Status CheckOneElement(const char* op, const char* what, const Tensor& t, DType dtype) {
  if (!t.defined()) return InvalidArgument("[%s] %s is undefined", op, what);
  if (t.numel() != 1 || t.dtype() != dtype)
    return TypeError("[%s] %s must be a one-element %s tensor, got %s on %s", op, what,
                     DTypeLongName(dtype), t.meta_string(), t.device().ToString());
  return Status();
}

Status CheckOn(const char* op, const char* what, const Tensor& t, const Tensor& ref,
               const char* ref_what) {
  if (t.device() != ref.device())
    return InvalidArgument("[%s] %s %s is on %s but %s is on %s", op, what, t.meta_string(),
                           t.device().ToString(), ref_what, ref.device().ToString());
  return Status();
}

bool IsAmpFloat(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}

}  // namespace

namespace functional {

Status AmpForeachNonFiniteCheckAndUnscale_(TensorSpan grads, const Tensor& found_inf,
                                           const Tensor& inv_scale) {
  constexpr const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  RETURN_IF_ERROR(CheckOneElement(op, "found_inf", found_inf, DType::kF32));
  RETURN_IF_ERROR(CheckOneElement(op, "inv_scale", inv_scale, DType::kF32));
  RETURN_IF_ERROR(CheckOn(op, "inv_scale", inv_scale, found_inf, "found_inf"));
  if (grads.empty()) return Status();
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    if (!g.defined()) return InvalidArgument("[%s] grads[%d] is undefined", op, int(i));
    if (!IsAmpFloat(g.dtype()))
      return TypeError(
          "[%s] grads[%d] must be a floating point tensor (float16, bfloat16, float32 or "
          "float64), got %s",
          op, int(i), g.meta_string());
    RETURN_IF_ERROR(CheckOn(op, "grad", g, found_inf, "found_inf"));
    if (GradModeEnabled() && g.requires_grad())
      return InvalidArgument(
          "[%s] in-place op is not differentiable, but grads[%d] %s requires grad", op, int(i),
          g.meta_string());
  }
  NoGradGuard no_grad;
  // Strided grads run on a contiguous copy, written back after the kernel.
  std::vector<Tensor> ins(grads.begin(), grads.end());
  std::vector<std::pair<size_t, Tensor>> strided;
  for (size_t i = 0; i < ins.size(); ++i)
    if (!ins[i].is_contiguous()) {
      ASSIGN_OR_RETURN(ins[i], Contiguous(ins[i]));
      strided.emplace_back(i, ins[i]);
    }
  Tensor fi = found_inf, inv = inv_scale;
  if (!fi.is_contiguous()) return InvalidArgument("[%s] found_inf must be contiguous", op);
  if (!inv.is_contiguous()) {
    ASSIGN_OR_RETURN(inv, Contiguous(inv));
  }
  // One kernel call per run of distinct tensors: a tensor listed twice is unscaled twice, as by
  // torch's loop over the list, and never by two threads of one call at once.
  const AttrMap attrs = opdefs::ToAttrMap(opdefs::AmpUnscaleAttrs{});
  size_t begin = 0;
  while (begin < ins.size()) {
    size_t end = begin + 1;
    auto repeated = [&](size_t k) {
      for (size_t j = begin; j < k; ++j)
        if (ins[j].impl() == ins[k].impl()) return true;
      return false;
    };
    while (end < ins.size() && !repeated(end)) ++end;
    std::vector<Tensor> batch(ins.begin() + begin, ins.begin() + end);
    std::vector<Tensor> outs(batch);
    outs.push_back(fi);
    batch.push_back(fi);
    batch.push_back(inv);
    RETURN_IF_ERROR(DispatchInplaceMulti(kAmpForeachNonFiniteCheckAndUnscale, batch, attrs, outs));
    begin = end;
  }
  for (auto& [i, c] : strided) RETURN_IF_ERROR(CopyInto(grads[i], c));
  return Status();
}

StatusOr<Tensor> AmpUpdateScale_(const Tensor& scale, const Tensor& growth_tracker,
                                 const Tensor& found_inf, double growth_factor,
                                 double backoff_factor, int64_t growth_interval) {
  constexpr const char* op = "_amp_update_scale_";
  RETURN_IF_ERROR(CheckOneElement(op, "scale", scale, DType::kF32));
  RETURN_IF_ERROR(CheckOneElement(op, "growth_tracker", growth_tracker, DType::kI32));
  RETURN_IF_ERROR(CheckOneElement(op, "found_inf", found_inf, DType::kF32));
  RETURN_IF_ERROR(CheckOn(op, "growth_tracker", growth_tracker, scale, "scale"));
  RETURN_IF_ERROR(CheckOn(op, "found_inf", found_inf, scale, "scale"));
  if (!scale.is_contiguous() || !growth_tracker.is_contiguous())
    return InvalidArgument("[%s] scale %s and growth_tracker %s must be contiguous", op,
                           scale.meta_string(), growth_tracker.meta_string());
  opdefs::AmpUpdateScaleAttrs a;
  a.growth_factor = growth_factor;
  a.backoff_factor = backoff_factor;
  a.growth_interval = growth_interval;
  NoGradGuard no_grad;
  Tensor fi = found_inf;
  if (!fi.is_contiguous()) {
    ASSIGN_OR_RETURN(fi, Contiguous(fi));
  }
  RETURN_IF_ERROR(DispatchInplaceMulti(kAmpUpdateScale, {scale, growth_tracker, fi},
                                       opdefs::ToAttrMap(a), {scale, growth_tracker}));
  return scale;
}

}  // namespace functional
}  // namespace oneflow_like
