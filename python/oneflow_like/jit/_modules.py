"""jit.trace / jit.script / jit.save / jit.load over nn.Graph and .oflx artifacts."""
import copy
import functools
import inspect
import os
import shutil
import tempfile
import warnings
import weakref

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like import nn

from ._runner import Runner, _check_traced_output


class TracerWarning(Warning):
    """Warned by jit.trace when the compiled trace does not reproduce eager results."""


class TracingCheckError(Exception):
    pass


def _as_args(example_inputs, who):
    if isinstance(example_inputs, _C.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    raise TypeError(
        f"[{who}] example_inputs must be a Tensor or a tuple of Tensors, "
        f"got {type(example_inputs).__name__}"
    )


def _spec_of(args):
    """Shapes, dtypes and devices of `args`' tensors (other values kept as they are)."""
    return tuple(
        ("T", tuple(a.shape), a.dtype, a.device) if isinstance(a, _C.Tensor) else ("V", a)
        for a in args
    )


def _examples_from(spec):
    return tuple(flow.zeros(s[1], dtype=s[2], device=s[3]) if s[0] == "T" else s[1] for s in spec)


def _describe_spec(spec):
    return ", ".join(
        f"Tensor{list(s[1])} {s[2]} {s[3]}" if s[0] == "T" else repr(s[1]) for s in spec
    )


def _export_to(graph, args, f, who):
    """flow.export of `graph` for `args` to the path or binary file object `f`."""
    from oneflow_like.artifact import export

    if isinstance(f, (str, os.PathLike)):
        export(graph, args, f)
        return
    if not hasattr(f, "write"):
        raise TypeError(f"[{who}] expected a path or a binary file object, got {type(f).__name__}")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "module.oflx")
        export(graph, args, p)
        with open(p, "rb") as src:
            shutil.copyfileobj(src, f)


def _module_copy(cls, module):
    """A `cls` instance sharing `module`'s parameters, buffers and submodules (own tables)."""
    new = object.__new__(cls)
    for k, v in module.__dict__.items():
        new.__dict__[k] = copy.copy(v) if isinstance(v, (dict, set)) else v
    new.__dict__["_jit_orig"] = module
    return new


_classes = {}


def _subclass(base, module):
    key = (base, type(module))
    cls = _classes.get(key)
    if cls is None:
        cls = type(type(module).__name__, (base, type(module)), {"__module__": base.__module__})
        cls.__qualname__ = type(module).__qualname__
        _classes[key] = cls
    return cls


# ---- script ------------------------------------------------------------------------------------
class ScriptModule(nn.Module):
    """What jit.script(module) returns (and a base class for old-style script modules): the module
    itself, run as Python, so results are exactly Python's. `save` exports it through the compiler
    for the example input signature (jit.script(..., example_inputs=[...]) or the first call)."""

    def __call__(self, *args, **kwargs):
        if self.__dict__.get("_jit_example") is None and not kwargs:
            self.__dict__["_jit_example"] = _spec_of(args)
        return super().__call__(*args, **kwargs)

    @property
    def original_name(self):
        return type(self).__name__

    @property
    def code(self):
        fwd = type(self).forward
        try:
            return inspect.getsource(fwd)
        except (OSError, TypeError):
            return f"<source of {type(self).__name__}.forward unavailable>"

    def _graph_and_examples(self, who):
        spec = self.__dict__.get("_jit_example")
        if spec is None:
            raise RuntimeError(
                f"[{who}] the input shapes of {type(self).__name__} are not known, so it cannot be "
                "compiled and saved: call the scripted module once on an example input, pass "
                "jit.script(module, example_inputs=[(x,)]), or save jit.trace(module, x)"
            )
        return self.__dict__.get("_jit_orig", self), _examples_from(spec)

    def save(self, f, _extra_files=None):
        """Exports the module (in inference) to the .oflx artifact `f` through the compiler."""
        _no_extra(_extra_files, "ScriptModule.save")
        module, args = self._graph_and_examples("ScriptModule.save")
        was = module.training
        module.eval()
        try:
            _export_to(module, args, f, "ScriptModule.save")
        finally:
            module.train(was)


