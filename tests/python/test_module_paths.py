"""torch's module paths and the helpers that live there, against torch where it is installed:
torch.nn.modules.* submodules, global module hooks, autograd.function.once_differentiable,
nn.grad, nn.parallel's functions, multiprocessing.spawn, consume_prefix_in_state_dict_if_present,
invert_permutation, torch.types."""
import importlib
import os

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import nn

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

PATHS = {
    "nn.modules.batchnorm": [
        "_BatchNorm",
        "_NormBase",
        "BatchNorm1d",
        "BatchNorm2d",
        "SyncBatchNorm",
        "LazyBatchNorm1d",
    ],
    "nn.modules.instancenorm": ["_InstanceNorm", "InstanceNorm2d", "LazyInstanceNorm3d"],
    "nn.modules.pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
    "nn.modules.channelshuffle": ["ChannelShuffle"],
    "nn.modules.distance": ["PairwiseDistance", "CosineSimilarity"],
    "nn.modules.fold": ["Fold", "Unfold"],
    "nn.modules.adaptive": ["AdaptiveLogSoftmaxWithLoss"],
    "nn.modules.activation": ["MultiheadAttention", "ReLU"],
    "nn.modules.linear": ["Bilinear", "LazyLinear", "Identity"],
    "nn.modules.conv": ["LazyConv2d", "LazyConvTranspose3d", "_ConvNd"],
    "nn.modules.pooling": ["AdaptiveAvgPool1d", "FractionalMaxPool2d", "FractionalMaxPool3d"],
    "nn.modules.normalization": ["CrossMapLRN2d", "LayerNorm"],
    "nn.modules.loss": ["NLLLoss2d", "_Loss"],
    "nn.modules.container": ["Container", "Sequential"],
    "nn.modules.module": [
        "register_module_forward_pre_hook",
        "register_module_forward_hook",
        "register_module_full_backward_hook",
    ],
    "nn.modules.utils": ["_pair", "consume_prefix_in_state_dict_if_present"],
    "nn.modules": [
        "FractionalMaxPool2d",
        "CrossMapLRN2d",
        "NLLLoss2d",
        "Container",
        "LazyInstanceNorm1d",
    ],
    "nn.grad": ["conv1d_input", "conv2d_weight", "conv3d_input"],
    "nn.parallel": ["replicate", "scatter", "gather", "parallel_apply"],
    "nn.parallel.comm": ["broadcast", "reduce_add", "scatter", "gather"],
    "nn.parallel.scatter_gather": ["scatter", "scatter_kwargs", "gather"],
    "nn.utils.rnn": ["invert_permutation"],
    "autograd.grad_mode": ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"],
    "autograd.function": ["Function", "once_differentiable", "InplaceFunction"],
    "autograd.variable": ["Variable"],
    "optim.adamw": ["AdamW"],
    "optim.radam": ["RAdam"],
    "multiprocessing.spawn": [
        "spawn",
        "start_processes",
        "ProcessContext",
        "ProcessRaisedException",
        "ProcessExitedException",
    ],
    "multiprocessing": ["spawn", "start_processes"],
    "types": ["Number", "Device"],
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_torch_module_paths_import(path):
    mod = importlib.import_module("oneflow_like." + path)
    for name in PATHS[path]:
        assert getattr(mod, name) is not None, (path, name)
    if torch is not None:  # the same names exist at torch's path (those torch 1.13 has)
        try:
            tmod = importlib.import_module("torch." + path)
        except ImportError:
            return
        for name in PATHS[path]:
            if hasattr(tmod, name):
                assert hasattr(mod, name)


def test_late_names_raise_import_error():
    with pytest.raises(ImportError):
        from oneflow_like.nn.modules.linear import NoSuchLayer  # noqa: F401
    from oneflow_like.nn.modules.batchnorm import _BatchNorm

    assert isinstance(nn.BatchNorm2d(3), _BatchNorm) and isinstance(nn.SyncBatchNorm(3), _BatchNorm)


def _hook_trace(lib):
    m = lib.nn.modules.module
    seen = []
    handles = [
        m.register_module_forward_pre_hook(lambda mod, a: seen.append(("pre", type(mod).__name__))),
        m.register_module_forward_hook(lambda mod, a, o: seen.append(("fwd", type(mod).__name__))),
        m.register_module_full_backward_hook(
            lambda mod, gi, go: seen.append(("bwd", type(mod).__name__))
        ),
    ]
    try:
        net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh())
        net[0].register_forward_hook(lambda mod, a, o: seen.append(("own", "Linear")))
        x = lib.ones(4, 3, requires_grad=True)
        net(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    net(x)  # removed: no more entries
    return seen


def test_global_module_hooks_order():
    seen = _hook_trace(flow)
    assert seen[:3] == [("pre", "Sequential"), ("pre", "Linear"), ("fwd", "Linear")]
    assert ("own", "Linear") == seen[3]  # the global forward hook runs before the module's own
    assert [s for s in seen if s[0] == "bwd"] == [
        ("bwd", "Tanh"),
        ("bwd", "Linear"),
        ("bwd", "Sequential"),
    ]
    if torch is not None:
        assert seen == _hook_trace(torch)


def test_global_forward_hook_replaces_output_and_registration_hooks():
    m = nn.modules.module
    h = m.register_module_forward_hook(
        lambda mod, a, o: o * 0 if isinstance(mod, nn.ReLU) else None
    )
    try:
        assert nn.ReLU()(flow.ones(2)).tolist() == [0.0, 0.0]
    finally:
        h.remove()
    assert nn.ReLU()(flow.ones(2)).tolist() == [1.0, 1.0]
    names = []
    hp = m.register_module_parameter_registration_hook(lambda mod, n, p: names.append(("p", n)))
    hb = m.register_module_buffer_registration_hook(lambda mod, n, b: names.append(("b", n)))
    hm = m.register_module_module_registration_hook(lambda mod, n, s: names.append(("m", n)))
    try:
        nn.BatchNorm1d(2)
        seq = nn.Sequential()
        seq.add_module("lin", nn.Linear(1, 1, bias=False))
    finally:
        for x in (hp, hb, hm):
            x.remove()
    assert ("p", "weight") in names and ("b", "running_mean") in names and ("m", "lin") in names


class _Square:
    @staticmethod
    def build(lib):
        from importlib import import_module

        fn_mod = import_module(lib.__name__ + ".autograd.function")

        class Sq(fn_mod.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @fn_mod.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        return Sq


@pytest.mark.parametrize("lib", ["flow", "torch"])
def test_once_differentiable(lib):
    if lib == "torch" and torch is None:
        pytest.skip("torch is not installed")
    lib = flow if lib == "flow" else torch
    Sq = _Square.build(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    Sq.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    gy = lib.ones(2, requires_grad=True)
    (g,) = lib.autograd.grad(Sq.apply(x), x, gy, create_graph=True)
    assert g.requires_grad and g.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="differentiate twice"):
        g.sum().backward()


@needs_torch
@pytest.mark.parametrize("n", [1, 2, 3])
def test_nn_grad_matches_torch(n):
    rs = np.random.RandomState(n)
    size = (2, 4) + (7,) * n
    x = rs.randn(*size).astype(np.float32)
    w = rs.randn(6, 2, *(3,) * n).astype(np.float32)
    kw = dict(stride=2, padding=1, groups=2)
    out = getattr(torch.nn.functional, f"conv{n}d")(torch.tensor(x), torch.tensor(w), **kw)
    go = rs.randn(*out.shape).astype(np.float32)
    gi = getattr(flow.nn.grad, f"conv{n}d_input")(size, flow.tensor(w), flow.tensor(go), **kw)
    ti = getattr(torch.nn.grad, f"conv{n}d_input")(size, torch.tensor(w), torch.tensor(go), **kw)
    np.testing.assert_allclose(gi.numpy(), ti.numpy(), rtol=1e-4, atol=1e-4)
    gw = getattr(flow.nn.grad, f"conv{n}d_weight")(flow.tensor(x), w.shape, flow.tensor(go), **kw)
    tw = getattr(torch.nn.grad, f"conv{n}d_weight")(
        torch.tensor(x), w.shape, torch.tensor(go), **kw
    )
    np.testing.assert_allclose(gw.numpy(), tw.numpy(), rtol=1e-4, atol=1e-3)
    with pytest.raises(ValueError, match="grad_output has shape"):
        getattr(flow.nn.grad, f"conv{n}d_input")(size, flow.tensor(w), flow.tensor(go[:1]), **kw)


def test_nn_parallel_pieces_equal_one_forward_and_backward():
    from oneflow_like.nn.parallel import comm, gather, parallel_apply, replicate, scatter
    from oneflow_like.nn.parallel.scatter_gather import scatter_kwargs

    flow.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    devs = ["cpu", "cpu", "cpu"]
    x = flow.randn(10, 8)
    pieces = scatter(x, devs)
    assert [tuple(p.shape) for p in pieces] == [(4, 8), (4, 8), (2, 8)]  # torch's chunking
    outs = parallel_apply(replicate(net, devs), [(p,) for p in pieces], devices=devs)
    y = gather(outs, "cpu")
    assert flow.allclose(y, net(x), atol=1e-6)
    y.square().sum().backward()
    g = net[0].weight.grad.clone()
    net.zero_grad()
    net(x).square().sum().backward()
    assert flow.allclose(g, net[0].weight.grad, atol=1e-5)
    args, kwargs = scatter_kwargs((x,), {"scale": 2, "t": x}, devs)
    assert (
        len(args) == len(kwargs) == 3 and kwargs[2]["scale"] == 2 and kwargs[2]["t"].shape == (2, 8)
    )
    nested = scatter((x, {"a": x, "b": 3}, [x]), devs)
    assert nested[1][1]["b"] == 3 and nested[2][2][0].shape == (2, 8)
    assert comm.reduce_add([flow.ones(2), flow.ones(2) * 2]).tolist() == [3.0, 3.0]
    assert [t.shape[0] for t in comm.scatter(flow.arange(5.0), devs, chunk_sizes=[1, 1, 3])] == [
        1,
        1,
        3,
    ]
    assert comm.gather([flow.ones(1), flow.zeros(2)]).tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="do not sum"):
        comm.scatter(flow.arange(5.0), devs, chunk_sizes=[1, 1])

    class Boom(nn.Module):
        def forward(self, x):
            raise KeyError("bad")

    with pytest.raises(KeyError, match="replica 1 on device cpu"):
        parallel_apply([net, Boom()], [(x,), (x,)], devices=["cpu", "cpu"])
    frozen = replicate(net, ["cpu"], detach=True)[0]
    assert not frozen[0].weight.requires_grad


# multiprocessing.spawn: the children run these module-level functions (spawn re-imports this
# module in each child).


def _spawn_ok(i, path):
    with open(os.path.join(path, f"rank{i}"), "w") as f:
        f.write(str(flow.tensor([i + 1.0]).mul(2).item()))


def _spawn_raises(i):
    if i == 1:
        raise ValueError("rank one failed on purpose")


def _spawn_exits(i):
    if i == 0:
        os._exit(3)


def _spawn_sleeps(i):
    import time

    time.sleep(60)


def test_spawn_runs_each_rank(tmp_path):
    import oneflow_like.multiprocessing as mp

    mp.spawn(_spawn_ok, args=(str(tmp_path),), nprocs=2)
    assert sorted(os.listdir(tmp_path)) == ["rank0", "rank1"]
    assert (tmp_path / "rank1").read_text() == "4.0"


def test_spawn_reports_failures():
    import oneflow_like.multiprocessing as mp

    with pytest.raises(mp.ProcessRaisedException, match="rank one failed on purpose") as e:
        mp.spawn(_spawn_raises, nprocs=2)
    assert (
        "Process 1 terminated with the following error" in str(e.value) and e.value.error_index == 1
    )
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as e:
        mp.spawn(_spawn_exits, nprocs=2)
    assert e.value.exit_code == 3
    ctx = mp.start_processes(_spawn_sleeps, nprocs=1, join=False, start_method="fork")
    assert ctx.join(timeout=0.2) is False  # still running: join's timeout returns
    for p in ctx.processes:
        p.kill()
    with pytest.raises(mp.ProcessExitedException, match="signal SIGKILL"):
        ctx.join(timeout=30)
    with pytest.raises(ValueError, match="nprocs"):
        mp.spawn(_spawn_ok, args=("",), nprocs=0)


@needs_torch
def test_consume_prefix_and_invert_permutation_match_torch():
    from oneflow_like.nn.modules.utils import consume_prefix_in_state_dict_if_present as ours
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as theirs

    from collections import OrderedDict

    def make():
        sd = OrderedDict([("module.a.weight", 1), ("module.b", 2), ("c", 3)])
        sd._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.a", {"v": 2})])
        return sd

    a, b = make(), make()
    ours(a, "module.")
    theirs(b, "module.")
    assert list(a.items()) == list(b.items())
    # torch 2.x also strips the metadata keys ("module" becomes the root ""); 1.13 does not
    assert dict(a._metadata) == {"": {"v": 1}, "a": {"v": 2}}
    wrapped = nn.DataParallel(nn.Linear(2, 2))
    sd = wrapped.state_dict()
    ours(sd, "module.")
    nn.Linear(2, 2).load_state_dict(sd)  # strict: the keys fit the bare model
    perm = [2, 0, 3, 1]
    got = flow.nn.utils.rnn.invert_permutation(flow.tensor(perm)).tolist()
    assert got == torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)).tolist()
    assert flow.nn.utils.rnn.invert_permutation(None) is None


