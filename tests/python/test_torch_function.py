"""The __torch_function__ protocol and flow.overrides (issue 19), after the scenarios of torch's
"Extending torch" docs: a tensor-like ScalarTensor, a DiagonalTensor, a logging Tensor subclass,
TorchFunctionMode, and a table test over every function get_overridable_functions() lists.
Where torch 1.13's API is the same, the scenario runs on torch too and the results must match."""
import threading

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like.overrides import (
    TorchFunctionMode,
    get_ignored_functions,
    get_overridable_functions,
    get_testing_overrides,
    handle_torch_function,
    has_torch_function,
    is_tensor_like,
    resolve_name,
)

torch = pytest.importorskip("torch")


def _both(scenario):
    """scenario(lib) on torch 1.13 and on oneflow_like: (torch result, ours)."""
    return scenario(torch), scenario(flow)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


# --------------------------------------------------------------------------------------------
# ScalarTensor: a tensor-like class with only __torch_function__ (torch's docs)
# --------------------------------------------------------------------------------------------


def _scalar_tensor_scenario(lib):
    handled = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self._n, self._value = n, value

        def tensor(self):
            return self._value * lib.eye(self._n, dtype=lib.float64)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, cls)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def implements(f):
        def deco(impl):
            handled[f] = impl
            return impl

        return deco

    def ensure(x):
        return x.tensor() if isinstance(x, ScalarTensor) else x

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._n

    @implements(lib.add)
    def add(input, other):
        if isinstance(input, ScalarTensor) and isinstance(other, ScalarTensor):
            return ScalarTensor(input._n, input._value + other._value)
        return lib.add(ensure(input), ensure(other))

    s = ScalarTensor(5, 2)
    out = {"mean": lib.mean(s), "repr_type": type(lib.add(s, s)).__name__}
    out["mixed"] = _np(lib.add(s, lib.ones(5, 5, dtype=lib.float64)))
    try:
        lib.mul(s, 2)
    except TypeError as e:
        out["error"] = str(e)
    out["is_tensor_like"] = lib.overrides.is_tensor_like(s)
    out["has_torch_function"] = lib.overrides.has_torch_function((s,))
    return out


def test_scalar_tensor_matches_torch():
    theirs, ours = _both(_scalar_tensor_scenario)
    assert ours["mean"] == theirs["mean"] == 0.4
    assert ours["repr_type"] == theirs["repr_type"] == "ScalarTensor"
    np.testing.assert_allclose(ours["mixed"], theirs["mixed"])
    assert theirs["error"].startswith("no implementation found for 'torch.")
    assert ours["error"].startswith("no implementation found for 'oneflow_like.mul' on types")
    assert "ScalarTensor" in ours["error"]
    assert ours["is_tensor_like"] and ours["has_torch_function"]


# --------------------------------------------------------------------------------------------
# DiagonalTensor: tensor-like, NumPy-convertible, with list arguments and F.* functions
# --------------------------------------------------------------------------------------------


class DiagonalTensor:
    handled = {}

    def __init__(self, n, value):
        self._n, self._value = n, value

    def __array__(self, dtype=None):
        return self._value * np.eye(self._n)

    def tensor(self):
        return flow.tensor(self.__array__())

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in cls.handled:
            return NotImplemented
        return cls.handled[func](*args, **(kwargs or {}))


def _diag_impl(f):
    def deco(impl):
        DiagonalTensor.handled[f] = impl
        return impl

    return deco


@_diag_impl(flow.mm)
def _diag_mm(a, b):
    a = a.tensor() if isinstance(a, DiagonalTensor) else a
    b = b.tensor() if isinstance(b, DiagonalTensor) else b
    return flow.mm(a, b)


@_diag_impl(flow.cat)
def _diag_cat(tensors, dim=0):
    return flow.cat([t.tensor() if isinstance(t, DiagonalTensor) else t for t in tensors], dim)


@_diag_impl(flow.nn.functional.relu)
def _diag_relu(x, inplace=False):
    return DiagonalTensor(x._n, max(x._value, 0))


