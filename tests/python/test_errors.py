"""Error messages for bad input: the usual Python exception types (ValueError, TypeError,
IndexError, RuntimeError, MemoryError) naming the op and the shapes; a kernel that fails inside
the VM raises at the next sync and leaves the runtime usable; an impossible allocation raises
MemoryError without crashing.

Features whose ops do not exist yet are skipped with the missing name as the reason.
"""
import inspect
import os
import re
import threading

import numpy as np
import pytest

import oneflow_like as flow


def need(obj, *names):
    """A missing binding fails the test (never a skip)."""
    for n in names:
        assert hasattr(obj, n), f"{'flow' if obj is flow else 'Tensor'}.{n} is missing"


def still_works():
    """The runtime computes correctly and syncs cleanly: an error the test already saw through a
    read (.numpy()/.item()) is never raised again by flow.sync() (issue 18: an error is raised
    once, at the first sync point that depends on it)."""
    flow.sync()
    r = (flow.tensor([1.0, 2.0]) * 3 + 1).sum()
    assert r.item() == 11.0
    flow.sync()


# --------------------------------------------------------------------------------------------
# shape / argument errors raised at the call, before anything is queued
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, op",
    [
        (lambda: flow.add(flow.ones(2, 3), flow.ones(4)), "add"),
        (lambda: flow.ones(2, 3) + flow.ones(2), "add"),
        (lambda: flow.ones(2, 3) * flow.ones(3, 2), "mul"),
        (lambda: flow.ones(2, 3) - flow.ones(5, 1, 4), "sub"),
    ],
)
def test_broadcast_error_names_op_and_shapes(fn, op):
    with pytest.raises(ValueError) as e:
        fn()
    msg = str(e.value)
    assert op in msg, msg
    assert "2,3" in msg.replace(" ", ""), msg


def test_matmul_size_mismatch():
    with pytest.raises(ValueError) as e:
        flow.matmul(flow.ones(2, 3), flow.ones(4, 5))
    msg = str(e.value).replace(" ", "")
    assert "matmul" in msg and "2,3" in msg and "4,5" in msg, msg
    with pytest.raises(ValueError, match="matmul|mm"):
        flow.ones(2, 3) @ flow.ones(2)


def test_reshape_and_view_errors():
    with pytest.raises(ValueError) as e:
        flow.ones(2, 3).reshape(4, 2)
    msg = str(e.value).replace(" ", "")
    assert "reshape" in msg and "4,2" in msg and "2,3" in msg, msg
    with pytest.raises(ValueError, match="reshape|view"):
        flow.ones(2, 3).view(7)


@pytest.mark.parametrize(
    "fn, op",
    [
        (lambda: flow.ones(2, 3).sum(dim=5), "sum"),
        (lambda: flow.ones(2, 3).mean(dim=-3), "mean"),
        (lambda: flow.ones(2, 3).transpose(0, 3), "transpose"),
    ],
)
def test_dim_out_of_range_is_index_error(fn, op):
    with pytest.raises(IndexError, match=op):
        fn()


def test_permute_wrong_length():
    with pytest.raises(ValueError, match="permute"):
        flow.ones(2, 3).permute(0)


def test_negative_size():
    with pytest.raises(ValueError, match="negative"):
        flow.zeros(-1)


def test_bad_dtype_and_device_names():
    with pytest.raises((ValueError, TypeError), match="dtype"):
        flow.ones(2, dtype="float99")
    with pytest.raises(ValueError, match="device"):
        flow.ones(2, device="tpu")
    with pytest.raises(TypeError, match="dtype"):
        flow.ones(2, dtype=3.5)


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError):
        flow.relu("a")
    with pytest.raises(TypeError):
        flow.ones(2) + "x"
    with pytest.raises(TypeError):
        flow.ones(2) + None
    with pytest.raises(TypeError):
        flow.matmul(flow.ones(2, 2), [[1, 2], "x"])


def test_bad_python_data():
    with pytest.raises((ValueError, TypeError)):
        flow.tensor([[1, 2], [3]])  # ragged
    with pytest.raises((ValueError, TypeError)):
        flow.tensor("abc")
    with pytest.raises((ValueError, TypeError)):
        flow.tensor([object()])


def test_requires_grad_on_integers_is_type_error():
    with pytest.raises(TypeError) as e:
        flow.tensor([1, 2]).requires_grad_()
    assert "floating" in str(e.value)


def test_item_and_bool_of_many_elements():
    with pytest.raises(ValueError, match=r"item.*\(2, 2\)|\(2, 2\).*item|one element|one-element"):
        flow.ones(2, 2).item()
    with pytest.raises(ValueError, match="ambiguous"):
        if flow.ones(3):
            pass


def test_backward_errors():
    x = flow.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar"):  # RuntimeError each, as torch
        (x * 2).backward()  # needs a gradient for a non-scalar output
    with pytest.raises(RuntimeError):
        flow.ones(2).sum().backward()  # nothing requires grad
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time|retain_graph"):
        y.backward()
    still_works()