def test_tensor_as_subclass_and_kind_flags():
    class Tagged(flow.Tensor):
        pass

    x = flow.randn(3, requires_grad=True)
    t = (x * 2).as_subclass(Tagged)
    assert type(t) is Tagged and not t.is_leaf
    t.sum().backward()  # the history is shared: the gradient reaches x
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match="subclass of Tensor"):
        x.as_subclass(int)
    y = flow.tensor([1.0, -2.0])
    assert y.cfloat().dtype == flow.complex64 and y.cdouble().dtype == flow.complex128
    assert y.cdouble().real.tolist() == [1.0, -2.0]
    assert not (y.is_meta or y.is_quantized or y.is_nested)


def test_checkpoint_helpers():
    from oneflow_like.utils import checkpoint as cp

    x = flow.randn(3, requires_grad=True) * 2
    d = cp.detach_variable((x, 5))
    assert d[0].requires_grad and d[0].is_leaf and d[1] == 5
    with pytest.raises(RuntimeError, match="tuple of tensors"):
        cp.detach_variable([x])
    with pytest.warns(UserWarning, match="Gradients will be None"):
        cp.check_backward_validity((flow.ones(2),))
    devices, states = cp.get_device_states(flow.ones(2))
    assert devices == [] and states == []  # CPU tensors only: no CUDA state to keep
    cp.set_device_states(devices, states)
    loader = flow.utils.data.DataLoader([1, 2, 3], pin_memory_device="", in_order=True)
    assert [b.item() for b in loader] == [1, 2, 3]
