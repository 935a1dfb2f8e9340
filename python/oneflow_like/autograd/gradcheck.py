"""torch.autograd.gradcheck / gradgradcheck: analytical gradients (vector-Jacobian products,
one per output element; fast_mode: one per output) against central finite differences, with
torch's signature, complex inputs and outputs included.

Inputs that require grad should be float64: finite differences in float32 are too coarse for
the default tolerances (a warning says so, as torch)."""
import warnings

import numpy as np

from .. import _C


class GradcheckError(RuntimeError):
    """A gradient check failed (torch.autograd.gradcheck.GradcheckError)."""


def _tensors(x):
    return [t for t in (x if isinstance(x, (list, tuple)) else [x])]


def _outputs(func, inputs):
    out = func(*inputs)
    return [o for o in _tensors(out) if isinstance(o, _C.Tensor)]


# Complex values are checked in real form, as torch's gradcheck checks them: a complex input of
# n elements is 2n real parameters (its real parts, then its imaginary parts; the finite
# differences perturb x by eps and by eps * 1j), a complex output two real functions (its real
# part and its imaginary part, checked one after the other). By torch's convention, the gradient
# returned for grad_output g at a complex output is dL/d(re x) + i dL/d(im x) of the real loss
# L = <re g, re out> + <im g, im out>: grad_output 1 (1j) at an element gives the derivatives of
# that element's real (imaginary) part, split into the gradient's real and imaginary parts.
def _cols(t):
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _real_form(a, is_complex):
    """A gradient (or perturbation) as the real vector of its input's real parameters."""
    a = np.asarray(a).reshape(-1)
    return np.concatenate([a.real, a.imag]) if is_complex else a.real.astype(np.float64)


def _parts(o):
    """(name, numpy part, grad_output unit) per real function of output o."""
    if o.dtype.is_complex:
        return [("imaginary", np.imag, 1j), ("real", np.real, 1.0)]  # torch's order
    return [(None, np.real, 1.0)]


def _host(t):
    import oneflow_like as flow

    t = t.detach().to("cpu")
    return t.to(flow.complex128 if t.dtype.is_complex else flow.float64).numpy().reshape(-1)


def _perturbed_outputs(func, inputs, i, delta):
    """func's outputs (host arrays) with inputs[i] moved by delta (an array of its shape)."""
    import oneflow_like as flow

    x = inputs[i]
    base = x.detach().to("cpu").numpy()
    base = base.astype(np.complex128 if x.dtype.is_complex else np.float64)
    xi = flow.tensor(base + delta, dtype=x.dtype, device=x.device).requires_grad_(True)
    args = list(inputs)
    args[i] = xi
    # with grad on: func may differentiate inside (gradgradcheck's first gradients)
    return [_host(o) for o in _outputs(func, args)]


def _unit(x, j):
    """The perturbation of real parameter j of input x (an imaginary one for complex x)."""
    n = x.numel()
    d = np.zeros(n, dtype=np.complex128 if x.dtype.is_complex else np.float64)
    if j < n:
        d[j] = 1.0
    else:
        d[j - n] = 1j
    return d.reshape(tuple(x.shape))


def _numerical_jacobians(func, inputs, wrt, outputs, eps):
    """jac[k][p][c]: d part p of outputs[k] / d the real parameters of inputs[wrt[c]], as
    (out numel, real parameters) float64 arrays (central differences)."""
    jac = [[[np.zeros((o.numel(), _cols(inputs[i]))) for i in wrt] for _ in _parts(o)]
           for o in outputs]  # fmt: skip
    for c, i in enumerate(wrt):
        x = inputs[i]
        for j in range(_cols(x)):
            d = _unit(x, j) * eps
            plus = _perturbed_outputs(func, inputs, i, d)
            minus = _perturbed_outputs(func, inputs, i, -d)
            for k, o in enumerate(outputs):
                for p, (_, part, _) in enumerate(_parts(o)):
                    jac[k][p][c][:, j] = (part(plus[k]) - part(minus[k])) / (2 * eps)
    return jac


