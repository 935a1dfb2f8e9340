"""flow.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp (torch.autograd.functional's
signatures), built on autograd.grad. Reverse mode only: vectorize=False, strategy="reverse-mode".
Second-order functions differentiate gradients (create_graph=True): see docs/architecture.md
"Autograd" for which ops are twice differentiable."""
from . import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _flow():
    import oneflow_like

    return oneflow_like


def _as_tuple(x, arg_name, fn_name):
    """(tuple of tensors, whether x was a tuple); anything but tensors raises TypeError."""
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, _flow().Tensor):
            where = f"{arg_name} {i}" if is_tuple else arg_name
            raise TypeError(
                f"The {where} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the value at index {i} has type {type(t).__name__}."
            )
    return xs, is_tuple


def _untuple(res, to_unpack):
    """Undoes _as_tuple: to_unpack is one flag (a tuple of results) or two (a nested tuple)."""
    if not isinstance(to_unpack, tuple):
        return res if to_unpack else res[0]
    outer, inner = to_unpack
    if not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _prepare_inputs(inputs, create_graph, need_graph):
    """Inputs that require grad: with create_graph, a view of a tensor that requires grad keeps
    its history (the result can be differentiated w.r.t. the caller's tensor); otherwise a
    detached copy of the reference."""
    res = []
    for t in inputs:
        if create_graph and t.requires_grad:
            res.append(t.view_as(t))
        else:
            res.append(t.detach().requires_grad_(need_graph))
    return tuple(res)


def _finish(xs, create_graph):
    """Results detached unless create_graph: nested tuples kept."""
    if isinstance(xs, tuple):
        return tuple(_finish(x, create_graph) for x in xs)
    if xs is None or create_graph:
        return xs
    return xs.detach()


def _check_v(v, other, fn_name):
    if len(v) != len(other):
        raise RuntimeError(
            f"[{fn_name}] v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
        )
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"[{fn_name}] the vector v is the wrong size: entry {i} has shape "
                f"{tuple(a.shape)}, expected {tuple(b.shape)}."
            )


def _check_requires_grad(outputs, what, strict):
    if not strict:
        return
    for i, o in enumerate(outputs):
        if o is None:
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if not o.requires_grad:
            raise RuntimeError(
                f"The {what} of the user-provided function with index {i} does not require "
                "gradients. The outputs must be computed in a differentiable manner from the "
                "input when running in strict mode."
            )


