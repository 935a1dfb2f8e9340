"""torch.autograd.gradcheck / gradgradcheck: analytical gradients (vector-Jacobian products,
one per output element) against central finite differences, with torch's signature.

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


def _numerical_jacobians(func, inputs, wrt, outputs, eps):
    """jac[k][i]: d outputs[k] / d inputs[wrt[i]] as (out numel, in numel) float64 arrays."""
    import oneflow_like as flow

    jac = [[np.zeros((o.numel(), inputs[i].numel())) for i in wrt] for o in outputs]
    for col, i in enumerate(wrt):
        x = inputs[i]
        base = x.detach().to("cpu").numpy().astype(np.float64)
        for j in range(base.size):
            vals = []
            for sign in (1.0, -1.0):
                pert = base.copy()
                pert.flat[j] += sign * eps
                xi = flow.tensor(pert, dtype=x.dtype, device=x.device).requires_grad_(True)
                args = list(inputs)
                args[i] = xi
                # with grad on: func may differentiate inside (gradgradcheck's first gradients)
                vals.append([o.detach().to("cpu").to(flow.float64).numpy().reshape(-1)
                             for o in _outputs(func, args)])  # fmt: skip
            for k in range(len(outputs)):
                jac[k][col][:, j] = (vals[0][k] - vals[1][k]) / (2 * eps)
    return jac


def _analytical_jacobians(inputs, wrt, outputs):
    import oneflow_like as flow

    targets = [inputs[i] for i in wrt]
    jac = [[np.zeros((o.numel(), t.numel())) for t in targets] for o in outputs]
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            onehot = np.zeros(o.numel())
            onehot[r] = 1.0
            g = flow.tensor(onehot.reshape(tuple(o.shape)), dtype=o.dtype, device=o.device)
            grads = flow.autograd.grad(
                [o], targets, grad_outputs=[g], retain_graph=True, allow_unused=True
            )
            for c, gi in enumerate(grads):
                if gi is not None:
                    jac[k][c][r] = gi.to("cpu").to(flow.float64).numpy().reshape(-1)
    return jac


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
    match finite differences (|analytical - numerical| <= atol + rtol * |numerical|); else
    raises GradcheckError (or returns False with raise_exception=False)."""
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
        if inputs[i].dtype != flow.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point "
                f"({inputs[i].dtype}). This check will likely fail if all the inputs are not "
                f"of double precision floating point."
            )
    outputs = _outputs(func, inputs)
    if not check_backward_ad:
        return True
    analytical = _analytical_jacobians(inputs, wrt, outputs)
    # Reentrancy: a second backward with the same grad_outputs must give the same values.
    again = _analytical_jacobians(inputs, wrt, outputs)
    for k in range(len(outputs)):
        for c, i in enumerate(wrt):
            if np.abs(again[k][c] - analytical[k][c]).max(initial=0) > nondet_tol:
                return _fail(
                    f"Backward is not reentrant, i.e., running backward with same input and "
                    f"grad_output multiple times gives different values for output {k} with "
                    f"respect to input {i} (nondet_tol={nondet_tol})",
                    raise_exception,
                )
    numerical = _numerical_jacobians(func, inputs, wrt, outputs, eps)
    for k in range(len(outputs)):
        for c, i in enumerate(wrt):
            a, n = analytical[k][c], numerical[k][c]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n",
                    raise_exception,
                )
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
                o.dtype.is_floating_point
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
    )  # fmt: skip