def test_inplace_on_leaf_requiring_grad():
    x = flow.ones(2, requires_grad=True)
    with pytest.raises((ValueError, RuntimeError), match="leaf"):
        x.add_(1.0)
    with flow.no_grad():
        x.add_(1.0)  # allowed without grad
    assert x.tolist() == [2.0, 2.0]


def test_inplace_target_shape_mismatch():
    t = flow.ones(3)
    with pytest.raises(ValueError) as e:
        t.add_(flow.ones(2, 3))
    msg = str(e.value).replace(" ", "")
    assert "add" in msg and "2,3" in msg, msg


def test_modified_saved_tensor_is_detected():
    x = flow.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y * y  # saves y
    y.add_(1.0)
    with pytest.raises((RuntimeError, ValueError), match="version|modified|in-place|inplace"):
        z.sum().backward()
    still_works()


def test_exception_in_hook_propagates():
    x = flow.ones(2, requires_grad=True)

    def hook(g):
        raise KeyError("from the hook")

    x.register_hook(hook)
    with pytest.raises(Exception, match="from the hook"):
        (x * 2).sum().backward()
    still_works()


# --------------------------------------------------------------------------------------------
# a kernel failing inside the VM: raised at the next sync, runtime usable afterwards
# --------------------------------------------------------------------------------------------


def _bad_index_ops():
    """(name, fn) for every out-of-range-index op that exists; fn returns the (queued) result."""
    cases = []
    idx = lambda: flow.tensor([0, 7])  # noqa: E731
    if hasattr(flow, "embedding"):
        cases.append(("embedding", lambda: flow.embedding(idx(), flow.ones(3, 2))))
    if hasattr(flow, "gather"):
        cases.append(
            ("gather", lambda: flow.gather(flow.ones(2, 3), 1, flow.tensor([[0, 7], [1, 2]])))
        )
    if hasattr(flow, "index_select"):
        cases.append(("index_select", lambda: flow.index_select(flow.ones(3, 2), 0, idx())))
    if hasattr(flow, "nll_loss"):
        cases.append(("nll_loss", lambda: flow.nll_loss(flow.ones(2, 3), idx())))
    if hasattr(flow, "cross_entropy"):
        cases.append(("nll_loss", lambda: flow.cross_entropy(flow.ones(2, 3), idx())))
    return cases


def test_failing_kernel_raises_at_sync_and_runtime_recovers():
    cases = _bad_index_ops()
    assert cases, "flow.embedding / flow.gather / flow.index_select are missing"
    for op, fn in cases:
        # raised by flow.sync()
        try:
            out = fn()
        except IndexError as e:  # checking on the caller's thread is also fine
            assert op in str(e)
            continue
        with pytest.raises((IndexError, RuntimeError)) as e:
            flow.sync()
        assert op in str(e.value), str(e.value)
        still_works()
        # raised by reading the result, and again by each later read of it
        out = fn()
        with pytest.raises((IndexError, RuntimeError), match=op):
            out.numpy()
        with pytest.raises((IndexError, RuntimeError), match=op):
            out.sum().item()  # an op reading a failed tensor propagates its error
        del out
        still_works()


def test_failing_kernel_does_not_poison_unrelated_work():
    cases = _bad_index_ops()
    assert cases, "flow.embedding / flow.gather / flow.index_select are missing"
    op, fn = cases[0]
    good = flow.tensor([1.0, 2.0]) + 1
    try:
        bad = fn()
    except IndexError as e:  # checked on the caller's thread: raised at once, naming the op
        assert op in str(e)
    else:
        assert good.tolist() == [2.0, 3.0]  # unrelated result readable while an error is pending
        with pytest.raises((IndexError, RuntimeError), match=op):
            bad.numpy()
    assert good.tolist() == [2.0, 3.0]
    still_works()


def test_failing_kernel_under_autograd():
    need(flow, "embedding")
    w = flow.ones(3, 2, requires_grad=True)
    try:
        loss = flow.embedding(flow.tensor([0, 9]), w).sum()
    except IndexError as e:  # checked on the caller's thread: raised at once, naming the op
        assert "embedding" in str(e)
    else:
        with pytest.raises((IndexError, RuntimeError), match="embedding"):
            loss.backward()
            flow.sync()
    still_works()
    w.grad = None  # the failed step's gradient is not meaningful
    loss = flow.embedding(flow.tensor([0, 2]), w).sum()
    loss.backward()
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]


# --------------------------------------------------------------------------------------------
# out of memory
# --------------------------------------------------------------------------------------------


def test_impossible_allocation_is_memory_error():
    with pytest.raises(MemoryError) as e:
        t = flow.zeros(1 << 40)  # 4 TiB of float32
        flow.sync()
    assert "memory" in str(e.value).lower()
    still_works()
    with pytest.raises(MemoryError):
        t = flow.ones(1 << 38, dtype=flow.float64)
        t.sum().item()
    still_works()


