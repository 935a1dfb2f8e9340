"""Sparse COO tensors (oneflow_like.sparse) against PyTorch (Debian's torch 1.13) in float64:
construction and its errors, coalesce, dense/sparse round trips, sparse.mm/addmm/sum/softmax
forward and gradients (dense operand and values), a 2-layer GCN trained step for step, and
nn.Embedding(sparse=True) with SparseAdam, SGD and Adagrad."""
import copy

import numpy as np
import pytest
import torch

import oneflow_like as flow


def _f(a):
    return flow.tensor(np.asarray(a), dtype=flow.float64)


def _t(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def _np(x):
    if x.is_sparse:
        x = x.to_dense()
    return x.detach().numpy()


def _close(ours, ref, tol=1e-10):
    np.testing.assert_allclose(_np(ours), _np(ref), rtol=tol, atol=tol)


def _random_coo(rng, shape, nnz, dup=True):
    """Indices (with duplicates when dup) and values for a sparse `shape` matrix."""
    idx = np.stack([rng.integers(0, s, nnz) for s in shape]).astype(np.int64)
    if dup:
        idx[:, -1] = idx[:, 0]  # at least one duplicate
    return idx, rng.standard_normal(nnz)


def _pair(idx, vals, size=None, requires_grad=False):
    ours = flow.sparse_coo_tensor(idx, _f(vals), size, requires_grad=requires_grad)
    ref = torch.sparse_coo_tensor(torch.tensor(idx), _t(vals), size, requires_grad=requires_grad)
    return ours, ref


# ---- construction ----------------------------------------------------------------------------
def test_construction_attributes():
    idx = [[0, 1, 1, 0], [2, 0, 2, 2]]
    s, r = _pair(idx, [3.0, 4.0, 5.0, 1.0], (2, 3))
    assert isinstance(s, flow.Tensor)
    assert s.is_sparse and not flow.ones(2).is_sparse
    assert s.layout is flow.sparse_coo and flow.ones(2).layout is flow.strided
    assert tuple(s.shape) == tuple(r.shape) == tuple(s.size()) and s.size(1) == 3
    assert s.dtype == flow.float64 and s.device.type == "cpu"
    assert (s.sparse_dim(), s.dense_dim(), s._nnz()) == (r.sparse_dim(), r.dense_dim(), r._nnz())
    assert s.is_coalesced() == r.is_coalesced() is False
    assert s.dim() == 2 and s.numel() == 6 and len(s) == 2
    np.testing.assert_array_equal(s._indices().numpy(), r._indices().numpy())
    _close(s._values(), r._values())
    _close(s, r)
    assert "sparse_coo" in repr(s) and "nnz=4" in repr(s)


def test_size_inferred_and_hybrid():
    idx = np.array([[0, 3, 1]])
    vals = np.arange(6.0).reshape(3, 2)
    s = flow.sparse_coo_tensor(idx, _f(vals))
    r = torch.sparse_coo_tensor(torch.tensor(idx), _t(vals))
    assert tuple(s.shape) == tuple(r.shape) == (4, 2)
    assert (s.sparse_dim(), s.dense_dim()) == (1, 1)
    _close(s, r)
    e = flow.sparse_coo_tensor(np.zeros((2, 0), dtype=np.int64), _f(np.zeros(0)), (3, 3))
    assert e._nnz() == 0 and np.all(e.to_dense().numpy() == 0)


def test_dtype_device_requires_grad_arguments():
    s = flow.sparse_coo_tensor([[0, 1]], [1, 2], (3,), dtype=flow.float64, device="cpu")
    assert s.dtype == flow.float64 and s.device.type == "cpu"
    leaf = flow.sparse_coo_tensor([[0, 1]], _f([1.0, 2.0]), (3,), requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and leaf.grad is None
    assert flow.sparse_coo_tensor([[0]], _f([1.0]), is_coalesced=True).is_coalesced()


def test_legacy_constructors_and_spmm():
    idx = flow.tensor([[0, 2], [1, 0]])
    s = flow.sparse.FloatTensor(idx, flow.tensor([1.5, 2.0]), flow.Size([3, 2]))
    r = torch.sparse.FloatTensor(torch.tensor([[0, 2], [1, 0]]), torch.tensor([1.5, 2.0]), (3, 2))
    assert s.dtype == flow.float32 and s.is_sparse
    _close(s, r)
    e = flow.sparse.DoubleTensor(4, 5)
    assert tuple(e.shape) == (4, 5) and e._nnz() == 0 and e.dtype == flow.float64
    x = np.arange(6.0).reshape(2, 3)
    _close(flow.spmm(s, flow.tensor(x, dtype=flow.float32)), torch.spmm(r, torch.tensor(x).float()))


def test_construction_errors():
    with pytest.raises(
        RuntimeError, match="size is inconsistent with indices: for dim 1, size is 3"
    ):
        flow.sparse_coo_tensor([[0, 1], [2, 3]], _f([1.0, 2.0]), (2, 3))
    with pytest.raises(RuntimeError, match="negative index -1 for dim 0"):
        flow.sparse_coo_tensor([[0, -1]], _f([1.0, 2.0]), (2,))
    with pytest.raises(RuntimeError, match="same nnz.*indices: 2, nnz from values: 3"):
        flow.sparse_coo_tensor([[0, 1]], _f([1.0, 2.0, 3.0]), (2,))
    with pytest.raises(RuntimeError, match="sparse_dim x nnz"):
        flow.sparse_coo_tensor([0, 1], _f([1.0, 2.0]), (2,))
    with pytest.raises(RuntimeError, match=r"sparse_dim \(1\) \+ dense_dim \(0\)"):
        flow.sparse_coo_tensor([[0, 1]], _f([1.0, 2.0]), (2, 2))
    with pytest.raises(RuntimeError, match="int64"):
        flow.sparse_coo_tensor(_f([[0.0, 1.0]]), _f([1.0, 2.0]), (2,))


def test_unsupported_ops_name_the_op():
    s, _ = _pair([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    with pytest.raises(NotImplementedError, match=r"\[relu\] is not supported on sparse COO"):
        s.relu()
    with pytest.raises(NotImplementedError, match=r"\[__getitem__\]"):
        s[0]
    with pytest.raises(NotImplementedError, match=r"\[T\]"):
        s.T
    with pytest.raises(RuntimeError, match=r"\[relu\]"):  # a runtime function given a sparse
        flow.relu(s)
    with pytest.raises(RuntimeError, match=r"\[cat\]"):
        flow.cat([s, s])
    with pytest.raises(RuntimeError, match="uncoalesced"):
        flow.sparse_coo_tensor([[0, 0]], _f([1.0, 2.0]), (2,)).indices()


# ---- coalesce, conversions -------------------------------------------------------------------
def test_coalesce_sums_duplicates():
    rng = np.random.default_rng(0)
    idx, vals = _random_coo(rng, (5, 4), 12)
    s, r = _pair(idx, vals, (5, 4))
    c, rc = s.coalesce(), r.coalesce()
    assert c.is_coalesced() and c._nnz() == rc._nnz() < 12
    np.testing.assert_array_equal(c.indices().numpy(), rc.indices().numpy())
    _close(c.values(), rc.values())
    assert c.coalesce() is c


def test_to_dense_to_sparse_round_trips():
    rng = np.random.default_rng(1)
    d = rng.standard_normal((4, 3, 2)) * (rng.random((4, 3, 2)) < 0.4)
    for sd in (None, 1, 2):
        s = _f(d).to_sparse(sd) if sd is not None else _f(d).to_sparse()
        r = _t(d).to_sparse(sd) if sd is not None else _t(d).to_sparse()
        assert s.is_coalesced() and (s.sparse_dim(), s._nnz()) == (r.sparse_dim(), r._nnz())
        np.testing.assert_array_equal(s.indices().numpy(), r.indices().numpy())
        _close(s.values(), r.values())
        np.testing.assert_array_equal(s.to_dense().numpy(), d)
    assert _f(d).to_sparse_coo().layout is flow.sparse_coo
    s = _f(d).to_sparse()
    assert s.to_sparse() is s


def test_to_dense_gradient_reaches_values():
    rng = np.random.default_rng(2)
    idx, vals = _random_coo(rng, (4, 5), 9)
    w = rng.standard_normal((4, 5))
    v, rv = _f(vals).requires_grad_(), _t(vals).requires_grad_()
    s = flow.sparse_coo_tensor(idx, v, (4, 5))
    r = torch.sparse_coo_tensor(torch.tensor(idx), rv, (4, 5))
    assert not s.is_leaf and s.grad is None and not r.is_leaf
    (s.to_dense() * _f(w)).sum().backward()
    (r.to_dense() * _t(w)).sum().backward()
    _close(v.grad, rv.grad)
    x = _f(w).requires_grad_()
    x.to_sparse().to_dense().pow(2).sum().backward()
    _close(x.grad, 2 * _f(w))


# ---- arithmetic ------------------------------------------------------------------------------
def _two_4x3(rng, nnz1, nnz2):
    """Two random sparse 4x3 pairs (ours, torch's), each with a duplicate index."""
    return [_pair(*_random_coo(rng, (4, 3), nnz), (4, 3)) for nnz in (nnz1, nnz2)]


def test_scalar_mul_add_sub_transpose():
    rng = np.random.default_rng(3)
    (a, ra), (b, rb) = _two_4x3(rng, 7, 5)
    d = rng.standard_normal((4, 3))
    _close(a * 2.5, ra * 2.5)
    _close(3 * a, 3 * ra)
    _close(a / 2, ra / 2)
    _close(-a, -ra)
    _close(a + b, ra + rb)
    assert (a + b).is_sparse
    _close(a.add(b, alpha=2), torch.add(ra, rb, alpha=2))
    _close(a - b, ra - rb)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        a + _f(d)
    with pytest.raises(RuntimeError):
        ra + _t(d)
    _close(_f(d) - a, _t(d) - ra)
    _close(_f(d) + a, _t(d) + ra)
    assert not (_f(d) + a).is_sparse
    with pytest.raises(RuntimeError, match=r"\[add\].*sparse tensor passed to a dense function"):
        flow.add(_f(d), a)  # top-level elementwise functions are not routed (a Python frame each)
    _close(a.mul(_f(d)), ra.mul(_t(d)))
    _close(a.t(), ra.t())
    _close(a.transpose(0, 1), torch.transpose(ra, 0, 1))
    with pytest.raises(RuntimeError, match=r"sizes differ: sparse \[4, 3\] and sparse \[3, 4\]"):
        a + b.t()


def test_sparse_times_sparse_abs_pow():
    (a, ra), (b, rb) = _two_4x3(np.random.default_rng(20), 9, 7)
    ab = a * b
    assert ab.is_sparse
    _close(ab, ra * rb)
    _close(a * a, ra * ra)
    _close(a.abs(), ra.coalesce().abs())
    _close(a.pow(3), ra.coalesce().pow(3))
    _close(a**2, ra.coalesce() ** 2)
    with pytest.raises(RuntimeError, match="positive scalar exponent"):
        a.pow(0)


def test_sum():
    rng = np.random.default_rng(4)
    idx = np.stack([rng.integers(0, 4, 8), rng.integers(0, 3, 8)])
    vals = rng.standard_normal((8, 2))
    s, r = _pair(idx, vals, (4, 3, 2))
    _close(flow.sparse.sum(s), torch.sparse.sum(r))
    _close(s.sum(), torch.sparse.sum(r))
    for dim in (0, 1, 2, (0, 1), (0, 2), (1, 2)):
        ours, ref = flow.sparse.sum(s, dim), torch.sparse.sum(r, dim)
        assert ours.is_sparse == ref.is_sparse, dim
        _close(ours, ref)


# ---- matrix products -------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["sparse.mm", "mm", "matmul", "@"])
def test_mm_forward_and_gradients(how):
    rng = np.random.default_rng(5)
    idx, vals = _random_coo(rng, (5, 4), 10)
    x = rng.standard_normal((4, 3))
    up = rng.standard_normal((5, 3))
    v, rv = _f(vals).requires_grad_(), _t(vals).requires_grad_()
    xo, xr = _f(x).requires_grad_(), _t(x).requires_grad_()
    s = flow.sparse_coo_tensor(idx, v, (5, 4))
    r = torch.sparse_coo_tensor(torch.tensor(idx), rv, (5, 4))
    fn = {
        "sparse.mm": flow.sparse.mm,
        "mm": flow.mm,
        "matmul": flow.matmul,
        "@": lambda a, b: a @ b,
    }[how]
    # torch 1.13's mm/matmul have no backward to a sparse operand: torch.sparse.mm is the reference
    out, ref = fn(s, xo), torch.sparse.mm(r, xr)
    assert not out.is_sparse
    _close(out, ref)
    (out * _f(up)).sum().backward()
    (ref * _t(up)).sum().backward()
    _close(xo.grad, xr.grad)
    _close(v.grad, rv.grad)


def test_sparse_leaf_grad_is_sparse():
    rng = np.random.default_rng(6)
    idx, vals = _random_coo(rng, (3, 4), 6)
    x = rng.standard_normal((4, 2))
    s, r = _pair(idx, vals, (3, 4), requires_grad=True)
    flow.sparse.mm(s, _f(x)).pow(2).sum().backward()
    torch.sparse.mm(r, _t(x)).pow(2).sum().backward()
    assert s.grad.is_sparse and r.grad.is_sparse
    _close(s.grad, r.grad)


def test_addmm_matvec_dense_at_sparse_hspmm_smm():
    rng = np.random.default_rng(7)
    idx, vals = _random_coo(rng, (4, 3), 6)
    s, r = _pair(idx, vals, (4, 3))
    x, m = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    _close(
        flow.sparse.addmm(_f(m), s, _f(x), beta=0.5, alpha=2.0),
        torch.sparse.addmm(_t(m), r, _t(x), beta=0.5, alpha=2.0),
    )
    _close(flow.addmm(_f(m), s, _f(x)), torch.addmm(_t(m), r, _t(x)))
    vec = rng.standard_normal(3)
    _close(flow.matmul(s, _f(vec)), torch.matmul(r, _t(vec)))
    y = rng.standard_normal((2, 4))
    _close(flow.mm(_f(y), s), torch.mm(_t(y), r.to_dense()))  # torch 1.13: dense @ sparse fails
    _close(_f(y) @ s, _t(y) @ r.to_dense())
    h, rh = flow.hspmm(s, _f(x)), torch.hspmm(r.coalesce(), _t(x))
    assert (h.sparse_dim(), h.dense_dim()) == (rh.sparse_dim(), rh.dense_dim())
    np.testing.assert_array_equal(h.indices().numpy(), rh.coalesce().indices().numpy())
    _close(h, rh)
    _close(flow.smm(s, _f(x)), torch.smm(r, _t(x)))
    assert flow.smm(s, _f(x)).is_sparse
    ss = flow.sparse.mm(s, s.t())
    assert ss.is_sparse
    _close(ss, torch.sparse.mm(r, r.t()))


def test_mm_errors_name_both_shapes():
    s, _ = _pair([[0, 1], [1, 2]], [1.0, 2.0], (2, 3))
    with pytest.raises(
        RuntimeError, match=r"shapes cannot be multiplied \(2x3 sparse and \[4, 2\]"
    ):
        flow.sparse.mm(s, _f(np.ones((4, 2))))
    with pytest.raises(RuntimeError, match=r"\[mm\].*same dtype"):
        flow.sparse.mm(s, flow.ones(3, 2))
    with pytest.raises(TypeError, match=r"\[sparse.mm\] expects a sparse COO tensor"):
        flow.sparse.mm(flow.ones(2, 3), flow.ones(3, 2))


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_sparse_softmax(log, dim):
    rng = np.random.default_rng(8)
    idx, vals = _random_coo(rng, (4, 5), 11)
    up = rng.standard_normal(11)
    v, rv = _f(vals).requires_grad_(), _t(vals).requires_grad_()
    s = flow.sparse_coo_tensor(idx, v, (4, 5))
    r = torch.sparse_coo_tensor(torch.tensor(idx), rv, (4, 5))
    ours = (flow.sparse.log_softmax if log else flow.sparse.softmax)(s, dim)
    ref = (torch.sparse.log_softmax if log else torch.sparse.softmax)(r, dim)
    np.testing.assert_array_equal(ours.indices().numpy(), ref.coalesce().indices().numpy())
    _close(ours.values(), ref.coalesce().values())
    w = np.resize(up, ours._nnz())
    (ours.values() * _f(w)).sum().backward()
    (ref.coalesce().values() * _t(w)).sum().backward()
    _close(v.grad, rv.grad)


# ---- a GCN trained step for step -------------------------------------------------------------
def test_two_layer_gcn_trains_like_torch():
    rng = np.random.default_rng(9)
    n, f, h, c = 12, 5, 8, 3
    edges = rng.integers(0, n, (2, 30))
    edges = np.concatenate([edges, edges[::-1], np.tile(np.arange(n), (2, 1))], 1)
    deg = np.bincount(edges[0], minlength=n).astype(np.float64)
    norm = 1.0 / np.sqrt(deg[edges[0]] * deg[edges[1]])
    feats, labels = rng.standard_normal((n, f)), rng.integers(0, c, n)
    w1, w2 = rng.standard_normal((f, h)) * 0.3, rng.standard_normal((h, c)) * 0.3

    def run(lib, tensor):
        adj = lib.sparse_coo_tensor(
            lib.tensor(edges) if lib is torch else edges, tensor(norm), (n, n)
        )
        p1, p2 = tensor(w1).requires_grad_(), tensor(w2).requires_grad_()
        opt = lib.optim.Adam([p1, p2], lr=0.05)
        x, y = tensor(feats), lib.tensor(labels)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            hid = lib.relu(lib.sparse.mm(adj, x @ p1))
            out = lib.sparse.mm(adj, hid @ p2)
            loss = lib.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, p1, p2

    (lo, a1, a2), (lr_, b1, b2) = run(flow, _f), run(torch, _t)
    np.testing.assert_allclose(lo, lr_, rtol=1e-10)
    assert lo[-1] < lo[0]
    _close(a1, b1)
    _close(a2, b2)


# ---- nn.Embedding(sparse=True) and the optimizers --------------------------------------------
def _embeddings(rng, num=10, dim=4, **kw):
    w = rng.standard_normal((num, dim))
    ours = flow.nn.Embedding(num, dim, sparse=True, **kw).double()
    ref = torch.nn.Embedding(num, dim, sparse=True, **kw).double()
    with flow.no_grad():
        ours.weight.copy_(_f(w))
    with torch.no_grad():
        ref.weight.copy_(_t(w))
    return ours, ref


def _emb_step(ours, ref, idx, up):
    (ours(flow.tensor(idx)) * _f(up)).sum().backward()
    (ref(torch.tensor(idx)) * _t(up)).sum().backward()


def test_embedding_sparse_grad_matches_torch():
    rng = np.random.default_rng(10)
    ours, ref = _embeddings(rng, padding_idx=2)
    idx = np.array([[1, 2, 4], [4, 7, 1]])
    up = rng.standard_normal((2, 3, 4))
    _emb_step(ours, ref, idx, up)
    g, rg = ours.weight.grad, ref.weight.grad
    assert g.is_sparse and rg.is_sparse and g.layout is flow.sparse_coo
    assert g._nnz() == rg._nnz()
    np.testing.assert_array_equal(g._indices().numpy(), rg._indices().numpy())
    _close(g, rg)
    _emb_step(ours, ref, idx[:, ::-1].copy(), up)  # accumulates (torch's nnz is its own detail)
    assert ours.weight.grad.is_sparse
    _close(ours.weight.grad, ref.weight.grad)
    out = flow.nn.functional.embedding(flow.tensor([3]), ours.weight, sparse=True)
    out.sum().backward()
    _close(ours.weight.grad.coalesce(), _onehot_row(10, 4, 3) + ref.weight.grad)


def _onehot_row(n, d, r):
    z = torch.zeros(n, d, dtype=torch.float64)
    z[r] = 1
    return z


def test_embedding_sparse_plus_dense_use_gives_dense_grad():
    rng = np.random.default_rng(11)
    ours, ref = _embeddings(rng)
    (ours(flow.tensor([1, 3])).sum() + ours.weight.pow(2).sum()).backward()
    (ref(torch.tensor([1, 3])).sum() + ref.weight.pow(2).sum()).backward()
    assert not ours.weight.grad.is_sparse
    _close(ours.weight.grad, ref.weight.grad)


def test_embedding_bag_sparse():
    rng = np.random.default_rng(12)
    w = rng.standard_normal((8, 3))
    ours = flow.nn.EmbeddingBag(8, 3, mode="sum", sparse=True).double()
    ref = torch.nn.EmbeddingBag(8, 3, mode="sum", sparse=True).double()
    with flow.no_grad():
        ours.weight.copy_(_f(w))
    with torch.no_grad():
        ref.weight.copy_(_t(w))
    idx, off = [1, 2, 2, 5, 7], [0, 2]
    ours(flow.tensor(idx), flow.tensor(off)).pow(2).sum().backward()
    ref(torch.tensor(idx), torch.tensor(off)).pow(2).sum().backward()
    assert ours.weight.grad.is_sparse
    _close(ours.weight.grad, ref.weight.grad)


def _train(opt_ours, opt_ref, ours, ref, rng, steps=5):
    for _ in range(steps):
        idx = rng.integers(0, 10, (3, 2))
        up = rng.standard_normal((3, 2, 4))
        opt_ours.zero_grad()
        opt_ref.zero_grad()
        _emb_step(ours, ref, idx, up)
        opt_ours.step()
        opt_ref.step()
        _close(ours.weight, ref.weight)


def test_sparse_adam_matches_torch_and_state_dict_round_trip():
    rng = np.random.default_rng(13)
    ours, ref = _embeddings(rng)
    oo = flow.optim.SparseAdam(ours.parameters(), lr=0.1, betas=(0.8, 0.9))
    oref = torch.optim.SparseAdam(ref.parameters(), lr=0.1, betas=(0.8, 0.9))
    _train(oo, oref, ours, ref, np.random.default_rng(0))
    sd, rsd = oo.state_dict(), oref.state_dict()
    assert sd["state"][0]["step"] == rsd["state"][0]["step"] == 5
    for k in ("exp_avg", "exp_avg_sq"):
        _close(sd["state"][0][k], rsd["state"][0][k])
    assert sd["param_groups"][0]["betas"] == rsd["param_groups"][0]["betas"]
    # a fresh optimizer loaded from the state dict continues exactly like the original
    twin = copy.deepcopy(ours)
    o2 = flow.optim.SparseAdam(twin.parameters(), lr=0.5)
    o2.load_state_dict(copy.deepcopy(sd))
    assert o2.param_groups[0]["lr"] == 0.1
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    _train(oo, oref, ours, ref, rng_a, steps=3)
    for _ in range(3):
        idx = rng_b.integers(0, 10, (3, 2))
        up = rng_b.standard_normal((3, 2, 4))
        o2.zero_grad()
        (twin(flow.tensor(idx)) * _f(up)).sum().backward()
        o2.step()
    _close(twin.weight, ours.weight)


def test_sparse_adam_maximize_and_errors():
    rng = np.random.default_rng(14)
    ours, ref = _embeddings(rng)
    oo = flow.optim.SparseAdam(ours.parameters(), lr=0.05, maximize=True)
    oref = torch.optim.SparseAdam(ref.parameters(), lr=0.05, maximize=True)
    _train(oo, oref, ours, ref, np.random.default_rng(2), steps=3)
    dense = flow.nn.Parameter(_f(np.ones(3)))
    o = flow.optim.SparseAdam([dense])
    dense.sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        o.step()
    with pytest.raises(ValueError, match="Invalid learning rate"):
        flow.optim.SparseAdam([dense], lr=0.0)
    sp = flow.sparse_coo_tensor([[0]], _f([1.0]), (2,), requires_grad=True)
    with pytest.raises(ValueError, match=r"Sparse params at indices \[0\]"):
        flow.optim.SparseAdam([sp])


@pytest.mark.parametrize("norm_type", [2.0, 3.0])
def test_clip_grad_norm_on_sparse_grads(norm_type):
    rng = np.random.default_rng(21)
    ours, ref = _embeddings(rng)
    idx = np.array([[1, 4, 4], [7, 1, 2]])
    _emb_step(ours, ref, idx, rng.standard_normal((2, 3, 4)) * 3)
    n = flow.nn.utils.clip_grad_norm_(ours.parameters(), 1.0, norm_type)
    rn = torch.nn.utils.clip_grad_norm_(ref.parameters(), 1.0, norm_type)
    _close(n, rn)
    assert ours.weight.grad.is_sparse
    # torch 1.13 scales a detached copy of a sparse grad (the grad stays as it was); PyTorch 2.x
    # scales the grad itself, as here
    coef = min(1.0, 1.0 / (rn.item() + 1e-6))
    _close(ours.weight.grad, ref.weight.grad.to_dense() * coef)


def test_lbfgs_takes_sparse_grads_densely_as_torch():
    rng = np.random.default_rng(19)
    ours, ref = _embeddings(rng)
    idx = np.array([1, 4, 4, 7])
    target = rng.standard_normal((4, 4))

    def closure(lib, model, opt):
        def run():
            opt.zero_grad()
            loss = (model(lib.tensor(idx)) - (_f if lib is flow else _t)(target)).pow(2).sum()
            loss.backward()
            return loss

        return run

    oo, oref = flow.optim.LBFGS(ours.parameters(), lr=0.5), torch.optim.LBFGS(
        ref.parameters(), lr=0.5
    )
    oo.step(closure(flow, ours, oo))
    oref.step(closure(torch, ref, oref))
    _close(ours.weight, ref.weight, tol=1e-8)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, p: lib.optim.SGD(p, lr=0.1),
        lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9),
        lambda lib, p: lib.optim.Adagrad(p, lr=0.3, lr_decay=0.01),
        lambda lib, p: lib.optim.Adagrad(p, lr=0.3, initial_accumulator_value=0.1, maximize=True),
    ],
)
def test_sgd_adagrad_take_sparse_grads(make):
    rng = np.random.default_rng(15)
    ours, ref = _embeddings(rng)
    _train(make(flow, ours.parameters()), make(torch, ref.parameters()), ours, ref, rng, steps=4)


def test_sgd_weight_decay_rejects_sparse_grads_as_torch():
    for lib, ours in ((flow, _embeddings(np.random.default_rng(18))[0]), (torch, None)):
        emb = ours if ours is not None else torch.nn.Embedding(10, 4, sparse=True)
        opt = lib.optim.SGD(emb.parameters(), lr=0.1, weight_decay=0.01)
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            opt.step()


@pytest.mark.parametrize(
    "name,message",
    [
        ("Adam", "Adam does not support sparse gradients, please consider SparseAdam instead"),
        ("AdamW", "AdamW does not support sparse gradients"),
        ("RMSprop", "RMSprop does not support sparse gradients"),
    ],
)
def test_other_optimizers_reject_sparse_grads(name, message):
    ours, _ = _embeddings(np.random.default_rng(16))
    opt = getattr(flow.optim, name)(ours.parameters())
    ours(flow.tensor([1, 2])).sum().backward()
    with pytest.raises(RuntimeError, match=message):
        opt.step()
    w = ours.weight
    with pytest.raises(RuntimeError, match="weight_decay option is not compatible"):
        o = flow.optim.Adagrad([w], weight_decay=0.1)
        o.step()


def test_zero_grad_keeps_or_drops_sparse_grad():
    ours, _ = _embeddings(np.random.default_rng(17))
    ours(flow.tensor([1, 2])).sum().backward()
    ours.zero_grad(set_to_none=False)
    assert ours.weight.grad.is_sparse and ours.weight.grad._nnz() == 0
    ours.zero_grad()
    assert ours.weight.grad is None


def test_embedding_sparse_needs_a_parameter():
    w = _f(np.ones((4, 2))).requires_grad_()
    with pytest.raises(RuntimeError, match=r"\[embedding\] sparse=True .*nn.Parameter"):
        flow.nn.functional.embedding(flow.tensor([1]), w, sparse=True)


def test_dense_function_error_is_the_same_after_an_nn_graph_ran():
    """The first nn.Graph installs the lazy dispatcher for the process; a sparse tensor given to
    a dense function afterwards must still raise the same RuntimeError (it raised ValueError
    "used outside of it" once any graph had run: test order changed the result)."""

    class G(flow.nn.Graph):
        def build(self, x):
            return x * 2

    x = flow.ones(2, 2)
    assert G()(x).numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    s, _ = _pair([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    with pytest.raises(RuntimeError, match=r"\[relu\].*sparse tensor passed to a dense function"):
        flow.relu(s)
    with pytest.raises(RuntimeError, match=r"lazy tensor outside of a trace"):
        flow.zeros(2, 2).add_(s)
