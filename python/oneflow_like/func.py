"""torch.func: functional_call only (grad, vmap and the other transforms are not provided)."""
from oneflow_like.nn.utils.stateless import functional_call as _functional_call


def functional_call(
    module, parameter_and_buffer_dicts, args, kwargs=None, *, tie_weights=True, strict=False
):
    """nn.utils.stateless.functional_call; parameter_and_buffer_dicts may also be a tuple of
    dicts (merged; a name given twice raises ValueError)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    else:
        merged = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior of functional call is "
                        "ambiguous"
                    )
                merged[k] = v
    return _functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)
