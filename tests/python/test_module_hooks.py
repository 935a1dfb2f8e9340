"""nn.Module backward hooks, extra state, load_state_dict post hooks, to_empty / type /
share_memory, against torch 1.13 in float64 with the same weights and inputs."""
import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape)


def np_or_none(gs):
    return [None if g is None else g.detach().numpy().copy() for g in gs]


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


class TwoIn:
    """forward(a, b, k) = (tanh(a @ W) * b * k, a.sum()) for each library."""

    @staticmethod
    def make(lib, W):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor(W))

            def forward(self, a, b, k):
                return lib.tanh(a @ self.w) * b * k, a.sum()

        return M()


def run_linear(lib, data, hook_kind="full", scale_input=2.0, register=True):
    W, B, X, U = data
    m = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.copy_(lib.tensor(B))
    rec = []

    def hook(mod, gi, go):
        assert mod is m
        rec.append((np_or_none(gi), np_or_none(go)))
        return tuple(None if g is None else g * scale_input for g in gi)

    if register:
        reg = m.register_full_backward_hook if hook_kind == "full" else m.register_backward_hook
        handle = reg(hook)
    x = lib.tensor(X, requires_grad=True)
    (m(x) * lib.tensor(U)).sum().backward()
    return rec, x.grad.numpy(), m.weight.grad.numpy(), m.bias.grad.numpy(), m


@pytest.mark.parametrize("kind", ["full", "legacy"])
def test_full_backward_hook_linear_matches_torch(kind):
    data = [arr(2, 3), arr(2), arr(4, 3), arr(4, 2)]
    ours = run_linear(flow, data, kind)
    ref = run_linear(torch, data, "full")
    assert len(ours[0]) == len(ref[0]) == 1
    assert_same(ours[0][0][0], ref[0][0][0])
    assert_same(ours[0][0][1], ref[0][0][1])
    for a, b in zip(ours[1:4], ref[1:4]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    plain = run_linear(flow, data, register=False)
    np.testing.assert_allclose(ours[1], 2 * plain[1], rtol=1e-12)  # the hook's grad_input won


def test_hook_with_non_tensor_args_tuple_outputs_and_no_grad_input():
    W, A, B = arr(3, 2), arr(4, 3), arr(4, 2)
    results = []
    for lib in (flow, torch):
        m = TwoIn.make(lib, W)
        rec = []
        m.register_full_backward_hook(
            lambda mod, gi, go: rec.append((np_or_none(gi), np_or_none(go)))
        )
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B)  # no gradient: zeros in grad_input (torch marks it non-differentiable)
        y, s = m(a, b, 3.0)
        y.sum().backward()  # s unused: None in grad_output
        results.append((rec, a.grad.numpy(), m.w.grad.numpy()))
    (ours, ga, gw), (ref, ra, rw) = results
    assert len(ours) == len(ref) == 1
    assert len(ours[0][0]) == 3 and ours[0][0][2] is None and not ours[0][0][1].any()
    assert_same(ours[0][0], ref[0][0])
    assert_same(ours[0][1], ref[0][1])
    np.testing.assert_allclose(ga, ra, rtol=1e-12)
    np.testing.assert_allclose(gw, rw, rtol=1e-12)


def test_hook_when_no_input_requires_grad():
    data = [arr(2, 3), arr(2), arr(4, 3), arr(4, 2)]
    results = []
    for lib in (flow, torch):
        m = lib.nn.Linear(3, 2).double()
        rec = []
        m.register_full_backward_hook(
            lambda mod, gi, go: rec.append((np_or_none(gi), np_or_none(go)))
        )
        with lib.no_grad():
            m.weight.copy_(lib.tensor(data[0]))
        (m(lib.tensor(data[2])) * lib.tensor(data[3])).sum().backward()
        results.append(rec)
    assert len(results[0]) == 1 and results[0][0][0] == [None]
    assert_same(results[0][0][0], results[1][0][0])
    assert_same(results[0][0][1], results[1][0][1])
    m = flow.nn.Linear(3, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (flow.ones(4, 3),))
    with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
        m(flow.ones(4, 3)).sum().backward()


