"""Linear algebra family: matmul (NumPy semantics), mm, bmm, addmm, linear; forward in f32/f64
against float64 NumPy and backward against numerical gradients."""
import re

import numpy as np
import pytest

import oneflow_like as flow
from op_testing import check_op, rand


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (4, 5)),  # 2-D
        ((4,), (4,)),  # dot
        ((4,), (4, 3)),  # vector @ matrix
        ((3, 4), (4,)),  # matrix @ vector
        ((2, 3, 4), (4, 5)),  # batched @ matrix (folded into one GEMM)
        ((4,), (2, 4, 5)),  # vector @ batched
        ((2, 3, 4), (2, 4, 5)),  # bmm
        ((2, 1, 3, 4), (3, 4, 2)),  # broadcast batch dims
        ((3, 4), (2, 4, 5)),  # matrix @ batched (batch-broadcast grad reduced)
        ((17, 33), (33, 19)),  # above the small-loop threshold: BLAS
        ((2, 20, 16), (16, 24)),
    ],
)
def test_matmul(sa, sb):
    check_op(flow.matmul, np.matmul, [rand(sa), rand(sb)])


def test_matmul_operator_and_methods():
    a, b = rand((5, 6)), rand((6, 7))
    check_op(lambda x, y: x @ y, np.matmul, [a, b])
    check_op(lambda x, y: x.matmul(y), np.matmul, [a, b])
    check_op(lambda x, y: x.mm(y), np.matmul, [a, b])
    check_op(flow.mm, np.matmul, [a, b])
    r = flow.tensor(b.astype(np.float32)).__rmatmul__(flow.tensor(a.astype(np.float32)))
    np.testing.assert_allclose(r.detach().numpy(), a @ b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [3, 40])
def test_transposed_views_use_blas_flags(n):
    # Transposed and sliced operands: the kernel reads them in place (trans flags) or packs them.
    a, b = rand((n + 2, n)), rand((n, n + 3))
    check_op(lambda x, y: x.t() @ y.t(), lambda x, y: x.T @ y.T, [b, a])
    # No unit stride in the matrix dims: packed before the GEMM.
    check_op(
        lambda c, d: c.permute(2, 0, 1) @ d,
        lambda c, d: c.transpose(2, 0, 1) @ d,
        [rand((n, n + 1, 2)), rand((n + 1, 3))],
    )


def test_bmm():
    check_op(flow.bmm, np.matmul, [rand((3, 4, 5)), rand((3, 5, 2))])
    check_op(flow.bmm, np.matmul, [rand((2, 30, 20)), rand((2, 20, 25))])


def test_batched_small_products():
    # Attention-shaped products: many small matrices, transposed operands, 2 batch dims.
    check_op(
        lambda q, k: q @ k.transpose(-2, -1),
        lambda q, k: q @ np.swapaxes(k, -1, -2),
        [rand((2, 3, 20, 16)), rand((2, 3, 24, 16))],
    )
    check_op(
        lambda p, v: p.transpose(-2, -1) @ v,
        lambda p, v: np.swapaxes(p, -1, -2) @ v,
        [rand((4, 24, 20)), rand((4, 24, 16))],
    )
    # A broadcast batch operand.
    check_op(flow.matmul, np.matmul, [rand((3, 20, 16)), rand((1, 16, 24))])


@pytest.mark.parametrize("shape_in", [(3, 5), (5,), (1, 5), ()])
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0)])
def test_addmm(shape_in, beta, alpha):
    check_op(
        lambda i, x, y: flow.addmm(i, x, y, beta=beta, alpha=alpha),
        lambda i, x, y: beta * i + alpha * (x @ y),
        [rand(shape_in), rand((3, 4)), rand((4, 5))],
    )


