// The fused GradScaler ops (oneflow_like/opdefs/amp.def): torch's private
// _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_, each one kernel call that
// updates its tensors in place (no host read of device values). amp/grad_scaler.py calls them.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// grads *= inv_scale in place and found_inf = 1.0 when any grad element is inf/nan (found_inf
// is left as it was otherwise). grads: floating tensors (f16, bf16, f32, f64; any shapes and
// strides, any mix of these dtypes) on found_inf's device; found_inf and inv_scale: one-element
// float32. An empty list does nothing.
Status AmpForeachNonFiniteCheckAndUnscale_(TensorSpan grads, const Tensor& found_inf,
                                           const Tensor& inv_scale);
// torch._amp_update_scale_: found_inf != 0 multiplies scale by backoff_factor and zeroes
// growth_tracker; else growth_tracker counts the clean step and, reaching growth_interval, is
// zeroed while scale is multiplied by growth_factor (the grown scale kept only when finite).
// scale, found_inf: one-element float32; growth_tracker: one-element int32; one device. Returns
// scale.
StatusOr<Tensor> AmpUpdateScale_(const Tensor& scale, const Tensor& growth_tracker,
                                 const Tensor& found_inf, double growth_factor,
                                 double backoff_factor, int64_t growth_interval);

}  // namespace functional
}  // namespace oneflow_like
