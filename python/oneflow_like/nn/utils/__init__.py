"""nn.utils: gradient clipping, parameters <-> one flat vector, weight and spectral norm (the hook
style and the parametrize style), conv + batch-norm fusion, skip_init, functional_call."""
from oneflow_like.nn.utils import (  # noqa: F401
    clip_grad,
    convert_parameters,
    fusion,
    parametrizations,
    parametrize,
    rnn,
    stateless,
)
from oneflow_like.nn.utils.clip_grad import (  # noqa: F401
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from oneflow_like.nn.utils.convert_parameters import (  # noqa: F401
    parameters_to_vector,
    vector_to_parameters,
)
from oneflow_like.nn.utils.fusion import (  # noqa: F401
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from oneflow_like.nn.utils.init import skip_init  # noqa: F401
from oneflow_like.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from oneflow_like.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: F401
