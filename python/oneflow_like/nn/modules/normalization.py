"""BatchNorm1d/2d (running statistics as buffers), LayerNorm and GroupNorm."""
import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn import init
from oneflow_like.nn.modules.linear import _empty
from oneflow_like.nn.modules.module import Module, Parameter


class _BatchNorm(Module):
    _expected_dims = ()

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_empty((num_features,), device, dtype))
            self.bias = Parameter(_empty((num_features,), device, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            kw = {"device": device} if device is not None else {}
            if dtype is not None:
                kw["dtype"] = dtype
            self.register_buffer("running_mean", flow.zeros(num_features, **kw))
            self.register_buffer("running_var", flow.ones(num_features, **kw))
            self.register_buffer(
                "num_batches_tracked",
                flow.zeros((), dtype=flow.int64, **({"device": device} if device else {})),
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _step_momentum(self):
        """The running statistics' momentum for this call; in training it counts the batch (and
        momentum=None gives the cumulative average, 1 / batches)."""
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with flow.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        return momentum

    def forward(self, input):
        if input.dim() not in self._expected_dims:
            raise ValueError(
                f"[{type(self).__name__}] expected {' or '.join(map(str, self._expected_dims))}-d "
                f"input, got shape {tuple(input.shape)}"
            )
        momentum = self._step_momentum()
        use_batch_stats = self.training or self.running_mean is None
        return F.batch_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            use_batch_stats,
            momentum,
            self.eps,
        )

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Input (N, C) or (N, C, L)."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Input (N, C, H, W)."""

    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Input (N, C, D, H, W)."""

    _expected_dims = (5,)


class RMSNorm(Module):
    """y = x / sqrt(mean(x^2 over normalized_shape) + eps) * weight; eps=None uses the machine
    epsilon of the input's dtype."""

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, device, dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LayerNorm(Module):
    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, device, dtype))
            if bias:
                self.bias = Parameter(_empty(self.normalized_shape, device, dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        if affine:
            self.weight = Parameter(_empty((num_channels,), device, dtype))
            self.bias = Parameter(_empty((num_channels,), device, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class LocalResponseNorm(Module):
    """F.local_response_norm over the channels (dim 1)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _SyncBatchNormFn(flow.autograd.Function):
    """Training-mode batch norm whose statistics cover every process of `group`: each rank's
    count, mean and variance are summed as (n, n*mean, n*(var + mean^2)) in float64 with one
    all_reduce; backward all-reduces the sums of dy and dy*(x - mean) that grad_input needs (the
    weight and bias gradients stay per rank, for DDP to average)."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        import oneflow_like.distributed as dist

        C = x.shape[1]
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // C
        var, mean = flow.var_mean(x, dims, correction=0)
        mean64, var64 = mean.to(flow.float64), var.to(flow.float64)
        stats = flow.cat(
            [
                flow.full((1,), float(n), dtype=flow.float64),
                n * mean64,
                n * (var64 + mean64 * mean64),
            ]
        )
        dist.all_reduce(stats, group=group)
        total = stats[0]
        g_mean = stats[1 : C + 1] / total
        g_var = (stats[C + 1 :] / total - g_mean * g_mean).clamp(min=0.0)
        N = int(round(total.item()))
        if running_mean is not None:
            with flow.no_grad():
                unbiased = g_var * (N / max(N - 1, 1))
                running_mean.mul_(1 - momentum).add_(momentum * g_mean.to(running_mean.dtype))
                running_var.mul_(1 - momentum).add_(momentum * unbiased.to(running_var.dtype))
        shape = [1, C] + [1] * (x.dim() - 2)
        mean_b = g_mean.to(x.dtype).reshape(shape)
        invstd = (g_var + eps).rsqrt().to(x.dtype).reshape(shape)
        xhat = (x - mean_b) * invstd
        y = xhat
        if weight is not None:
            y = y * weight.reshape(shape) + bias.reshape(shape)
        ctx.save_for_backward(x, weight, mean_b, invstd)
        ctx.group, ctx.N, ctx.dims, ctx.shape = group, N, dims, shape
        return y

    @staticmethod
    def backward(ctx, dy):
        import oneflow_like.distributed as dist

        x, weight, mean_b, invstd = ctx.saved_tensors
        dims, shape = ctx.dims, ctx.shape
        xmu = x - mean_b
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        grad_weight = grad_bias = None
        if weight is not None:
            grad_weight = sum_dy_xmu * invstd.reshape(-1)
            grad_bias = sum_dy
        sums = flow.cat([sum_dy, sum_dy_xmu]).to(flow.float64)
        dist.all_reduce(sums, group=ctx.group)
        C = sum_dy.shape[0]
        mean_dy = (sums[:C] / ctx.N).to(dy.dtype).reshape(shape)
        mean_dy_xmu = (sums[C:] / ctx.N).to(dy.dtype).reshape(shape)
        scale = invstd if weight is None else invstd * weight.reshape(shape)
        grad_input = (dy - mean_dy - xmu * invstd * invstd * mean_dy_xmu) * scale
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over any input of 2 or more dims whose training statistics cover all the
    processes of `process_group` (default: the world), as torch's: with torch.distributed
    initialized and more than one process, each step all-reduces the per-channel counts, means
    and variances (and, in backward, the sums grad_input needs) over the group, on whatever
    backend the group uses (Gloo on the CPU, NCCL on CUDA). Otherwise (one process, eval mode
    with running statistics) it is BatchNorm."""

    _expected_dims = range(2, 64)

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
        device=None,
        dtype=None,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype
        )
        self.process_group = process_group

    def forward(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        import oneflow_like.distributed as dist

        bn_training = self.training or self.running_mean is None
        need_sync = bn_training and self.training and dist.is_initialized()
        if need_sync:
            need_sync = dist.get_world_size(self.process_group) > 1
        if not need_sync:
            return super().forward(input)
        if input.is_lazy:
            raise RuntimeError(
                "[SyncBatchNorm] synchronized statistics are not supported inside nn.Graph; "
                "train it eagerly or use BatchNorm"
            )
        momentum = self._step_momentum()
        return _SyncBatchNormFn.apply(
            input,
            self.weight,
            self.bias,
            self.running_mean,
            self.running_var,
            self.eps,
            momentum,
            self.process_group,
        )

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d replaced by a SyncBatchNorm holding the same parameters,
        buffers and training mode (recursively); returns the converted module."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with flow.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


from oneflow_like.nn.modules._paths import late_names  # noqa: E402

__getattr__ = late_names(__name__)
