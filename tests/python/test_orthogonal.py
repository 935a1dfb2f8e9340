"""nn.utils.parametrizations.orthogonal against torch 1.13: the same weight wherever torch's is
deterministic (square matrices, use_trivialization=False), orthonormal columns/rows always,
gradients through every map, assignment through right_inverse, and the errors."""
import numpy as np
import pytest
import torch
from torch.nn.utils.parametrizations import orthogonal as t_orthogonal

import oneflow_like as flow
from oneflow_like.nn.utils.parametrizations import orthogonal


def twins(shape, seed):
    w = np.random.default_rng(seed).standard_normal(shape)
    f, t = flow.nn.Linear(shape[1], shape[0]).double(), torch.nn.Linear(shape[1], shape[0]).double()
    with flow.no_grad():
        f.weight.copy_(flow.tensor(w))
    with torch.no_grad():
        t.weight.copy_(torch.tensor(w))
    return f, t


def orthonormal_error(w):
    g = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    return np.abs(g - np.eye(min(w.shape))).max()


CASES = [
    (shape, mp, triv)
    for shape in ((4, 4), (5, 3), (3, 5))
    for mp in (None, "matrix_exp", "cayley", "householder")
    for triv in (True, False)
]


@pytest.mark.parametrize("shape,mp,triv", CASES)
def test_weight_is_orthonormal_and_equals_torch_where_deterministic(shape, mp, triv):
    f, t = twins(shape, 1)
    orthogonal(f, orthogonal_map=mp, use_trivialization=triv)
    t_orthogonal(t, orthogonal_map=mp, use_trivialization=triv)
    fw = f.weight.detach().numpy()
    assert orthonormal_error(fw) < 1e-12
    if shape[0] == shape[1] or not triv:  # otherwise torch completes the basis at random
        np.testing.assert_allclose(fw, t.weight.detach().numpy(), atol=1e-12)
    # gradients reach the unconstrained original and match torch's
    x = np.random.default_rng(2).standard_normal((2, shape[1]))
    f(flow.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    g = f.parametrizations.weight.original.grad.numpy()
    if shape[0] == shape[1] or not triv:
        np.testing.assert_allclose(g, t.parametrizations.weight.original.grad.numpy(), atol=1e-10)
    assert np.isfinite(g).all()


def test_training_keeps_orthogonality_and_assignment():
    f, _ = twins((5, 3), 3)
    orthogonal(f)
    opt = flow.optim.SGD(f.parameters(), lr=0.1)
    x = flow.randn(8, 3, dtype=flow.float64)
    for _ in range(5):
        loss = (f(x) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert orthonormal_error(f.weight.detach().numpy()) < 1e-10
    q = np.linalg.qr(np.random.default_rng(4).standard_normal((5, 3)))[0]
    with flow.no_grad():
        f.weight = flow.tensor(q)
    np.testing.assert_allclose(f.weight.detach().numpy(), q, atol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        orthogonal(flow.nn.Linear(3, 3), name="bias")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        orthogonal(flow.nn.Linear(3, 3), name="nope")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        orthogonal(flow.nn.Linear(3, 3), orthogonal_map="qr")
    m = orthogonal(flow.nn.Linear(3, 3), use_trivialization=False)
    with pytest.raises(
        NotImplementedError, match="not possible to assign to the matrix exponential"
    ):
        with flow.no_grad():
            m.weight = flow.eye(3)
