"""torch.nn.utils.parametrize: module.<name> computed on every access from stored originals.

register_parametrization moves the tensor into module.parametrizations[name].original (or
original0, original1, ... when right_inverse returns a tuple) and swaps the module's class for a
subclass with a property `name` that runs the parametrizations in order; state_dict keys are
therefore `parametrizations.<name>.original*`, as in torch. Assigning module.<name> = t stores
right_inverse(t) in the originals. Inside `cached()`, each parametrized tensor is computed once.
"""
from contextlib import contextmanager

import oneflow_like as flow
from oneflow_like.nn.modules.container import ModuleDict, ModuleList
from oneflow_like.nn.modules.module import Module, Parameter

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within the block, each parametrized tensor is computed on its first access and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _as_param(t, like):
    return Parameter(t, like.requires_grad if like is not None else True)


def _store(owner, name, t, original):
    """An original is a Parameter where the tensor was one, else a buffer (as torch)."""
    if isinstance(original, Parameter):
        setattr(owner, name, t if isinstance(t, Parameter) else _as_param(t, original))
    else:
        owner.register_buffer(name, t)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its originals."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with flow.no_grad():
            new = original
            for m in reversed(self):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass  # as torch: registration keeps the tensor (assignment will raise)
        self.is_tensor = isinstance(new, flow.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and new.dtype != original.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            with flow.no_grad():
                if tuple(new.shape) == tuple(original.shape):
                    original.copy_(new)
                    stored = original
                else:
                    stored = new.detach().clone()
            _store(self, "original", stored, original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, flow.Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {i} of the sequence with type {type(t).__name__}."
                    )
                _store(self, f"original{i}", t.detach().clone(), original)
        if not unsafe:
            z = self()
            if not isinstance(z, flow.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original.dtype}\nparametrized dtype: {z.dtype}"
                )
            if tuple(z.shape) != tuple(original.shape):
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {tuple(original.shape)}\n"
                    f"parametrized shape: {tuple(z.shape)}"
                )

    def originals(self):
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value):
        """Stores right_inverse(value) (the parametrizations inverted, last first) in place."""
        with flow.no_grad():
            for m in reversed(self):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(m).__name__} does not implement right_inverse."
                    )
                value = m.right_inverse(value)
            values = [value] if self.is_tensor else list(value)
            if len(values) != self.ntensors:
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors of length {self.ntensors}"
                    f". Got a sequence of length {len(values)}."
                )
            for orig, v in zip(self.originals(), values):
                if tuple(v.shape) != tuple(orig.shape) or v.dtype != orig.dtype:
                    raise ValueError(
                        f"The tensor returned by right_inverse has shape {tuple(v.shape)} and "
                        f"dtype {v.dtype}; the original has shape {tuple(orig.shape)} and "
                        f"dtype {orig.dtype}"
                    )
                orig.copy_(v)

    def forward(self):
        x = self[0](*self.originals())
        for m in list(self)[1:]:
            x = m(x)
        return x


def _property(name):
    def get(self):
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = self.parametrizations[name]()
            return _cache[key]
        return self.parametrizations[name]()

    def set(self, value):
        self.parametrizations[name].right_inverse(value)

    return property(get, set)


def _inject_class(module):
    cls = module.__class__
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), {"_original_class": cls})
    module.__class__ = param_cls


def is_parametrized(module, tensor_name=None):
    """Whether module has a parametrization (on tensor_name, when given)."""
    params = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(params, ModuleDict):
        return False
    return len(params) > 0 if tensor_name is None else tensor_name in params


def type_before_parametrizations(module):
    """The module's class before register_parametrization swapped it."""
    return module.__class__._original_class if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes module.<tensor_name> parametrization(original); a second call on the same name
    appends to its ParametrizationList. Returns the module."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, flow.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype or tuple(x.shape) != tuple(y.shape):
                raise ValueError(
                    "Registering a parametrization may not change the shape or dtype of the "
                    "tensor, unless the `unsafe` flag is enabled."
                )
        plist.append(parametrization)
        plist.unsafe = plist.unsafe or unsafe
        return module
    if tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = plist
        setattr(module.__class__, tensor_name, _property(tensor_name))
        return module
    raise ValueError(
        f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
        f"with name '{tensor_name}'"
    )


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes register_parametrization on tensor_name: the tensor becomes a plain Parameter again,
    holding the parametrized value (leave_parametrized) or the original. Returns the module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with flow.no_grad():
                t = getattr(module, tensor_name)
                if tuple(t.shape) == tuple(original.shape) and t.dtype == original.dtype:
                    original.copy_(t)
                else:
                    original = _as_param(t.detach().clone(), original)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        with flow.no_grad():
            t = getattr(module, tensor_name)
        original = Parameter(t.detach().clone(), t.requires_grad or plist.original0.requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__._original_class
    return module


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copies the parametrizations of from_module (of tensor_name, or all) onto to_module, with
    the same originals (shared, not copied). Returns to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if is_parametrized(to_module, name):
            continue
        src = from_module.parametrizations[name]
        if name not in to_module._parameters and name not in to_module._buffers:
            to_module.register_parameter(name, Parameter(getattr(from_module, name).detach()))
        for p in src:
            register_parametrization(to_module, name, p, unsafe=True)
        dst = to_module.parametrizations[name]
        for i, orig in enumerate(src.originals()):
            key = "original" if src.is_tensor else f"original{i}"
            setattr(dst, key, orig)
    return to_module
