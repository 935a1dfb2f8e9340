"""nn.utils.prune against torch 1.13's: the deterministic methods (L1, Ln structured, custom
masks, global L1, combined pruning) give the same masks and values; the random ones prune the
right count; gradients reach <name>_orig through the mask; remove() makes it permanent."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import oneflow_like as flow
import oneflow_like.nn.utils.prune as prune


def twin_linear(inp=6, out=4, seed=0):
    rng = np.random.default_rng(seed)
    # distinct magnitudes, so the smallest-k choice has no ties
    w = rng.permutation(np.arange(1, inp * out + 1)).reshape(out, inp) * rng.choice(
        [-1, 1], (out, inp)
    )
    w = (w / 10.0).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32)
    f, t = flow.nn.Linear(inp, out), torch.nn.Linear(inp, out)
    with flow.no_grad():
        f.weight.copy_(flow.tensor(w))
        f.bias.copy_(flow.tensor(b))
    with torch.no_grad():
        t.weight.copy_(torch.tensor(w))
        t.bias.copy_(torch.tensor(b))
    return f, t


def same_state(f, t):
    fs, ts = dict(f.named_parameters()), dict(t.named_parameters())
    assert sorted(fs) == sorted(ts)
    fb, tb = dict(f.named_buffers()), dict(t.named_buffers())
    assert sorted(fb) == sorted(tb)
    for k in fb:
        np.testing.assert_array_equal(fb[k].numpy(), tb[k].numpy(), err_msg=k)
    np.testing.assert_allclose(f.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("amount", [0.3, 5, 0, 1.0])
def test_l1_unstructured_matches_torch(amount):
    f, t = twin_linear()
    prune.l1_unstructured(f, "weight", amount=amount)
    tprune.l1_unstructured(t, "weight", amount=amount)
    same_state(f, t)
    assert prune.is_pruned(f)


@pytest.mark.parametrize("n,dim,amount", [(2, 0, 0.5), (1, 1, 2), (float("inf"), -1, 0.34)])
def test_ln_structured_matches_torch(n, dim, amount):
    f, t = twin_linear(seed=1)
    prune.ln_structured(f, "weight", amount=amount, n=n, dim=dim)
    tprune.ln_structured(t, "weight", amount=amount, n=n, dim=dim)
    same_state(f, t)


def test_pruning_twice_combines_masks_like_torch():
    f, t = twin_linear(seed=2)
    prune.l1_unstructured(f, "weight", amount=0.25)
    tprune.l1_unstructured(t, "weight", amount=0.25)
    prune.ln_structured(f, "weight", amount=1, n=2, dim=0)
    tprune.ln_structured(t, "weight", amount=1, n=2, dim=0)
    prune.l1_unstructured(f, "weight", amount=3)
    tprune.l1_unstructured(t, "weight", amount=3)
    same_state(f, t)
    hooks = [h for h in f._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 3


def test_custom_mask_global_pruning_and_importance_scores_match_torch():
    f1, t1 = twin_linear(seed=3)
    f2, t2 = twin_linear(inp=4, out=3, seed=4)
    m = np.random.default_rng(5).integers(0, 2, (3, 4)).astype(np.float32)
    prune.custom_from_mask(f2, "bias", mask=flow.tensor(m[:, 0]))
    tprune.custom_from_mask(t2, "bias", mask=torch.tensor(m[:, 0]))
    prune.global_unstructured(
        [(f1, "weight"), (f2, "weight")], pruning_method=prune.L1Unstructured, amount=0.4
    )
    tprune.global_unstructured(
        [(t1, "weight"), (t2, "weight")], pruning_method=tprune.L1Unstructured, amount=0.4
    )
    same_state(f1, t1)
    same_state(f2, t2)
    np.testing.assert_array_equal(f2.bias.detach().numpy(), t2.bias.detach().numpy())
    f3, t3 = twin_linear(seed=6)
    scores = np.random.default_rng(7).permutation(24).reshape(4, 6).astype(np.float32)
    prune.l1_unstructured(f3, "weight", amount=6, importance_scores=flow.tensor(scores))
    tprune.l1_unstructured(t3, "weight", amount=6, importance_scores=torch.tensor(scores))
    same_state(f3, t3)


def test_random_methods_prune_the_right_count():
    f = flow.nn.Linear(10, 8)
    prune.random_unstructured(f, "weight", amount=0.25)
    assert int((f.weight_mask == 0).sum().item()) == 20
    g = flow.nn.Conv2d(3, 6, 3)
    prune.random_structured(g, "weight", amount=2, dim=0)
    per_channel = g.weight_mask.sum(dim=(1, 2, 3)).numpy()
    assert sorted(per_channel.tolist()) == [0, 0, 27, 27, 27, 27]


def test_gradient_reaches_orig_through_the_mask_and_remove_makes_it_permanent():
    f, t = twin_linear(seed=8)
    for lib, m, p in ((flow, f, prune), (torch, t, tprune)):
        p.l1_unstructured(m, "weight", amount=0.5)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(2, 6).astype(np.float32))
        m(x).sum().backward()
    np.testing.assert_allclose(f.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(), rtol=1e-6)
    # the hook recomputes weight before each forward: a change of weight_orig shows up
    with flow.no_grad():
        f.weight_orig.add_(1.0)
    f(flow.ones(1, 6))
    assert float((f.weight == 0).sum().item()) == 12
    prune.remove(f, "weight")
    tprune.remove(t, "weight")
    assert "weight" in dict(f.named_parameters()) and not prune.is_pruned(f)
    assert sorted(dict(f.named_buffers())) == []
    assert int((f.weight == 0).sum().item()) == 12
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(f, "weight")


def test_errors_match_torch():
    f = flow.nn.Linear(3, 2)
    with pytest.raises(ValueError, match=r"amount=1.5 should either be a float in the range"):
        prune.l1_unstructured(f, "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(f, "weight", amount="x")
    with pytest.raises(ValueError, match=r"amount=7 should be smaller than the number"):
        prune.l1_unstructured(f, "weight", amount=7)
    assert "weight" in dict(f.named_parameters())  # a failed pruning leaves the module as it was
    with pytest.raises(ValueError, match="Structured pruning can only be applied"):
        prune.ln_structured(f, "bias", amount=1, n=2, dim=0)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(f, "weight")], prune.RandomStructured, amount=1)
    with pytest.raises(ValueError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(f, "weight", amount=1, importance_scores=flow.ones(5))
