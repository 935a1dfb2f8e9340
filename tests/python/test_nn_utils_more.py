"""nn.utils.get_total_norm / clip_grads_with_norm_ (PyTorch 2.6's split of clip_grad_norm_) and
nn.Embedding/EmbeddingBag.from_pretrained, against NumPy float64 references."""
import math

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn

rng = np.random.default_rng(0)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf, 0.0])
def test_get_total_norm_is_the_norm_of_the_concatenation(p):
    arrays = [rng.standard_normal(s) for s in [(3, 4), (5,), (2, 2, 2)]]
    ts = [flow.tensor(a) for a in arrays]
    flat = np.concatenate([a.ravel() for a in arrays])
    # the norm of the per-tensor norms: for p > 0 that of the concatenation; for p = 0 (as in
    # torch) the count of tensors with a nonzero norm
    ref = np.linalg.norm(flat, ord=p) if p != 0.0 else 3.0
    total = nn.utils.get_total_norm(ts, norm_type=p)
    assert total.dim() == 0
    np.testing.assert_allclose(total.item(), ref, rtol=1e-12)
    assert nn.utils.get_total_norm([]).item() == 0.0
    single = np.linalg.norm(arrays[0].ravel(), p) if p else 12.0
    np.testing.assert_allclose(nn.utils.get_total_norm(ts[0], p).item(), single, rtol=1e-12)


def test_get_total_norm_error_if_nonfinite():
    t = flow.tensor([1.0, float("nan")])
    assert math.isnan(nn.utils.get_total_norm([t]).item())
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
        nn.utils.get_total_norm([t], error_if_nonfinite=True)


def test_clip_grads_with_norm_equals_clip_grad_norm_():
    def params():
        flow.manual_seed(0)
        m = nn.Linear(4, 3).double()
        m(flow.randn(5, 4, dtype=flow.float64)).pow(2).sum().backward()
        return list(m.parameters())

    a, b = params(), params()
    grads = [p.grad for p in a]
    total = nn.utils.get_total_norm(grads)
    nn.utils.clip_grads_with_norm_(a, 0.5, total)
    returned = nn.utils.clip_grad_norm_(b, 0.5)
    np.testing.assert_allclose(total.item(), returned.item(), rtol=1e-12)
    for p, q in zip(a, b):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(nn.utils.get_total_norm([p.grad for p in a]).item(), 0.5, rtol=1e-5)
    # a norm below max_norm leaves the gradients as they are
    before = [p.grad.clone() for p in a]
    nn.utils.clip_grads_with_norm_(a, 10.0, nn.utils.get_total_norm([p.grad for p in a]))
    for p, g in zip(a, before):
        np.testing.assert_array_equal(p.grad.numpy(), g.numpy())


def test_embedding_from_pretrained():
    w = flow.tensor(rng.standard_normal((5, 3)), dtype=flow.float32)
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad and emb.num_embeddings == 5 and emb.embedding_dim == 3
    idx = flow.tensor([4, 0, 4])
    np.testing.assert_array_equal(emb(idx).numpy(), w.numpy()[[4, 0, 4]])
    # the padding row is kept as given (not zeroed) and gets no gradient when trainable
    emb = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=0)
    assert emb.weight.requires_grad and emb.padding_idx == 0
    np.testing.assert_array_equal(emb.weight[0].detach().numpy(), w.numpy()[0])
    emb(flow.tensor([0, 1, 1])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[:2], [[0, 0, 0], [2, 2, 2]])
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(flow.zeros(3))


def test_embedding_bag_from_pretrained():
    w = flow.tensor(rng.standard_normal((6, 2)), dtype=flow.float32)
    bag = nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert not bag.weight.requires_grad and bag.mode == "max"
    out = bag(flow.tensor([0, 2, 5, 1]), flow.tensor([0, 3]))
    ref = np.stack([w.numpy()[[0, 2, 5]].max(0), w.numpy()[[1]].max(0)])
    np.testing.assert_allclose(out.numpy(), ref)
    bag = nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="sum")
    assert bag.weight.requires_grad
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.EmbeddingBag.from_pretrained(flow.zeros(2, 2, 2))
    with pytest.raises(ValueError, match="does not match num_embeddings"):
        nn.Embedding(4, 2, _weight=flow.zeros(3, 2))
