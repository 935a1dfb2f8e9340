"""Versioned graph artifacts (.oflx): export a compiled model once, load and run it in this or any
later release (docs/compatibility.md).

    flow.export(graph_or_module, example_inputs, "model.oflx")   # nn.Graph or nn.Module
    g = flow.load_graph("model.oflx")
    out = g(x)                       # one LaunchLazyJob; a training graph steps its optimizer
    dict(g.named_parameters())       # the artifact's tensors (over the file's mapping, no copy)

The module is stored in the versioned op set (compiler/artifact/opset.h); `target_version`
writes an older op set so older releases can load it. `python -m oneflow_like.artifact` inspects,
verifies, upgrades and downgrades files.
"""
import inspect
import json
import os

from oneflow_like import _C

OPSET_MIN, OPSET_CURRENT, FORMAT_VERSION = _C._artifact_opset()

__all__ = ["export", "load_graph", "LoadedGraph", "describe", "OPSET_MIN", "OPSET_CURRENT"]


def _graph_for(graph_or_module):
    from oneflow_like import nn

    if isinstance(graph_or_module, nn.Graph):
        return graph_or_module, graph_or_module.build
    if isinstance(graph_or_module, nn.Module):
        module = graph_or_module

        class _ModuleGraph(nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = module

            def build(self, *args):
                return self.model(*args)

        _ModuleGraph.__name__ = type(module).__name__
        return _ModuleGraph(), module.forward
    raise TypeError(
        f"[export] expected an nn.Graph or nn.Module, got {type(graph_or_module).__name__}"
    )


def _capture_names(graph, captured):
    """(name, role) of each captured tensor: module parameters and buffers by their dotted names,
    optimizer state and fed hyper-parameters by optimizer, group and parameter."""
    from oneflow_like import nn

    known = []
    for attr, value in sorted(vars(graph).items()):
        if isinstance(value, nn.Module):
            known += [(t, f"{attr}.{n}", "parameter") for n, t in value.named_parameters()]
            known += [(t, f"{attr}.{n}", "buffer") for n, t in value.named_buffers()]
    param_names = {}
    for t, n, role in known:
        if role == "parameter":
            param_names.setdefault(id(t), n)
    for i, (opt, _) in enumerate(graph._optimizers):
        for j, group in enumerate(opt.param_groups):
            for p in group["params"]:
                pname = param_names.get(id(p), f"group{j}.param{len(known)}")
                for key, value in sorted(opt.state.get(p, {}).items()):
                    if isinstance(value, _C.Tensor):
                        known.append((value, f"optimizer{i}.{pname}.{key}", "optimizer"))
            for name, t in sorted(group.get("_hp_tensors", {}).items()):
                known.append((t, f"optimizer{i}.group{j}.{name}", "hparam"))
    names, roles, used = [], [], set()
    for k, c in enumerate(captured):
        name, role = f"tensor_{k}", "buffer"
        for t, n, r in known:
            if c._same(t):
                name, role = n, r
                break
        while name in used:
            name += "_"
        used.add(name)
        names.append(name)
        roles.append(role)
    return names, roles


def _jsonable(spec):
    if spec[0] == "const":
        try:
            json.dumps(spec[1])
            return ["const", spec[1]]
        except TypeError:
            return ["const", repr(spec[1])]
    if spec[0] == "T":
        return ["T"]
    if spec[0] == "dict":
        return ["dict", [[k, _jsonable(s)] for k, s in spec[1]]]
    return [spec[0], [_jsonable(s) for s in spec[1]]]


def export(graph_or_module, example_inputs, path, target_version=None, embed_kernels=False):
    """Writes `graph_or_module` (an nn.Graph, compiled for `example_inputs` if it is not yet, or
    an nn.Module run in inference) to the .oflx file `path`, in op-set `target_version`
    (default: the current one). Tensors are written with their current values; a training graph
    also writes its optimizer state and hyper-parameters. `embed_kernels=True` also stores the
    JIT-compiled kernel library (native code, ~50-100 KB), so a loader with the same compiler
    skips compiling C++: load such files only from sources you trust."""
    args = tuple(example_inputs) if isinstance(example_inputs, (list, tuple)) else (example_inputs,)
    graph, fn = _graph_for(graph_or_module)
    entry = graph._entry(args)
    tensor_args = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
    params = []
    try:
        params = [p for p in inspect.signature(fn).parameters.values()]
        arg_names = [params[i].name if i < len(params) else f"input_{i}" for i in tensor_args]
    except (TypeError, ValueError):
        arg_names = [f"input_{i}" for i in tensor_args]
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
        arg_names = [f"input_{i}" for i in tensor_args]
    captured = _C._graph_captured(entry.compiled)
    spec = _C._ArtifactExportSpec()
    spec.input_names = arg_names
    spec.capture_names, spec.capture_roles = _capture_names(graph, captured)
    spec.training = bool(graph._optimizers)
    spec.output_names = [f"output_{i}" for i in range(_count_tensors(entry.out_spec))]
    spec.metadata = json.dumps(
        {"graph": type(graph).__name__, "out_spec": _jsonable(entry.out_spec)}, sort_keys=True
    )
    spec.target_opset = int(target_version or 0)
    spec.embed_kernels = bool(embed_kernels)
    _C._artifact_export(entry.compiled, os.fspath(path), spec)


def _count_tensors(spec):
    if spec[0] == "T":
        return 1
    if spec[0] in ("list", "tuple"):
        return sum(_count_tensors(s) for s in spec[1])
    if spec[0] == "dict":
        return sum(_count_tensors(s) for _, s in spec[1])
    return 0


def describe(path):
    """Header, signature and tensor table of `path` (raises ValueError for a bad file)."""
    _check_exists(path)
    return _C._artifact_describe(os.fspath(path))


def _check_exists(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")


class LoadedGraph:
    """A loaded artifact: call it with the graph's tensor inputs; it runs as one LaunchLazyJob
    (an inference graph returns its outputs, a training graph steps its optimizer in place and
    returns the loss). Its tensors live in the file's private mapping."""

    def __init__(self, path, install_kernels=True):
        _check_exists(path)
        self.path = os.fspath(path)
        self._art = _C._artifact_load(self.path, install_kernels)
        self.info = self._art.describe()
        meta = json.loads(self.info["metadata"] or "{}")
        self._out_spec = meta.get("out_spec", ["tuple", []])
        self._tensors = list(zip(self.info["tensors"], self._art.tensors))

    @property
    def training(self):
        return self.info["training"]

    @property
    def opset_version(self):
        return self.info["opset_version"]

    @property
    def input_names(self):
        return [v[0] for v in self.info["inputs"]]

    @property
    def output_names(self):
        return [v[0] for v in self.info["outputs"]]

    def named_parameters(self):
        return [(rec[0], t) for rec, t in self._tensors if rec[1] == "parameter"]

    def parameters(self):
        return [t for _, t in self.named_parameters()]

    def named_buffers(self):
        return [(rec[0], t) for rec, t in self._tensors if rec[1] != "parameter"]

    def state_dict(self):
        return {rec[0]: t for rec, t in self._tensors}

    def __call__(self, *inputs):
        from oneflow_like.nn.graph import _unflatten

        tensors = [a for a in inputs if isinstance(a, _C.Tensor)]
        if len(tensors) != len(self.info["inputs"]):
            raise ValueError(
                f"{self.path}: expected {len(self.info['inputs'])} tensor inputs "
                f"({', '.join(self.input_names)}), got {len(tensors)}"
            )
        outs = self._art.graph.run(tensors)
        return _unflatten(self._out_spec, iter(outs))

    def __repr__(self):
        return (
            f"LoadedGraph({self.path!r}, opset={self.opset_version}, "
            f"inputs={self.input_names}, training={self.training})"
        )


def load_graph(path, install_kernels=True):
    """Loads the .oflx artifact `path` (any op set from OPSET_MIN to OPSET_CURRENT). Kernel
    libraries embedded by `export(..., embed_kernels=True)` are installed into the JIT cache
    unless `install_kernels=False`."""
    return LoadedGraph(path, install_kernels)
