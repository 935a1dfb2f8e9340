"""flow.compile (torch.compile) and flow.compiler (torch.compiler's disable / is_compiling).

compile(model) returns an OptimizedModule (an nn.Module holding the model as `_orig_mod`, so its
state_dict keys are prefixed "_orig_mod." as in PyTorch) or a wrapped function. Which path runs:
  - a call that needs no gradient (under no_grad/inference_mode, or no tensor argument,
    parameter or captured tensor requires grad) runs an nn.Graph traced and compiled through our
    HLO compiler for that input signature (shapes, dtypes, devices, constant arguments, autocast
    state) and train/eval state of every submodule, cached: a new signature or mode compiles
    again (`explain()["compile_count"]`);
  - a call that needs a gradient (training: a parameter of the module or a tensor argument
    requires grad) runs as an autograd Function (AOTAutograd's joint split): its forward runs a
    compiled graph of the module's forward that also returns the residuals (the tensor
    arguments of every leaf-module call); its backward runs a second compiled graph that traces
    the forward again with each leaf module starting from its residual (the gradient routed
    through the recomputed value, whose computation the compiler then drops as dead code) and
    returns the gradients of the tensor arguments and of the captured tensors that require grad
    (the parameters) given the upstream gradients. Functional code between leaf modules, and
    modules' own code around their children (MultiheadAttention's projections), is recomputed;
    for a stack of Linear/activation layers nothing is (bench_compile.py measures both). Both
    are compiled together, per input signature, requires-grad pattern and train/eval state of
    every submodule (`explain()["train_compile_count"]`), and read the live parameters, so an
    optimizer's in-place step is seen by the next call. The gradients reach .grad through the
    autograd engine (hooks, clipping, GradScaler, DDP see them as eager). Random ops (dropout)
    draw the same numbers in the backward's recomputation as in the forward (the graphs are
    traced from the same generator state and the backward replays the forward run's nonce);
    BatchNorm/InstanceNorm running statistics are updated by the forward graph only (the
    recomputation uses batch statistics without touching them). A forward that updates other
    captured tensors in place, or whose tracing fails, runs eagerly with the reason in
    `explain()["eager_reasons"]`;
  - keyword or non-tensor/non-constant arguments run the original module eagerly, counted in
    `explain()` with the reason;
  - a signature whose tracing fails (data-dependent Python control flow, .item(), ...) is a graph
    break: it runs eagerly from then on, or raises with fullgraph=True.
backend="eager" (or disable=True) never compiles. Calls inside a compiled call are not nested.
"""
import collections
import contextlib
import functools

import oneflow_like as flow
from oneflow_like import _C, nn
from oneflow_like.nn.graph import _autocast_key, _flatten, _signature, _unflatten

