"""Module, Parameter and the containers (Sequential, ModuleList, ModuleDict), torch.nn-style.

A Module owns three ordered name tables: _parameters, _buffers and _modules. Attribute access to
those names goes through __getattr__ (only reached when normal lookup fails), assignment through
__setattr__, which files Parameters, registered buffers and Modules into the right table.
"""
from collections import OrderedDict, namedtuple
import itertools

import oneflow_like as flow
from oneflow_like.nn.modules.module_hooks import (
    BackwardHooksMixin,
    _global_backward_hooks,
    _global_backward_pre_hooks,
)


class Parameter(flow.Tensor):
    """A leaf tensor that a Module registers as trainable; shares storage with `data`."""

    # As torch's: ops on a Parameter return plain Tensors, and it takes no part in dispatch.
    __torch_function__ = flow._C._disabled_torch_function_impl

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = flow.empty(0)
        flow.Tensor.__init__(self, data.detach())  # Tensor(other) aliases other's storage
        self.requires_grad = requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            with flow.no_grad():
                memo[id(self)] = type(self)(self.detach().clone(), self.requires_grad)
        return memo[id(self)]


class Buffer(flow.Tensor):
    """torch.nn.Buffer (PyTorch 2.5): a tensor that, assigned to a module attribute, is
    registered as a buffer (persistent: saved in the state_dict, default True)."""

    __torch_function__ = flow._C._disabled_torch_function_impl

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            data = flow.empty(0)
        flow.Tensor.__init__(self, data.detach())
        self.persistent = persistent


# torch.nn.modules.module's global hooks (register_module_forward_pre_hook, ...): every module's
# call runs them before its own hooks of the same kind. Their handles' ids share the counter of
# the per-module hooks, so the with_kwargs / always_call sets below can tell them apart.
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_hooks_with_kwargs = set()
_global_hooks_always_called = set()
_global_parameter_registration_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()