def _autograd_grad(outputs, inputs, grad_outputs, create_graph, retain_graph=True):
    """autograd.grad over the outputs that require grad; None for inputs they don't reach."""
    outs, gos = [], []
    for i, o in enumerate(outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(None if grad_outputs is None else grad_outputs[i])
    if not outs:
        return (None,) * len(inputs)
    return _grad(
        outs,
        list(inputs),
        gos,
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


def _fill_unused(grads, refs, strict, what, fn_name):
    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"[{fn_name}] the output of the user-provided function is independent of "
                    f"{what} {i}. This is not allowed in strict mode."
                )
            g = _flow().zeros_like(r)
        res.append(g)
    return tuple(res)


def _call(func, inputs, fn_name):
    outputs, is_out_tuple = _as_tuple(
        func(*inputs), "outputs of the user-provided function", fn_name
    )
    return outputs, is_out_tuple


def _check_options(fn_name, vectorize, strategy):
    if vectorize:
        raise NotImplementedError(f"[{fn_name}] vectorize=True is not supported; use the default")
    if strategy != "reverse-mode":
        raise NotImplementedError(
            f"[{fn_name}] strategy {strategy!r} is not supported; only 'reverse-mode' is"
        )


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of func at inputs."""
    with _flow().enable_grad():
        inputs, is_in_tuple = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare_inputs(inputs, create_graph, True)
        outputs, is_out_tuple = _call(func, inputs, "vjp")
        if v is not None:
            v, _ = _as_tuple(v, "v", "vjp")
            _check_v(v, outputs, "vjp")
        else:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError(
                    "[vjp] the vector v can only be None if the user-provided function returns "
                    "a single Tensor with a single element."
                )
        _check_requires_grad(outputs, "outputs", strict)
        grads = _autograd_grad(outputs, inputs, v, create_graph)
        vjp_res = _fill_unused(grads, inputs, strict, "input", "vjp")
    return _untuple(_finish(outputs, create_graph), is_out_tuple), _untuple(
        _finish(vjp_res, create_graph), is_in_tuple
    )


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by differentiating a vector-Jacobian
    product w.r.t. its vector (the backward is linear in it): the "double backward trick"."""
    with _flow().enable_grad():
        inputs, is_in_tuple = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare_inputs(inputs, create_graph, True)
        if v is not None:
            v, _ = _as_tuple(v, "v", "jvp")
            _check_v(v, inputs, "jvp")
        else:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError(
                    "[jvp] the vector v can only be None if the input to the user-provided "
                    "function is a single Tensor with a single element."
                )
        outputs, is_out_tuple = _call(func, inputs, "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        u = tuple(_flow().zeros_like(o).requires_grad_(True) for o in outputs)
        g = _autograd_grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(g, "grad_inputs", strict)
        if v is None:
            v = tuple(_flow().ones_like(t) for t in inputs)
        res = _autograd_grad(g, u, v, create_graph)
        jvp_res = _fill_unused(res, outputs, strict, "grad_input", "jvp")
    return _untuple(_finish(outputs, create_graph), is_out_tuple), _untuple(
        _finish(jvp_res, create_graph), is_out_tuple
    )


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """The Jacobian of func at inputs, one reverse pass per output element: entry [i][j] has the
    shape of output i followed by the shape of input j (tuples as torch nests them)."""
    _check_options("jacobian", vectorize, strategy)
    flow = _flow()
    with flow.enable_grad():
        inputs, is_in_tuple = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare_inputs(inputs, create_graph, True)
        outputs, is_out_tuple = _call(func, inputs, "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        jac = []
        for i, out in enumerate(outputs):
            flat = out.reshape(-1)
            rows = [[] for _ in inputs]
            for k in range(flat.numel()):
                if flat.requires_grad:
                    gs = _grad(
                        [flat[k]],
                        list(inputs),
                        retain_graph=True,
                        create_graph=create_graph,
                        allow_unused=True,
                    )
                else:
                    gs = (None,) * len(inputs)
                for j, (g, inp) in enumerate(zip(gs, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"[jacobian] output {i} of the user-provided function is "
                                f"independent of input {j}. This is not allowed in strict mode."
                            )
                        g = flow.zeros_like(inp)
                    rows[j].append(g)
            entry = []
            for j, inp in enumerate(inputs):
                shape = tuple(out.shape) + tuple(inp.shape)
                if rows[j]:
                    entry.append(flow.stack(rows[j]).reshape(shape))
                else:
                    entry.append(flow.zeros(shape, dtype=inp.dtype, device=inp.device))
            jac.append(tuple(entry))
        jac = _finish(tuple(jac), create_graph)
    return _untuple(jac, (is_out_tuple, is_in_tuple))


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a function with a single-element output: the Jacobian of its gradient."""
    _check_options("hessian", vectorize, outer_jacobian_strategy)
    inputs, is_in_tuple = _as_tuple(inputs, "inputs", "hessian")

    def scalar_func(*inp):
        out = func(*inp)
        out_t, is_tuple = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if is_tuple or out_t[0].numel() != 1:
            raise RuntimeError(
                "[hessian] the function given to hessian should return a single Tensor with "
                "one element"
            )
        return out_t[0].reshape(())

    def jac_func(*inp):
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict)
    return _untuple(res, (is_in_tuple, is_in_tuple))


def _scalar_output(func, inputs, fn_name):
    outputs, is_out_tuple = _call(func, inputs, fn_name)
    if is_out_tuple or outputs[0].numel() != 1:
        raise RuntimeError(
            f"[{fn_name}] the function given to {fn_name} should return a single Tensor with "
            "one element"
        )
    return outputs[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a single-element function."""
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product, by the double backward trick (the
    gradient of v^T (d/dx grad^T u) w.r.t. u), which holds for a non-symmetric Hessian too."""
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(fn_name, func, inputs, v, create_graph, strict):
    flow = _flow()
    with flow.enable_grad():
        inputs, is_in_tuple = _as_tuple(inputs, "inputs", fn_name)
        inputs = _prepare_inputs(inputs, create_graph, True)
        if v is not None:
            v, _ = _as_tuple(v, "v", fn_name)
            _check_v(v, inputs, fn_name)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                f"[{fn_name}] the vector v can only be None if the input to the user-provided "
                "function is a single Tensor with a single element."
            )
        else:
            v = (flow.ones_like(inputs[0]),)
        out = _scalar_output(func, inputs, fn_name)
        _check_requires_grad((out,), "outputs", strict)
        jac = _autograd_grad((out,), inputs, None, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        jac = _fill_unused(jac, inputs, strict, "input", fn_name)
        if fn_name == "vhp":
            res = _autograd_grad(jac, inputs, v, create_graph)
        else:
            u = tuple(flow.zeros_like(t).requires_grad_(True) for t in inputs)
            back = _autograd_grad(jac, inputs, u, create_graph=True)
            _check_requires_grad(back, "hessian", strict)
            res = _autograd_grad(back, u, v, create_graph)
        res = _fill_unused(res, inputs, strict, "input", fn_name)
    return _finish(out, create_graph), _untuple(_finish(res, create_graph), is_in_tuple)