def _vjp(o, targets, g):
    """The gradients of o for grad_output g (a host array of o's shape), host arrays in real
    form (None where unused)."""
    import oneflow_like as flow

    g = flow.tensor(np.asarray(g).reshape(tuple(o.shape)), dtype=o.dtype, device=o.device)
    grads = flow.autograd.grad([o], targets, grad_outputs=[g], retain_graph=True,
                               allow_unused=True)  # fmt: skip
    return [None if gi is None else _real_form(_host(gi), t.dtype.is_complex)
            for gi, t in zip(grads, targets)]  # fmt: skip


def _analytical_jacobians(inputs, wrt, outputs):
    targets = [inputs[i] for i in wrt]
    jac = [[[np.zeros((o.numel(), _cols(t))) for t in targets] for _ in _parts(o)]
           for o in outputs]  # fmt: skip
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for p, (_, _, unit) in enumerate(_parts(o)):
            for r in range(o.numel()):
                onehot = np.zeros(o.numel(), dtype=np.complex128 if o.dtype.is_complex else float)
                onehot[r] = unit
                for c, gi in enumerate(_vjp(o, targets, onehot)):
                    if gi is not None:
                        jac[k][p][c][r] = gi
    return jac


def _fast_quantities(func, inputs, wrt, outputs, eps, seed=0):
    """torch's fast mode: v^T J u per (output part, input) for random unit vectors u (over the
    input's real parameters) and v (over the output part's elements), numerically (one
    directional difference per input) and analytically (one vjp per output part). Returns
    (analytical, numerical), each [k][p][c] scalars."""
    rng = np.random.default_rng(seed)
    us = []
    for i in wrt:
        u = rng.standard_normal(_cols(inputs[i]))
        us.append(u / max(np.linalg.norm(u), 1e-300))
    vs = [[rng.standard_normal(o.numel()) for _ in _parts(o)] for o in outputs]
    numerical = [[[0.0] * len(wrt) for _ in _parts(o)] for o in outputs]
    for c, i in enumerate(wrt):
        x = inputs[i]
        u = us[c]
        n = x.numel()
        d = (u[:n] + 1j * u[n:]) if x.dtype.is_complex else u
        d = d.reshape(tuple(x.shape)) * eps
        plus = _perturbed_outputs(func, inputs, i, d)
        minus = _perturbed_outputs(func, inputs, i, -d)
        for k, o in enumerate(outputs):
            for p, (_, part, _) in enumerate(_parts(o)):
                numerical[k][p][c] = float(
                    vs[k][p] @ ((part(plus[k]) - part(minus[k])) / (2 * eps))
                )
    targets = [inputs[i] for i in wrt]
    analytical = [[[0.0] * len(wrt) for _ in _parts(o)] for o in outputs]
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for p, (_, _, unit) in enumerate(_parts(o)):
            for c, gi in enumerate(_vjp(o, targets, vs[k][p] * unit)):
                if gi is not None:
                    analytical[k][p][c] = float(gi @ us[c])
    return analytical, numerical


def _mismatch(o, p, k, i, numerical, analytical):
    name = _parts(o)[p][0]
    prefix = f"While considering the {name} part of complex outputs only, " if name else ""
    return (f"{prefix}Jacobian mismatch for output {k} with respect to input {i},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")  # fmt: skip


def _compare(outputs, wrt, analytical, numerical, rtol, atol):
    """The first mismatch's message, or None."""
    for k, o in enumerate(outputs):
        for p in range(len(_parts(o))):
            for c, i in enumerate(wrt):
                a, n = analytical[k][p][c], numerical[k][p][c]
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    return _mismatch(o, p, k, i, n, a)
    return None


