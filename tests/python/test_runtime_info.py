"""torch.version, torch.cuda's device queries, torch.futures, torch.quasirandom and the Tensor
methods that forward to torch-level functions (stft/istft), as PyTorch 2.x spells them."""
import threading

import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")
_HAS_CUDA = flow.cuda.is_available()


# ---- torch.version / build information ---------------------------------------------------------


def test_version_module():
    v = flow.version
    assert v.__version__ == flow.__version__ and v.hip is None and v.debug is False
    info = flow._C.cuda._build_info()
    if info["cuda_compiled"]:
        major, minor = v.cuda.split(".")
        assert int(major) * 1000 + int(minor) * 10 == info["cuda_compiled"]
        assert info["cudnn_compiled"] >= 8000 and info["arch_list"], info
        assert all(a.split("_")[0] in ("sm", "compute") for a in info["arch_list"])
    else:
        assert v.cuda is None and info["arch_list"] == []
    import oneflow_like.multiprocessing as mp

    assert flow.multiprocessing is mp and flow.futures and flow.quasirandom


def test_arch_list_and_gencode_flags_follow_torch_formats():
    if not _HAS_CUDA:
        assert flow.cuda.get_arch_list() == [] and flow.cuda.get_gencode_flags() == ""
        assert flow.backends.cudnn.version() is None
        with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
            flow.cuda.mem_get_info()
        return
    archs = flow.cuda.get_arch_list()
    assert archs == flow._C.cuda._build_info()["arch_list"]
    expected = " ".join(
        f"-gencode compute=compute_{a.split('_')[1]},code={a.split('_')[0]}_{a.split('_')[1]}"
        for a in archs
    )
    assert flow.cuda.get_gencode_flags() == expected


@pytest.mark.skipif(not _HAS_CUDA, reason="needs a CUDA device (none here)")
def test_device_properties_on_a_gpu():
    p = flow.cuda.get_device_properties(0)
    assert p.name and p.major >= 7 and p.total_memory > 2**30 and p.multi_processor_count > 0
    assert p.warp_size == 32 and p.uuid.startswith("GPU-") and len(p.uuid) == 40
    assert flow.cuda.get_device_name() == p.name == flow.cuda.get_device_name("cuda:0")
    assert flow.cuda.get_device_capability(0) == (p.major, p.minor)
    assert repr(p).startswith(f"_CudaDeviceProperties(name='{p.name}', major={p.major}")
    free, total = flow.cuda.mem_get_info(0)
    assert 0 < free <= total and abs(total - p.total_memory) < 2**30
    x = flow.empty(256 * 2**20, dtype=flow.uint8, device="cuda")  # 256 MiB from the allocator
    flow.cuda.synchronize()
    assert flow.cuda.mem_get_info(0)[0] <= free
    del x
    assert flow.backends.cudnn.version() >= 8000
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        flow.cuda.get_device_properties(flow.cuda.device_count())


# ---- torch.futures -----------------------------------------------------------------------------


def test_future_set_then_wait_value():
    f = flow.futures.Future()
    assert not f.done()
    with pytest.raises(RuntimeError, match="not completed"):
        f.value()
    g = f.then(lambda fut: fut.wait() * 10)
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    threading.Timer(0.05, lambda: f.set_result(4)).start()
    assert g.wait() == 40 and f.value() == 4 and seen == [4] and f.done()
    with pytest.raises(RuntimeError, match="already completed"):
        f.set_result(5)
    h = flow.futures.Future()
    h.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        h.wait()
    with pytest.raises(TypeError, match="expected an exception"):
        flow.futures.Future().set_exception("not an exception")


def test_collect_all_and_wait_all():
    futs = [flow.futures.Future() for _ in range(3)]
    all_done = flow.futures.collect_all(futs)
    for i, f in enumerate(reversed(futs)):
        assert not all_done.done()
        f.set_result(i)
    assert all_done.wait() == futs and flow.futures.wait_all(futs) == [2, 1, 0]
    bad = [flow.futures.Future(), flow.futures.Future()]
    bad[0].set_result(1)
    bad[1].set_exception(KeyError("k"))
    with pytest.raises(KeyError):
        flow.futures.wait_all(bad)
    assert flow.futures.collect_all([]).wait() == []


def test_jit_fork_returns_a_torch_futures_future():
    fut = flow.jit.fork(lambda a, b: a + b, flow.ones(2), flow.ones(2))
    assert isinstance(fut, flow.futures.Future) and flow.jit.Future is flow.futures.Future
    assert flow.jit.wait(fut).tolist() == [2.0, 2.0]
    assert flow.futures.wait_all([fut])[0].tolist() == [2.0, 2.0]


