"""fx.Graph: an ordered list of Nodes, the ways to build and edit it, and its Python code."""
import builtins
import contextlib
import keyword
import math
import operator
import re

from .node import Node, map_arg

# Operators printed infix in generated code, as torch.fx prints them.
_INFIX = {
    operator.add: "{} + {}", operator.sub: "{} - {}", operator.mul: "{} * {}",
    operator.truediv: "{} / {}", operator.floordiv: "{} // {}", operator.mod: "{} % {}",
    operator.pow: "{} ** {}", operator.matmul: "{} @ {}", operator.and_: "{} & {}",
    operator.or_: "{} | {}", operator.xor: "{} ^ {}", operator.lshift: "{} << {}",
    operator.rshift: "{} >> {}", operator.eq: "{} == {}", operator.ne: "{} != {}",
    operator.lt: "{} < {}", operator.le: "{} <= {}", operator.gt: "{} > {}",
    operator.ge: "{} >= {}", operator.neg: "-{}", operator.pos: "+{}", operator.invert: "~{}",
    operator.getitem: "{}[{}]",
}  # fmt: skip

_EMPTY = object()  # a placeholder without a default
_KNOWN = {}  # id(function) -> dotted name it is reachable by ("oneflow_like.relu")


def _register_names():
    import oneflow_like as flow

    for mod, prefix in (
        (flow, "oneflow_like"),
        (flow.nn.functional, "oneflow_like.nn.functional"),
        (flow.linalg, "oneflow_like.linalg"),
        (flow.special, "oneflow_like.special"),
        (flow.fft, "oneflow_like.fft"),
    ):
        for name in dir(mod):
            if name.startswith("__"):
                continue
            f = getattr(mod, name, None)
            if callable(f) and not isinstance(f, type):
                _KNOWN.setdefault(id(f), f"{prefix}.{name}")


def _qualified_name(fn):
    if not _KNOWN:
        _register_names()
    if id(fn) in _KNOWN:
        return _KNOWN[id(fn)]
    if getattr(fn, "__module__", None) in ("_operator", "operator"):
        return f"operator.{fn.__name__}"
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return fn.__name__
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _snake(name):
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if not name or name[0].isdigit():
        name = "_" + name
    return name


