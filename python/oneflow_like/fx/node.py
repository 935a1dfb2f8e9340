"""fx.Node: one operation of a Graph (placeholder, get_attr, call_function, call_method,
call_module, output), its arguments (Nodes or constants) and its users."""

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def map_aggregate(a, fn):
    """fn applied to every leaf of nested tuples/lists/dicts/slices."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a, fn):
    """fn applied to every Node inside the argument structure `a`."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


class Node:
    def __init__(self, graph, name, op, target, args, kwargs, type_expr=None):
        if op not in _OPS:
            raise ValueError(f"[fx.Node] op must be one of {_OPS}, got {op!r}")
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.type = type_expr
        self.users = {}
        self.meta = {}
        self._args, self._kwargs = (), {}
        self._input_nodes = {}
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # ---- arguments and users -------------------------------------------------------------
    def _update_args_kwargs(self, args, kwargs):
        for n in self._input_nodes:
            n.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        map_arg((args, kwargs), lambda n: self._input_nodes.setdefault(n, None))
        for n in self._input_nodes:
            n.users.setdefault(self, None)

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    def replace_all_uses_with(self, replace_with):
        """Every user of this node reads `replace_with` instead; returns those users."""
        users = list(self.users)
        for u in users:
            u._update_args_kwargs(
                map_arg(u.args, lambda n: replace_with if n is self else n),
                map_arg(u.kwargs, lambda n: replace_with if n is self else n),
            )
        return users

    def replace_input_with(self, old, new):
        self._update_args_kwargs(
            map_arg(self.args, lambda n: new if n is old else n),
            map_arg(self.kwargs, lambda n: new if n is old else n),
        )

    # ---- position in the graph -----------------------------------------------------------
    @property
    def next(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i + 1] if i + 1 < len(nodes) else None

    @property
    def prev(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i - 1] if i > 0 else None

    def prepend(self, x):
        """Moves node x right before this one."""
        self.graph._nodes.remove(x)
        self.graph._nodes.insert(self.graph._nodes.index(self), x)

    def append(self, x):
        """Moves node x right after this one."""
        self.graph._nodes.remove(x)
        self.graph._nodes.insert(self.graph._nodes.index(self) + 1, x)

    # ---- printing ------------------------------------------------------------------------
    def _target_str(self):
        from .graph import _qualified_name

        return _qualified_name(self.target) if self.op == "call_function" else repr(self.target)

    def format_node(self):
        if self.op == "placeholder":
            return (
                f"%{self.name} : [num_users={len(self.users)}] = placeholder[target={self.target}]"
            )
        if self.op == "output":
            return f"return {_fmt(self.args[0])}"
        return (
            f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={self._target_str()}]"
            f"(args = {_fmt(self.args)}, kwargs = {_fmt(self.kwargs)})"
        )

    def __repr__(self):
        return self.name


def _fmt(a):
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple):
        inner = ", ".join(_fmt(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in a.items()) + "}"
    return repr(a)
