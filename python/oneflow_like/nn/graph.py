"""flow.nn.Graph: compile a whole model (forward, backward and optimizer step) and run it as one
LaunchLazyJob instruction.

    class TrainGraph(flow.nn.Graph):
        def __init__(self):
            super().__init__(); self.model = model; self.add_optimizer(opt)
        def build(self, x, y):
            loss = F.cross_entropy(self.model(x), y); loss.backward(); return loss

The first call traces build() with lazy tensors (every op is recorded, parameters are captured
by reference), lowers the trace to HLO and compiles it; later calls with the same input signature
replay the compiled graph. A new signature (shapes, dtypes, devices of tensor arguments, values
of other arguments, optimizer learning rates) compiles again; `graph.recompile_reasons` says why.
"""
import os
import shutil
import subprocess
import time

import oneflow_like as flow
from oneflow_like import _C


def _flatten(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
        return ("T",)
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(_flatten(o, out) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten(v, out)) for k, v in obj.items()))
    return ("const", obj)


def _unflatten(spec, it):
    kind = spec[0]
    if kind == "T":
        return next(it)
    if kind in ("list", "tuple"):
        items = [_unflatten(s, it) for s in spec[1]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {k: _unflatten(s, it) for k, s in spec[1]}
    return spec[1]


def _signature(args):
    sig = []
    for a in args:
        if isinstance(a, _C.Tensor):
            sig.append(("tensor", tuple(a.shape), str(a.dtype), str(a.device)))
        else:
            sig.append(("value", repr(a)))
    return tuple(sig)


def _autocast_key():
    """The autocast regions active at the call: a graph traced under autocast bakes its casts in,
    so calls under another state compile their own graph."""
    states = ((dev, _C._autocast_get(dev)) for dev in ("cpu", "cuda"))
    return tuple((dev, s[1]) for dev, s in states if s[0])


class _Entry:
    def __init__(self, compiled, out_spec, trace_seconds, num_ops):
        self.compiled = compiled
        self.out_spec = out_spec
        self.trace_seconds = trace_seconds
        self.num_ops = num_ops


def _dot_to_svg(dot_text, path, timeout, who):
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            f"[{who}] Graphviz's `dot` was not found on PATH; install Graphviz "
            "(Debian: apt-get install graphviz) or write the DOT text from to_dot()"
        )
    try:
        r = subprocess.run(
            [exe, "-Tsvg", "-o", path],
            input=dot_text,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"[{who}] `dot` did not finish within {timeout} s") from None
    if r.returncode != 0:
        raise RuntimeError(f"[{who}] `dot` failed (exit {r.returncode}): {r.stderr.strip()[:500]}")
    return path