def _registered(table, module, name, value):
    """Runs the global registration hooks of one kind: each may return a replacement value."""
    for hook in list(table.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _RemovableHandle:
    """Returned by the register_*_hook methods: remove() unregisters the hook (also on leaving
    a `with` block)."""

    _ids = itertools.count()

    def __init__(self, table, *extra_tables):
        self._tables = (table,) + extra_tables
        self.id = next(self._ids)

    def remove(self):
        for t in self._tables:
            if isinstance(t, set):
                t.discard(self.id)
            else:
                t.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


_EXTRA_STATE = "_extra_state"


def _addindent(s, n):
    lines = s.split("\n")
    return lines[0] + "".join("\n" + " " * n + line for line in lines[1:])


class Module(BackwardHooksMixin):
    """Base class of every layer. Subclasses call super().__init__() first, then define forward."""

    def __init__(self):
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_hooks_with_kwargs"] = set()
        d["_hooks_always_called"] = set()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        backward_hooks = self._has_backward_hooks()
        glob = _global_forward_pre_hooks or _global_forward_hooks
        if not (self._forward_pre_hooks or self._forward_hooks or backward_hooks or glob):
            return self.forward(*args, **kwargs)
        pre = itertools.chain(_global_forward_pre_hooks.items(), self._forward_pre_hooks.items())
        post = list(itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()))
        for hid, hook in list(pre):
            if self._with_kwargs(hid):
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            "forward pre-hook registered with with_kwargs=True must return "
                            f"None or a tuple (new_args, new_kwargs), got {res!r}"
                        )
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw = self._backward_hook_call() if backward_hooks else None
        if bw is not None:
            args = bw.setup_inputs(args)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            for hid, hook in post:  # always_call hooks still run
                if hid in self._hooks_always_called or hid in _global_hooks_always_called:
                    try:
                        self._run_forward_hook(hid, hook, args, kwargs, None)
                    except Exception:
                        pass
            raise
        for hid, hook in post:
            res = self._run_forward_hook(hid, hook, args, kwargs, out)
            if res is not None:
                out = res
        return bw.setup_outputs(out) if bw is not None else out

    def _with_kwargs(self, hid):
        return hid in self._hooks_with_kwargs or hid in _global_hooks_with_kwargs

    def _run_forward_hook(self, hid, hook, args, kwargs, out):
        if self._with_kwargs(hid):
            return hook(self, args, kwargs, out)
        return hook(self, args, out)

    def _add_hook(self, table, hook, prepend, with_kwargs, always_call=False):
        d = self.__dict__
        d.setdefault("_hooks_with_kwargs", set())
        d.setdefault("_hooks_always_called", set())
        sets = (self._hooks_with_kwargs, self._hooks_always_called)
        return _add_hook_to(table, sets, hook, prepend, with_kwargs, always_call)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args (with_kwargs: hook(module, args, kwargs) ->
        None or (args, kwargs)); runs before forward, first if prepend. Returns a handle whose
        remove() unregisters it."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or a new output (with_kwargs: hook(module, args,
        kwargs, output)); runs after forward, first if prepend, and with always_call also when
        forward raised. Returns a handle whose remove() unregisters it."""
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs, always_call)

    # ---- registration -----------------------------------------------------------------------

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(flow.nn.Parameter or None required)"
            )
        self._parameters[name] = _registered(
            _global_parameter_registration_hooks, self, name, param
        )

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer")
        if tensor is not None and not isinstance(tensor, flow.Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(flow.Tensor or None required)"
            )
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, "module")
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(d, name, ("_buffers", "_modules"))
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(flow.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(d, name, ("_parameters", "_buffers"))
            self._modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(flow.nn.Module or None expected)"
                )
            d["_modules"][name] = None
        elif isinstance(value, Buffer):
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            _remove_from(d, name, ("_parameters", "_modules"))
            self.register_buffer(name, value, persistent=value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, flow.Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(flow.Tensor or None expected)"
                )
            d["_buffers"][name] = _registered(_global_buffer_registration_hooks, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            t = self.__dict__[table]
            if name in t:
                del t[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = (
            list(super().__dir__())
            + list(self._parameters)
            + list(self._buffers)
            + list(self._modules)
        )
        return sorted(set(keys))

    # ---- traversal --------------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, table, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, m in mods:
            for name, v in getattr(m, table).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + name, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        mod = self
        for item in target.split(".") if target else []:
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no submodule `{item}`")
            mod = mod._modules[item]
        return mod

    def set_submodule(self, target, module, strict=False):
        """torch.nn.Module.set_submodule: replaces (or, unless strict, adds) the submodule at the
        dotted path `target`; every parent on the path must exist."""
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module).__name__}")
        *path, last = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and last not in parent._modules:
            raise AttributeError(f"{type(parent).__name__} has no attribute `{last}`")
        if last in parent.__dict__ and last not in parent._modules:
            raise AttributeError(f"`{last}` is not an nn.Module")
        setattr(parent, last, module)

    # ---- modes, grads, apply ----------------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with flow.no_grad():
                    g.zero_()

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, _memo=None):
        """Replaces every parameter and buffer t by fn(t) (a new Parameter keeps requires_grad);
        a tensor shared by several modules (tied weights) stays shared."""
        memo = {} if _memo is None else _memo
        for m in self.children():
            m._apply(fn, memo)
        with flow.no_grad():
            for name, p in self._parameters.items():
                if p is None:
                    continue
                if id(p) in memo:
                    self._parameters[name] = memo[id(p)][1]
                    continue
                new = fn(p)
                if new is not p:
                    grad = p.grad
                    new = Parameter(new, p.requires_grad)
                    if grad is not None:
                        new.grad = fn(grad)
                    self._parameters[name] = new
                memo[id(p)] = (p, new)  # p kept alive so that its id stays unique
            for name, b in self._buffers.items():
                if b is None:
                    continue
                if id(b) not in memo:
                    memo[id(b)] = (b, fn(b))
                self._buffers[name] = memo[id(b)][1]
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor); dtype applies to floating tensors."""
        device, dtype = _parse_to(args, kwargs)

        def convert(t):
            if dtype is not None and _is_floating(t) and t.dtype != dtype:
                t = t.to(dtype)
            if device is not None:
                t = t.to(device)
            return t

        return self._apply(convert)

    def cuda(self, device=None):
        return self.to(
            "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
        )

    def cpu(self):
        return self.to("cpu")

    def float(self):
        return self.to(flow.float32)

    def double(self):
        return self.to(flow.float64)

    def half(self):
        return self.to(flow.float16)

    def bfloat16(self):
        return self.to(flow.bfloat16)

    def type(self, dst_type):
        """Casts every parameter and buffer (integer ones included, as torch) to dst_type."""
        return self._apply(lambda t: t.to(dst_type))

    def to_empty(self, *, device, recurse=True):
        """Moves the parameters and buffers to `device` without copying their values (new,
        uninitialized storage of the same shapes and dtypes)."""
        if not recurse:
            saved = self.__dict__["_modules"]
            self.__dict__["_modules"] = OrderedDict()
        try:
            return self._apply(lambda t: flow.empty_like(t, device=device))
        finally:
            if not recurse:
                self.__dict__["_modules"] = saved

    def share_memory(self):
        """Moves every parameter, gradient and buffer into shared memory (Tensor.share_memory_),
        so processes this module is sent to update the same tensors (Hogwild). Returns self."""
        for t in list(self.parameters()) + list(self.buffers()):
            t.share_memory_()
            if t.grad is not None:
                t.grad.share_memory_()
        return self

    # ---- state dict -------------------------------------------------------------------------

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def get_extra_state(self):
        """Override (with set_extra_state) to put any picklable object in the state_dict, under
        the key `_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template"
            "=bug-report.yml to report this bug."
        )

    def set_extra_state(self, state):
        """Override (with get_extra_state) to restore what get_extra_state returned."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template"
            "=bug-report.yml to report this bug."
        )

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict on this module (also when
        it is loaded as a submodule); it may edit incompatible_keys.missing_keys /
        unexpected_keys in place, before strict checks them. Must return None."""
        table = self.__dict__.setdefault("_load_state_dict_post_hooks", OrderedDict())
        h = _RemovableHandle(table)
        table[h.id] = hook
        return h

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies matching entries in place (assign=True: the module takes the given tensors
        themselves, as Parameters where it had Parameters). strict: any missing or unexpected
        key raises RuntimeError naming them all; a shape mismatch always raises. Returns
        (missing_keys, unexpected_keys)."""
        missing, unexpected, errors = [], [], []
        keys = _IncompatibleKeys(missing, unexpected)
        self._load_tree(state_dict, "", assign, keys, errors)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ".",
                )
            if missing:
                errors.insert(
                    0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + "."
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return keys

    def _load_tree(self, state_dict, prefix, assign, keys, errors):
        """torch's order: this module's entries (missing keys, extra state, unexpected keys
        under its prefix), then its children, then its load_state_dict post hooks."""
        local = {
            n: t
            for n, t in itertools.chain(self._parameters.items(), self._buffers.items())
            if t is not None and n not in self._non_persistent_buffers
        }
        for name, dst in local.items():
            key = prefix + name
            if key not in state_dict:
                keys.missing_keys.append(key)
                continue
            src = state_dict[key]
            if not isinstance(src, flow.Tensor):
                src = flow.tensor(src)
            if tuple(src.shape) != tuple(dst.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {tuple(src.shape)} "
                    f"from checkpoint, the shape in current model is {tuple(dst.shape)}."
                )
            elif assign:
                if isinstance(dst, Parameter):
                    self._parameters[name] = (
                        src if isinstance(src, Parameter) else Parameter(src, dst.requires_grad)
                    )
                else:
                    self._buffers[name] = src
            else:
                with flow.no_grad():
                    dst.copy_(src)
        extra_key = prefix + _EXTRA_STATE
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            else:
                keys.missing_keys.append(extra_key)
        elif extra_key in state_dict:
            keys.unexpected_keys.append(extra_key)
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                first = key[len(prefix) :].split(".", 1)[0]
                if first not in self._modules and first not in local:
                    keys.unexpected_keys.append(key)
        for name, child in self._modules.items():
            if child is not None:
                child._load_tree(state_dict, prefix + name + ".", assign, keys, errors)
        for hook in list(self.__dict__.get("_load_state_dict_post_hooks", {}).values()):
            if hook(self, keys) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                    "expected to return new values, if incompatible_keys need to be "
                    "modified,it should be done inplace."
                )

    def _get_member(self, target, table, kind):
        owner_name, _, name = target.rpartition(".")
        mod = self.get_submodule(owner_name)
        members = mod.__dict__[table]
        if name not in members:
            raise AttributeError(f"{type(mod).__name__} has no {kind} `{name}`")
        return members[name]

    def get_parameter(self, target):
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target):
        return self._get_member(target, "_buffers", "buffer")

    # ---- printing ---------------------------------------------------------------------------

    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(m), 2))
        head = self._get_name() + "("
        if not lines:
            return head + ")"
        if len(lines) == 1 and not self._modules:
            return head + lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def _check_name(module, name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
    if name == "" or "." in name:
        raise KeyError(f'{kind} name can\'t be empty or contain ".", got "{name}"')
    if name in module.__dict__ and not any(
        name in module.__dict__[t] for t in ("_parameters", "_buffers", "_modules")
    ):
        raise KeyError(f"attribute '{name}' already exists")


def _remove_from(d, name, tables):
    for t in tables:
        tab = d.get(t)
        if tab is not None and name in tab:
            del tab[name]
    if name in d and name not in ("_parameters", "_buffers", "_modules"):
        del d[name]


def _is_floating(t):
    f = getattr(t, "is_floating_point", None)
    if f is not None:
        return f()
    return t.dtype in tuple(getattr(flow, n) for n in ("float16", "bfloat16", "float32", "float64"))


def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, flow.Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, int)) or type(a).__name__ == "device":
            device = a
        elif a is not None:
            dtype = a
    return device, dtype