def test_diagonal_tensor():
    d = DiagonalTensor(3, 2.0)
    x = flow.arange(9, dtype=flow.float64).reshape(3, 3)
    np.testing.assert_allclose(flow.mm(d, x).numpy(), 2.0 * x.numpy())
    np.testing.assert_allclose(flow.mm(x, d).numpy(), 2.0 * x.numpy())
    # Found inside a list argument.
    np.testing.assert_allclose(flow.cat([x, d]).numpy(), np.concatenate([x.numpy(), 2 * np.eye(3)]))
    assert flow.nn.functional.relu(DiagonalTensor(2, -1.0))._value == 0
    with pytest.raises(TypeError, match=r"no implementation found for 'oneflow_like.*\.sum'"):
        flow.sum(d)


# --------------------------------------------------------------------------------------------
# A logging Tensor subclass (the docs' "subclassing torch.Tensor")
# --------------------------------------------------------------------------------------------


def _logging_scenario(lib):
    log = []

    class LoggingTensor(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    base = lib.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=lib.float64)
    t = base.as_subclass(LoggingTensor)
    log.clear()
    out = {}
    r = t + 1
    out["add_type"] = type(r).__name__
    out["sum_type"] = type(r.sum()).__name__
    out["cat_type"] = type(lib.cat([t, base])).__name__
    out["relu_type"] = type(lib.nn.functional.relu(t)).__name__
    out["max"] = tuple(type(v).__name__ for v in lib.max(t, 1))
    out["shape"] = tuple(t.shape)
    out["values"] = _np((t * 2 + 1).relu())
    out["log"] = list(log)
    return out


def test_logging_subclass_matches_torch():
    theirs, ours = _both(_logging_scenario)
    for key in ("add_type", "sum_type", "cat_type", "relu_type", "max", "shape"):
        assert ours[key] == theirs[key], key
    np.testing.assert_allclose(ours["values"], theirs["values"])
    assert ours["log"] == theirs["log"]


class MyT(flow.Tensor):
    pass


def test_subclass_results_and_construction():
    base = flow.tensor([1.0, 2.0, 3.0])
    a = base.as_subclass(MyT)
    assert type(a) is MyT and a.data_ptr() == base.data_ptr()
    assert type(a * 2) is MyT and type(a[0]) is MyT and type(a.view(3, 1)) is MyT
    assert type(flow.stack([a, base])) is MyT
    assert all(type(p) is MyT for p in a.split(1))
    b = MyT(base)
    assert type(b) is MyT and type(b - a) is MyT
    c = flow.Tensor._make_subclass(MyT, base, True)
    assert type(c) is MyT and c.requires_grad and c.is_leaf
    # The default __torch_function__ is callable directly, and only converts for subclasses.
    r = flow.Tensor.__torch_function__(flow.add, (), (base, base))
    assert type(r) is flow.Tensor
    assert flow.Tensor.__torch_function__(flow.add, (MyT,), (base, base)) is NotImplemented
    r = MyT.__torch_function__(flow.add, (MyT,), (base, base))
    assert type(r) is MyT
    np.testing.assert_allclose(r.numpy(), [2.0, 4.0, 6.0])
    # .grad is returned as stored, not converted (get_default_nowrap_functions).
    x = MyT(flow.tensor([1.0, 2.0])).requires_grad_()
    (x * x).sum().backward()
    assert (
        type(x.grad) is flow.Tensor
        and flow.Tensor.grad.__get__ in flow.overrides.get_default_nowrap_functions()
    )
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_subclass_with_new_and_autograd_against_float64():
    class Wrapped(flow.Tensor):
        def __new__(cls, data):
            return flow.Tensor._make_subclass(cls, data, True)

        def __init__(self, data):
            pass

    raw = np.array([0.5, -1.5, 2.0])
    w = Wrapped(flow.tensor(raw))
    assert type(w) is Wrapped and w.requires_grad
    y = (w.sin() * w).sum()
    assert type(y) is Wrapped
    y.backward()
    np.testing.assert_allclose(y.item(), np.sum(np.sin(raw) * raw), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), np.cos(raw) * raw + np.sin(raw), rtol=1e-12)


