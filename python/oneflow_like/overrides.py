"""oneflow_like.overrides: torch.overrides, the __torch_function__ protocol (issue 19).

A call of a public function (flow.*, flow.nn.functional, flow.linalg, flow.fft, flow.special)
or of a Tensor method, operator or property, with an argument (or an item of a list/tuple
argument) whose type defines ``__torch_function__`` (a Tensor subclass, or any "tensor-like"
class), is handed to that ``__torch_function__(func, types, args, kwargs)`` instead, as in
PyTorch 2.x: subclasses before superclasses, then left to right; an implementation returning
NotImplemented passes to the next; TypeError when all do. An active TorchFunctionMode sees
every call first (with itself popped while it runs).

How it is cheap: ``_install`` wraps each of those callables once in a C++ object
(python/csrc/torch_function_py.cc) whose call checks the arguments' exact types; plain tensors,
Parameters and Python scalars never leave C++. Only a call that can dispatch reaches
``_handle_call`` below.
"""
import contextlib
import functools
import inspect
import itertools
import sys
import threading
import types as _types

from . import _C

__all__ = [
    "BaseTorchFunctionMode",
    "TorchFunctionMode",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
    "wrap_torch_function",
]

has_torch_function = _C._has_torch_function
has_torch_function_unary = _C._has_torch_function_unary
has_torch_function_variadic = _C._has_torch_function_variadic
_disabled_torch_function_impl = _C._disabled_torch_function_impl

_ENABLED, _SUBCLASS_DISABLED, _ALL_DISABLED = 0, 1, 2


class _DisableLevel:
    """Context manager raising the thread's DisableTorchFunction* level for its block."""

    _level = _ENABLED

    def __init__(self):
        self._saved = []

    def __enter__(self):
        old = _C._tf_disabled_level()
        self._saved.append(old)
        _C._tf_set_disabled_level(max(old, self._level))
        return self

    def __exit__(self, exc_type, exc, tb):
        _C._tf_set_disabled_level(self._saved.pop())
        return False


class DisableTorchFunctionSubclass(_DisableLevel):
    """torch._C.DisableTorchFunctionSubclass: inside the block, arguments' __torch_function__
    are not consulted (modes still are)."""

    _level = _SUBCLASS_DISABLED


class DisableTorchFunction(_DisableLevel):
    """torch._C.DisableTorchFunction: inside the block, neither arguments' __torch_function__
    nor modes are consulted."""

    _level = _ALL_DISABLED


# --------------------------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------------------------

_tls = threading.local()


def _mode_stack():
    stack = getattr(_tls, "modes", None)
    if stack is None:
        stack = _tls.modes = []
    return stack


def _push_mode(mode):
    stack = _mode_stack()
    stack.append(mode)
    _C._tf_set_mode_count(len(stack))


def _pop_mode():
    stack = _mode_stack()
    if not stack:
        raise RuntimeError("[TorchFunctionMode] no mode to pop: the mode stack is empty")
    mode = stack.pop()
    _C._tf_set_mode_count(len(stack))
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode():
    stack = _mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    return list(_mode_stack())


class TorchFunctionMode:
    """torch.overrides.TorchFunctionMode: a subclass's __torch_function__(func, types, args,
    kwargs) sees every overridable call made inside ``with mode:`` (modes nest; the innermost
    runs first, with itself popped so its own calls reach the next one)."""

    inner: "TorchFunctionMode"

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(
            f"{type(self).__name__} subclasses TorchFunctionMode without __torch_function__"
        )

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose __torch_function__ runs the call unchanged (a base to override parts of)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------


def _get_overloaded_args(relevant_args):
    """The arguments whose __torch_function__ to try, one per distinct type, subclasses before
    their superclasses and otherwise left to right (NEP 18's order). Exact Tensors and classes
    that opt out with _disabled_torch_function_impl are not collected."""
    if not _C._is_torch_function_enabled():
        return []
    seen = set()
    out = []
    for arg in relevant_args:
        t = type(arg)
        if t in seen or not _C._tf_is_overloaded(arg) or _foreign_torch(t):
            continue
        seen.add(t)
        index = len(out)
        for i, prior in enumerate(out):
            if issubclass(t, type(prior)):
                index = i
                break
        out.insert(index, arg)
    return out


