"""fx.GraphModule: an nn.Module whose forward is a Graph's generated Python code."""
import copy

from oneflow_like import nn

from .graph import Graph


def _copy_attr(src, dst, qualname):
    """dst gets src's attribute at `qualname` (submodules made along the path)."""
    *path, last = qualname.split(".")
    for part in path:
        s, d = getattr(src, part), getattr(dst, part, None)
        if d is None or d is s:
            d = nn.Module()
            setattr(dst, part, d)
        src, dst = s, d
    v = getattr(src, last)
    if isinstance(v, nn.Parameter):
        dst.register_parameter(last, v)
    elif isinstance(v, nn.Module):
        setattr(dst, last, v)
    elif last in getattr(src, "_buffers", {}):
        dst.register_buffer(last, v)
    else:
        setattr(dst, last, v)


class GraphModule(nn.Module):
    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {})
        if isinstance(root, nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for name, v in root.items():
                _copy_attr(_DictRoot(root), self, name)
        self.graph = graph

    @property
    def graph(self):
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise TypeError(f"[GraphModule] expected an fx.Graph, got {type(g).__name__}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    def recompile(self):
        """Regenerates forward from the graph (after editing it)."""
        src, globs = self.graph.python_code("self")
        ns = dict(globs)
        exec(compile(src, f"<fx GraphModule {type(self).__name__}>", "exec"), ns)  # noqa: S102
        self.__dict__["_code"] = src
        type(self).forward = ns["forward"]
        return src

    @property
    def code(self):
        return self.__dict__["_code"]

    def print_readable(self, print_output=True):
        text = f"class {type(self).__name__}(oneflow_like.nn.Module):\n"
        text += "".join("    " + line + "\n" for line in self.code.splitlines())
        if print_output:
            print(text)
        return text

    def __deepcopy__(self, memo):
        root = nn.Module()
        root.__dict__.update(
            copy.deepcopy({k: v for k, v in self.__dict__.items() if k != "_graph"}, memo)
        )
        g = Graph()
        out = g.graph_copy(self.graph, {})
        g.output(out)
        return GraphModule(root, g, type(self).__name__)

    def __str__(self):
        return super().__str__() + "\n\n" + self.code


class _DictRoot:
    def __init__(self, d):
        self._d = d

    def __getattr__(self, name):
        return self._d[name]
