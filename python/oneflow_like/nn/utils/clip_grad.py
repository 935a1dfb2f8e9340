"""torch.nn.utils.clip_grad: clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_ (and the deprecated clip_grad_norm)."""
import math
import warnings

import oneflow_like as flow


def _tensor_list(tensors):
    if isinstance(tensors, flow.Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (torch.nn.utils.get_total_norm): as if they were one
    vector; a 0-d tensor (0.0 for no tensors). norm_type: any order vector_norm takes, inf
    included. error_if_nonfinite: raise when the result is nan or inf (a host sync)."""
    tensors = [t for t in _tensor_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return flow.tensor(0.0)
    with flow.no_grad():
        device = tensors[0].device
        norms = [flow.linalg.vector_norm(t, norm_type) for t in tensors]
        norms = [n if n.device == device else n.to(device) for n in norms]
        if len(norms) == 1:
            total = norms[0]
        elif math.isinf(norm_type) and norm_type > 0:  # the common case without a stack
            total = norms[0]
            for n in norms[1:]:
                total = flow.maximum(total, n)
        elif norm_type == 2.0:
            total = _sum([n * n for n in norms]).sqrt()
        else:
            total = flow.linalg.vector_norm(flow.stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of `parameters` in place by min(1, max_norm / (total_norm + 1e-6))
    (torch.nn.utils.clip_grads_with_norm_; total_norm from get_total_norm, e.g. of the grads
    gathered across ranks)."""
    grads = [p.grad for p in _tensor_list(parameters) if p.grad is not None]
    if not grads:
        return
    with flow.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device) if g.device != coef.device else coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    total norm (a 0-d tensor) before clipping. No host sync unless error_if_nonfinite."""
    parameters = _tensor_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return flow.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps each gradient in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with flow.no_grad():
        for p in _tensor_list(parameters):
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