@functools.lru_cache(None)
def _foreign_torch(t):
    """Whether type t's __torch_function__ comes from the real PyTorch package (a torch.Tensor
    passed to flow.from_dlpack, flow.as_tensor, ...). Its default implementation calls `func`
    again under torch's own DisableTorchFunction, which ours cannot see, so it would recurse:
    such arguments are not overloaded here. (Under mock_torch our classes live in oneflow_like.)"""
    for klass in t.__mro__:
        if "__torch_function__" in vars(klass):
            mod = getattr(klass, "__module__", "") or ""
            return mod == "torch" or mod.startswith("torch.")
    return False


def _name_of(func):
    mod = getattr(func, "__module__", None)
    name = getattr(func, "__name__", None) or repr(func)
    return f"{mod}.{name}" if mod else name


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """torch.overrides.handle_torch_function: runs the protocol for a call of `public_api`
    whose overridable arguments are `relevant_args` (the active mode first, then each
    overloaded argument's __torch_function__ until one returns something else than
    NotImplemented)."""
    overloaded = _get_overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    mode_on = _C._is_torch_function_mode_enabled()
    if not overloaded and not mode_on:  # only foreign (real torch) arguments: run the call
        with DisableTorchFunction():
            return public_api(*args, **kwargs)
    if mode_on:
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    msg = (
        f"no implementation found for '{_name_of(public_api)}' on types that implement "
        f"__torch_function__: {[type(a) for a in overloaded]}"
    )
    if mode_on:
        msg += f" nor in mode {_get_current_function_mode()}"
    raise TypeError(msg)


def _handle_call(public_api, args, kwargs):
    """Called by the C++ wrappers when a call may dispatch: every argument (and the items of a
    list or tuple argument) is relevant."""
    relevant = []
    for a in itertools.chain(args, kwargs.values()):
        if type(a) is list or type(a) is tuple:
            relevant.extend(a)
        else:
            relevant.append(a)
    return handle_torch_function(public_api, relevant, *args, **kwargs)


def wrap_torch_function(dispatcher):
    """torch.overrides.wrap_torch_function: decorates a Python function so that the arguments
    `dispatcher(*args, **kwargs)` returns take part in the protocol."""

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def is_tensor_like(inp):
    """torch.overrides.is_tensor_like: a Tensor, or an object whose type has
    __torch_function__."""
    return type(inp) is _C.Tensor or hasattr(type(inp), "__torch_function__")


# --------------------------------------------------------------------------------------------
# Tensor's default __torch_function__ and subclass construction
# --------------------------------------------------------------------------------------------


def _convert(ret, cls):
    """Tensor results of a call on a `cls` argument, as `cls` (containers converted item by
    item)."""
    Tensor = _C.Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        if hasattr(ret, "_make"):  # return_types named tuples
            return ret._make(items)
        return type(ret)(items)
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__: runs func with subclass dispatch off and returns its tensors
    as `cls` (but field accessors such as .grad, whose identity matters, unwrapped)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in get_default_nowrap_functions():
            return ret
        return _convert(ret, cls)


def _make_subclass(cls, data, require_grad=False, *args, **kwargs):
    """torch.Tensor._make_subclass: a `cls` instance sharing `data`'s storage, as a leaf."""
    from . import Tensor

    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_make_subclass: cls must be a subclass of Tensor, got {cls!r}")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass: data must be a Tensor, got {type(data).__name__}")
    obj = Tensor.__new__(cls)
    with DisableTorchFunction():
        Tensor.__init__(obj, data.detach())
        obj.requires_grad_(bool(require_grad))
    return obj


# --------------------------------------------------------------------------------------------
# Installation and the function tables
# --------------------------------------------------------------------------------------------

# flow.* functions left unwrapped: process state, I/O and helpers that never take a tensor to
# compute on (torch's own ignored list names the same kinds).
_NOT_WRAPPED = frozenset(
    """
    are_deterministic_algorithms_enabled compile export from_file get_default_device
    get_default_dtype get_deterministic_debug_mode get_num_interop_threads get_num_threads
    get_rng_state initial_seed is_deterministic_algorithms_warn_only_enabled is_grad_enabled
    is_inference_mode_enabled is_autocast_available is_autocast_enabled get_autocast_dtype
    load load_graph manual_seed save seed set_default_device set_default_dtype
    set_default_tensor_type set_deterministic_debug_mode set_num_interop_threads set_num_threads
    set_printoptions set_rng_state use_deterministic_algorithms is_tensor is_storage typename
    sync vmap set_grad_enabled set_warn_always is_warn_always_enabled
    """.split()
)

