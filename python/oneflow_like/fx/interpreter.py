"""fx.Interpreter (runs a GraphModule node by node; override a method per op to change how a kind
of node runs) and fx.Transformer (the same walk, building a new GraphModule)."""
from .graph import Graph
from .graph_module import GraphModule
from .node import map_arg
from .proxy import Proxy


def _fetch(module, target):
    obj = module
    for part in str(target).split("."):
        obj = getattr(obj, part)
    return obj


class Interpreter:
    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.garbage_collect_values = garbage_collect_values
        self._last_use = {}
        for node in self.graph.nodes:
            for n in node.all_input_nodes:
                self._last_use[n] = node

    def run(self, *args, initial_env=None, enable_io_processing=True):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for n in node.all_input_nodes:
                    if self._last_use.get(n) is node:
                        self.env.pop(n, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def fetch_args_kwargs_from_env(self, n):
        return map_arg(n.args, lambda a: self.env[a]), map_arg(n.kwargs, lambda a: self.env[a])

    def placeholder(self, target, args, kwargs):
        if str(target).startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"[fx.Interpreter] expected positional argument for {target}")

    def get_attr(self, target, args, kwargs):
        return _fetch(self.module, target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return _fetch(self.module, target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]


class Transformer(Interpreter):
    """Walks the graph with Proxies into a new Graph; override call_function etc. to rewrite."""

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        from .tracer import Tracer

        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = args if args else ()
        return Proxy(self.new_graph.create_node("placeholder", target, default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, (), {})

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def transform(self):
        result = self.run(*[None] * len(self.graph.find_nodes(op="placeholder")))
        self.new_graph.output(self.tracer.create_arg(result))
        return GraphModule(self.module, self.new_graph)

    def run(self, *args, **kw):
        # Placeholders become Proxies, not the given values.
        self.env = {}
        out = None
        for node in self.graph.nodes:
            self.env[node] = self.run_node(node)
            if node.op == "output":
                out = self.env[node]
        return out
