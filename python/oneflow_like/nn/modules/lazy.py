"""Lazy modules: LazyLinear, LazyConv1-3d, LazyConvTranspose1-3d, LazyBatchNorm1-3d.

A lazy module is built without its input size: its parameters are UninitializedParameters
(empty placeholders). The first call (or a load_state_dict, whose tensors give the size) infers
the size, builds the target module (cls_to_become) with the same arguments, and the lazy module
becomes it in place: same object, the target's class, freshly initialized parameters. Build the
optimizer after that first call, as with torch.
"""
import oneflow_like as flow
from oneflow_like.nn.modules import conv, linear, normalization
from oneflow_like.nn.modules.module import Module, Parameter


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (no elements until its module materializes)."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        kw = {k: v for k, v in (("device", device), ("dtype", dtype)) if v is not None}
        super().__init__(flow.empty(0, **kw), requires_grad)

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer(flow.Tensor):
    """A buffer whose shape is not known yet."""

    __torch_function__ = flow._C._disabled_torch_function_impl

    def __init__(self, requires_grad=False, device=None, dtype=None):
        kw = {k: v for k, v in (("device", device), ("dtype", dtype)) if v is not None}
        flow.Tensor.__init__(self, flow.empty(0, **kw))


def is_lazy(t):
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


class LazyModuleMixin:
    """Infers the input size on the first call or load_state_dict, then becomes cls_to_become."""

    cls_to_become = None

    def has_uninitialized_params(self):
        return any(
            is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values())
        )

    def _materialize(self, size):
        built = self.cls_to_become(size, *self._lazy_args, **self._lazy_kwargs)
        self.__dict__.clear()
        self.__dict__.update(built.__dict__)
        self.__class__ = self.cls_to_become

    def initialize_parameters(self, input):
        self._materialize(self._size_from_input(input))

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(args[0])
        return Module.__call__(self, *args, **kwargs)

    def _load_tree(self, state_dict, prefix, assign, keys, errors):
        if self.has_uninitialized_params():
            size = self._size_from_state(state_dict, prefix)
            if size is not None:
                self._materialize(size)
        return Module._load_tree(self, state_dict, prefix, assign, keys, errors)


def _placeholders(module, names, device, dtype, buffers=()):
    for n in names:
        setattr(module, n, UninitializedParameter(device=device, dtype=dtype))
    for n in buffers:
        module.register_buffer(n, UninitializedBuffer(device=device, dtype=dtype))


class LazyLinear(LazyModuleMixin, linear.Linear):
    """Linear whose in_features is the last dim of the first input."""

    cls_to_become = linear.Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self._lazy_args = (out_features, bias)
        self._lazy_kwargs = dict(device=device, dtype=dtype)
        self.in_features, self.out_features = 0, out_features
        _placeholders(self, ["weight"] + (["bias"] if bias else []), device, dtype)
        if not bias:
            self.register_parameter("bias", None)

    def _size_from_input(self, input):
        return input.shape[-1]

    def _size_from_state(self, state_dict, prefix):
        w = state_dict.get(prefix + "weight")
        return None if w is None else w.shape[1]


def _lazy_conv(target, transposed):
    class LazyConv(LazyModuleMixin, target):
        cls_to_become = target

        def __init__(self, out_channels, kernel_size, *args, bias=True, device=None, **kwargs):
            Module.__init__(self)
            kwargs.update(bias=bias, device=device)
            self._lazy_args = (out_channels, kernel_size) + args
            self._lazy_kwargs = kwargs
            self.in_channels, self.out_channels = 0, out_channels
            dtype = kwargs.get("dtype")
            _placeholders(self, ["weight"] + (["bias"] if bias else []), device, dtype)
            if not bias:
                self.register_parameter("bias", None)

        def _groups(self):
            if "groups" in self._lazy_kwargs:
                return self._lazy_kwargs["groups"]
            pos = 5 if transposed else 4  # groups' position after (out, kernel_size)
            return self._lazy_args[pos] if len(self._lazy_args) > pos else 1

        def _size_from_input(self, input):
            unbatched = input.dim() == target._n + 1
            return input.shape[0 if unbatched else 1]

        def _size_from_state(self, state_dict, prefix):
            w = state_dict.get(prefix + "weight")
            if w is None:
                return None
            return w.shape[0] if transposed else w.shape[1] * self._groups()

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + target.__name__
    LazyConv.__doc__ = f"{target.__name__} whose in_channels is the channel dim of the first input."
    return LazyConv


def _lazy_batch_norm(target):
    class LazyBatchNorm(LazyModuleMixin, target):
        cls_to_become = target

        def __init__(self, *args, device=None, dtype=None, **kwargs):
            # torch's arguments: eps=1e-5, momentum=0.1, affine=True, track_running_stats=True
            opts = dict(eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)
            opts.update(zip(list(opts), args))
            opts.update(kwargs)
            Module.__init__(self)
            self._lazy_args = tuple(opts.values())
            self._lazy_kwargs = dict(device=device, dtype=dtype)
            self.num_features = 0
            self.__dict__.update(opts)
            affine, track_running_stats = opts["affine"], opts["track_running_stats"]
            params = ["weight", "bias"] if affine else []
            stats = ["running_mean", "running_var"] if track_running_stats else []
            _placeholders(self, params, device, dtype, stats)
            if track_running_stats:
                self.register_buffer("num_batches_tracked", flow.zeros((), dtype=flow.int64))

        def _size_from_input(self, input):
            return input.shape[1]

        def _size_from_state(self, state_dict, prefix):
            for name in ("weight", "running_mean"):
                if prefix + name in state_dict:
                    return state_dict[prefix + name].shape[0]
            return None

    LazyBatchNorm.__name__ = LazyBatchNorm.__qualname__ = "Lazy" + target.__name__
    LazyBatchNorm.__doc__ = f"{target.__name__} whose num_features is dim 1 of the first input."
    return LazyBatchNorm


LazyConv1d, LazyConv2d, LazyConv3d = (
    _lazy_conv(c, False) for c in (conv.Conv1d, conv.Conv2d, conv.Conv3d)
)
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv(c, True) for c in (conv.ConvTranspose1d, conv.ConvTranspose2d, conv.ConvTranspose3d)
)
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_batch_norm(b)
    for b in (normalization.BatchNorm1d, normalization.BatchNorm2d, normalization.BatchNorm3d)
)