class Graph:
    def __init__(self):
        object.__setattr__(self, "_optimizers", [])
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "recompile_reasons", [])
        object.__setattr__(self, "_last_entry", None)
        object.__setattr__(self, "_debug_dir", None)
        object.__setattr__(self, "_plugins", None)  # None: $ONEFLOW_LIKE_PLUGINS

    def add_optimizer(self, optimizer, lr_sch=None):
        """Runs optimizer.step() inside the graph after build() (which calls backward)."""
        self._optimizers.append((optimizer, lr_sch))

    def use_plugins(self, *paths):
        """Offers these compiler plugin libraries (paths of .so files) the graph at compile time,
        in order, instead of those named by $ONEFLOW_LIKE_PLUGINS; no paths: none. What they
        take runs through their dispatch libraries, the rest on the CPU (plugin_report())."""
        plugins = [os.fspath(p) for p in paths]
        object.__setattr__(self, "_plugins", plugins)
        self._cache.clear()
        return self

    def plugin_report(self):
        """Coverage of the last compiled graph by compiler plugins: {"backends": [{name, ops,
        bytes, flops}], "partitions": [...], "fallbacks": [{op, opcode, reason}], "text": str}."""
        if self._last_entry is None:
            raise RuntimeError(
                "[nn.Graph.plugin_report] the graph has not been compiled yet: call it once first"
            )
        return self._last_entry.compiled.plugin_report

    def build(self, *args, **kwargs):
        raise NotImplementedError("nn.Graph subclasses must implement build()")

    # ---- calling --------------------------------------------------------------------------------
    def __call__(self, *args):
        entry = self._entry(args)
        object.__setattr__(self, "_last_entry", entry)
        self._feed_hparams()
        tensors = [a for a in args if isinstance(a, _C.Tensor)]
        outs = entry.compiled.run(tensors)
        for opt, sch in self._optimizers:
            if sch is not None:
                sch.step()
        return _unflatten(entry.out_spec, iter(outs))

    def _entry(self, args):
        """The compiled graph for `args` (traced and compiled on a cache miss; not run)."""
        key = (_signature(args), self._optimizer_key(), _autocast_key())
        entry = self._cache.get(key)
        if entry is None:
            self.recompile_reasons.append(self._why(key))
            entry = self._compile(args)
            self._cache[key] = entry
        return entry

    def _optimizer_key(self):
        # Hyper-parameters an optimizer reads from fed tensors inside the graph
        # (`_graph_hparams(group)`: SGD's lr and momentum, Adam's lr and beta1) do not recompile
        # when they change (LR/momentum schedulers step them every call); any other change does.
        key = []
        for opt, _ in self._optimizers:
            hp = getattr(opt, "_graph_hparams", None)
            for g in opt.param_groups:
                fed = set(hp(g)) if hp else set()
                items = []
                for k, v in sorted(g.items()):
                    if k == "params" or k.startswith("_") or k in fed:
                        continue
                    if k == "betas" and "beta1" in fed:
                        v = v[1:]
                    items.append((k, repr(v)))
                key.append(tuple(items))
        return tuple(key)

    def _feed_hparams(self):
        """Writes each group's current fed hyper-parameters into their tensors (eager fills, ordered
        before the run by the VM), creating the tensors on first use."""
        for opt, _ in self._optimizers:
            hp = getattr(opt, "_graph_hparams", None)
            if hp is None:
                continue
            for g in opt.param_groups:
                tensors = g.setdefault("_hp_tensors", {})
                fed = g.setdefault("_hp_fed", {})
                for name, value in hp(g).items():
                    value = float(value)
                    t = tensors.get(name)
                    if t is None:
                        # on the parameters' device: a CUDA graph's captures live on the GPU
                        dev = g["params"][0].device if g["params"] else "cpu"
                        tensors[name] = flow.tensor(value, dtype=flow.float64, device=dev)
                    elif fed.get(name) != value:
                        t.fill_(value)
                    fed[name] = value

    def _why(self, key):
        if not self._cache:
            return "first call"
        old_sig, old_opt, old_amp = next(reversed(self._cache.keys()))
        sig, opt, amp = key
        if opt != old_opt:
            return f"optimizer hyper-parameters changed: {old_opt} -> {opt}"
        if amp != old_amp:
            return f"autocast state changed: {old_amp or 'off'} -> {amp or 'off'}"
        for i, (a, b) in enumerate(zip(old_sig, sig)):
            if a != b:
                return f"argument {i} changed: {a} -> {b}"
        return f"number of arguments changed: {len(old_sig)} -> {len(sig)}"

    # ---- tracing and compiling ------------------------------------------------------------------
    def _params(self):
        return [p for opt, _ in self._optimizers for g in opt.param_groups for p in g["params"]]

    def _compile(self, args):
        for opt, _ in self._optimizers:
            prepare = getattr(opt, "_graph_prepare", None)
            if prepare is None:
                raise NotImplementedError(
                    f"[nn.Graph] {type(opt).__name__} cannot run inside a graph yet"
                )
            prepare()
        params = self._params()
        saved_grads = [p.grad for p in params]
        for p in params:
            p.grad = None
        self._feed_hparams()
        for opt, _ in self._optimizers:
            object.__setattr__(opt, "_graph_tracing", True)
        t0 = time.perf_counter()
        trace = _C._Trace()
        try:
            with trace:
                lazy_args = [trace.add_input(a) if isinstance(a, _C.Tensor) else a for a in args]
                out = self.build(*lazy_args)
                flat = []
                spec = _flatten(out, flat)
                # Optimizer updates run in the parameters' dtype, outside any autocast region
                # the graph was called in (as PyTorch scripts step outside autocast).
                with flow.autocast("cpu", enabled=False), flow.autocast("cuda", enabled=False):
                    for opt, _ in self._optimizers:
                        opt.step()
                trace.set_outputs(flat)
        finally:
            for p, g in zip(params, saved_grads):
                p.grad = g
            for opt, _ in self._optimizers:
                object.__setattr__(opt, "_graph_tracing", False)
        trace_seconds = time.perf_counter() - t0
        compiled = _C._compile_trace(trace, type(self).__name__, self._plugins)
        entry = _Entry(compiled, spec, trace_seconds, trace.num_ops())
        dump = self._debug_dir or os.environ.get("ONEFLOW_LIKE_DUMP_TO")
        if dump:
            self._dump(dump, trace, compiled)
        return entry

    def _dump(self, directory, trace, compiled):
        os.makedirs(directory, exist_ok=True)
        base = os.path.join(directory, type(self).__name__)
        with open(base + ".trace.txt", "w") as f:
            f.write(str(trace))
        with open(base + ".hlo_after.txt", "w") as f:
            f.write(compiled.hlo_after)
        with open(base + ".optimized.dot", "w") as f:
            f.write(compiled.dot)
        report = compiled.plugin_report["text"]
        if report:
            with open(base + ".plugin_report.txt", "w") as f:
                f.write(report)
        if shutil.which("dot"):
            _dot_to_svg(compiled.dot, base + ".optimized.svg", 60.0, "nn.Graph.debug")

    # ---- pictures -------------------------------------------------------------------------------
    def debug(self, v_level=0, *, dump_to=None):
        """Dumps every compilation of this graph to `dump_to` (or $ONEFLOW_LIKE_DUMP_TO):
        <Name>.trace.txt, .hlo_after.txt, .optimized.dot and, when Graphviz's `dot` is installed,
        .optimized.svg (fusions as clusters, bytes on edges). v_level < 0 turns dumping off."""
        if not isinstance(v_level, int) or isinstance(v_level, bool):
            raise TypeError(
                f"[nn.Graph.debug] v_level must be an int, got {type(v_level).__name__}"
            )
        if v_level < 0:
            object.__setattr__(self, "_debug_dir", None)
            return self
        if dump_to is None:
            dump_to = os.environ.get("ONEFLOW_LIKE_DUMP_TO") or os.path.join(
                os.getcwd(), "oneflow_like_dump"
            )
        object.__setattr__(self, "_debug_dir", os.fspath(dump_to))
        if self._last_entry is not None:  # already compiled: picture it now
            c = self._last_entry.compiled
            os.makedirs(self._debug_dir, exist_ok=True)
            base = os.path.join(self._debug_dir, type(self).__name__)
            with open(base + ".optimized.dot", "w") as f:
                f.write(c.dot)
            if shutil.which("dot"):
                _dot_to_svg(c.dot, base + ".optimized.svg", 60.0, "nn.Graph.debug")
        return self

    def to_dot(self):
        """Graphviz DOT text of the last compiled graph after optimization."""
        if self._last_entry is None:
            raise RuntimeError(
                "[nn.Graph.to_dot] the graph has not been compiled yet: call it once first"
            )
        return self._last_entry.compiled.dot

    def to_svg(self, path, timeout=60.0):
        """Writes an SVG of the last compiled graph (fusions as clusters, bytes on edges) through
        Graphviz's `dot`; returns the path."""
        return _dot_to_svg(self.to_dot(), os.fspath(path), timeout, "nn.Graph.to_svg")

    # ---- introspection --------------------------------------------------------------------------
    @property
    def compiled(self):
        """The last-run compiled graph (hlo_before, hlo_after, thunks, compile_seconds, ...)."""
        return self._last_entry.compiled if self._last_entry else None

    def stats(self):
        e = self._last_entry
        if e is None:
            return {}
        c = e.compiled
        return {
            "trace_seconds": e.trace_seconds,
            "lower_seconds": c.lower_seconds,
            "compile_seconds": c.compile_seconds,
            "traced_ops": e.num_ops,
            "lowered_ops": c.num_lowered,
            "kernel_call_ops": list(c.kernel_call_ops),
            "in_place_assignments": tuple(c.in_place_assignments),
        }