RecursiveScriptModule = ScriptModule


def _no_extra(extra, who):
    if extra:
        raise NotImplementedError(
            f"[{who}] _extra_files is not supported by .oflx artifacts (got {sorted(extra)})"
        )


class ScriptFunction:
    """What jit.script(function) returns: calls the Python function unchanged (same results).
    `save` exports it through the compiler for its example input signature."""

    def __init__(self, fn, example=None):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._jit_example = example

    def __call__(self, *args, **kwargs):
        if self._jit_example is None and not kwargs:
            self._jit_example = _spec_of(args)
        return self._fn(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    @property
    def code(self):
        try:
            return inspect.getsource(self._fn)
        except (OSError, TypeError):
            return f"<source of {self.__name__} unavailable>"

    @property
    def schema(self):
        return f"{self.__name__}{inspect.signature(self._fn)}"

    def save(self, f, _extra_files=None):
        _no_extra(_extra_files, "ScriptFunction.save")
        if self._jit_example is None:
            raise RuntimeError(
                f"[ScriptFunction.save] the input shapes of {self.__name__} are not known, so it "
                "cannot be compiled and saved: call it once, or save jit.trace(fn, example)"
            )
        runner = Runner(self._fn, self.__name__, graph_breaks=False)
        _export_to(runner.graph, _examples_from(self._jit_example), f, "ScriptFunction.save")

    def __repr__(self):
        return f"<ScriptFunction {self.__name__}>"


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: an nn.Module becomes a ScriptModule sharing its parameters, a function a
    ScriptFunction, both run as the Python they are (TorchScript's guarantee: the same results).
    `example_inputs` (a list of argument tuples) fixes the signature `.save` compiles for.
    Classes, ScriptModules and ScriptFunctions come back unchanged."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect", FutureWarning, stacklevel=2)
    if isinstance(obj, (ScriptModule, ScriptFunction)) or inspect.isclass(obj):
        return obj
    example = None
    if example_inputs:
        first = example_inputs[0]
        example = _spec_of(first if isinstance(first, (tuple, list)) else (first,))
    if isinstance(obj, nn.Module):
        m = _module_copy(_subclass(ScriptModule, obj), obj)
        m.__dict__["_jit_example"] = example
        return m
    if callable(obj):
        return ScriptFunction(obj, example)
    raise RuntimeError(
        f"[jit.script] cannot script a {type(obj).__name__}: expected an nn.Module, a function "
        "or a class"
    )


# ---- trace -------------------------------------------------------------------------------------
class _GraphText(str):
    """`.graph`: the HLO the trace lowered to (before optimization); str() it or print it."""

    def __repr__(self):
        return str(self)


def _graph_text(runner, optimized):
    c = runner.graph.compiled
    if c is None:
        raise RuntimeError(f"[jit] {runner.name} has not been compiled yet")
    return _GraphText(c.hlo_after if optimized else c.hlo_before)


def _check(runner, fn, args, tol, who):
    with flow.no_grad():
        compiled = runner.graph(*args)
        eager = fn(*args)
    flat_c, flat_e = [], []
    from oneflow_like.nn.graph import _flatten

    _flatten(compiled, flat_c)
    _flatten(eager, flat_e)
    if len(flat_c) != len(flat_e):
        raise TracingCheckError(
            f"[{who}] the trace returned {len(flat_c)} tensors, eager {len(flat_e)}"
        )
    for i, (c, e) in enumerate(zip(flat_c, flat_e)):
        if tuple(c.shape) != tuple(e.shape) or c.dtype != e.dtype:
            raise TracingCheckError(
                f"[{who}] output {i}: the trace gives {list(c.shape)} {c.dtype}, eager "
                f"{list(e.shape)} {e.dtype}"
            )
        if c.dtype.is_floating_point:
            ok = flow.allclose(c.double(), e.double(), rtol=tol, atol=tol)
        else:
            ok = bool(flow.equal(c, e))
        if not ok:
            diff = (c.double() - e.double()).abs().max().item()
            warnings.warn(
                f"[{who}] output nr {i} of the traced function does not match the eager result "
                f"(largest difference {diff:.3g}, tolerance {tol}); the code may be "
                "nondeterministic or depend on its input values",
                TracerWarning,
                stacklevel=3,
            )


class TracedModule(ScriptModule):
    """What jit.trace(module, ...) returns: calls run the module's compiled nn.Graph (compiled per
    input signature) when no gradient is needed, the module eagerly otherwise (jit/_runner.py);
    `explain()` counts both. `.graph` / `.code`: the HLO of the last compilation, before and after
    optimization. `save` writes an .oflx artifact for the traced example inputs."""

    def forward(self, *args, **kwargs):
        return self.__dict__["_jit_runner"](*args, **kwargs)

    @property
    def graph(self):
        return _graph_text(self.__dict__["_jit_runner"], optimized=False)

    inlined_graph = graph

    @property
    def code(self):
        return _graph_text(self.__dict__["_jit_runner"], optimized=True)

    def explain(self):
        return self.__dict__["_jit_runner"].explain()

    def _graph_and_examples(self, who):
        return self.__dict__["_jit_runner"].graph, _examples_from(self.__dict__["_jit_example"])

    def save(self, f, _extra_files=None):
        _no_extra(_extra_files, "TracedModule.save")
        graph, args = self._graph_and_examples("TracedModule.save")
        _export_to(graph, args, f, "TracedModule.save")


TopLevelTracedModule = TracedModule


class TracedFunction(ScriptFunction):
    """What jit.trace(function, ...) returns (a ScriptFunction): runs the compiled graph when no
    gradient is needed, the function eagerly otherwise; `.graph`/`.code` as TracedModule."""

    def __init__(self, fn, runner, example):
        super().__init__(fn, example)
        self._runner = runner

    def __call__(self, *args, **kwargs):
        return self._runner(*args, **kwargs)

    graph = property(lambda self: _graph_text(self._runner, optimized=False))
    code = property(lambda self: _graph_text(self._runner, optimized=True))

    def explain(self):
        return self._runner.explain()

    def save(self, f, _extra_files=None):
        _no_extra(_extra_files, "TracedFunction.save")
        _export_to(self._runner.graph, _examples_from(self._jit_example), f, "TracedFunction.save")


def _bind(fn, args, kwargs, who):
    if not kwargs:
        return args
    if not isinstance(kwargs, dict):
        raise TypeError(f"[{who}] example_kwarg_inputs must be a dict, got {type(kwargs).__name__}")
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"[{who}] example_kwarg_inputs do not fit the signature: {e}") from None
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _make_runner(fn, name, strict, who):
    return Runner(
        fn, name, graph_breaks=False, check_output=lambda o: _check_traced_output(o, strict, who)
    )