# ---- containers ------------------------------------------------------------------------------


# The containers live in container.py (torch.nn.modules.container); importable from here too.
from oneflow_like.nn.modules.container import (  # noqa: E402,F401
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)


def _add_hook_to(table, sets, hook, prepend, with_kwargs, always_call):
    """Adds hook to table (first if prepend), its id to the with_kwargs / always_call sets of
    `sets` as asked; the handle's remove() takes it out of all three."""
    with_kwargs_ids, always_ids = sets
    h = _RemovableHandle(table, with_kwargs_ids, always_ids)
    table[h.id] = hook
    if prepend:
        table.move_to_end(h.id, last=False)
    if with_kwargs:
        with_kwargs_ids.add(h.id)
    if always_call:
        always_ids.add(h.id)
    return h


def _register_global(table, hook, prepend=False, with_kwargs=False, always_call=False):
    sets = (_global_hooks_with_kwargs, _global_hooks_always_called)
    return _add_hook_to(table, sets, hook, prepend, with_kwargs, always_call)


def register_module_forward_pre_hook(hook):
    """torch.nn.modules.module.register_module_forward_pre_hook: hook(module, args) -> None or
    new args, run by every module's call before its own pre hooks. Returns a removable handle."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) -> None or a new output (with_kwargs: hook(module, args,
    kwargs, output)), run by every module's call before its own forward hooks."""
    return _register_global(_global_forward_hooks, hook, False, with_kwargs, always_call)


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) -> None or a new grad_output, for every module's call."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) -> None or a new grad_input, for every module's
    call (before the module's own full backward hooks)."""
    return _register_global(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """Deprecated in torch; the semantics of register_module_full_backward_hook here."""
    return _register_global(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) -> None or a new buffer, run by every register_buffer."""
    return _register_global(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) -> None or a new submodule, run by every add_module."""
    return _register_global(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) -> None or a new parameter, run by every register_parameter."""
    return _register_global(_global_parameter_registration_hooks, hook)
