"""torch.nn.utils.fusion: fold an eval-mode BatchNorm into the preceding conv or linear layer
(w' = w * gamma / sqrt(var + eps) per output channel, b' = (b - mean) * gamma / sqrt(var + eps)
+ beta)."""
import copy

import oneflow_like as flow
from oneflow_like.nn.modules.module import Parameter


def _bn_scale(bn_rm, bn_rv, bn_eps, bn_w):
    if bn_w is None:
        bn_w = flow.ones_like(bn_rm)
    return bn_w * (bn_rv + bn_eps).rsqrt()


def _fused_bias(b, bn_rm, scale, bn_b):
    if b is None:
        b = flow.zeros_like(bn_rm)
    if bn_b is None:
        bn_b = flow.zeros_like(bn_rm)
    return (b - bn_rm) * scale + bn_b


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused (weight, bias) Parameters; transpose: conv_w is a transposed conv's
    (in, out, ...) weight."""
    scale = _bn_scale(bn_rm, bn_rv, bn_eps, bn_w)
    rest = [1] * (conv_w.dim() - 2)
    shape = [1, -1] + rest if transpose else [-1, 1] + rest
    w = conv_w * scale.reshape(*shape)
    b = _fused_bias(conv_b, bn_rm, scale, bn_b)
    return Parameter(w, conv_w.requires_grad), Parameter(b, b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` whose output equals bn(conv(x)) for eval-mode conv and bn."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused (weight, bias) Parameters of a Linear followed by a BatchNorm1d."""
    scale = _bn_scale(bn_rm, bn_rv, bn_eps, bn_w)
    w = linear_w * scale.unsqueeze(-1)
    b = _fused_bias(linear_b, bn_rm, scale, bn_b)
    return Parameter(w, linear_w.requires_grad), Parameter(b, b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` whose output equals bn(linear(x)) for eval-mode linear and bn."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