def test_addmm_large_and_beta_zero():
    check_op(
        lambda i, x, y: flow.addmm(i, x, y, beta=0.5, alpha=-1.5),
        lambda i, x, y: 0.5 * i + -1.5 * (x @ y),
        [rand((40,)), rand((30, 20)), rand((20, 40))],
    )
    check_op(
        lambda i, x, y: flow.addmm(i, x, y, beta=0.0),
        lambda i, x, y: x @ y,
        [rand((3, 5)), rand((3, 4)), rand((4, 5))],
        grad_inputs=[1, 2],
    )


@pytest.mark.parametrize("xs", [(4, 6), (2, 3, 6), (6,), (40, 30)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(xs, bias):
    k = xs[-1]
    arrays = [rand(xs), rand((5, k))] + ([rand((5,))] if bias else [])
    ref = (lambda x, w, b: x @ w.T + b) if bias else (lambda x, w: x @ w.T)
    check_op(flow.linear, ref, arrays)


def test_linear_non_contiguous_input():
    x, w, b = rand((6, 4)), rand((5, 6)), rand((5,))
    check_op(lambda x, w, b: flow.linear(x.t(), w, b), lambda x, w, b: x.T @ w.T + b, [x, w, b])


def test_integer_matmul():
    a = np.arange(12).reshape(3, 4)
    b = np.arange(8).reshape(4, 2)
    r = flow.matmul(flow.tensor(a), flow.tensor(b))
    assert r.dtype == flow.int64
    np.testing.assert_array_equal(r.detach().numpy(), a @ b)


def test_empty_and_zero_k():
    r = flow.matmul(flow.zeros(3, 0), flow.zeros(0, 4))
    np.testing.assert_array_equal(r.detach().numpy(), np.zeros((3, 4)))
    assert tuple(flow.matmul(flow.zeros(0, 3), flow.zeros(3, 4)).shape) == (0, 4)


def test_double_backward():
    x = flow.tensor(rand((3, 4)), dtype=flow.float64, requires_grad=True)
    w = flow.tensor(rand((4, 2)), dtype=flow.float64, requires_grad=True)
    y = (x @ w).sum()
    (gx,) = flow.autograd.grad([y], [x], create_graph=True)
    (gw,) = flow.autograd.grad([gx.sum()], [w])
    np.testing.assert_allclose(gw.detach().numpy(), np.full((4, 2), 3.0))


def test_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"\[matmul\].*got f32\[2,3\] and f32\[4,5\]"):
        flow.matmul(flow.zeros(2, 3), flow.zeros(4, 5))
    with pytest.raises(ValueError, match=r"\[matmul\].*f32\[2,2,3\].*f32\[3,3,4\]"):
        flow.matmul(flow.zeros(2, 2, 3), flow.zeros(3, 3, 4))
    with pytest.raises(ValueError, match=r"\[matmul\].*1-D"):
        flow.matmul(flow.zeros(()), flow.zeros(3))
    with pytest.raises(TypeError, match=r"\[matmul\].*f32\[2,3\].*f64\[3,4\]"):
        flow.matmul(flow.zeros(2, 3), flow.zeros(3, 4, dtype=flow.float64))
    with pytest.raises(ValueError, match=r"\[mm\]"):
        flow.mm(flow.zeros(2, 3, 4), flow.zeros(4, 5))
    with pytest.raises(ValueError, match=r"\[bmm\]"):
        flow.bmm(flow.zeros(2, 3, 4), flow.zeros(3, 4, 5))
    with pytest.raises(ValueError, match=r"\[linear\].*f32\[2,3\].*f32\[4,5\]"):
        flow.linear(flow.zeros(2, 3), flow.zeros(4, 5))
    with pytest.raises(ValueError, match=r"\[matmul\] bias"):
        flow.addmm(flow.zeros(4), flow.zeros(2, 3), flow.zeros(3, 5))


# ---- the matmul table (oneflow_like/opdefs/matmul.def) -------------------------------------------
# Its APIs are tested above: every name is a Python function and, kind fn_method, a Tensor method
# with the PyTorch signature of its sig; all run the one op, matmul.
MATMUL_APIS = {
    "addmm": ("fn_method", "addmm"),
    "bmm": ("fn_method", "mat2"),
    "linear": ("fn", "linear"),
    "matmul": ("fn_method", "other"),
    "mm": ("fn_method", "mat2"),
}
MATMUL_SIG_ARGS = {  # the function's arguments; its Tensor method's take self for the first
    "other": ["input", "other"],
    "mat2": ["input", "mat2"],
    "addmm": ["input", "mat1", "mat2", "*", "beta", "alpha"],
    "linear": ["input", "weight", "bias"],
}


def _signature_args(fn, name):
    """The argument names in a pybind11 docstring's first line `name(a: T, *, b: T = d) -> R`."""
    line = fn.__doc__.splitlines()[0]
    assert line.startswith(name + "(") and ") -> " in line, line
    inner = line[len(name) + 1 : line.rindex(") -> ")]
    return [p.split(":")[0].strip() for p in inner.split(", ")]


def test_every_matmul_api_is_declared_once_with_the_table_defaults():
    table = flow._C._matmul_table()
    apis = {a["name"]: (a["kind"], a["sig"]) for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == MATMUL_APIS
    assert [a["entry"] for a in table["apis"] if a["name"] == "mm"] == ["Mm"]
    (op,) = table["ops"]
    assert op["name"] == "matmul" and op["grad"] == "MatmulGrad" and op["save"] == "cross"
    assert op["layout"] == "strided" and op["lowp"] == "all"  # oneDNN on the CPU, cuBLAS on CUDA
    assert op["attrs"] == {"alpha": 1.0, "beta": 0.0}  # beta 0: no bias term
    for name, (kind, sig) in MATMUL_APIS.items():
        args = MATMUL_SIG_ARGS[sig]
        assert _signature_args(getattr(flow._C, name), name) == args
        if kind == "fn_method":
            assert _signature_args(getattr(flow.Tensor, name), name) == ["self"] + args[1:]
    # alpha's default is the struct's; beta's is PyTorch's (the input term in full)
    alpha = op["attrs"]["alpha"]
    for fn in (flow._C.addmm, flow.Tensor.addmm):
        assert f"beta: float = 1.0, alpha: float = {alpha}" in fn.__doc__
    assert re.search(r"bias: Optional\[\S*Tensor\] = None\)", flow._C.linear.__doc__)
    i, a, b = flow.ones(2, 2), flow.ones(2, 3), flow.ones(3, 2)
    np.testing.assert_allclose(flow._C.addmm(i, a, b).detach().numpy(), np.full((2, 2), 4.0))
    # Tensor.matmul takes what @ takes (a nested list becomes a tensor like self)
    np.testing.assert_allclose(a.matmul([[1.0], [1.0], [1.0]]).detach().numpy(), [[3.0], [3.0]])


def test_matmul_api_errors_name_the_op():
    with pytest.raises(TypeError, match=r"mm\(\): incompatible function arguments"):
        flow._C.mm(flow.zeros(2, 2), 3)
    with pytest.raises(TypeError, match=r"addmm\(\): incompatible function arguments"):
        flow.zeros(2, 2).addmm(flow.zeros(2, 2), flow.zeros(2, 2), 1.0)  # beta is keyword-only
    with pytest.raises(ValueError, match=r"\[bmm\] expected 3-D tensors"):
        flow.zeros(2, 2).bmm(flow.zeros(2, 2))
    with pytest.raises(ValueError, match=r"\[linear\] bias f32\[3\] does not match"):
        flow._C.linear(flow.zeros(2, 3), flow.zeros(4, 3), flow.zeros(3))


# f32 products large enough for device/cpu/gemm.h's real implementations (the cases above are
# mostly small-loop or float64): oneDNN for single products with every dim >= 64 and for batches
# of small products read through views, OpenBLAS split over threads for thin ones, sgemv for a
# row vector. Forward and autograd gradients against float64 NumPy.
F32_CASES = [
    ("single", lambda a, b: a @ b.t(), lambda a, b: a @ b.T, [(128, 300), (200, 300)]),
    ("thin", lambda a, b: a @ b, lambda a, b: a @ b, [(150, 400), (400, 10)]),
    ("row_vector", lambda a, b: a @ b, lambda a, b: a @ b, [(1, 700), (700, 300)]),
    ("lhs_transposed", lambda a, b: a.t() @ b, lambda a, b: a.T @ b, [(256, 96), (256, 80)]),
    (
        "attention_views",
        lambda q, k: q.transpose(1, 2) @ k.permute(0, 2, 3, 1),
        lambda q, k: np.swapaxes(q, 1, 2) @ np.transpose(k, (0, 2, 3, 1)),
        [(2, 40, 3, 16), (2, 36, 3, 16)],
    ),
    ("broadcast_batch", lambda a, b: a @ b, lambda a, b: a @ b, [(2, 1, 30, 64), (3, 64, 70)]),
]


def check_f32_products():
    for name, fn, np_fn, shapes in F32_CASES:
        arrays = [rand(s) for s in shapes]
        xs = [flow.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
        out = fn(*xs)
        want = np_fn(*arrays)
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-4, atol=1e-4, err_msg=name)
        up = np.random.default_rng(1).uniform(-1, 1, size=want.shape)
        out.backward(flow.tensor(up.astype(np.float32)))
        for i, x in enumerate(xs):
            # d/dx_i of sum(up * f(x)) by float64 autograd on the same composition.
            x64 = [flow.tensor(a, dtype=flow.float64, requires_grad=True) for a in arrays]
            fn(*x64).backward(flow.tensor(up, dtype=flow.float64))
            np.testing.assert_allclose(
                x.grad.detach().numpy(),
                x64[i].grad.detach().numpy(),
                rtol=1e-4,
                atol=1e-4,
                err_msg=f"{name}: gradient of input {i}",
            )


def test_f32_products_default_rule():
    check_f32_products()


@pytest.mark.parametrize("impl", ["openblas", "onednn"])
def test_f32_products_each_implementation(impl):
    # The implementation is fixed per process (read once): run the same checks in a child.
    import os
    import subprocess
    import sys

    env = dict(os.environ, ONEFLOW_LIKE_GEMM_IMPL=impl, ONEFLOW_LIKE_GEMM_LOG="1")
    code = (
        "import sys; sys.path.insert(0, %r); import test_ops_matmul as t; t.check_f32_products()"
        % (os.path.dirname(os.path.abspath(__file__)))
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    # Every product but the row vector's (always sgemv) ran on the forced implementation.
    calls = [line.split() for line in r.stderr.splitlines() if line.startswith("[gemm]")]
    assert calls, r.stderr
    for c in calls:
        if "m=1" not in c:
            assert c[-1] == impl, c


def test_onednn_falls_back_to_blas_for_layouts_it_cannot_build():
    # oneDNN has no matmul when a batch dim is broadcast in both operands; the chooser picks
    # oneDNN on machines with many cores (seen on the 16-core GPU host), forced here by the env.
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, oneflow_like as flow\n"
        "a = flow.randn(3, 30, 40).transpose(-1, -2).unsqueeze(0).expand(2, 3, 40, 30)\n"
        "b = flow.randn(3, 20, 30).transpose(-1, -2)\n"
        "c = flow.matmul(a, b)\n"
        "print(float(np.abs(c.detach().numpy() - np.matmul(a.detach().numpy(), b.detach().numpy())).max()))\n"
    )
    env = dict(os.environ, ONEFLOW_LIKE_GEMM_IMPL="onednn")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.strip().splitlines()[-1]) < 1e-4
