"""fx.Proxy: the stand-in value a traced forward computes with; every operation on it records a
Node in the tracer's graph."""
import operator


class TraceError(ValueError):
    pass


class Proxy:
    def __init__(self, node, tracer=None):
        self.node, self.tracer = node, tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can be "
            "traced, and check out the Proxy docstring for help troubleshooting Proxy iteration "
            "errors"
        )

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self):
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call fx.wrap('len') at module scope"
        )

    def __index__(self):
        raise TraceError("symbolically traced variables cannot be used as indices")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})


class Attribute(Proxy):
    """proxy.attr: a getattr node made on first use, or a method call when called."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(op):
    def fwd(self, other):
        return self.tracer.create_proxy("call_function", op, (self, other), {})

    def rev(self, other):
        return self.tracer.create_proxy("call_function", op, (other, self), {})

    return fwd, rev


for _name, _op in (
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
    ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
    ("pow", operator.pow), ("matmul", operator.matmul), ("and", operator.and_),
    ("or", operator.or_), ("xor", operator.xor), ("lshift", operator.lshift),
    ("rshift", operator.rshift),
):  # fmt: skip
    _f, _r = _binary(_op)
    setattr(Proxy, f"__{_name}__", _f)
    setattr(Proxy, f"__r{_name}__", _r)

for _name, _op in (
    ("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le),
    ("gt", operator.gt), ("ge", operator.ge), ("getitem", operator.getitem),
):  # fmt: skip
    setattr(Proxy, f"__{_name}__", _binary(_op)[0])

for _name, _op in (("neg", operator.neg), ("pos", operator.pos), ("invert", operator.invert)):

    def _unary(self, _op=_op):
        return self.tracer.create_proxy("call_function", _op, (self,), {})

    setattr(Proxy, f"__{_name}__", _unary)
Proxy.__hash__ = object.__hash__
