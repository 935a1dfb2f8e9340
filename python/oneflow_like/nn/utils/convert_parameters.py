"""torch.nn.utils.convert_parameters: parameters <-> one flat vector."""
import oneflow_like as flow


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    return flow.cat([p.reshape(-1) for p in parameters], 0)


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-D tensor `vec` into each parameter, in place."""
    if not isinstance(vec, flow.Tensor) or vec.dim() != 1:
        raise TypeError(
            f"[vector_to_parameters] expects a 1-D tensor, got {type(vec).__name__}"
            + (f" of shape {tuple(vec.shape)}" if isinstance(vec, flow.Tensor) else "")
        )
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise ValueError(
            f"[vector_to_parameters] vec has {vec.numel()} elements, the parameters {total}"
        )
    offset = 0
    with flow.no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset : offset + n].reshape(tuple(p.shape)))
            offset += n
