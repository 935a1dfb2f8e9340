"""Tensors print as PyTorch prints them (oneflow_like/_tensor_str.py): compared character for
character with the installed torch's repr (dtype names differ only in the package name)."""
import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")


def _same(ours, theirs):
    assert repr(ours).replace("oneflow_like.", "torch.") == repr(theirs)


@pytest.mark.parametrize(
    "values",
    [
        [-1.0000001], [1.5, 2.25], [1e-5, 1.0], [123456.7, 1.0], [0.1, 0.2], [1e9, 1.0],
        [1.0, 2.0, float("nan"), -float("inf")], [0.0, -0.0], [[1, 2], [3, 4]], [True, False],
        [-3.0, 2.0, 1000.0], [5e-5], 3.5, 2.0, 7, [],
    ],
)  # fmt: skip
def test_values_print_as_torch(values):
    _same(flow.tensor(values), torch.tensor(values))


@pytest.mark.parametrize(
    "shape", [(2000,), (40, 40), (5, 6, 7), (3, 100), (2, 1000), (0, 3), (12, 1), ()]
)
def test_shapes_summaries_and_wrapping_as_torch(shape):
    x = np.asarray(np.random.RandomState(0).randn(*shape) * 10, dtype=np.float32)
    _same(flow.from_numpy(x.copy()), torch.from_numpy(x.copy()))
    xi = np.asarray((x * 100).astype(np.int64))
    _same(flow.from_numpy(xi.copy()), torch.from_numpy(xi.copy()))


@pytest.mark.parametrize(
    "name", ["float64", "int32", "float16", "bfloat16", "uint8", "int8", "bool"]
)
def test_dtypes_print_as_torch(name):
    v = [[1.5, 2.0], [3.25, 4]] if name != "bool" else [[True, False]]
    _same(flow.tensor(v, dtype=getattr(flow, name)), torch.tensor(v, dtype=getattr(torch, name)))


def test_complex_grad_and_parameter_print_as_torch():
    z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j, 1e-6j], np.complex64)
    _same(flow.from_numpy(z.copy()), torch.from_numpy(z.copy()))
    w = flow.randn(3, requires_grad=True)
    tw = torch.from_numpy(w.detach().numpy()).requires_grad_()
    _same(w, tw)
    assert repr(w * 2).startswith(repr(tw * 2).split(", grad_fn")[0] + ", grad_fn=<")
    _same(flow.nn.Parameter(flow.ones(2)), torch.nn.Parameter(torch.ones(2)))
    old = flow.get_default_dtype()
    try:
        flow.set_default_dtype(flow.float64), torch.set_default_dtype(torch.float64)
        _same(flow.tensor([1.5, 2.0]), torch.tensor([1.5, 2.0]))
        _same(
            flow.tensor([1.5, 2.0], dtype=flow.float32),
            torch.tensor([1.5, 2.0], dtype=torch.float32),
        )
    finally:
        flow.set_default_dtype(old), torch.set_default_dtype(torch.float32)


def test_printoptions_as_torch():
    x = np.arange(100, dtype=np.float32).reshape(10, 10) / 3
    try:
        for kw in (dict(precision=2, sci_mode=True), dict(profile="short"),
                   dict(threshold=5, edgeitems=2), dict(linewidth=40), dict(sci_mode=False),
                   dict(profile="full")):  # fmt: skip
            flow.set_printoptions(**kw), torch.set_printoptions(**kw)
            _same(flow.from_numpy(x.copy()), torch.from_numpy(x.copy()))
            _same(flow.tensor([1.5e-7, 200.0]), torch.tensor([1.5e-7, 200.0]))
            nf = [0.0, float("nan"), -float("inf")]  # nothing finite and non-zero to measure
            _same(flow.tensor(nf), torch.tensor(nf))
    finally:
        flow.set_printoptions(profile="default"), torch.set_printoptions(profile="default")
    assert flow._tensor_str.get_printoptions()["precision"] == 4
