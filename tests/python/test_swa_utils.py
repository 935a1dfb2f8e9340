"""optim.swa_utils against PyTorch (Debian's torch 1.13): AveragedModel (SWA and EMA, with and
without buffers), SWALR's schedule, update_bn's recomputed statistics."""
import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like.optim.swa_utils import (
    SWALR,
    AveragedModel,
    get_ema_avg_fn,
    get_ema_multi_avg_fn,
    get_swa_multi_avg_fn,
    update_bn,
)


def _pair(seed=0):
    """The same small conv+bn+linear model in both frameworks, in float64."""
    rng = np.random.default_rng(seed)
    ours = flow.nn.Sequential(
        flow.nn.Linear(4, 6), flow.nn.BatchNorm1d(6), flow.nn.ReLU(), flow.nn.Linear(6, 2)
    ).double()
    ref = torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2)
    ).double()
    for (_, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        v = rng.standard_normal(tuple(p.shape))
        with flow.no_grad():
            p.copy_(flow.tensor(v))
        with torch.no_grad():
            q.copy_(torch.tensor(v))
    return ours, ref


def _perturb(ours, ref, rng):
    for p, q in zip(ours.parameters(), ref.parameters()):
        d = rng.standard_normal(tuple(p.shape)) * 0.1
        with flow.no_grad():
            p.add_(flow.tensor(d))
        with torch.no_grad():
            q.add_(torch.tensor(d))


def _train_batches(ours, ref, rng, n=2):
    """Forward passes in train mode, so the batch norms' buffers move."""
    for _ in range(n):
        x = rng.standard_normal((8, 4))
        ours(flow.tensor(x))
        ref(torch.tensor(x))


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["swa", "ema"])
def test_averaged_model_matches_torch(use_buffers, kind):
    ours, ref = _pair()
    rng = np.random.default_rng(1)
    if kind == "swa":
        a_ours = AveragedModel(ours, use_buffers=use_buffers)
        a_ref = torch.optim.swa_utils.AveragedModel(ref, use_buffers=use_buffers)
    else:
        a_ours = AveragedModel(ours, avg_fn=get_ema_avg_fn(0.9), use_buffers=use_buffers)
        a_ref = torch.optim.swa_utils.AveragedModel(
            ref, avg_fn=lambda avg, cur, n: 0.9 * avg + 0.1 * cur, use_buffers=use_buffers
        )
    for _ in range(4):
        _perturb(ours, ref, rng)
        _train_batches(ours, ref, rng)
        a_ours.update_parameters(ours)
        a_ref.update_parameters(ref)
    assert a_ours.n_averaged.item() == a_ref.n_averaged.item() == 4
    for (n, p), (_, q) in zip(a_ours.state_dict().items(), a_ref.state_dict().items()):
        if not use_buffers and ("running" in n or "num_batches" in n):
            continue  # PyTorch 2.x keeps them equal to the model's (1.13 left them at init)
        np.testing.assert_allclose(
            p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12, err_msg=n
        )
    if not use_buffers:
        for b_avg, b in zip(a_ours.module.buffers(), ours.buffers()):
            np.testing.assert_array_equal(b_avg.detach().numpy(), b.detach().numpy())
        for b_ref, b in zip(a_ref.module.buffers(), ref.buffers()):  # as 2.x does
            b_ref.copy_(b)
    x = rng.standard_normal((5, 4))
    a_ours.eval(), a_ref.eval()
    np.testing.assert_allclose(
        a_ours(flow.tensor(x)).detach().numpy(), a_ref(torch.tensor(x)).detach().numpy(), rtol=1e-10
    )