def _trace_runner(runner, fn, args, check_trace, check_inputs, tol, who):
    runner.compile(args)
    if check_trace:
        for inp in [args] + [_as_args(c, who) for c in (check_inputs or [])]:
            runner.compile(inp)
            _check(runner, fn, inp, tol, who)


def trace(
    func,
    example_inputs=None,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_kwarg_inputs=None,
    _store_inputs=True,
):
    """torch.jit.trace: traces `func` (an nn.Module's forward or a function) on `example_inputs`
    and compiles it through nn.Graph (our HLO compiler) now. The result runs the compiled graph
    whenever a call needs no gradient (see jit/_runner.py), recompiling for new input signatures.
    check_trace runs the compiled graph and eager Python on the example inputs (and check_inputs)
    and warns a TracerWarning where they differ by more than check_tolerance."""
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op")
        return func
    if isinstance(func, nn.Module):
        return trace_module(
            func,
            {"forward": example_kwarg_inputs if example_kwarg_inputs else example_inputs},
            optimize,
            check_trace,
            [{"forward": c} for c in check_inputs] if check_inputs else None,
            check_tolerance,
            strict,
            example_inputs_is_kwarg=bool(example_kwarg_inputs),
        )
    if not callable(func):
        raise TypeError(
            f"[jit.trace] expected an nn.Module or a function, got {type(func).__name__}"
        )
    who = f"jit.trace({getattr(func, '__name__', 'function')})"
    args = _as_args(example_inputs, who) if example_inputs is not None else ()
    args = _bind(func, args, example_kwarg_inputs, who)
    runner = _make_runner(func, getattr(func, "__name__", "traced"), strict, who)
    _trace_runner(runner, func, args, check_trace, check_inputs, check_tolerance, who)
    return TracedFunction(func, runner, _spec_of(args))


