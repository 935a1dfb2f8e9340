"""Argument names and defaults against torch (1.13 here): every class of torch.nn, torch.optim,
lr_scheduler, torch.utils.data and torch.distributions and every function of nn.functional that
we have takes torch's keyword names with torch's defaults, apart from the listed deliberate
differences (torch 2.x defaults, where 2.x changed them). Plus the behaviours those arguments
select: schedulers' deprecated `verbose`, softmax's implicit dim, SyncBatchNorm's keywords,
TransformerEncoder's fast-path switches."""
import inspect
import warnings

import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")

# (module label, name) -> why ours differs from torch 1.13 on purpose
DELIBERATE = {
    ("optim", "SGD"): "lr defaults to 1e-3 as in torch 2.x (required in 1.13)",
    ("optim", "Adam"): "fused defaults to None as in torch 2.x",
    ("data", "DataLoader"): "prefetch_factor defaults to None as in torch 2.x",
    ("data", "random_split"): "generator defaults to None (the default generator), as 2.x",
    ("F", "adaptive_max_pool1d_with_indices"): "the *_with_indices forms always return indices",
    ("F", "adaptive_max_pool2d_with_indices"): "the *_with_indices forms always return indices",
    ("F", "adaptive_max_pool3d_with_indices"): "the *_with_indices forms always return indices",
    ("F", "max_pool1d_with_indices"): "the *_with_indices forms always return indices",
    ("F", "max_pool2d_with_indices"): "the *_with_indices forms always return indices",
    ("F", "max_pool3d_with_indices"): "the *_with_indices forms always return indices",
}

NAMESPACES = [
    ("nn", torch.nn, flow.nn),
    ("optim", torch.optim, flow.optim),
    ("sched", torch.optim.lr_scheduler, flow.optim.lr_scheduler),
    ("F", torch.nn.functional, flow.nn.functional),
    ("data", torch.utils.data, flow.utils.data),
    ("dist", torch.distributions, flow.distributions),
]


def _params(f):
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None, False
    loose = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())
    named = [
        (p.name, p.default)
        for p in sig.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    return named, loose


def _differences(label, tmod, fmod):
    out = []
    for name in dir(tmod):
        if name.startswith("_") or (label, name) in DELIBERATE:
            continue
        t, f = getattr(tmod, name), getattr(fmod, name, None)
        if f is None or not callable(t):
            continue
        tf = t.__init__ if inspect.isclass(t) else t
        ff = f.__init__ if inspect.isclass(f) else f
        (pt, _), (pf, loose) = _params(tf), _params(ff)
        if pt is None or pf is None:
            continue
        ours = dict(pf)
        if not loose:
            missing = [n for n, _ in pt if n not in ours and n not in ("self", "_stacklevel")]
            if missing:
                out.append(f"{label}.{name}: no argument {missing}")
        for n, d in pt:
            if label == "sched" and n == "verbose":
                continue  # torch 2.x's default is "deprecated" (1.13: False)
            o = ours.get(n, inspect.Parameter.empty)
            if inspect.Parameter.empty in (d, o) or callable(d) or callable(o):
                continue
            try:
                same = d == o or (
                    isinstance(d, float) and isinstance(o, float) and abs(d - o) < 1e-12
                )
            except Exception:
                continue
            if not same:
                out.append(f"{label}.{name}: {n}={o!r}, torch {d!r}")
    return out


@pytest.mark.parametrize("label,tmod,fmod", NAMESPACES, ids=[n[0] for n in NAMESPACES])
def test_argument_names_and_defaults_match_torch(label, tmod, fmod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diffs = _differences(label, tmod, fmod)
    assert not diffs, "\n".join(diffs)


def test_schedulers_take_deprecated_verbose(capsys):
    opt = flow.optim.SGD(flow.nn.Linear(2, 2).parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="verbose parameter is deprecated"):
        sched = flow.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5, verbose=True)
    sched.step()
    assert "Adjusting learning rate of group 0 to 5.0000e-02." in capsys.readouterr().out
    plateau_opt = flow.optim.SGD(flow.nn.Linear(2, 2).parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="verbose parameter is deprecated"):
        plateau = flow.optim.lr_scheduler.ReduceLROnPlateau(
            plateau_opt, "min", patience=0, verbose=True
        )
    plateau.step(1.0)
    plateau.step(2.0)  # no improvement for more than 0 epochs: reduce
    assert "reducing learning rate of group 0 to 1.0000e-02." in capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not passing verbose: no warning
        flow.optim.lr_scheduler.CosineAnnealingLR(opt, 10)


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_without_dim_picks_torchs_legacy_dim(shape):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    for name in ("softmax", "log_softmax", "softmin"):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            ours = getattr(flow.nn.functional, name)(flow.tensor(x)).numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(torch.nn.functional, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(ours, ref, atol=1e-6)
    with pytest.warns(UserWarning):
        ours = flow.nn.Softmax()(flow.tensor(x)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(ours, torch.nn.Softmax()(torch.tensor(x)).numpy(), atol=1e-6)


def test_syncbatchnorm_keywords_and_encoder_fast_path_switches():
    bn = flow.nn.SyncBatchNorm(3, eps=1e-3, momentum=0.2, affine=False, track_running_stats=True)
    assert (bn.eps, bn.momentum, bn.affine) == (1e-3, 0.2, False)
    layer = flow.nn.TransformerEncoderLayer(8, 2, batch_first=True)
    enc = flow.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False, mask_check=False)
    assert enc.enable_nested_tensor is False and enc(flow.randn(2, 3, 8)).shape == (2, 3, 8)