def test_multi_avg_fns_update_in_place():
    ours, _ = _pair()
    rng = np.random.default_rng(2)
    ema = AveragedModel(ours, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    swa = AveragedModel(ours, multi_avg_fn=get_swa_multi_avg_fn())
    history = []
    for _ in range(3):
        for p in ours.parameters():
            with flow.no_grad():
                p.add_(flow.tensor(rng.standard_normal(tuple(p.shape))))
        history.append([p.detach().numpy().copy() for p in ours.parameters()])
        ema.update_parameters(ours)
        swa.update_parameters(ours)
    for i, (pe, ps) in enumerate(zip(ema.module.parameters(), swa.module.parameters())):
        h = [step[i] for step in history]
        np.testing.assert_allclose(ps.detach().numpy(), np.mean(h, axis=0), rtol=1e-12)
        np.testing.assert_allclose(
            pe.detach().numpy(), 0.25 * h[0] + 0.25 * h[1] + 0.5 * h[2], rtol=1e-12
        )
    with pytest.raises(ValueError, match="only one of avg_fn and multi_avg_fn"):
        AveragedModel(ours, avg_fn=get_ema_avg_fn(), multi_avg_fn=get_swa_multi_avg_fn())


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
def test_swalr_schedule_matches_torch(strategy, anneal_epochs):
    p, q = flow.nn.Parameter(flow.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    o1 = flow.optim.SGD([{"params": [p]}, {"params": [flow.nn.Parameter(flow.zeros(1))]}], lr=0.5)
    o2 = torch.optim.SGD(
        [{"params": [q]}, {"params": [torch.nn.Parameter(torch.zeros(1))]}], lr=0.5
    )
    s1 = SWALR(o1, swa_lr=[0.05, 0.1], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    s2 = torch.optim.swa_utils.SWALR(
        o2, swa_lr=[0.05, 0.1], anneal_epochs=anneal_epochs, anneal_strategy=strategy
    )
    for epoch in range(6):
        got = [g["lr"] for g in o1.param_groups]
        want = [g["lr"] for g in o2.param_groups]
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"epoch {epoch}")
        assert s1.get_last_lr() == pytest.approx(s2.get_last_lr(), rel=1e-12)
        o1.step(), o2.step()
        s1.step(), s2.step()


def test_swalr_errors_match_torch():
    opt = flow.optim.SGD([flow.nn.Parameter(flow.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy"):
        SWALR(opt, swa_lr=0.05, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs"):
        SWALR(opt, swa_lr=0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match="one value per param group"):
        SWALR(opt, swa_lr=[0.05, 0.1])


def test_update_bn_matches_torch():
    ours, ref = _pair(3)
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((6, 4)) for _ in range(5)]
    ours.eval(), ref.eval()
    loader_ours = [(flow.tensor(b), flow.zeros(6)) for b in batches]  # (input, target) pairs
    loader_ref = [(torch.tensor(b), torch.zeros(6)) for b in batches]
    update_bn(loader_ours, ours)
    torch.optim.swa_utils.update_bn(loader_ref, ref)
    bn_o, bn_r = ours[1], ref[1]
    np.testing.assert_allclose(
        bn_o.running_mean.detach().numpy(), bn_r.running_mean.detach().numpy(), rtol=1e-12
    )
    np.testing.assert_allclose(
        bn_o.running_var.detach().numpy(), bn_r.running_var.detach().numpy(), rtol=1e-12
    )
    assert bn_o.momentum == bn_r.momentum == 0.1 and not ours.training
    update_bn([], flow.nn.Linear(2, 2))  # no batch norm: nothing to do


def test_deepcopy_of_tensors_and_modules_with_buffers():
    # AveragedModel deep-copies the model; batch norm's buffers are plain tensors.
    import copy

    x = flow.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and y.is_leaf and y.grad.tolist() == [2.0, 4.0]
    y.detach().add_(1)
    assert x.tolist() == [1.0, 2.0]  # independent storage
    i = copy.deepcopy(flow.tensor([3, 4]))
    assert i.dtype == flow.int64 and not i.requires_grad
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2)
    bn = flow.nn.BatchNorm1d(3)
    bn2 = copy.deepcopy(bn)
    bn2(flow.randn(4, 3))
    assert bn.running_mean.tolist() == [0.0, 0.0, 0.0] and bn2.running_mean.abs().sum().item() > 0