def trace_module(
    mod,
    inputs,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_inputs_is_kwarg=None,
    _store_inputs=True,
):
    """torch.jit.trace_module: `inputs` maps method names to example inputs; each method is
    traced and compiled (forward as the module's call, the others as attributes)."""
    if not isinstance(mod, nn.Module):
        raise AttributeError("[jit.trace_module] expected an nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("[jit.trace_module] inputs must be a dict of method name -> inputs")
    traced = _module_copy(_subclass(TracedModule, mod), mod)
    for hooks in ("_forward_pre_hooks", "_forward_hooks"):
        traced.__dict__[hooks] = type(traced.__dict__[hooks])()  # run inside the trace
    for name, example in inputs.items():
        who = f"jit.trace({type(mod).__name__}.{name})"
        method = mod if name == "forward" else getattr(mod, name)
        if example_inputs_is_kwarg:  # keyword examples, bound to positions in the signature
            args = _bind(method.forward if name == "forward" else method, (), example, who)
        else:
            args = _as_args(example if example is not None else (), who)
        runner = _make_runner(method, f"{type(mod).__name__}", strict, who)
        checks = [c[name] for c in check_inputs if name in c] if check_inputs else None
        _trace_runner(runner, method, args, check_trace, checks, check_tolerance, who)
        if name == "forward":
            traced.__dict__["_jit_runner"] = runner
            traced.__dict__["_jit_example"] = _spec_of(args)
        else:
            traced.__dict__[name] = TracedFunction(getattr(mod, name), runner, _spec_of(args))
    if "_jit_runner" not in traced.__dict__:
        raise RuntimeError("[jit.trace_module] inputs must include 'forward'")
    return traced


# ---- save / load -------------------------------------------------------------------------------
def save(m, f, _extra_files=None):
    """torch.jit.save: writes a traced or scripted module/function to `f` (a path or binary file)
    as an .oflx artifact compiled through nn.Graph."""
    if not isinstance(m, (ScriptModule, ScriptFunction)):
        raise TypeError(
            f"[jit.save] expected a ScriptModule or ScriptFunction (from jit.trace or "
            f"jit.script), got {type(m).__name__}"
        )
    m.save(f, _extra_files)


class LoadedScriptModule(ScriptModule):
    """What jit.load returns: a module whose forward runs the loaded .oflx graph; state_dict() and
    named_parameters() name the artifact's tensors as the traced module did."""

    def __init__(self, loaded):
        super().__init__()
        self.__dict__["_loaded"] = loaded
        self.__dict__["_jit_example"] = None
        self.eval()

    def forward(self, *args, **kwargs):
        if kwargs:
            raise TypeError(
                f"[jit.load] {self._loaded.path}: the loaded graph takes positional tensors "
                f"({', '.join(self._loaded.input_names)}), got keyword arguments {sorted(kwargs)}"
            )
        return self._loaded(*args)

    @staticmethod
    def _name(n):
        return n[len("model.") :] if n.startswith("model.") else n

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return iter([(prefix + self._name(n), t) for n, t in self._loaded.named_parameters()])

    def parameters(self, recurse=True):
        return iter(self._loaded.parameters())

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return iter([(prefix + self._name(n), t) for n, t in self._loaded.named_buffers()])

    def buffers(self, recurse=True):
        return iter(t for _, t in self._loaded.named_buffers())

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        out = destination if destination is not None else {}
        for n, t in self._loaded.state_dict().items():
            out[prefix + self._name(n)] = t
        return out

    @property
    def code(self):
        return self._loaded.info

    def save(self, f, _extra_files=None):
        _no_extra(_extra_files, "jit.save")
        if isinstance(f, (str, os.PathLike)):
            shutil.copyfile(self._loaded.path, f)
        else:
            with open(self._loaded.path, "rb") as src:
                shutil.copyfileobj(src, f)

    def __repr__(self):
        return f"RecursiveScriptModule({self._loaded!r})"


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: reads an .oflx artifact written by jit.save (a path or binary file
    object) and returns a module running it. map_location must name the device it was compiled
    for (compiled graphs do not move); a missing or corrupt file raises naming its path."""
    from oneflow_like.artifact import LoadedGraph

    _no_extra(_extra_files, "jit.load")
    tmp = None
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.exists(path):
            raise FileNotFoundError(f"[jit.load] {path}: no such file")
        if os.path.isdir(path):
            raise IsADirectoryError(f"[jit.load] {path}: is a directory, not an .oflx file")
    elif hasattr(f, "read"):
        tmp = tempfile.NamedTemporaryFile(suffix=".oflx", delete=False)
        with tmp:
            shutil.copyfileobj(f, tmp)
        path = tmp.name
    else:
        raise TypeError(
            f"[jit.load] expected a path or a binary file object, got {type(f).__name__}"
        )
    try:
        loaded = LoadedGraph(path)
    except (ValueError, RuntimeError) as e:
        if tmp is not None:
            os.unlink(path)
        msg = str(e)
        if path not in msg:
            msg = f"{path}: {msg}"
        raise type(e)(f"[jit.load] {msg}") from e
    if map_location is not None:
        want = flow.device(map_location) if not callable(map_location) else None
        have = {str(t.device) for t in loaded._art.tensors}
        if want is not None and have and have != {str(want)}:
            raise RuntimeError(
                f"[jit.load] {path} was compiled for {sorted(have)}; a compiled graph cannot be "
                f"mapped to {want}: trace and save the model on that device"
            )
    module = LoadedScriptModule(loaded)
    if tmp is not None:  # the copy of a file object's bytes lives as long as the module
        weakref.finalize(module, os.unlink, path)
    return module


# ---- freezing ----------------------------------------------------------------------------------
def _frozen_copy(mod, who):
    if not isinstance(mod, ScriptModule) or isinstance(mod, LoadedScriptModule):
        raise RuntimeError(
            f"[{who}] expects a ScriptModule (from jit.script or jit.trace), got "
            f"{type(mod).__name__}: script or trace your nn.Module first"
        )
    if mod.training:
        raise RuntimeError(
            f"[{who}] freezing is only implemented for modules in eval mode: call .eval() first"
        )
    orig = copy.deepcopy(mod.__dict__["_jit_orig"]).eval()
    for p in orig.parameters():
        p.requires_grad_(False)
    if isinstance(mod, TracedModule):
        examples = _examples_from(mod.__dict__["_jit_example"])
        return trace(orig, examples, check_trace=False, strict=False)
    frozen = script(orig)
    frozen.__dict__["_jit_example"] = mod.__dict__.get("_jit_example")
    return frozen


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze: a copy of the (eval-mode) scripted or traced module whose parameters are
    constants (detached copies, requires_grad False), so a traced module always runs its graph."""
    return _frozen_copy(mod, "jit.freeze")


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: eval() then freeze()."""
    return _frozen_copy(mod.eval(), "jit.optimize_for_inference")
