"""torch.func: composable function transforms over our autograd.

    from oneflow_like.func import vmap, grad, functional_call
    per_sample_grads = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, xs, ys)

- grad / grad_and_value (argnums, has_aux), vjp, jvp, jacrev, jacfwd, hessian: built on
  autograd.grad. Nested transforms compose (grad(grad(f)), jacfwd(jacrev(f)), vmap(grad(f))):
  an inner transform keeps its graph (create_graph) whenever an outer transform, or the caller,
  differentiates its result. jvp and jacfwd use the double-vjp identity (forward mode computed by
  two reverse passes), so their values equal forward-mode AD's.
- vmap (in_dims / out_dims over pytrees of tuples, lists and dicts, chunk_size, randomness):
  records the function once on one sample and replays every recorded op batched through its
  batching rule (_vmap_rules.py; the backward ops of a grad inside it included, and the replay is
  differentiable by the autograd engine, so grad(vmap(f)) and vmap(vmap(f)) compose). An op
  without a rule runs per sample (a one-time warning names it); a function that cannot be
  recorded (.item(), Python branches on tensor values, in-place writes into its inputs) runs
  once per index of the mapped dimension and stacks the results. Values and gradients are those
  of torch.vmap. randomness="error" (the default) raises if the function draws random numbers,
  "same" gives every sample the same draws, "different" independent ones. out_dims=None is for
  outputs that do not depend on the mapped inputs (a batched one raises, as torch 2.x). The
  recorded trace is cached per function and input signature (_vmap_rules.py), so calling
  vmap(grad(f)) every training step records f once. jacrev and jacfwd vmap their
  vector-Jacobian products over basis vectors.
- Complex inputs and outputs as functorch 1.13: grad of a real f is torch's conjugate-Wirtinger
  gradient (dL/d(re z) + i dL/d(im z)); grad of a complex scalar is its vjp with 1; jacrev
  rows are vjps with real basis vectors, jacfwd columns jvps; jvp takes a real tangent of a
  complex primal. vmap replays complex ops through their rules (_vmap_rules.py).
- functional_call, stack_module_state: for model ensembling with vmap.
"""
import oneflow_like as flow
from oneflow_like import _vmap_rules
from oneflow_like.nn.utils.stateless import functional_call as _functional_call

__all__ = [
    "functional_call",
    "stack_module_state",
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
]

_depth = [0]  # transforms currently differentiating (an inner one must keep its graph)


