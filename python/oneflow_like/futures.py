"""flow.futures (torch.futures): Future, collect_all, wait_all.

A Future holds a value (or an exception) that arrives later: `jit.fork` returns one computed on
the inter-op pool, and user code can make one and complete it with set_result/set_exception, as
with torch.futures.Future. Waiting blocks the caller until completion; callbacks registered with
then()/add_done_callback() run once it completes (at once if it already has).
"""
import concurrent.futures as _cf
import threading as _threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """torch.futures.Future. `devices` is accepted for torch's signature (CPU and the runtime's
    CUDA streams are ordered by the VM, so nothing is recorded per device)."""

    def __init__(self, *, devices=None):
        self._fut = _cf.Future()
        self._lock = _threading.Lock()

    @classmethod
    def _wrap(cls, fut):
        f = cls.__new__(cls)
        f._fut, f._lock = fut, _threading.Lock()
        return f

    def done(self):
        return self._fut.done()

    def wait(self):
        """The value, once set; raises the exception it was completed with."""
        return self._fut.result()

    def value(self):
        """The value of a completed Future (raises its exception); torch does not wait here."""
        if not self._fut.done():
            raise RuntimeError("[futures.Future.value] the Future is not completed yet")
        return self._fut.result()

    def then(self, callback):
        """A new Future completed with callback(self) once this one completes."""
        nxt = Future()

        def run(_):
            try:
                nxt.set_result(callback(self))
            except BaseException as e:  # noqa: B902  (handed to the waiter)
                nxt.set_exception(e)

        self._fut.add_done_callback(run)
        return nxt

    def add_done_callback(self, callback):
        """Runs callback(self) once this completes (its exceptions are not propagated)."""

        def run(_):
            try:
                callback(self)
            except Exception:  # noqa: BLE001  (torch logs and drops them too)
                pass

        self._fut.add_done_callback(run)

    def set_result(self, result):
        with self._lock:
            if self._fut.done():
                raise RuntimeError("[futures.Future.set_result] the Future is already completed")
            self._fut.set_result(result)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(
                f"[futures.Future.set_exception] expected an exception, got {type(result).__name__}"
            )
        with self._lock:
            if self._fut.done():
                raise RuntimeError("[futures.Future.set_exception] the Future is already completed")
            self._fut.set_exception(result)

    def __repr__(self):
        return f"<oneflow_like.futures.Future {'done' if self.done() else 'pending'}>"


def collect_all(futures):
    """A Future completed, once every one of `futures` is, with the list of those Futures."""
    futures = list(futures)
    out = Future()
    if not futures:
        out.set_result([])
        return out
    left = [len(futures)]
    lock = _threading.Lock()

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        if not isinstance(f, Future):
            raise TypeError(f"[futures.collect_all] expected Futures, got {type(f).__name__}")
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Waits for every Future and returns their values; raises the first exception met."""
    return [f.wait() for f in collect_all(futures).wait()]