# Overridable but never with a tensor argument (factories, ...): modes see them, the
# subclass table test skips them (torch lists them in get_ignored_functions too).
_FACTORIES = frozenset(
    """
    arange bartlett_window blackman_window empty empty_strided eye full hamming_window
    hann_window kaiser_window linspace logspace ones rand randint randn randperm scalar_tensor
    tensor tril_indices triu_indices zeros as_tensor asarray from_numpy frombuffer
    sparse_coo_tensor range
    """.split()
)

# Tensor attributes never wrapped: object protocol, construction, and the protocol itself.
_TENSOR_SKIP = frozenset(
    """
    __new__ __init__ __init_subclass__ __subclasshook__ __getattribute__ __getattr__
    __setattr__ __delattr__ __dir__ __class__ __dict__ __doc__ __module__ __weakref__ __hash__
    __torch_function__ __reduce__ __reduce_ex__ __getstate__ __setstate__ __sizeof__
    __deepcopy__ __copy__ __iter__ __class_getitem__ __array_priority__ __slots__
    as_subclass
    """.split()
)

# Operators that torch dispatches under a method's name (`t + 1` reaches __torch_function__ as
# Tensor.add, `1 & t` as Tensor.bitwise_and), as observed on torch; the others keep their own.
_OPERATOR_METHODS = {
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add_",
    "__sub__": "sub",
    "__isub__": "sub_",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__imul__": "mul_",
    "__truediv__": "div",
    "__itruediv__": "div_",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__ipow__": "pow_",
    "__matmul__": "matmul",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__neg__": "neg",
    "__pos__": "positive",
    "__abs__": "abs",
    "__rand__": "bitwise_and",
    "__ror__": "bitwise_or",
    "__rxor__": "bitwise_xor",
}

_NAMESPACES = (
    "oneflow_like",
    "oneflow_like.nn.functional",
    "oneflow_like.linalg",
    "oneflow_like.fft",
    "oneflow_like.special",
)

_FUNCTION_TYPES = (_types.FunctionType, _types.BuiltinFunctionType)
_wrapped = {}  # id(original) -> wrapper (aliases share one wrapper)
_originals = []  # keeps the originals alive so their ids stay unique
_overridable = {}  # namespace object -> list of overridable callables
_names = {}  # overridable callable -> "namespace.name"


def _wrap(func, binds):
    w = _wrapped.get(id(func))
    if w is None:
        w = _C._tf_wrap(func, binds)
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            value = getattr(func, attr, None)
            if value is not None:
                setattr(w, attr, value)
        # Transparent to inspect.signature and to code unwrapping one level (func's own
        # __wrapped__ when it is a wrapper itself).
        w.__wrapped__ = getattr(func, "__wrapped__", func)
        _wrapped[id(func)] = w
        _originals.append(func)
    return w


def _wrap_property(prop):
    """A property like `prop` whose accessors dispatch as `new.__get__` / `new.__set__`."""
    fget = None if prop.fget is None else _C._tf_wrap(prop.fget, True, 1)
    fset = None if prop.fset is None else _C._tf_wrap(prop.fset, True, 2)
    new = property(fget, fset, prop.fdel, prop.__doc__)
    for w in (fget, fset):
        if w is not None:
            _C._tf_set_owner(w, new)
    return new


def _is_ours(func):
    return (getattr(func, "__module__", None) or "").startswith("oneflow_like")


def _install_namespace(mod, public_name):
    listed = _overridable.setdefault(mod, [])
    for name, value in list(vars(mod).items()):
        if name.startswith("_"):
            continue
        if not isinstance(value, _FUNCTION_TYPES) and not _C._tf_is_wrapper(value):
            continue  # classes, modules, dtypes, callable objects
        if public_name == "oneflow_like" and name in _NOT_WRAPPED:
            continue
        if not _C._tf_is_wrapper(value) and not _is_ours(value):
            continue  # re-exported helpers (math, numpy, typing)
        binds = isinstance(value, _types.FunctionType)
        w = value if _C._tf_is_wrapper(value) else _wrap(value, binds)
        if w.__module__ == "oneflow_like._C":
            # A C++ function: pickle finds it by name here (as torch.add's module is 'torch').
            w.__module__, w.__qualname__ = public_name, name
        setattr(mod, name, w)
        _names.setdefault(w, f"{public_name}.{name}")
        if name not in _FACTORIES and w not in listed:
            listed.append(w)


