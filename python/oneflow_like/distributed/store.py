"""torch.distributed's key-value stores: TCPStore (the C++ TcpStore, distributed/tcp_store.h),
HashStore (in this process), FileStore (a file several processes share, locked with fcntl) and
PrefixStore (keys of another store under a prefix). Values are bytes (a str is stored as UTF-8);
add() keeps its counter as decimal text, as torch does. init_process_group(store=...) accepts any
of them."""
import datetime
import fcntl
import os
import pickle
import threading
import time

from oneflow_like import _C

__all__ = ["DistStoreError", "FileStore", "HashStore", "PrefixStore", "Store", "TCPStore"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistStoreError(RuntimeError):
    """A store operation failed (torch.distributed.DistStoreError): a wait or get timed out."""


def _bytes(name, value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"[{name}] a store value must be str or bytes: got {type(value).__name__}")


def _td(value):
    if isinstance(value, datetime.timedelta):
        return value
    return datetime.timedelta(seconds=float(value))


def _keys(name, keys):
    if isinstance(keys, str):
        raise TypeError(f"[{name}] keys must be a list of str: got the str {keys!r}")
    return [str(k) for k in keys]


class Store:
    """The interface every store has (torch.distributed.Store)."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = _td(timeout)

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = _td(timeout)

    def _seconds(self, timeout):
        return (self._timeout if timeout is None else _td(timeout)).total_seconds()

    def _missing_error(self, name, missing, seconds):
        return DistStoreError(
            f"[{type(self).__name__}.{name}] timed out after {seconds:g} s waiting for keys "
            f"{missing}"
        )


class TCPStore(Store):
    """A store served over TCP by the process with is_master=True (host_name:port; port 0 picks
    a free port, read back from .port). With world_size and wait_for_workers, the master's
    constructor returns once world_size instances (itself included) have connected."""

    def __init__(
        self,
        host_name,
        port,
        world_size=None,
        is_master=False,
        timeout=_DEFAULT_TIMEOUT,
        wait_for_workers=True,
        multi_tenant=False,
        master_listen_fd=None,
        use_libuv=True,
    ):
        super().__init__(timeout)
        seconds = self._timeout.total_seconds()
        if port is None or int(port) < 0 or int(port) > 65535:
            raise ValueError(f"[TCPStore] port must be in [0, 65535]: got {port}")
        if int(port) == 0 and not is_master:
            raise ValueError("[TCPStore] port 0 (pick a free port) only works with is_master=True")
        self._c = _C._TcpStore(str(host_name), int(port), bool(is_master), seconds)
        self.world_size = world_size
        if world_size is not None and int(world_size) > 0:
            joined = self._c.add("ofl/store/workers", 1)
            if joined == int(world_size):
                self._c.set("ofl/store/all_workers", b"1")
            if is_master and wait_for_workers:
                try:
                    self._c.wait(["ofl/store/all_workers"], seconds)
                except RuntimeError:
                    n = int(self._c.get("ofl/store/workers"))
                    raise DistStoreError(
                        f"[TCPStore] timed out after {seconds:g} s waiting for the workers: "
                        f"{n} of world_size {world_size} connected to {host_name}:{self.port}"
                    ) from None

    @property
    def host(self):
        return self._c.host

    @property
    def port(self):
        return self._c.port

    def set_timeout(self, timeout):
        super().set_timeout(timeout)
        self._c.set_timeout(self._timeout.total_seconds())

    def set(self, key, value):
        self._c.set(str(key), _bytes("TCPStore.set", value))

    def get(self, key):
        try:
            return self._c.get(str(key))  # waits up to the store's timeout
        except RuntimeError as e:
            raise DistStoreError(f"[TCPStore.get] {e}") from None

    def add(self, key, amount):
        return self._c.add(str(key), int(amount))

    def compare_set(self, key, expected_value, desired_value):
        return self._c.compare_set(
            str(key),
            _bytes("TCPStore.compare_set", expected_value),
            _bytes("TCPStore.compare_set", desired_value),
        )

    def delete_key(self, key):
        return self._c.delete_key(str(key))

    def num_keys(self):
        return self._c.num_keys()

    def check(self, keys):
        return self._c.check(_keys("TCPStore.check", keys))

    def wait(self, keys, timeout=None):
        keys, seconds = _keys("TCPStore.wait", keys), self._seconds(timeout)
        try:
            self._c.wait(keys, seconds)
        except RuntimeError as e:
            raise DistStoreError(f"[TCPStore.wait] {e}") from None


class _DictStore(Store):
    """The operations over a dict that `_locked()` yields (HashStore, FileStore): waits poll
    `_changed` until their keys are there or the timeout passes."""

    def _locked(self, write):
        raise NotImplementedError  # each subclass provides its own dict (abstract method)

    def set(self, key, value):
        value = _bytes(f"{type(self).__name__}.set", value)
        with self._locked(True) as d:
            d[str(key)] = value

    def get(self, key):
        self.wait([key])
        with self._locked(False) as d:
            return d[str(key)]

    def add(self, key, amount):
        with self._locked(True) as d:
            try:
                cur = int(d.get(str(key), b"0"))
            except ValueError:
                cur = 0
            cur += int(amount)
            d[str(key)] = str(cur).encode()
            return cur

    def compare_set(self, key, expected_value, desired_value):
        name = f"{type(self).__name__}.compare_set"
        expected, desired = _bytes(name, expected_value), _bytes(name, desired_value)
        with self._locked(True) as d:
            cur = d.get(str(key))
            if (cur is None and expected == b"") or cur == expected:
                d[str(key)] = desired
                return desired
            return expected if cur is None else cur

    def delete_key(self, key):
        with self._locked(True) as d:
            return d.pop(str(key), None) is not None

    def num_keys(self):
        with self._locked(False) as d:
            return len(d)

    def check(self, keys):
        keys = _keys(f"{type(self).__name__}.check", keys)
        with self._locked(False) as d:
            return all(k in d for k in keys)

    def wait(self, keys, timeout=None):
        keys = _keys(f"{type(self).__name__}.wait", keys)
        seconds = self._seconds(timeout)
        deadline = time.monotonic() + seconds
        while True:
            with self._locked(False) as d:
                missing = [k for k in keys if k not in d]
            left = deadline - time.monotonic()
            if not missing:
                return
            if left <= 0:
                raise self._missing_error("wait", missing, seconds)
            self._changed(min(left, 0.01))


class _Locked:
    def __init__(self, enter, leave):
        self._enter, self._leave = enter, leave

    def __enter__(self):
        return self._enter()

    def __exit__(self, *exc):
        self._leave(exc[0] is None)
        return False


class HashStore(_DictStore):
    """A store inside this process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._d = {}
        self._cv = threading.Condition()

    def _locked(self, write):
        def leave(ok):
            if write:
                self._cv.notify_all()
            self._cv.release()

        def enter():
            self._cv.acquire()
            return self._d

        return _Locked(enter, leave)

    def _changed(self, seconds):
        with self._cv:
            self._cv.wait(seconds)


class FileStore(_DictStore):
    """A store in the file `file_name`, shared by the processes that open it (each operation
    holds an fcntl lock on the file; the contents are one pickled dict). As torch's: with a
    world_size, each store counts itself out when it is destroyed and the last of world_size
    removes the file; with world_size=-1 the file is left for the caller to remove."""

    _CLEANUP = "\0cleanup"  # the count of destroyed stores (not a user key)

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = os.fspath(file_name)
        self.world_size = world_size
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise DistStoreError(f"[FileStore] cannot open {self.path!r}: {e}") from None

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is None:
            return
        try:
            if self.world_size > 0 and os.path.exists(self.path):
                with self._locked(True) as d:
                    done = int(d.get(self._CLEANUP, b"0")) + 1
                    d[self._CLEANUP] = str(done).encode()
                    if done >= self.world_size:  # the last user removes the file
                        os.remove(self.path)
        except (OSError, ValueError, pickle.UnpicklingError, EOFError):
            pass  # at interpreter exit or with the file already gone: nothing to clean up
        finally:
            self._fd = None
            os.close(fd)

    def num_keys(self):
        with self._locked(False) as d:
            return len(d) - (self._CLEANUP in d)

    def _read(self):
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            b = os.read(self._fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        data = b"".join(chunks)
        return pickle.loads(data) if data else {}

    def _locked(self, write):
        state = {}

        def enter():
            fcntl.lockf(self._fd, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            state["d"] = self._read()
            return state["d"]

        def leave(ok):
            try:
                if write and ok:
                    data = pickle.dumps(state["d"])
                    os.lseek(self._fd, 0, os.SEEK_SET)
                    os.write(self._fd, data)
                    os.ftruncate(self._fd, len(data))
            finally:
                fcntl.lockf(self._fd, fcntl.LOCK_UN)

        return _Locked(enter, leave)

    def _changed(self, seconds):
        time.sleep(seconds)


class PrefixStore(Store):
    """`store`'s keys under `prefix` + "/" (num_keys counts the whole underlying store, as in
    torch)."""

    def __init__(self, prefix, store):
        if not isinstance(store, Store):
            raise TypeError(f"[PrefixStore] store must be a Store: got {type(store).__name__}")
        super().__init__(store.timeout)
        self._prefix = str(prefix)
        self.underlying_store = store

    def _k(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in _keys("PrefixStore.check", keys)])

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in _keys("PrefixStore.wait", keys)], timeout)