from .jit._runner import _CONSTS, Runner, _FnGraph, _Tracing, _state

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "tvm", "openxla")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _check_args(backend, mode, options, dynamic):
    if mode is not None and options is not None:
        raise RuntimeError(
            "[compile] Either mode or options can be specified, but both can't be specified at "
            "the same time."
        )
    if mode not in _MODES:
        raise RuntimeError(f"[compile] Unrecognized mode={mode!r}, should be one of {_MODES[1:]}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"[compile] options must be a dict, got {type(options).__name__}")
    if dynamic not in (None, True, False):
        raise TypeError(f"[compile] dynamic must be None, True or False, got {dynamic!r}")
    if not isinstance(backend, str):
        raise NotImplementedError(
            f"[compile] custom backends ({type(backend).__name__}) are not supported: they take "
            f"a torch.fx graph, which oneflow_like does not produce; use one of {_BACKENDS}"
        )
    if backend not in _BACKENDS:
        raise ValueError(f"[compile] invalid backend {backend!r}, expected one of {_BACKENDS}")


# ---- the training path ------------------------------------------------------------------------
def _leaves(fn):
    if not isinstance(fn, nn.Module):
        return []
    return [m for m in fn.modules() if next(iter(m.children()), None) is None]


class _leaf_inputs:
    """Inside: a forward pre-hook on every leaf module of `fn` calls `on_input(module, args)`,
    whose result (or None) replaces the module's positional arguments."""

    def __init__(self, fn, on_input):
        self.mods, self.on_input = _leaves(fn), on_input

    def __enter__(self):
        self.handles = [m.register_forward_pre_hook(self.on_input) for m in self.mods]

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        return False


class _ForwardGraph(_FnGraph):
    """The forward of a training call: `fn` under no_grad (what _FnGraph builds). It records the
    traced outputs' metadata, so the backward graph can be traced before the first run, and with
    `save_residuals` it also returns the residuals: the tensor arguments of every leaf module
    call that are not arguments of the graph, in call order (`plan` says which were taken), so
    the backward graph starts each leaf from them instead of recomputing what led there."""

    def __init__(self, fn, save_residuals):
        super().__init__(fn)
        object.__setattr__(self, "save_residuals", save_residuals)

    def build(self, *args):
        plan, residuals = [], []
        graph_args = [a for a in args if isinstance(a, _C.Tensor)]

        def take(module, margs):
            taken = []
            for a in margs:
                keep = isinstance(a, _C.Tensor) and not any(a._same(g) for g in graph_args)
                taken.append(keep)
                if keep:
                    residuals.append(a)
            plan.append(tuple(taken))

        if self.save_residuals:
            with _leaf_inputs(self._fn[0], take):
                out = super().build(*args)
        else:
            out = super().build(*args)
        flat = []
        _flatten(out, flat)
        object.__setattr__(self, "out_metas", [(tuple(o.shape), o.dtype, o.device) for o in flat])
        object.__setattr__(self, "plan", plan)
        object.__setattr__(
            self, "residual_metas", [(tuple(r.shape), r.dtype, r.device) for r in residuals]
        )
        return (out, tuple(residuals))


class _Reattach(flow.autograd.Function):
    """The value of `saved` with the gradient routed to `recomputed`: the backward graph's leaf
    modules read the forward's residuals while gradients still flow through the recomputed
    autograd graph, whose dead values the compiler then removes."""

    @staticmethod
    def forward(ctx, saved, recomputed):
        return saved

    @staticmethod
    def backward(ctx, grad):
        return None, grad


class _BackwardGraph(flow.nn.Graph):
    """The backward of a training call: recomputes `fn` with gradients on (inputs in
    `grad_inputs` made to require grad) and returns autograd.grad of its differentiable outputs
    with respect to those inputs and `params`, given the upstream gradients. Its inputs: the
    forward's arguments, one upstream gradient per tensor output, then the forward graph's
    residuals, which replace the leaf modules' recomputed arguments (`plan`, see _ForwardGraph).
    """

    def __init__(self, fn, n_inputs, n_outs, grad_inputs, params, plan):
        super().__init__()
        object.__setattr__(self, "_fn", (fn,))
        object.__setattr__(self, "_n", n_inputs)
        object.__setattr__(self, "_n_outs", n_outs)
        object.__setattr__(self, "_grad_inputs", grad_inputs)  # positions among tensor args
        object.__setattr__(self, "_wrt_params", tuple(params))
        object.__setattr__(self, "_plan", plan)

    def build(self, *args):
        n, k = self._n, self._n_outs
        xs, grads, residuals = list(args[:n]), args[n : n + k], iter(args[n + k :])
        tensor_pos = [i for i, a in enumerate(xs) if isinstance(a, _C.Tensor)]
        wrt = []
        for j in self._grad_inputs:
            i = tensor_pos[j]
            xs[i] = xs[i].requires_grad_()
            wrt.append(xs[i])
        wrt += list(self._wrt_params)
        plan = iter(self._plan)

        def substitute(module, margs):
            taken = next(plan)
            return tuple(
                _Reattach.apply(next(residuals), a) if keep else a for a, keep in zip(margs, taken)
            )

        hooks = _leaf_inputs(self._fn[0], substitute) if self._plan else contextlib.nullcontext()
        with flow.enable_grad(), _Tracing(), _batch_stats_only(self._fn[0]), hooks:
            out = self._fn[0](*xs)
        flat = []
        _flatten(out, flat)
        outs, gs = [], []
        for o, g in zip(flat, grads):
            if o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            return tuple(None for _ in wrt)
        # The parameters' tensor hooks run later, on the real gradients (see _tensor._hook_state).
        hs = flow._tensor._hook_state
        hs.tracing_backward = getattr(hs, "tracing_backward", 0) + 1
        try:
            return flow.autograd.grad(outs, wrt, gs, allow_unused=True)
        finally:
            hs.tracing_backward -= 1


class _batch_stats_only:
    """Inside: every BatchNorm/InstanceNorm of `fn` in training mode normalizes with the batch's
    statistics without updating its running statistics (the forward graph already did)."""

    def __init__(self, fn):
        self.mods = []
        if isinstance(fn, nn.Module):
            for m in fn.modules():
                if m.training and getattr(m, "track_running_stats", False):
                    if m._buffers.get("running_mean") is not None:
                        self.mods.append(m)

    def __enter__(self):
        self.saved = []
        for m in self.mods:
            b = m._buffers
            self.saved.append((m.track_running_stats, b["running_mean"], b["running_var"]))
            m.track_running_stats = False
            b["running_mean"] = b["running_var"] = None

    def __exit__(self, *exc):
        for m, (track, mean, var) in zip(self.mods, self.saved):
            m.track_running_stats = track
            m._buffers["running_mean"], m._buffers["running_var"] = mean, var
        return False


class _TrainEntry:
    """The compiled forward and backward of one training signature."""

    def __init__(self, fwd, bwd, params, grad_inputs, n_outs, random, spec, out_spec):
        self.fwd, self.bwd = fwd, bwd  # nn.Graph _Entry objects
        self.out_spec = out_spec  # of the module's outputs (the forward graph's first result)
        self.params = params  # the captured tensors that require grad (the module's parameters)
        self.grad_inputs = grad_inputs  # positions, among the tensor arguments, that require grad
        self.n_outs = n_outs
        self.random = random  # the graphs draw random numbers: replay the forward's nonce
        self.spec = spec


class _CompiledStep(flow.autograd.Function):
    """forward: the compiled forward graph; backward: the compiled backward graph."""

    @staticmethod
    def forward(ctx, path, entry, n_tensors, *tensors):
        inputs = list(tensors[:n_tensors])
        ctx.path, ctx.entry, ctx.inputs = path, entry, inputs
        if entry.random:  # the nonce the forward run draws is drawn again by the backward's
            ctx.rng = path.cpu_generator.get_state()
        res = entry.fwd.compiled.run(inputs)
        ctx.residuals = res[entry.n_outs :]
        return tuple(res[: entry.n_outs])

    @staticmethod
    def backward(ctx, *grads):
        entry, path = ctx.entry, ctx.path
        if flow.is_grad_enabled():
            raise RuntimeError(
                f"[compile] {path.name}: the compiled backward cannot build a graph of its "
                "gradients (create_graph=True / double backward); compile with backend='eager' "
                "or differentiate the module without flow.compile"
            )
        grads = [
            g if g is not None else flow.zeros(shape, dtype=dtype, device=device)
            for g, (shape, dtype, device) in zip(grads, entry.spec)
        ]
        gen = path.cpu_generator
        if entry.random:
            now = gen.get_state()
            gen.set_state(*ctx.rng)
        try:
            res = entry.bwd.compiled.run(ctx.inputs + grads + list(ctx.residuals))
        finally:
            if entry.random:
                gen.set_state(*now)
        res = _unflatten(entry.bwd.out_spec, iter(res))
        path.compiled_backward_calls += 1
        n_in = len(ctx.inputs)
        out = [None] * n_in
        for k, g in zip(entry.grad_inputs, res):
            out[k] = g
        return (None, None, None, *out, *res[len(entry.grad_inputs) :])


def _devices(fn, args):
    devs = {str(a.device) for a in args if isinstance(a, _C.Tensor)}
    if isinstance(fn, nn.Module):
        devs |= {str(p.device) for p in fn.parameters()}
    return sorted(devs)


class TrainPath:
    """flow.compile's calls that need gradients (see this module's docstring)."""

    def __init__(self, fn, name, eager, fullgraph):
        self.fn = fn
        self.name = name if name.isidentifier() else "compiled"
        self.eager = eager  # counts eager fallbacks
        self.fullgraph = fullgraph
        self.cpu_generator = _C._default_generator("cpu")
        self.entries = {}  # key -> _TrainEntry, or the reason the signature runs eagerly
        self.graph_calls = 0
        self.compiled_backward_calls = 0
        self.recompile_reasons = []
        # the forward graph returns the leaf modules' arguments for the backward graph (False:
        # the backward recomputes the whole forward; benchmarks/bench_compile.py compares)
        self.save_residuals = True

    def needs_grad(self, args):
        if not flow.is_grad_enabled():
            return False
        for a in args:
            if isinstance(a, _C.Tensor):
                if a.requires_grad:
                    return True
            elif not isinstance(a, _CONSTS):
                return False  # a Runner runs it eagerly and says why
        if isinstance(self.fn, nn.Module):
            return any(p.requires_grad for p in self.fn.parameters())
        return False

    def _key(self, args):
        modes = _modes(self.fn)
        rg = tuple(a.requires_grad for a in args if isinstance(a, _C.Tensor))
        params = ()
        if isinstance(self.fn, nn.Module):
            params = tuple(p.requires_grad for p in self.fn.parameters())
        return (_signature(args), _autocast_key(), rg, params, modes)

    def __call__(self, *args):
        key = self._key(args)
        entry = self.entries.get(key)
        if entry is None:
            self.recompile_reasons.append(self._why(key))
            entry = self.entries[key] = self._compile(args)
        if isinstance(entry, str):
            self.eager.eager_calls += 1
            self.eager.eager_reasons[entry] += 1
            return self.fn(*args)
        tensors = [a for a in args if isinstance(a, _C.Tensor)]
        outs = _CompiledStep.apply(self, entry, len(tensors), *tensors, *entry.params)
        self.graph_calls += 1
        return _unflatten(entry.out_spec, iter(outs))

    def _why(self, key):
        if not self.entries:
            return "first call"
        old = next(reversed(self.entries.keys()))
        names = (
            "input signature",
            "autocast state",
            "inputs' requires_grad",
            "parameters' requires_grad",
            "train/eval mode of a submodule",
        )
        for name, a, b in zip(names, old, key):
            if a != b:
                return f"{name} changed: {a} -> {b}"
        return "new signature"

    def _states(self, devices):
        gens = [self.cpu_generator] + [
            _C._default_generator(d) for d in devices if d.startswith("cuda")
        ]
        return gens, [g.get_state() for g in gens]

    def _compile(self, args):
        """Traces and compiles the forward and the backward graph of `args`' signature, both from
        the same generator state; a reason string when the signature must run eagerly."""
        gens, before = self._states(_devices(self.fn, args))
        fwd_graph = type(self.name, (_ForwardGraph,), {})(self.fn, self.save_residuals)
        try:
            fwd = fwd_graph._entry(tuple(args))
        except Exception as e:
            if self.fullgraph:
                raise
            return f"graph break: {type(e).__name__}: {str(e)[:200]}"
        after = [g.get_state() for g in gens]
        random = after != before
        captured = [t for t in _C._graph_captured(fwd.compiled) if t.requires_grad]
        params = captured
        if isinstance(self.fn, nn.Module):  # the module's own Parameter objects, where they are
            own = list(self.fn.parameters())
            params = [next((p for p in own if p._same(t)), t) for t in captured]
        tensors = [a for a in args if isinstance(a, _C.Tensor)]
        grad_inputs = [k for k, t in enumerate(tensors) if t.requires_grad]
        if not grad_inputs and not params:
            return "no tensor the forward reads requires grad"
        metas = fwd_graph.out_metas
        bwd_graph = type(self.name + "_backward", (_BackwardGraph,), {})(
            self.fn, len(args), len(metas), grad_inputs, params, fwd_graph.plan
        )
        examples = [flow.empty(s, dtype=d, device=dev) for s, d, dev in metas]
        examples += [flow.empty(s, dtype=d, device=dev) for s, d, dev in fwd_graph.residual_metas]
        for g, st in zip(gens, before):
            g.set_state(*st)
        try:
            bwd = bwd_graph._entry(tuple(args) + tuple(examples))
        except Exception as e:
            if self.fullgraph:
                raise
            return f"graph break in the backward: {type(e).__name__}: {str(e)[:200]}"
        finally:
            for g, st in zip(gens, after):
                g.set_state(*st)
        assigned = bwd.compiled.in_place_assignments[1]
        if assigned:
            return (
                f"the forward updates {assigned} captured tensor(s) in place (buffers other than "
                "BatchNorm/InstanceNorm running statistics), which the backward's recomputation "
                "would update again"
            )
        out_spec = fwd.out_spec[1][0]  # (out, residuals): the first
        return _TrainEntry(fwd, bwd, params, grad_inputs, len(metas), random, metas, out_spec)

    def explain(self):
        return {
            "train_compile_count": sum(1 for e in self.entries.values() if not isinstance(e, str)),
            "train_graph_calls": self.graph_calls,
            "compiled_backward_calls": self.compiled_backward_calls,
            "train_recompile_reasons": list(self.recompile_reasons),
        }


def _modes(fn):
    """The train/eval flag of every submodule: a graph traced in one mode (dropout on, batch
    statistics) is wrong in another, so each mode has its own graphs."""
    return tuple(m.training for m in fn.modules()) if isinstance(fn, nn.Module) else ()


class _Eager:
    """Counts the training path's eager fallbacks (the runners count their own)."""

    def __init__(self):
        self.eager_calls = 0
        self.eager_reasons = collections.Counter()


class _Compiled:
    """Routes calls to the training path (calls that need gradients), a Runner per train/eval
    state of the module (compiling calls that need none) or the function (eager backend, nested
    calls)."""

    def __init__(self, fn, name, fullgraph, backend):
        self.name, self.fullgraph = name, fullgraph
        self.runners = {}  # _modes(fn) -> Runner
        self.eager = _Eager()
        self.train = TrainPath(fn, name, self.eager, fullgraph)
        self.fn = fn
        self.eager_backend = backend == "eager"

    def runner(self):
        key = _modes(self.fn)
        r = self.runners.get(key)
        if r is None:
            r = self.runners[key] = Runner(self.fn, self.name, graph_breaks=not self.fullgraph)
        return r

    def __call__(self, *args, **kwargs):
        if self.eager_backend or getattr(_state, "compiling", 0):
            return self.fn(*args, **kwargs)
        _state.compiling = getattr(_state, "compiling", 0) + 1
        try:
            if not kwargs and self.train.needs_grad(args):
                return self.train(*args)
            return self.runner()(*args, **kwargs)
        finally:
            _state.compiling -= 1

    def explain(self):
        out = {
            "compile_count": 0,
            "graph_calls": 0,
            "eager_calls": self.eager.eager_calls,
            "eager_reasons": collections.Counter(self.eager.eager_reasons),
            "recompile_reasons": [],
        }
        for i, r in enumerate(self.runners.values()):
            e = r.explain()
            for k in ("compile_count", "graph_calls", "eager_calls"):
                out[k] += e[k]
            out["eager_reasons"].update(e["eager_reasons"])
            reasons = e["recompile_reasons"]
            if i and reasons and reasons[0] == "first call":
                reasons[0] = "train/eval mode of a submodule changed"
            out["recompile_reasons"] += reasons
        out["eager_reasons"] = dict(out["eager_reasons"])
        out.update(self.train.explain())
        return out


class OptimizedModule(nn.Module):
    """torch.compile's result for a module: calls run the compiled graph or the module eagerly as
    oneflow_like._compile's docstring says; `explain()` reports which ran and how often."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def explain(self):
        """{compile_count, graph_calls, eager_calls, eager_reasons, recompile_reasons,
        train_compile_count, train_graph_calls, compiled_backward_calls}."""
        return self.__dict__["_compiled"].explain()

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    disable=False,
):
    """torch.compile on nn.Graph: see this module's docstring for which path runs when.
    Without `model`, a decorator. `dynamic` is accepted; every distinct signature compiles."""
    _check_args(backend, mode, options, dynamic)
    if model is None:
        return lambda m: compile(
            m,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if disable:
        return model
    if isinstance(model, nn.Module):
        return OptimizedModule(model, _Compiled(model, type(model).__name__, fullgraph, backend))
    if not callable(model):
        raise RuntimeError(f"[compile] model must be an nn.Module or a callable, got {model!r}")
    compiled = _Compiled(model, getattr(model, "__name__", "compiled"), fullgraph, backend)

    @functools.wraps(model)
    def wrapper(*args, **kwargs):
        return compiled(*args, **kwargs)

    wrapper._torchdynamo_orig_callable = model
    wrapper.explain = compiled.explain
    return wrapper