def _install_tensor(Tensor):
    listed = _overridable.setdefault(Tensor, [])
    for name, value in list(vars(Tensor).items()):
        if name in _TENSOR_SKIP or (name.startswith("_") and not name.startswith("__")):
            continue
        if isinstance(value, property):
            new = _wrap_property(value)
            setattr(Tensor, name, new)
            getter = new.__get__
            listed.append(getter)
            _names[getter] = f"oneflow_like.Tensor.{name}.__get__"
            if new.fset is not None:
                _names[new.__set__] = f"oneflow_like.Tensor.{name}.__set__"
            continue
        if isinstance(value, (staticmethod, classmethod)) or not callable(value):
            continue
        if _C._tf_is_wrapper(value):
            w = value
        elif type(value).__name__ == "instancemethod":  # pybind11's C++ methods
            w = _wrap(value.__func__, True)
        else:
            w = _wrap(value, isinstance(value, _types.FunctionType))
        setattr(Tensor, name, w)
        _names[w] = f"oneflow_like.Tensor.{name}"
        listed.append(w)
    for op, method in _OPERATOR_METHODS.items():
        target = vars(Tensor).get(method)
        current = vars(Tensor).get(op)
        if target is None or current is None or not _C._tf_is_wrapper(target):
            continue
        alias = _C._tf_wrap(current._tf_func, True, 3, target)
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(alias, attr, getattr(current, attr))
        alias.__wrapped__ = current._tf_func
        setattr(Tensor, op, alias)
        listed[listed.index(current)] = alias
        _names[alias] = _names.pop(current)


def _install(flow):
    """Wraps the public API (called once, last, by oneflow_like/__init__.py)."""
    Tensor = flow.Tensor
    for public_name in _NAMESPACES:
        _install_namespace(sys.modules[public_name], public_name)
    _install_tensor(Tensor)
    Tensor.__torch_function__ = classmethod(_tensor_torch_function)
    Tensor._make_subclass = staticmethod(_make_subclass)
    _C.DisableTorchFunction = DisableTorchFunction
    _C.DisableTorchFunctionSubclass = DisableTorchFunctionSubclass
    _C._tf_set_handler(_handle_call)


@functools.lru_cache(None)
def get_default_nowrap_functions():
    """torch.overrides.get_default_nowrap_functions: accessors whose results Tensor's default
    __torch_function__ returns unwrapped (their identity matters: a.grad is a.grad)."""
    from . import Tensor

    return {getattr(Tensor, n).__get__ for n in ("grad", "_base") if n in vars(Tensor)}


@functools.lru_cache(None)
def get_ignored_functions():
    """torch.overrides.get_ignored_functions: public callables that a __torch_function__
    argument cannot override (they take no tensor, or are part of the protocol)."""
    import oneflow_like as flow

    out = {getattr(flow, n) for n in _NOT_WRAPPED | _FACTORIES if hasattr(flow, n)}
    for n in ("__new__", "__torch_function__", "as_subclass"):
        out.add(getattr(flow.Tensor, n))
    out.add(flow.Tensor._make_subclass)
    return out


def get_overridable_functions():
    """torch.overrides.get_overridable_functions: namespace -> the callables in it that
    dispatch to __torch_function__ (for Tensor properties, their __get__)."""
    return {k: list(v) for k, v in _overridable.items()}


def resolve_name(f):
    """torch.overrides.resolve_name: 'oneflow_like.add', 'oneflow_like.Tensor.add', ... or
    None for a callable that is not overridable."""
    return _names.get(f)


def is_tensor_method_or_property(func):
    """torch.overrides.is_tensor_method_or_property: whether `func` (as __torch_function__
    receives it) is a Tensor method, or a property's __get__."""
    import oneflow_like as flow

    return func in _overridable.get(flow.Tensor, ()) or getattr(func, "__name__", "") == "__get__"


def _dummy(func):
    """A lambda accepting what `func` accepts, returning -1."""
    target = getattr(func, "__wrapped__", func)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return lambda *args, **kwargs: -1

    def dummy(*args, **kwargs):
        sig.bind(*args, **kwargs)
        return -1

    dummy.__signature__ = sig
    return dummy


def get_testing_overrides():
    """torch.overrides.get_testing_overrides: overridable callable -> a dummy with the same
    signature (where Python knows it) that returns -1, for testing __torch_function__ types."""
    out = {}
    for funcs in _overridable.values():
        for f in funcs:
            out[f] = _dummy(f)
    return out