def test_parameter_and_disable_subclass():
    p = flow.nn.Parameter(flow.ones(2))
    assert type(p * 2) is flow.Tensor
    assert not has_torch_function((p,))
    a = flow.ones(2).as_subclass(MyT)
    with flow._C.DisableTorchFunctionSubclass():
        assert type(a + 1) is flow.Tensor
    assert type(a + 1) is MyT
    with flow._C.DisableTorchFunction():
        assert type(a + 1) is flow.Tensor


def test_subclasses_before_superclasses_and_not_implemented():
    calls = []

    class A(flow.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(("A", types))
            return NotImplemented

    class B(A):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(("B", types))
            return NotImplemented

    a = flow.ones(1).as_subclass(A)
    b = flow.ones(1).as_subclass(B)
    with pytest.raises(TypeError) as e:
        flow.add(a, b)
    assert [c[0] for c in calls] == ["B", "A"]
    assert calls[0][1] == (B, A)
    assert "no implementation found for 'oneflow_like.add'" in str(e.value)

    class C(flow.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "C handled"

    c = flow.ones(1).as_subclass(C)
    calls.clear()
    assert flow.add(a, c) == "C handled"  # A declines, C (left to right next) answers
    assert [x[0] for x in calls] == ["A"]
    assert flow.add(flow.ones(1), c, alpha=2) == "C handled"  # kwargs and plain tensors too


def test_handle_torch_function_in_user_code():
    def my_op(x, y):
        if has_torch_function((x, y)):
            return handle_torch_function(my_op, (x, y), x, y)
        return x + y

    class Catch(flow.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (func, types) if func is my_op else NotImplemented

    assert my_op(flow.ones(1), 1).item() == 2
    c = flow.ones(1).as_subclass(Catch)
    assert my_op(c, 1) == (my_op, (Catch,))
    assert is_tensor_like(c) and is_tensor_like(flow.ones(1)) and not is_tensor_like(3)


# --------------------------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------------------------


class RecordMode(TorchFunctionMode):
    def __init__(self, tag, log):
        super().__init__()
        self.tag, self.log = tag, log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append((self.tag, func.__name__))
        return func(*args, **(kwargs or {}))


def test_mode_sees_calls_and_nests():
    log = []
    x = flow.ones(2)
    with RecordMode("outer", log):
        with RecordMode("inner", log):
            y = flow.zeros(2) + x
        z = x.sum()
    np.testing.assert_allclose(y.numpy(), [1.0, 1.0])
    assert z.item() == 2
    assert log == [
        ("inner", "zeros"),
        ("outer", "zeros"),
        ("inner", "add"),  # torch reports `+` as Tensor.add
        ("outer", "add"),
        ("outer", "sum"),
    ]
    log.clear()
    flow.ones(2) + 1
    assert log == []  # popped on exit


def test_mode_disable_not_implemented_and_threads():
    log = []

    class Declines(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    with Declines():
        with pytest.raises(TypeError, match="nor in mode"):
            flow.ones(1)
    seen_in_thread = []
    with RecordMode("m", log):
        with flow._C.DisableTorchFunction():
            flow.ones(1)
        t = threading.Thread(target=lambda: seen_in_thread.append(flow.ones(1).sum().item()))
        t.start()
        t.join()
        flow.overrides.DisableTorchFunctionSubclass  # noqa: B018  (modes stay on under it)
        with flow._C.DisableTorchFunctionSubclass():
            flow.ones(1)
    assert log == [("m", "ones")]  # not the one under DisableTorchFunction, nor the thread's
    assert seen_in_thread == [1.0]


def test_mode_intercepts_and_replaces():
    class Doubler(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func is flow.nn.functional.relu else out

    with Doubler():
        r = flow.nn.functional.relu(flow.tensor([-1.0, 3.0]))
    np.testing.assert_allclose(r.numpy(), [0.0, 6.0])


# --------------------------------------------------------------------------------------------
# Table: every overridable function dispatches
# --------------------------------------------------------------------------------------------


class _Sentinel(Exception):
    pass


def _table_cases():
    cases = []
    for namespace, funcs in get_overridable_functions().items():
        for f in funcs:
            cases.append((namespace, f))
    return cases


def test_overridable_table_is_complete():
    table = get_overridable_functions()
    ns_names = {getattr(ns, "__name__", "") for ns in table}
    for name in (
        "oneflow_like",
        "oneflow_like.nn.functional",
        "oneflow_like.linalg",
        "oneflow_like.fft",
        "oneflow_like.special",
        "Tensor",
    ):
        assert name in ns_names, name
    assert flow.add in table[flow] and flow.nn.functional.conv2d in table[flow.nn.functional]
    assert flow.Tensor.add in table[flow.Tensor] and flow.Tensor.__add__ in table[flow.Tensor]
    assert flow.Tensor.shape.__get__ in table[flow.Tensor]
    assert len(table[flow]) > 300 and len(table[flow.Tensor]) > 300
    ignored = get_ignored_functions()
    assert flow.zeros in ignored and flow.Tensor.as_subclass in ignored
    for funcs in table.values():
        assert not ignored.intersection(funcs)
    assert resolve_name(flow.Tensor.add) == "oneflow_like.Tensor.add"
    assert resolve_name(flow.linalg.inv) == "oneflow_like.linalg.inv"
    overrides = get_testing_overrides()
    assert overrides[flow.add](1, 2) == -1


@pytest.mark.parametrize("kind", ["subclass", "tensor_like"])
def test_every_overridable_function_dispatches(kind):
    received = []

    class Sub(flow.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            received.append(func)
            raise _Sentinel

    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            received.append(func)
            raise _Sentinel

    arg = flow.ones(2, 2).as_subclass(Sub) if kind == "subclass" else Like()
    missed = []
    count = 0
    for namespace, f in _table_cases():
        if kind == "tensor_like" and namespace is flow.Tensor:
            continue  # Tensor methods need a Tensor self
        received.clear()
        try:
            f(arg)
        except _Sentinel:
            pass
        except Exception as e:  # noqa: BLE001
            missed.append((resolve_name(f), repr(e)[:80]))
            continue
        count += 1
        expected = f._tf_owner if getattr(f, "_tf_kind", 0) == 3 else f  # Tensor.__add__: .add
        if len(received) != 1 or not (received[0] is expected or received[0] == expected):
            missed.append((resolve_name(f), received[:1]))
    assert not missed, missed[:20]
    assert count > 500


def test_real_torch_tensors_are_not_overloaded():
    """A real torch.Tensor (its __torch_function__ calls `func` again under torch's own
    DisableTorchFunction) reaches our conversions without recursing; a subclass of flow.Tensor
    beside it still dispatches."""
    torch = pytest.importorskip("torch")
    t = torch.arange(6.0).reshape(2, 3)
    assert flow.from_dlpack(t).tolist() == t.tolist()
    assert flow.as_tensor(t.numpy()).tolist() == t.tolist()

    class Sub(torch.Tensor):
        pass

    s = t.as_subclass(Sub)
    assert flow.from_dlpack(s).tolist() == t.tolist()

    seen = []

    class Mine(flow.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    m = flow.ones(3).as_subclass(Mine)
    flow.add(m, 1)
    assert seen, "a flow.Tensor subclass must still dispatch"


def test_pickle_keeps_the_subclass():
    """pickle/copy of a Tensor subclass gives back that subclass (torch's _rebuild_from_type_v2),
    with its attributes; Parameter and plain Tensor keep their own route."""
    import copy
    import pickle

    class Tagged(flow.Tensor):
        pass

    globals()["Tagged"] = Tagged  # pickle finds classes by module-level name
    Tagged.__qualname__ = "Tagged"
    t = flow.arange(4.0).as_subclass(Tagged)
    t.tag = "x"
    u = pickle.loads(pickle.dumps(t))
    assert type(u) is Tagged and u.tolist() == [0.0, 1.0, 2.0, 3.0] and u.tag == "x"
    assert type(copy.deepcopy(t)) is Tagged
    p = flow.nn.Parameter(flow.ones(2))
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is flow.nn.Parameter and q.requires_grad
    assert type(pickle.loads(pickle.dumps(flow.ones(2)))) is flow.Tensor