def test_out_of_memory_is_torchs_exception():
    # torch.OutOfMemoryError / torch.cuda.OutOfMemoryError: a RuntimeError (scripts catch that
    # and look for "out of memory"), and here also a MemoryError
    with pytest.raises(flow.cuda.OutOfMemoryError) as e:
        flow.zeros(1 << 40).sum().item()
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, MemoryError)
    assert flow.OutOfMemoryError is flow.cuda.OutOfMemoryError
    assert "out of memory" in str(e.value)
    still_works()


def test_memory_error_from_an_op_output():
    big = flow.ones(1 << 20)  # fine
    with pytest.raises(MemoryError):
        flow.matmul(big.reshape(-1, 1), big.reshape(1, -1)).sum().item()  # 4 TiB result
    still_works()
    assert big.sum().item() == float(1 << 20)


def test_numpy_of_an_impossible_tensor_raises_the_runtime_error_once():
    # NumPy's own MemoryError ("Unable to allocate 4.00 TiB") used to come first, and the
    # runtime's error stayed pending for an unrelated flow.sync().
    with pytest.raises(
        MemoryError, match=r"\[full\].*out of memory on cpu: requested 4398046511104"
    ):
        flow.zeros(1 << 40).numpy()
    assert (flow.ones(3) + 1).tolist() == [2.0, 2.0, 2.0]
    flow.sync()  # nothing unseen is pending
    still_works()


def test_sync_raises_only_unseen_errors_once():
    t = flow.zeros(1 << 40)  # fails in the VM; nobody reads it
    with pytest.raises(MemoryError, match=r"\[full\]"):
        flow.sync()
    flow.sync()  # reported once
    del t
    still_works()


@pytest.mark.parametrize(
    "make",
    [
        lambda: flow.zeros(2**62, 4),
        lambda: flow.ones(2**40, 2**40),
        lambda: flow.empty(2**31, 2**31, 2**31),
        lambda: flow.ones(2, 3).expand(2**62, 2, 3),
        lambda: flow.ones(2**31, 2**31, dtype=flow.float64),
    ],
)
def test_overflowing_shapes_are_rejected_before_any_kernel(make):
    with pytest.raises(ValueError, match="too large: its element count or byte size overflows"):
        make()
    assert tuple(flow.zeros(2**62, 4, 0).shape) == (2**62, 4, 0)  # empty: nothing to count
    still_works()


def test_numpy_conversion_errors():
    with pytest.raises(ValueError, match="stride in the given numpy array is negative"):
        flow.from_numpy(np.ones((3, 4), dtype=np.float32)[:, ::-1])
    with pytest.raises((TypeError, ValueError)):
        flow.from_numpy(np.array(["a", "b"]))
    with pytest.raises((TypeError, ValueError)):
        flow.tensor(np.array([1 + 2j], dtype=np.complex256))


# --------------------------------------------------------------------------------------------
# an asynchronous error names the Python line that issued the failing op
# --------------------------------------------------------------------------------------------


def _line():
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def _issued_here(line, func):
    return rf"issued at {re.escape(__file__)}:{line} in {func}\w*\)"


def test_async_error_names_the_issuing_line_at_sync_and_numpy():
    t, line = flow.zeros(1 << 40), _line()  # fails in the VM (4 TiB)
    with pytest.raises(MemoryError, match=_issued_here(line, "test_async_error_names_the_issuing")):
        flow.sync()
    del t
    with pytest.raises(MemoryError, match=r"\[full\].*" + _issued_here(_line() + 1, "test_async")):
        flow.zeros(1 << 40).numpy()
    still_works()


def _make_impossible():
    return flow.zeros(1 << 40)


def test_async_error_names_the_innermost_user_frame():
    # A frame of the user's own helper is named; frames inside oneflow_like name their caller.
    t = _make_impossible()
    with pytest.raises(
        MemoryError,
        match=_issued_here(_make_impossible.__code__.co_firstlineno + 1, "_make_impossible"),
    ):
        t.numpy()
    logits, target = flow.ones(2, 3), flow.tensor([0, 7])
    try:
        loss, line = flow.nn.functional.cross_entropy(logits, target), _line()
    except IndexError:
        return  # checked on the caller's thread: raised at the call already
    with pytest.raises((IndexError, RuntimeError), match=_issued_here(line, "test_async_error")):
        loss.item()
    still_works()


def test_issue_sites_can_be_turned_off_and_threads_name_their_own_line():
    flow._C._set_issue_sites(None)
    try:
        with pytest.raises(MemoryError) as e:
            flow.zeros(1 << 40).numpy()
        assert "issued at" not in str(e.value)
    finally:
        flow._C._set_issue_sites(os.path.dirname(flow.__file__))
    seen = {}

    def worker():
        t, seen["line"] = flow.zeros(1 << 40), _line()
        try:
            flow.sync()
        except MemoryError as err:
            seen["error"] = str(err)
        del t

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert re.search(_issued_here(seen["line"], "worker"), seen["error"]), seen
    flow.sync()  # the thread's error was the thread's only
    still_works()