class Graph:
    def __init__(self, owning_module=None, tracer_cls=None):
        self._nodes = []
        self._names = {}  # base name -> next suffix
        self._used = set()
        self._insert = None  # (node, "before"|"after") or None: append
        self.owning_module = owning_module
        self._codegen = None

    @property
    def nodes(self):
        return list(self._nodes)

    # ---- naming --------------------------------------------------------------------------
    def _unique(self, candidate):
        """A fresh name from `candidate` (snake case; suffixed _1, _2 ... when taken or when it
        would shadow a keyword, builtin, `self` or `operator`, as torch.fx names nodes)."""
        base = _snake(candidate)
        reserved = (
            keyword.iskeyword(base) or hasattr(builtins, base) or base in ("self", "operator")
        )
        name = base
        if reserved or name in self._used:
            n = self._names.get(base, 0)
            while True:
                n += 1
                name = f"{base}_{n}"
                if name not in self._used:
                    break
            self._names[base] = n
        self._used.add(name)
        return name

    # ---- building ------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        if name is None:
            if op == "call_function":
                name = getattr(target, "__name__", "fn")
            elif op in ("call_module", "get_attr"):
                name = str(target).replace(".", "_")
            elif op == "output":
                name = "output"
            else:
                name = str(target)
        node = Node(self, self._unique(name), op, target, args or (), kwargs or {}, type_expr)
        if self._insert is None:
            self._nodes.append(node)
        else:
            anchor, where = self._insert
            i = self._nodes.index(anchor) + (where == "after")
            self._nodes.insert(i, node)
            if where == "after":
                self._insert = (node, "after")
        return node

    def placeholder(self, name, type_expr=None, default_value=_EMPTY):
        args = () if default_value is _EMPTY else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    @contextlib.contextmanager
    def inserting_before(self, n=None):
        saved = self._insert
        self._insert = (n, "before") if n is not None else (self._nodes[0], "before")
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, n=None):
        saved = self._insert
        self._insert = (n, "after") if n is not None else None
        try:
            yield
        finally:
            self._insert = saved

    def node_copy(self, node, arg_transform=lambda n: n):
        """A copy of `node` (from any graph) in this one, its Node arguments mapped."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g, val_map):
        """Copies g's nodes except its output into this graph; returns the output's value."""
        for node in g._nodes:
            if node.op == "output":
                return map_arg(node.args[0], lambda n: val_map[n])
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    # ---- editing -------------------------------------------------------------------------
    def erase_node(self, to_erase):
        if to_erase.users:
            raise RuntimeError(
                f"[fx.Graph.erase_node] tried to erase node {to_erase} but it still has "
                f"{len(to_erase.users)} user(s) in the graph: {list(to_erase.users)}"
            )
        to_erase._update_args_kwargs((), {})
        self._nodes.remove(to_erase)
        self._used.discard(to_erase.name)

    def eliminate_dead_code(self):
        """Removes nodes without users (except placeholders, output and in-place methods);
        returns whether anything changed."""
        changed = False
        for node in reversed(self._nodes):
            if node.op in ("placeholder", "output") or node.users:
                continue
            if node.op == "call_method" and str(node.target).endswith("_"):
                continue  # in place: its effect is the point
            if node.op == "call_module":
                continue  # a module may have side effects (buffers, hooks)
            self.erase_node(node)
            changed = True
        return changed

    def lint(self):
        """Checks that every argument is defined before it is used and owned by this graph."""
        seen = set()
        for node in self._nodes:
            if node.graph is not self:
                raise RuntimeError(f"[fx.Graph.lint] node {node} does not belong to this graph")
            for n in node.all_input_nodes:
                if n not in seen:
                    raise RuntimeError(
                        f"[fx.Graph.lint] argument {n} of node {node} is used before it is defined"
                    )
            seen.add(node)

    def find_nodes(self, *, op, target=None):
        return [n for n in self._nodes if n.op == op and (target is None or n.target == target)]

    # ---- printing and code ---------------------------------------------------------------
    def __str__(self):
        lines = ["graph():"] + ["    " + n.format_node() for n in self._nodes]
        return "\n".join(lines)

    def print_tabular(self):
        rows = [(n.op, n.name, n._target_str(), n.args, n.kwargs) for n in self._nodes]
        head = ("opcode", "name", "target", "args", "kwargs")
        cells = [head] + [tuple(str(c) for c in r) for r in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
        fmt = "  ".join("{:<%d}" % w for w in widths)
        out = [fmt.format(*head), "  ".join("-" * w for w in widths)]
        out += [fmt.format(*r) for r in cells[1:]]
        print("\n".join(out))

    def python_code(self, root_module="self"):
        """(source of `def forward(self, ...)`, globals it needs)."""
        globs = {"operator": operator, "getattr": getattr, "inf": math.inf, "nan": math.nan}
        consts = {}

        def const(v):
            key = f"_const_{len(consts)}"
            consts[key] = v
            globs[key] = v
            return key

        def fmt(a):
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple):
                if hasattr(a, "_fields"):
                    return const(a)
                inner = ", ".join(fmt(x) for x in a)
                return f"({inner},)" if len(a) == 1 else f"({inner})"
            if isinstance(a, list):
                return "[" + ", ".join(fmt(x) for x in a) + "]"
            if isinstance(a, dict):
                return "{" + ", ".join(f"{k!r}: {fmt(v)}" for k, v in a.items()) + "}"
            if isinstance(a, slice):
                return f"slice({fmt(a.start)}, {fmt(a.stop)}, {fmt(a.step)})"
            if a is Ellipsis:
                return "..."
            if isinstance(a, float) and not math.isfinite(a):
                return "inf" if a > 0 else ("-inf" if a < 0 else "nan")
            if a is None or isinstance(a, (bool, int, float, str)):
                return repr(a)
            return const(a)

        def call_args(args, kwargs):
            parts = [fmt(a) for a in args] + [f"{k} = {fmt(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        def fn_name(fn):
            q = _qualified_name(fn)
            root = q.split(".")[0]
            if root in ("oneflow_like", "operator") or q == getattr(fn, "__name__", None):
                if root == "oneflow_like":
                    import oneflow_like

                    globs["oneflow_like"] = oneflow_like
                return q
            return const(fn)

        def module_expr(path):
            expr = root_module
            for part in str(path).split("."):
                expr = f"{expr}.{part}" if part.isidentifier() else f"getattr({expr}, {part!r})"
            return expr

        params, body = [], []
        for n in self._nodes:
            if n.op == "placeholder":
                if str(n.target).startswith("*"):
                    params.append(str(n.target))
                else:
                    default = f" = {fmt(n.args[0])}" if n.args else ""
                    params.append(f"{n.name}{default}")
            elif n.op == "get_attr":
                body.append(f"{n.name} = {module_expr(n.target)}")
            elif n.op == "call_function":
                tpl = _INFIX.get(n.target)
                if tpl is not None and not n.kwargs and tpl.count("{}") == len(n.args):
                    args = [fmt(a) for a in n.args]
                    if n.target is operator.getitem and isinstance(n.args[1], tuple):
                        args[1] = ", ".join(fmt(x) for x in n.args[1]) or "()"
                    body.append(f"{n.name} = " + tpl.format(*args))
                elif n.target is getattr and len(n.args) == 2 and isinstance(n.args[1], str):
                    body.append(f"{n.name} = {fmt(n.args[0])}.{n.args[1]}")
                else:
                    body.append(f"{n.name} = {fn_name(n.target)}({call_args(n.args, n.kwargs)})")
            elif n.op == "call_method":
                obj, rest = n.args[0], n.args[1:]
                body.append(f"{n.name} = {fmt(obj)}.{n.target}({call_args(rest, n.kwargs)})")
            elif n.op == "call_module":
                body.append(f"{n.name} = {module_expr(n.target)}({call_args(n.args, n.kwargs)})")
            elif n.op == "output":
                body.append(f"return {fmt(n.args[0])}")
        if not body or not body[-1].startswith("return"):
            body.append("return None")
        src = f"def forward(self, {', '.join(params)}):\n" if params else "def forward(self):\n"
        src = src.replace("(self, )", "(self)")
        src += "".join(f"    {line}\n" for line in body)
        return src, globs