# ---- torch.quasirandom -------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [1, 7, 50])
def test_sobol_unscrambled_equals_torch(dim):
    ours, theirs = flow.quasirandom.SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
    a = ours.draw(100, dtype=flow.float64).numpy()
    b = theirs.draw(100, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(a, b)
    ours.fast_forward(28), theirs.fast_forward(28)
    np.testing.assert_array_equal(ours.draw(5).numpy(), theirs.draw(5).numpy())
    assert ours.num_generated == theirs.num_generated == 133
    ours.reset(), theirs.reset()
    np.testing.assert_array_equal(ours.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())


def test_sobol_scrambled_follows_its_seed_and_errors():
    a = flow.quasirandom.SobolEngine(5, scramble=True, seed=7).draw(16)
    b = flow.quasirandom.SobolEngine(5, scramble=True, seed=7).draw(16)
    c = flow.quasirandom.SobolEngine(5, scramble=True, seed=8).draw(16)
    plain = flow.quasirandom.SobolEngine(5).draw(16)
    assert a.dtype == flow.float32 and a.shape == (16, 5)
    assert flow.equal(a, b) and not flow.equal(a, c) and not flow.equal(a, plain)
    assert float(a.min()) >= 0 and float(a.max()) < 1
    # Each coordinate of 16 scrambled points still hits each of 16 strata once.
    strata = np.sort(np.floor(a.numpy().astype(np.float64) * 16), axis=0)
    np.testing.assert_array_equal(strata, np.arange(16)[:, None].repeat(5, 1))
    out = flow.empty(0)
    e = flow.quasirandom.SobolEngine(3)
    assert e.draw(4, out=out) is out and out.shape == (4, 3)
    with pytest.raises(ValueError, match="require n to be a power of 2"):
        e.draw_base2(1)
    for bad in (0, 21202):
        with pytest.raises(ValueError, match=r"\[1, 21201\]"):
            flow.quasirandom.SobolEngine(bad)
    assert repr(flow.quasirandom.SobolEngine(3, scramble=True, seed=1)) == (
        "SobolEngine(dimension=3, scramble=True, seed=1)"
    )


# ---- Tensor methods forwarding to torch-level functions ----------------------------------------


def test_tensor_stft_istft_methods():
    x = flow.randn(2, 400, dtype=flow.float64)
    w = flow.hann_window(64, dtype=flow.float64)
    spec = x.stft(64, hop_length=16, window=w, return_complex=True)
    assert flow.equal(spec, flow.stft(x, 64, hop_length=16, window=w, return_complex=True))
    ref = torch.stft(torch.from_numpy(x.numpy()), 64, hop_length=16,
                     window=torch.hann_window(64, dtype=torch.float64), return_complex=True)  # fmt: skip
    np.testing.assert_allclose(spec.numpy(), ref.numpy(), atol=1e-10)
    back = spec.istft(64, hop_length=16, window=w, length=400)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-10)


# ---- torch.utils._pytree / torch.utils.model_zoo -----------------------------------------------


def test_pytree_flatten_unflatten_map_as_torch():
    import collections

    import torch.utils._pytree as TP

    import oneflow_like.utils._pytree as P

    Pt = collections.namedtuple("Pt", "x y")
    tree = {"a": [1, (2, 3)], "b": Pt(4, {"c": 5}), "d": collections.OrderedDict(e=6), "f": None}
    leaves, spec = P.tree_flatten(tree)
    assert leaves == TP.tree_flatten(tree)[0] == [1, 2, 3, 4, 5, 6, None]
    assert P.tree_unflatten(leaves, spec) == tree and spec.num_leaves == 7
    assert P.tree_map(lambda v: None if v is None else v * 10, tree)["b"] == Pt(40, {"c": 50})
    assert P.tree_map(lambda a, b: a + b, [1, {"k": 2}], [10, {"k": 20}]) == [11, {"k": 22}]
    assert P.tree_map_only(int, str, (1, 2.0, [3])) == ("1", 2.0, ["3"])
    assert P.tree_all(lambda v: v > 0, [1, (2,)]) and not P.tree_any(lambda v: v > 5, [1, (2,)])
    assert P.tree_structure([1, 2]) == P.tree_structure([3, 4]) != P.tree_structure((3, 4))
    with pytest.raises(
        ValueError, match="has length 2 but the spec refers to a pytree that holds 7"
    ):
        P.tree_unflatten([1, 2], spec)
    with pytest.raises(ValueError, match="different structures"):
        P.tree_map(lambda a, b: a, [1, 2], [1])

    class Box:
        def __init__(self, v):
            self.v = v

    P.register_pytree_node(Box, lambda b: ([b.v], None), lambda c, _: Box(c[0]))
    out = P.tree_map(lambda t: t + 1, [Box(flow.ones(2))])
    assert isinstance(out[0], Box) and out[0].v.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="already registered"):
        P.register_pytree_node(Box, lambda b: ([b.v], None), lambda c, _: Box(c[0]))


def test_model_zoo_load_url_is_hub_loader():
    from oneflow_like.utils import model_zoo

    assert model_zoo.load_url is flow.hub.load_state_dict_from_url


def test_autograd_profiler_legacy_api():
    with flow.autograd.profiler.profile(record_shapes=True) as prof:
        with flow.autograd.profiler.record_function("forward_pass"):
            y = flow.nn.Linear(8, 4)(flow.randn(3, 8)).sum()
        y.backward()
    names = [e.key for e in prof.key_averages()]
    assert "forward_pass" in names and "matmul" in names
    assert prof.self_cpu_time_total > 0 and len(prof.function_events) > 0
    table = prof.table(sort_by="self_cpu_time_total", row_limit=5)
    assert "Self CPU time total" in table and "Name" in table
    with flow.autograd.profiler.profile(enabled=False) as off:
        flow.ones(2) + 1
    with pytest.raises(RuntimeError, match="no trace yet"):
        off.key_averages()
