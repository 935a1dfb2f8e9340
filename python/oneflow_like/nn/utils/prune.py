"""torch.nn.utils.prune: pruning a module's tensor by a mask, as PyTorch 2.x does it.

Pruning `module.<name>` moves the parameter to `<name>_orig`, registers the mask as the buffer
`<name>_mask`, and sets `module.<name> = <name>_orig * <name>_mask` as a plain attribute,
recomputed before every forward by a forward pre-hook (the pruning method object itself), so the
gradient flows to `<name>_orig` through the mask. Pruning the same tensor again combines the
methods in a PruningContainer: each new method acts only on the entries (unstructured) or the
channels (structured) the earlier masks kept. `remove` makes the pruning permanent: the masked
value becomes the parameter `<name>` again and the `_orig` / `_mask` entries go away.

Methods: Identity, RandomUnstructured, L1Unstructured, RandomStructured, LnStructured,
CustomFromMask (and their functions identity, random_unstructured, l1_unstructured,
random_structured, ln_structured, custom_from_mask), global_unstructured over several tensors,
remove, is_pruned. `amount` is a fraction in [0, 1] (rounded to a count) or a count.
"""
import numbers
from abc import ABC, abstractmethod

import oneflow_like as flow

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


class BasePruningMethod(ABC):
    """A pruning method: computes a mask for a tensor and, as a forward pre-hook, keeps
    `module.<name>` equal to the original times the mask."""

    _tensor_name: str

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for `t`, given `default_mask` (the mask from earlier pruning)."""

    def apply_mask(self, module):
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes `module.<name>` with a new method of this class (combining with an earlier
        pruning of the same tensor) and returns the method."""
        old_method, found = None, 0
        hooks_to_remove = []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                hooks_to_remove.append(k)
                found += 1
        if found > 1:
            raise RuntimeError(
                f"[prune] avoid adding multiple pruning hooks to the same tensor {name} of "
                f"module {module}: use a PruningContainer"
            )
        for k in hooks_to_remove:
            del module._forward_pre_hooks[k]

        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                container = PruningContainer(old_method)
                container.add_pruning_method(method)
                method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise ValueError(
                    f"[prune] importance_scores should have the same shape as parameter {name} "
                    f"of {module}: got {list(importance_scores.shape)} and {list(orig.shape)}"
                )
        else:
            importance_scores = orig

        if old_method is None:
            if name not in module._parameters:
                raise ValueError(
                    f"[prune] module {type(module).__name__} has no parameter named '{name}'"
                )
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = flow.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()

        try:
            mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old_method is None:
                orig = getattr(module, name + "_orig")
                del module._parameters[name + "_orig"]
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask computed from `importance_scores` (default: t itself)."""
        scores = t if importance_scores is None else importance_scores
        if tuple(scores.shape) != tuple(t.shape):
            raise ValueError("[prune] importance_scores should have the same shape as tensor t")
        default_mask = flow.ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning permanent: `<name>` becomes a parameter holding the masked value."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned before removal"
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.detach()
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        module.register_parameter(self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Several pruning methods applied in turn to one tensor."""

    def __init__(self, *args):
        self._pruning_methods = tuple()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):
            args = tuple(args[0])
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        return _combine_masks(method, t, default_mask)


def _combine_masks(method, t, mask):
    """The latest `method` acts on what `mask` kept: its entries (unstructured), its channels
    along method.dim (structured) or everything (global)."""
    new_mask = mask.clone()
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        keep = mask == 1
        partial = method.compute_mask(t[keep], default_mask=mask[keep])
        new_mask[keep] = partial.to(dtype=new_mask.dtype)
        return new_mask
    if kind == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError(
                "Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                "defined."
            )
        n_dims = t.dim()
        dim = method.dim + n_dims if method.dim < 0 else method.dim
        others = [d for d in range(n_dims) if d != dim]
        kept = (mask.sum(dim=others) != 0).nonzero().reshape(-1)
        part_t = t.index_select(dim, kept)
        part_mask = mask.index_select(dim, kept)
        partial = method.compute_mask(part_t, default_mask=part_mask).to(dtype=new_mask.dtype)
        return new_mask.index_copy(dim, kept, partial)
    if kind == "global":
        return method.compute_mask(t, default_mask=mask).to(dtype=new_mask.dtype)
    raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _nparams_toprune(amount, size):
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return amount
    return round(amount * size)


def _check_structured(t, dim):
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor of "
            f"shape {tuple(t.shape)} with {t.dim()} dims"
        )
    if dim >= t.dim() or dim < -t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _channel_mask(t, dim, channels):
    """Ones on the given channels (an index tensor) along dim, zeros elsewhere."""
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    keep = flow.zeros(t.shape[dim], dtype=t.dtype, device=t.device)
    if channels.numel() > 0:
        keep = keep.index_fill(0, channels.to(device=t.device), 1.0)
    return keep.reshape(shape).expand(t.shape).clone()


class Identity(BasePruningMethod):
    """Keeps every entry (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of lowest score (_scores)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _nparams_toprune(self.amount, t.numel())
        mask = default_mask.clone()
        if k != 0:
            drop = flow.topk(self._scores(t).reshape(-1), k=k, largest=False).indices
            mask = mask.reshape(-1).index_fill(0, drop, 0).reshape(mask.shape)
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries chosen uniformly at random."""

    def _scores(self, t):
        return flow.rand(t.numel(), device=t.device)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries of smallest absolute value."""

    def _scores(self, t):
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        n = t.shape[self.dim]
        k = _nparams_toprune(self.amount, n)
        if k == 0:
            return default_mask
        keep = flow.topk(flow.rand(n), k=n - k).indices
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        dim = self.dim + t.dim() if self.dim < 0 else self.dim
        others = [d for d in range(t.dim()) if d != dim]
        norm = flow.linalg.vector_norm(t, ord=self.n, dim=others)
        keep = flow.topk(norm, k=size - k, largest=True).indices
        return _channel_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes by a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise ValueError(
                f"[custom_from_mask] the mask's shape {list(self.mask.shape)} differs from the "
                f"tensor's {list(default_mask.shape)}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype, device=default_mask.device)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes several tensors together: the method sees them as one flat vector (e.g. the 20%
    smallest weights of the whole model), then each gets its part of the mask."""
    if not hasattr(parameters, "__iter__") or isinstance(parameters, (str, bytes)):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = flow.cat(
        [importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1) for (m, n) in parameters]
    )
    default = flow.cat(
        [
            getattr(m, n + "_mask", flow.ones_like(getattr(m, n))).detach().reshape(-1)
            for (m, n) in parameters
        ]
    )
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container = PruningContainer(method)
    final = container.compute_mask(scores, default)
    pointer = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[pointer : pointer + p.numel()].reshape(p.shape))
        pointer += p.numel()


def remove(module, name):
    """Makes the pruning of `module.<name>` permanent and removes its hook."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module):
    """Whether any submodule has a pruning hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
