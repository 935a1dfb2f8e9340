"""flow.return_types (torch.return_types) and pickling tensors, against torch where it is installed.

Every op with several results returns torch's named tuple: same type name, field names and order,
torch's repr layout; the types pickle and unpickle, and so do tensors (plain pickle, as torch)."""
import copy
import pickle

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import return_types

try:
    import torch
except ImportError:  # the comparisons with torch skip
    torch = None


def _spd(n=3):
    a = np.random.RandomState(0).randn(n, n)
    return a @ a.T + n * np.eye(n)


X = np.random.RandomState(1).randn(3, 4).astype(np.float32)
A = _spd()

# (name of the expected return type, how ours is called, how torch's is called)
CASES = [
    ("max", lambda m, x, a: m.max(x, 1)),
    ("min", lambda m, x, a: m.min(x, 1)),
    ("sort", lambda m, x, a: m.sort(x, 1)),
    ("topk", lambda m, x, a: m.topk(x, 2)),
    ("kthvalue", lambda m, x, a: m.kthvalue(x, 2)),
    ("cummax", lambda m, x, a: m.cummax(x, 1)),
    ("cummin", lambda m, x, a: m.cummin(x, 1)),
    ("median", lambda m, x, a: m.median(x, 1)),
    ("nanmedian", lambda m, x, a: m.nanmedian(x, 1)),
    ("mode", lambda m, x, a: m.mode(x, 1)),
    ("aminmax", lambda m, x, a: m.aminmax(x)),
    ("frexp", lambda m, x, a: m.frexp(x)),
    ("histogram", lambda m, x, a: m.histogram(x, 4)),
    ("slogdet", lambda m, x, a: m.slogdet(a)),
    ("qr", lambda m, x, a: m.qr(a)),
    ("svd", lambda m, x, a: m.svd(a)),
    ("geqrf", lambda m, x, a: m.geqrf(a)),
    ("triangular_solve", lambda m, x, a: m.triangular_solve(a, a)),
    ("linalg_slogdet", lambda m, x, a: m.linalg.slogdet(a)),
    ("linalg_qr", lambda m, x, a: m.linalg.qr(a)),
    ("linalg_svd", lambda m, x, a: m.linalg.svd(a)),
    ("linalg_eigh", lambda m, x, a: m.linalg.eigh(a)),
    ("linalg_eig", lambda m, x, a: m.linalg.eig(a)),
    ("linalg_inv_ex", lambda m, x, a: m.linalg.inv_ex(a)),
    ("linalg_cholesky_ex", lambda m, x, a: m.linalg.cholesky_ex(a)),
    ("linalg_solve_ex", lambda m, x, a: m.linalg.solve_ex(a, a)),
    ("linalg_lu_factor", lambda m, x, a: m.linalg.lu_factor(a)),
    ("linalg_lu_factor_ex", lambda m, x, a: m.linalg.lu_factor_ex(a)),
    ("linalg_lu", lambda m, x, a: m.linalg.lu(a)),
    ("linalg_ldl_factor", lambda m, x, a: m.linalg.ldl_factor(a)),
    ("linalg_ldl_factor_ex", lambda m, x, a: m.linalg.ldl_factor_ex(a)),
    ("linalg_lstsq", lambda m, x, a: m.linalg.lstsq(a, a)),
    ("lu_unpack", lambda m, x, a: m.lu_unpack(*m.linalg.lu_factor(a))),
]


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_type_fields_and_pickle(name, call):
    r = call(flow, flow.tensor(X), flow.tensor(A))
    assert type(r) is getattr(return_types, name), type(r)
    assert type(r).__module__ == "oneflow_like.return_types"
    assert isinstance(r, tuple) and len(r) == len(r._fields) == type(r).n_fields
    for f, v in zip(r._fields, r):
        assert getattr(r, f) is v
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r)
    for u, v in zip(back, r):
        if isinstance(v, flow.Tensor):
            np.testing.assert_array_equal(u.numpy(), v.numpy())
    if torch is not None and hasattr(torch.return_types, name):
        t = call(torch, torch.tensor(X), torch.tensor(A))
        assert type(t).__name__ == name
        fields = [f for f in dir(type(t)) if not f.startswith("_") and f not in _STRUCTSEQ]
        assert sorted(r._fields) == sorted(fields)
        for f in r._fields:  # same field order: each field is the same position's value
            assert getattr(t, f) is t[r._fields.index(f)]


_STRUCTSEQ = {"count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields"}


def test_repr_layout_matches_torch():
    r = flow.max(flow.tensor([[1.0, 3.0], [4.0, 2.0]]), 1)
    ours = repr(r)
    assert ours.startswith("torch.return_types.max(\nvalues=tensor(")
    if torch is not None:
        assert ours == repr(torch.max(torch.tensor([[1.0, 3.0], [4.0, 2.0]]), 1))


def test_out_twins_and_unpacking():
    assert return_types.max_out._fields == return_types.max._fields
    values, indices = flow.sort(flow.tensor([3.0, 1.0, 2.0]))
    assert indices.tolist() == [1, 2, 0]


def test_pytree_treats_them_as_nodes():
    from oneflow_like.utils import _pytree

    r = flow.topk(flow.tensor([1.0, 5.0, 3.0]), 2)
    leaves, spec = _pytree.tree_flatten(r)
    assert len(leaves) == 2
    rebuilt = _pytree.tree_unflatten([leaf * 2 for leaf in leaves], spec)
    assert type(rebuilt) is return_types.topk
    assert rebuilt.values.tolist() == [10.0, 6.0]


@pytest.mark.parametrize(
    "dtype", [flow.float32, flow.float64, flow.bfloat16, flow.float16, flow.int64, flow.bool]
)
def test_pickle_tensor_roundtrip(dtype):
    t = flow.tensor([[1, 0, 2], [3, 4, 0]]).to(dtype)
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == dtype and tuple(back.shape) == (2, 3)
    assert flow.equal(back, t)
    assert back.data_ptr() != t.data_ptr()  # a copy, as torch's


def test_pickle_keeps_requires_grad_parameter_and_attributes():
    leaf = flow.randn(3, requires_grad=True)
    nonleaf = leaf * 2
    back = pickle.loads(pickle.dumps(nonleaf))
    assert back.requires_grad and back.is_leaf and back.grad_fn is None  # torch: history dropped
    p = flow.nn.Parameter(flow.randn(2, 2))
    assert type(pickle.loads(pickle.dumps(p))) is flow.nn.Parameter
    v = flow.randn(4)[::2]  # a strided view pickles its own elements
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).numpy(), v.numpy())
    m = flow.nn.Sequential(flow.nn.Linear(3, 2), flow.nn.ReLU())
    m2 = pickle.loads(pickle.dumps(m))
    x = flow.randn(4, 3)
    assert flow.equal(m(x), m2(x))
    assert copy.copy([flow.ones(2)])[0].sum().item() == 2.0


def test_pickle_a_traced_tensor_raises():
    class Net(flow.nn.Module):
        def forward(self, x):
            pickle.dumps(x)
            return x

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = Net()

        def build(self, x):
            return self.m(x)

    with pytest.raises(RuntimeError, match="traced"):
        G()(flow.randn(2))
