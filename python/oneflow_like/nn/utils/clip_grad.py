"""torch.nn.utils.clip_grad: clip_grad_norm_, clip_grad_value_ (and the deprecated
clip_grad_norm)."""
import math
import warnings

import oneflow_like as flow


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    total norm (a 0-d tensor) before clipping. No host sync unless error_if_nonfinite."""
    if isinstance(parameters, flow.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return flow.zeros(())
    with flow.no_grad():
        if math.isinf(norm_type):
            norms = [g.abs().max() for g in grads]
            total = norms[0]
            for n in norms[1:]:
                total = flow.maximum(total, n)
        elif norm_type == 2.0:
            total = _sum([(g * g).sum() for g in grads]).sqrt()
        else:
            total = _sum([(g.abs() ** norm_type).sum() for g in grads]) ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients is non-finite, "
                "so it cannot be clipped"
            )
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device) if g.device != coef.device else coef)
    return total


def clip_grad_value_(parameters, clip_value):
    if isinstance(parameters, flow.Tensor):
        parameters = [parameters]
    with flow.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def _sum(ts):
    total = ts[0]
    for t in ts[1:]:
        total = total + t
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated in torch in favour of clip_grad_norm_ (same behaviour)."""
    warnings.warn(
        "torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.",
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