def test_backward_pre_hook_replaces_grad_output_and_handles_remove():
    data = [arr(2, 3), arr(2), arr(4, 3), arr(4, 2)]
    plain = run_linear(flow, data, register=False)
    m = plain[4]
    m.weight.grad = None
    seen = []

    def pre(mod, go):
        seen.append(go[0].numpy().copy())
        return (go[0] * 3,)

    h = m.register_full_backward_pre_hook(pre)
    x = flow.tensor(data[2], requires_grad=True)
    (m(x) * flow.tensor(data[3])).sum().backward()
    np.testing.assert_allclose(seen[0], data[3], rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 3 * plain[1], rtol=1e-12)
    np.testing.assert_allclose(m.weight.grad.numpy(), 3 * plain[2], rtol=1e-12)
    h.remove()
    m.weight.grad = None
    x = flow.tensor(data[2], requires_grad=True)
    (m(x) * flow.tensor(data[3])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), plain[1], rtol=1e-12)
    assert len(seen) == 1
    m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but expected 1"):
        m(flow.ones(4, 3, dtype=flow.float64)).sum().backward()


def test_mixing_regular_and_full_backward_hooks_raises_like_torch():
    for lib in (flow, torch):
        m = lib.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            m.register_full_backward_hook(lambda *a: None)
    m = flow.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        m(flow.ones(1, 2, requires_grad=True)).sum().backward()


def extra_state_model(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls}

        def set_extra_state(self, state):
            self.calls = state["calls"]

    return lib.nn.Sequential(lib.nn.Linear(2, 2), Counter())


def test_extra_state_in_state_dict_matches_torch():
    ours, ref = extra_state_model(flow), extra_state_model(torch)
    ours[1].calls = 7
    sd = ours.state_dict()
    assert list(sd) == list(ref.state_dict())
    assert sd["1._extra_state"] == {"calls": 7}
    fresh = extra_state_model(flow)
    assert fresh.load_state_dict(sd) is not None
    assert fresh[1].calls == 7
    del sd["1._extra_state"]
    for lib, model, state in ((flow, extra_state_model(flow), sd), (torch, ref, None)):
        state = (
            state
            if state is not None
            else {k: v for k, v in ref.state_dict().items() if "extra" not in k}
        )
        with pytest.raises(
            RuntimeError, match='Missing key\\(s\\) in state_dict: "1._extra_state"'
        ):
            model.load_state_dict(state)
    with pytest.raises(RuntimeError, match="should never be called"):
        flow.nn.Linear(1, 1).get_extra_state()


def test_load_state_dict_post_hook_matches_torch():
    results = []
    for lib in (flow, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1))
        calls = []

        def hook(mod, keys):
            calls.append((type(mod).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()  # in place: strict no longer sees them

        m[1].register_load_state_dict_post_hook(hook)
        h = m.register_load_state_dict_post_hook(hook)
        sd = {k: v for k, v in m.state_dict().items() if not k.startswith("1.")}
        res = m.load_state_dict(sd)  # strict, yet passes: the hook emptied missing_keys
        h.remove()
        m.load_state_dict(sd)
        results.append((calls, list(res.missing_keys), list(res.unexpected_keys)))
    assert sorted(results[0][0]) == sorted(results[1][0])
    assert results[0][1:] == results[1][1:]
    m = flow.nn.Linear(1, 1)
    m.register_load_state_dict_post_hook(lambda mod, keys: keys)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        m.load_state_dict(m.state_dict())


def test_to_empty_type_and_share_memory():
    for lib in (flow, torch):
        m = lib.nn.BatchNorm1d(3)
        assert m.share_memory() is m
        out = m.type(lib.float64)
        assert out is m and m.weight.dtype == lib.float64 and m.running_mean.dtype == lib.float64
        assert m.num_batches_tracked.dtype == lib.float64  # integer buffers too, as torch
        assert isinstance(m.weight, lib.nn.Parameter)
        e = m.to_empty(device="cpu")
        assert e is m and tuple(m.weight.shape) == (3,) and m.weight.dtype == lib.float64
        assert isinstance(m.weight, lib.nn.Parameter) and m.weight.requires_grad