# ---- pytrees ------------------------------------------------------------------------------------
def _flatten(tree):
    """(leaves, spec) over tuples, lists and dicts; anything else is a leaf."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            lv, sp = _flatten(x)
            leaves += lv
            specs.append((len(lv), sp))
        kind = type(tree) if not hasattr(tree, "_fields") else tree._make
        return leaves, ("seq", kind, specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k, x in tree.items():
            lv, sp = _flatten(x)
            leaves += lv
            specs.append((k, len(lv), sp))
        return leaves, ("dict", type(tree), specs)
    return [tree], ("leaf",)


def _unflatten(leaves, spec):
    leaves = list(leaves)
    if spec[0] == "leaf":
        return leaves[0]
    if spec[0] == "seq":
        _, kind, specs = spec
        out, i = [], 0
        for n, sp in specs:
            out.append(_unflatten(leaves[i : i + n], sp))
            i += n
        return kind(out)
    _, kind, specs = spec
    out, i = kind(), 0
    for k, n, sp in specs:
        out[k] = _unflatten(leaves[i : i + n], sp)
        i += n
    return out


def _broadcast_dims(dims, tree, fn, what):
    """One dim per leaf of `tree`: `dims` is an int/None for the whole tree or a matching tree."""
    leaves, spec = _flatten(tree)
    if dims is None or isinstance(dims, int):
        return [dims] * len(leaves)
    if isinstance(dims, (tuple, list)) and spec[0] == "seq":
        if len(dims) != len(spec[2]):
            raise ValueError(
                f"{fn}: {what} has {len(dims)} entries for {len(spec[2])} arguments: they must "
                "match (or be one int/None for all)"
            )
        out, i = [], 0
        for d, (n, sp) in zip(dims, spec[2]):
            out += _broadcast_dims(d, _unflatten(leaves[i : i + n], sp), fn, what)
            i += n
        return out
    if isinstance(dims, dict) and spec[0] == "dict":
        out, i = [], 0
        for k, n, sp in spec[2]:
            if k not in dims:
                raise ValueError(f"{fn}: {what} has no entry for key {k!r}")
            out += _broadcast_dims(dims[k], _unflatten(leaves[i : i + n], sp), fn, what)
            i += n
        return out
    raise ValueError(f"{fn}: {what}={dims!r} is not compatible with the structure of the inputs")


# ---- vmap ---------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: func mapped over dimension in_dims of its inputs, results stacked at
    out_dims (see the module docstring for how it runs)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", type(func).__name__)

    def wrapped(*args, **kwargs):
        fn = f"vmap({name}, in_dims={in_dims}, ...)"
        if not args:
            raise ValueError(f"{fn}(): got no inputs. Maybe you forgot to add inputs?")
        dims = _broadcast_dims(
            in_dims if isinstance(in_dims, int) or in_dims is None else tuple(in_dims),
            tuple(args),
            fn,
            "in_dims",
        )
        leaves, spec = _flatten(tuple(args))
        size = None
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, flow.Tensor):
                raise ValueError(
                    f"{fn}: got in_dim={d} for an input of type {type(x).__name__}, but only "
                    "Tensor inputs can be mapped over (use in_dim=None for it)"
                )
            if not -x.dim() <= d < max(x.dim(), 1) or x.dim() == 0:
                raise ValueError(
                    f"{fn}: got in_dim={d} for an input but the input is of dimension {x.dim()}"
                )
            n = x.shape[d]
            if size is not None and n != size:
                raise ValueError(
                    f"{fn}: expected all tensors to have the same size in the mapped dimension, "
                    f"got sizes {size} and {n} for the mapped dimension"
                )
            size = n
        if size is None:
            raise ValueError(
                f"{fn}: at least one input must be mapped over (got in_dims=None "
                "for every input)"
            )
        if chunk_size is not None and chunk_size < size:
            return _chunked(leaves, dims, spec, size, fn, kwargs)
        if _vmap_rules.enabled:
            out = _vmap_rules.run(func, leaves, dims, spec, kwargs, size, randomness, out_dims, fn)
            if out is not None:
                return out
        start_state = flow.get_rng_state()
        results = []
        for i in range(size):
            if randomness == "same":
                flow.set_rng_state(start_state)
            before = flow.get_rng_state() if randomness == "error" else None
            sliced = [x if d is None else x.select(d, i) for x, d in zip(leaves, dims)]
            out = func(*_unflatten(sliced, spec), **kwargs)
            if before is not None and not flow.equal(before, flow.get_rng_state()):
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please either "
                    "use the 'same' or 'different' randomness flags on vmap or perform the "
                    "randomness operation out of vmap"
                )
            results.append(out)
        out_leaves0, out_spec = _flatten(results[0])
        odims = _broadcast_dims(out_dims, results[0], fn, "out_dims")
        per_leaf = [[] for _ in out_leaves0]
        for r in results:
            lv, _ = _flatten(r)
            for j, t in enumerate(lv):
                per_leaf[j].append(t)
        stacked = []
        for j, (ts, od) in enumerate(zip(per_leaf, odims)):
            if not isinstance(ts[0], flow.Tensor):
                raise ValueError(
                    f"{fn}: `{name}` must only return Tensors, got type {type(ts[0]).__name__}"
                )
            if od is None:
                # an output the samples share (the same tensor, or equal values: the loop cannot
                # tell a result independent of the mapped inputs otherwise) is returned as is
                if not all(t is ts[0] or flow.equal(t, ts[0]) for t in ts[1:]):
                    raise ValueError(_vmap_rules.out_dim_none_error(func))
                stacked.append(ts[0])
            else:
                stacked.append(flow.stack(ts, dim=od))
        return _unflatten(stacked, out_spec)

    def _chunked(leaves, dims, spec, size, fn, kwargs):
        parts = []
        for s in range(0, size, chunk_size):
            n = min(chunk_size, size - s)
            sl = [x if d is None else x.narrow(d, s, n) for x, d in zip(leaves, dims)]
            parts.append(wrapped_chunk(*_unflatten(sl, spec), **kwargs))
        first, out_spec = _flatten(parts[0])
        odims = _broadcast_dims(out_dims, parts[0], fn, "out_dims")
        cols = [[] for _ in first]
        for p in parts:
            for c, t in zip(cols, _flatten(p)[0]):
                c.append(t)
        return _unflatten(
            [c[0] if od is None else flow.cat(c, dim=od) for c, od in zip(cols, odims)], out_spec
        )

    wrapped.__name__ = f"vmap_{name}"
    wrapped_chunk = vmap(func, in_dims, out_dims, randomness) if chunk_size else None
    return wrapped


# ---- differentiation ----------------------------------------------------------------------------
def _argnums(argnums, nargs, fn):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{fn}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise RuntimeError(
                f"{fn}: got argnums={argnums}, but only {nargs} positional inputs were given"
            )
    return tuple(a % nargs for a in nums)


def _diff_leaf(t, fn):
    if not isinstance(t, flow.Tensor):
        raise RuntimeError(
            f"{fn}: expected the differentiated inputs to be Tensors, got " f"{type(t).__name__}"
        )
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError(
            f"{fn}: only Tensors of floating point dtype can require gradients (or complex "
            f"ones), got {t.dtype}"
        )
    # a view keeps the caller's history (an outer transform differentiates through it)
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)


def _ones_if_complex(t):
    return flow.ones_like(t) if t.dtype.is_complex else None


def _eye(n, like):
    """The n x n identity in like's dtype (the basis vectors of jacrev / jacfwd; complex ones
    from the real identity)."""
    if not like.dtype.is_complex:
        return flow.eye(n, dtype=like.dtype, device=like.device)
    real = flow.float32 if like.dtype == flow.complex64 else flow.float64
    return flow.eye(n, dtype=real, device=like.device).to(like.dtype)


def _grads(outputs, inputs, cotangents, create):
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        gs = [None] * len(inputs)
    else:
        gs = flow.autograd.grad(
            [o for o, _ in pairs],
            inputs,
            [c for _, c in pairs],
            retain_graph=True,
            create_graph=create,
            allow_unused=True,
        )
    out = []
    for g, x in zip(gs, inputs):
        g = flow.zeros_like(x) if g is None else g
        out.append(g if create else g.detach())
    return out


class _Differentiating:
    """Marks an active transform; `create` says whether results must keep their graph."""

    def __init__(self, originals):
        self.outer = any(isinstance(x, flow.Tensor) and x.requires_grad for x in originals)

    def __enter__(self):
        _depth[0] += 1
        self.grad_mode = flow.enable_grad()
        self.grad_mode.__enter__()
        self.create = self.outer or _depth[0] > 1
        return self

    def __exit__(self, *exc):
        self.grad_mode.__exit__(*exc)
        _depth[0] -= 1


def _split_aux(out, has_aux, fn):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{fn}: output of function with has_aux=True should be a tuple: (output, aux)"
        )
    return out


def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: (gradient of func's scalar output w.r.t. args[argnums], the
    output) ((grads, (output, aux)) with has_aux)."""
    fn = "grad_and_value(f)(*args)"

    def wrapped(*args, **kwargs):
        nums = _argnums(argnums, len(args), fn)
        originals = [x for a in nums for x in _flatten(args[a])[0]]
        with _Differentiating(originals) as ctx:
            args = list(args)
            specs, leaves = [], []
            for a in nums:
                lv, sp = _flatten(args[a])
                lv = [_diff_leaf(t, fn) for t in lv]
                args[a] = _unflatten(lv, sp)
                specs.append((len(lv), sp))
                leaves += lv
            out, aux = _split_aux(func(*args, **kwargs), has_aux, fn)
            if not isinstance(out, flow.Tensor):
                raise RuntimeError(
                    f"{fn}: expected f(*args) to return a Tensor, got " f"{type(out).__name__}"
                )
            if out.dim() != 0:
                raise RuntimeError(
                    f"{fn}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            # a complex output: the vector-Jacobian product with 1 (functorch 1.13's grad)
            gs = _grads([out], leaves, [_ones_if_complex(out)], ctx.create)
            value = out if ctx.create else out.detach()
        res, i = [], 0
        for n, sp in specs:
            res.append(_unflatten(gs[i : i + n], sp))
            i += n
        g = res[0] if isinstance(argnums, int) else tuple(res)
        return (g, (value, aux)) if has_aux else (g, value)

    return wrapped


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient of func's scalar output w.r.t. args[argnums] ((grad, aux)
    with has_aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapped(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapped


def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: (func(*primals), vjp_fn) where vjp_fn(cotangents) returns one gradient
    per primal ((output, vjp_fn, aux) with has_aux)."""
    fn = "vjp(f, *primals)"
    originals = [x for p in primals for x in _flatten(p)[0]]
    ctx = _Differentiating(originals)
    with ctx:
        specs, leaves, args = [], [], []
        for p in primals:
            lv, sp = _flatten(p)
            lv = [_diff_leaf(t, fn) for t in lv]
            args.append(_unflatten(lv, sp))
            specs.append((len(lv), sp))
            leaves += lv
        out, aux = _split_aux(func(*args), has_aux, fn)
        create = ctx.create
    out_leaves, out_spec = _flatten(out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct, ct_spec = _flatten(cotangents)
        if len(ct) != len(out_leaves):
            raise RuntimeError(
                f"{fn}: expected cotangents with the structure of the output ({len(out_leaves)} "
                f"tensors), got {len(ct)}"
            )
        for i, (o, c) in enumerate(zip(out_leaves, ct)):
            if (o.dtype.is_complex or c.dtype.is_complex) and o.dtype != c.dtype:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {c.dtype} "
                    f"and output[{i}] has a dtype of {o.dtype}."
                )
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(
                    f"{fn}: a cotangent has shape {list(c.shape)}, the output it belongs to "
                    f"{list(o.shape)}"
                )
        with flow.enable_grad():
            gs = _grads(out_leaves, leaves, ct, create if create_graph is None else create_graph)
        res, i = [], 0
        for n, sp in specs:
            res.append(_unflatten(gs[i : i + n], sp))
            i += n
        return tuple(res)

    value = out if create else _unflatten([o.detach() for o in out_leaves], out_spec)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """torch.func.jvp: (func(*primals), the directional derivative along tangents), by the
    double-vjp identity: J t = d/du (u^T J) t."""
    fn = "jvp(f, primals, tangents)"
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError(f"{fn}: expected primals and tangents to be tuples")
    p_leaves, p_spec = _flatten(tuple(primals))
    t_leaves, _ = _flatten(tuple(tangents))
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError(f"{fn}: expected primals and tangents to have the same structure")
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"{fn}: a tangent has shape {list(t.shape)}, its primal {list(p.shape)}"
            )
    with _Differentiating(p_leaves) as ctx:
        leaves = [_diff_leaf(t, fn) for t in p_leaves]
        out, aux = _split_aux(func(*_unflatten(leaves, p_spec)), has_aux, fn)
        out_leaves, out_spec = _flatten(out)
        us = [flow.zeros_like(o).requires_grad_(True) for o in out_leaves]
        g = _grads(out_leaves, leaves, us, True)  # u^T J, linear in u
        # a real tangent of a complex primal is complex; a complex tangent of a real primal is
        # J re(t) + i J im(t) (functorch's jvp accepts both)
        ts = [t.to(p.dtype) if p.dtype.is_complex and not t.dtype.is_complex else t
              for p, t in zip(leaves, t_leaves)]  # fmt: skip
        split = [t.dtype.is_complex and not p.dtype.is_complex for p, t in zip(leaves, ts)]
        if not any(split):
            jv = _tangent_pass(g, us, out_leaves, ts, ctx.create, retain=False)
        else:
            re = [t.real if s else t for t, s in zip(ts, split)]
            im = [t.imag if s else flow.zeros_like(t) for t, s in zip(ts, split)]
            jv_re = _tangent_pass(g, us, out_leaves, re, ctx.create, retain=True)
            jv_im = _tangent_pass(g, us, out_leaves, im, ctx.create, retain=False)
            jv = [flow.complex(a, b) if not a.dtype.is_complex else a + 1j * b
                  for a, b in zip(jv_re, jv_im)]  # fmt: skip
        if not ctx.create:
            jv = [j.detach() for j in jv]
            out_leaves = [o.detach() for o in out_leaves]
    res = (_unflatten(out_leaves, out_spec), _unflatten(jv, out_spec))
    return res + (aux,) if has_aux else res


def _tangent_pass(g, us, outs, tangents, create, retain):
    """d(g . tangents)/d us: the jacobian-vector products J t (zeros where unused)."""
    pairs = [(gi, t) for gi, t in zip(g, tangents) if gi.requires_grad]
    jv = [None] * len(us)
    if pairs:
        jv = flow.autograd.grad(
            [gi for gi, _ in pairs],
            us,
            [t for _, t in pairs],
            retain_graph=retain or create,
            create_graph=create,
            allow_unused=True,
        )
    return [flow.zeros_like(o) if j is None else j for j, o in zip(jv, outs)]


def _jacobian(func, argnums, has_aux, fn, forward):
    def wrapped(*args):
        nums = _argnums(argnums, len(args), fn)
        originals = [args[a] for a in nums]
        with _Differentiating(originals) as ctx:
            args = list(args)
            leaves = []
            for a in nums:
                if not isinstance(args[a], flow.Tensor):
                    raise RuntimeError(f"{fn}: the differentiated inputs must be Tensors")
                args[a] = _diff_leaf(args[a], fn)
                leaves.append(args[a])
            out, aux = _split_aux(func(*args), has_aux, fn)
            out_leaves, out_spec = _flatten(out)
            jac = []  # jac[o][i]: out_leaves[o].shape + leaves[i].shape
            if forward:
                us = [flow.zeros_like(o).requires_grad_(True) for o in out_leaves]
                g = _grads(out_leaves, leaves, us, True)
                per_leaf = [[None] * len(leaves) for _ in out_leaves]
                for i, x in enumerate(leaves):
                    n = x.numel()
                    if n == 0:
                        cols = [
                            flow.zeros((0,) + tuple(ol.shape), dtype=ol.dtype) for ol in out_leaves
                        ]
                    else:
                        # one jacobian-vector product per basis vector, batched by vmap
                        basis = _eye(n, x)
                        cols = vmap(
                            lambda e, i=i, x=x: tuple(
                                _grads([g[i]], us, [e.reshape(x.shape)], ctx.create)
                            )
                        )(basis)
                    for o, ol in enumerate(out_leaves):
                        col = cols[o].reshape((n,) + tuple(ol.shape))
                        perm = tuple(range(1, ol.dim() + 1)) + (0,)
                        per_leaf[o][i] = col.permute(perm).reshape(tuple(ol.shape) + tuple(x.shape))
                jac = per_leaf
            else:
                for ol in out_leaves:
                    n = ol.numel()
                    if n == 0:
                        rows = [flow.zeros((0,) + tuple(x.shape), dtype=x.dtype) for x in leaves]
                    else:
                        # one vector-jacobian product per basis vector, batched by vmap
                        basis = _eye(n, ol)
                        rows = vmap(
                            lambda e, ol=ol: tuple(
                                _grads([ol], leaves, [e.reshape(ol.shape)], ctx.create)
                            )
                        )(basis)
                    jac.append(
                        [r.reshape(tuple(ol.shape) + tuple(x.shape)) for r, x in zip(rows, leaves)]
                    )
        per_out = [j[0] if isinstance(argnums, int) else tuple(j) for j in jac]
        res = _unflatten(per_out, out_spec)
        return (res, aux) if has_aux else res

    return wrapped


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """torch.func.jacrev: the Jacobian of func w.r.t. args[argnums] by reverse mode (one
    backward pass per output element); shape output.shape + input.shape."""
    return _jacobian(func, argnums, has_aux, "jacrev(f)(*args)", forward=False)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the Jacobian of func w.r.t. args[argnums], column by column (one
    jacobian-vector product per input element); the same values as jacrev."""
    return _jacobian(func, argnums, has_aux, "jacfwd(f)(*args)", forward=True)


def hessian(func, argnums=0):
    """torch.func.hessian: jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- modules ------------------------------------------------------------------------------------
def functional_call(
    module, parameter_and_buffer_dicts, args, kwargs=None, *, tie_weights=True, strict=False
):
    """nn.utils.stateless.functional_call; parameter_and_buffer_dicts may also be a tuple of
    dicts (merged; a name given twice raises ValueError)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    else:
        merged = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior of functional call is "
                        "ambiguous"
                    )
                merged[k] = v
    return _functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """torch.func.stack_module_state: ({name: stacked parameters}, {name: stacked buffers}) of
    models with the same structure; the stacked parameters are new leaves (requires_grad as the
    originals')."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    ref = type(models[0])
    if not all(type(m) is ref for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {}
    for name, p in models[0].named_parameters():
        s = flow.stack([dict(m.named_parameters())[name].detach() for m in models])
        params[name] = s.requires_grad_(p.requires_grad)
    buffers = {
        name: flow.stack([dict(m.named_buffers())[name] for m in models])
        for name, _ in models[0].named_buffers()
    }
    return params, buffers
