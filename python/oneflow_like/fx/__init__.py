"""flow.fx (torch.fx): symbolic tracing of nn.Modules into a Graph of Nodes, GraphModule (the
graph as generated Python code, runnable and editable), and the Interpreter/Transformer that walk a
graph node by node.

How tracing works here: PyTorch's tracer intercepts `torch.*` calls through __torch_function__;
our functions are C++ bindings, so while `symbolic_trace` runs, the public functions of
`oneflow_like`, `oneflow_like.nn.functional`, `linalg`, `special` and `fft` are replaced by
wrappers that record a call_function node when an argument is a Proxy (and call through
otherwise), tensors' binary operators step aside for Proxies, `nn.Module.__call__` records leaf
modules (ours, except containers) as call_module, and module attributes that are parameters or
buffers become get_attr nodes. Functions bound by name before tracing (`from torch import relu`)
are not seen: call them through their module, or list them in `autowrap_functions` / `fx.wrap`.
"""
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from . import subgraph_rewriter  # noqa: E402,F401  (torch.fx.subgraph_rewriter)
from .subgraph_rewriter import replace_pattern  # noqa: F401
from .proxy import Proxy, TraceError
from .tracer import Tracer, symbolic_trace, wrap

__all__ = [
    "symbolic_trace", "Tracer", "Graph", "GraphModule", "Node", "Proxy", "Interpreter",
    "Transformer", "wrap", "map_arg", "TraceError",
]  # fmt: skip
