"""fx.Tracer / symbolic_trace: runs a module's forward on Proxies and records the Graph."""
import functools
import inspect
import sys

from .graph import Graph
from .node import map_aggregate
from .proxy import Proxy

_WRAPPED = []  # (globals dict, name) registered by fx.wrap


def wrap(fn_or_name):
    """Makes a module-level function a leaf of tracing (recorded as one call_function): call it
    at module scope with the function or its name, as torch.fx.wrap."""
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller = sys._getframe(1).f_globals
    _WRAPPED.append((caller, name))
    return fn_or_name


def _has_proxy(args, kwargs):
    found = []
    map_aggregate((args, kwargs), lambda x: found.append(1) if isinstance(x, Proxy) else None)
    return bool(found)


def _proxy_of(args, kwargs):
    out = []
    map_aggregate((args, kwargs), lambda x: out.append(x) if isinstance(x, Proxy) else None)
    return out[0]


class Tracer:
    def __init__(self, autowrap_modules=(), autowrap_functions=(), param_shapes_constant=False):
        self.autowrap_modules = tuple(autowrap_modules)
        self.autowrap_functions = tuple(autowrap_functions)
        self.graph = None
        self.root = None

    # ---- hooks a subclass may override (as torch.fx.Tracer) ------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        from oneflow_like import nn

        mod = type(m).__module__
        return (mod.startswith("oneflow_like.nn") or mod.startswith("torch.nn")) and not isinstance(
            m, (nn.Sequential, nn.ModuleList, nn.ModuleDict)
        )

    def path_of_module(self, mod):
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("[fx] module is not installed as a submodule of the traced root")

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def create_arg(self, a):
        return map_aggregate(a, lambda x: x.node if isinstance(x, Proxy) else x)

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.create_node(
            kind, target, self.create_arg(tuple(args)), self.create_arg(dict(kwargs)), name,
            type_expr,
        )  # fmt: skip
        return Proxy(node, self)

    # ---- tracing -------------------------------------------------------------------------
    def trace(self, root, concrete_args=None):
        from oneflow_like import nn

        if isinstance(root, nn.Module):
            self.root, fn = root, type(root).forward
        else:
            self.root, fn = nn.Module(), root
        self.graph = Graph()
        concrete_args = dict(concrete_args or {})
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if isinstance(root, nn.Module):
            params = params[1:]  # self
        args = [root] if isinstance(root, nn.Module) else []
        kwargs = {}
        for p in params:
            if p.name in concrete_args:
                val = concrete_args[p.name]
            elif p.kind == p.VAR_POSITIONAL:
                raise NotImplementedError(
                    "[fx.symbolic_trace] *args in forward are not supported; name the inputs"
                )
            elif p.kind == p.VAR_KEYWORD:
                continue
            else:
                default = () if p.default is p.empty else (p.default,)
                val = Proxy(self.graph.create_node("placeholder", p.name, default), self)
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = val
            else:
                args.append(val)
        with _Patcher(self):
            out = fn(*args, **kwargs)
        self.graph.output(self.create_arg(out))
        return self.graph


class _Patcher:
    """The functions, operators and module hooks swapped in while a trace runs."""

    def __init__(self, tracer):
        self.tracer, self.saved = tracer, []

    def _set(self, obj, name, value):
        self.saved.append((obj, name, obj.__dict__.get(name, _MISSING) if isinstance(obj, type)
                           else getattr(obj, name)))  # fmt: skip
        setattr(obj, name, value)

    def _wrap_fn(self, fn):
        tracer = self.tracer

        @functools.wraps(fn)
        def traced(*args, **kwargs):
            if _has_proxy(args, kwargs):
                return tracer.create_proxy("call_function", fn, args, kwargs)
            return fn(*args, **kwargs)

        traced.__fx_original__ = fn
        return traced

    def __enter__(self):
        import oneflow_like as flow
        from oneflow_like import nn

        tracer = self.tracer
        mods = [flow, flow.nn.functional, flow.linalg, flow.special, flow.fft]
        mods += list(tracer.autowrap_modules)
        for mod in mods:
            for name in list(vars(mod)):
                f = getattr(mod, name)
                if name.startswith("_") or isinstance(f, type) or not callable(f):
                    continue
                if inspect.ismodule(f) or name in ("no_grad", "enable_grad", "is_tensor"):
                    continue
                self._set(mod, name, self._wrap_fn(f))
        for g, name in _WRAPPED:
            if name in g:
                self._set_dict(g, name, self._wrap_fn(g[name]))
        for fn in tracer.autowrap_functions:
            g = fn.__globals__
            if g.get(fn.__name__) is fn:
                self._set_dict(g, fn.__name__, self._wrap_fn(fn))
        # Tensors' binary operators yield to a Proxy on the right (x.__radd__ records it).
        tensor = flow.Tensor
        for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
                   "or", "xor", "eq", "ne", "lt", "le", "gt", "ge"):  # fmt: skip
            name = f"__{op}__"
            orig = getattr(tensor, name, None)
            if orig is None:
                continue

            def yielding(self, other, _orig=orig):
                if isinstance(other, Proxy):
                    return NotImplemented
                return _orig(self, other)

            self._set(tensor, name, yielding)
        # Submodule calls and parameter/buffer reads.
        module_call = nn.Module.__call__
        module_getattr = nn.Module.__getattr__
        params = {}
        for name, p in tracer.root.named_parameters():
            params.setdefault(id(p), name)
        for name, b in tracer.root.named_buffers():
            params.setdefault(id(b), name)
        cache = {}

        def call(mod, *args, **kwargs):
            return tracer.call_module(mod, lambda *a, **k: module_call(mod, *a, **k), args, kwargs)

        def getattr_(mod, name):
            v = module_getattr(mod, name)
            qual = params.get(id(v)) if isinstance(v, flow.Tensor) else None
            if qual is None:
                return v
            if qual not in cache:
                cache[qual] = tracer.create_proxy("get_attr", qual, (), {})
            return cache[qual]

        self._set(nn.Module, "__call__", call)
        self._set(nn.Module, "__getattr__", getattr_)
        return self

    def _set_dict(self, d, name, value):
        self.saved.append((d, name, d[name]))
        d[name] = value

    def __exit__(self, *exc):
        for obj, name, old in reversed(self.saved):
            if isinstance(obj, dict):
                obj[name] = old
            elif old is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, old)
        return False


_MISSING = object()


def symbolic_trace(root, concrete_args=None):
    """A GraphModule of root's forward (or of a function), traced with Proxies."""
    from .graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if not inspect.isfunction(root) else root.__name__
    return GraphModule(tracer.root, graph, name)