_FAST_NOTE = (
    "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
)


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              check_sparse_nnz=False, nondet_tol=0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False):  # fmt: skip
    """True when the gradients of func(*inputs) with respect to the inputs that require grad
    match finite differences (|analytical - numerical| <= atol + rtol * |numerical|), complex
    inputs and outputs in real form (see above); else raises GradcheckError (or returns False
    with raise_exception=False). fast_mode compares v^T J u for random u, v instead of whole
    Jacobians (on a mismatch the slow mode's Jacobians are reported too, as torch)."""
    import oneflow_like as flow

    if check_forward_ad or check_batched_forward_grad or check_sparse_nnz:
        raise NotImplementedError(
            "[gradcheck] forward-mode AD and sparse inputs are not supported by this runtime"
        )
    inputs = tuple(_tensors(inputs))
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, _C.Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("[gradcheck] expects at least one input tensor to require gradient")
    for i in wrt:
        if inputs[i].dtype not in (flow.float64, flow.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                f"complex ({inputs[i].dtype}). This check will likely fail if all the inputs "
                f"are not of double precision floating point or complex."
            )
    outputs = _outputs(func, inputs)
    if not check_backward_ad:
        return True
    if fast_mode:
        analytical, numerical = _fast_quantities(func, inputs, wrt, outputs, eps)
        again, _ = _fast_quantities(func, inputs, wrt, outputs, eps)
    else:
        analytical = _analytical_jacobians(inputs, wrt, outputs)
        # Reentrancy: a second backward with the same grad_outputs must give the same values.
        again = _analytical_jacobians(inputs, wrt, outputs)
    for k, o in enumerate(outputs):
        for p in range(len(_parts(o))):
            for c, i in enumerate(wrt):
                if np.abs(np.asarray(again[k][p][c]) - analytical[k][p][c]).max(initial=0) > (
                    nondet_tol
                ):
                    return _fail(
                        f"Backward is not reentrant, i.e., running backward with same input and "
                        f"grad_output multiple times gives different values for output {k} with "
                        f"respect to input {i} (nondet_tol={nondet_tol})",
                        raise_exception,
                    )
    if not fast_mode:
        numerical = _numerical_jacobians(func, inputs, wrt, outputs, eps)
    msg = _compare(outputs, wrt, analytical, numerical, rtol, atol)
    if msg is not None:
        if fast_mode:
            slow = _compare(
                outputs,
                wrt,
                _analytical_jacobians(inputs, wrt, outputs),
                _numerical_jacobians(func, inputs, wrt, outputs, eps),
                rtol,
                atol,
            )
            msg += _FAST_NOTE + (slow or "(the slow mode's Jacobians match)\n")
        return _fail(msg, raise_exception)
    if check_grad_dtypes:
        for k, o in enumerate(outputs):
            if not o.requires_grad:
                continue
            grads = flow.autograd.grad(
                [o], [inputs[i] for i in wrt], grad_outputs=[flow.ones_like(o)],
                retain_graph=True, allow_unused=True,
            )  # fmt: skip
            for c, g in enumerate(grads):
                t = inputs[wrt[c]]
                if g is not None and (g.dtype != t.dtype or g.shape != t.shape):
                    return _fail(
                        f"Gradient has dtype mismatch or shape mismatch for input {wrt[c]}: "
                        f"{g.dtype} {list(g.shape)} vs {t.dtype} {list(t.shape)}",
                        raise_exception,
                    )
    if check_undefined_grad:
        # Zero output gradients must give zero (or no) input gradients.
        diff = [o for o in outputs if o.requires_grad]
        if diff:
            grads = flow.autograd.grad(
                diff, [inputs[i] for i in wrt], grad_outputs=[flow.zeros_like(o) for o in diff],
                retain_graph=True, allow_unused=True,
            )  # fmt: skip
            for c, g in enumerate(grads):
                if g is not None and g.abs().max().item() != 0:
                    return _fail(
                        f"Expected backward function to handle undefined output grads: a "
                        f"zero grad_output gave a nonzero gradient for input {wrt[c]}",
                        raise_exception,
                    )
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False):  # fmt: skip
    """Second derivatives: gradcheck of (inputs, grad_outputs) -> the gradients of func built
    with create_graph=True; grad_outputs default to random float64 tensors (requiring grad)."""
    import oneflow_like as flow

    if check_fwd_over_rev:
        raise NotImplementedError("[gradgradcheck] forward-mode AD is not supported")
    inputs = tuple(_tensors(inputs))
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(
            flow.randn(*o.shape, dtype=o.dtype, device=o.device).requires_grad_(
                o.dtype.is_floating_point or o.dtype.is_complex
            )
            for o in outputs
        )
    else:
        grad_outputs = tuple(_tensors(grad_outputs))
    n_in = len(inputs)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, _C.Tensor) and t.requires_grad]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _outputs(func, ins)
        pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        grads = flow.autograd.grad(
            [o for o, _ in pairs], [ins[i] for i in wrt], grad_outputs=[g for _, g in pairs],
            create_graph=True, allow_unused=True,
        )  # fmt: skip
        return tuple(g for g in grads if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(
        first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        fast_mode=fast_mode,
    )  # fmt: skip
