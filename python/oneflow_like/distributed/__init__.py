"""oneflow_like.distributed: data-parallel collectives over Gloo (CPU tensors) and NCCL (CUDA
tensors), with torch.distributed's names.

    import oneflow_like.distributed as dist
    dist.init_process_group("gloo")            # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    dist.all_reduce(t, op=dist.ReduceOp.SUM)   # in place, on every rank
    work = dist.all_reduce(t, async_op=True)   # returns at once; work.wait() / work.is_completed()

Each collective is a VM instruction (distributed/ in C++): Gloo's on the CPU's collective
stream, NCCL's on the compute stream of the rank's CUDA device (LOCAL_RANK % device count, or
device_id=), where it enqueues the NCCL kernels. It orders after the ops that write its tensors
and before the ops that read its results, so async work overlaps with compute without explicit
waits; work.wait() also waits for NCCL's kernels. Every wait is bounded by the group's
`timeout`; a rank that dies makes the others raise RuntimeError naming the op and the tensor.
With Gloo the ranks compare op, shape and dtype before a collective whose signature differs
from the previous one's (a loop repeating the same collective pays nothing; a mismatch found
later, after Gloo failed, is named from the store), so a mismatch raises instead of corrupting
data or aborting in Gloo. ONEFLOW_LIKE_DIST_CHECK=0 turns the check off; =all (or
TORCH_DISTRIBUTED_DEBUG=DETAIL) compares before every collective. NCCL does not check (a mismatch
times out). backend="cpu:gloo,cuda:nccl" makes both groups and routes each collective by
its tensor's device. Sub-groups: new_group (also with use_local_synchronization=True).
"""
import datetime
import enum
import hashlib
import logging
import os
import pickle

import numpy as np

from oneflow_like import _C

from oneflow_like.distributed.store import (
    DistStoreError,
    FileStore,
    HashStore,
    PrefixStore,
    Store,
    TCPStore,
)

__all__ = [
    "Backend",
    "DebugLevel",
    "DistStoreError",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "Store",
    "TCPStore",
    "all_gather_coalesced",
    "all_reduce_coalesced",
    "all_to_all",
    "all_to_all_single",
    "gather_object",
    "get_debug_level",
    "is_torchelastic_launched",
    "monitored_barrier",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "scatter_object_list",
    "set_debug_level",
    "set_debug_level_from_env",
    "GroupMember",
    "P2POp",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "broadcast_object_list",
    "all_reduce",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_nccl_available",
    "isend",
    "new_group",
    "ProcessGroup",
    "recv",
    "gather",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]

Work = _C._Work
_wait_seconds = _C._Work.wait


def _work_wait(self, timeout=None):
    """Blocks until the collective finished (at most `timeout`, a timedelta or seconds);
    raises its error. Returns True."""
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    return _wait_seconds(self, -1.0 if timeout is None else float(timeout))


Work.wait = _work_wait
default_pg_timeout = datetime.timedelta(minutes=30)


class ReduceOp:
    """Reduction of all_reduce / reduce_scatter (the values match the C++ enum)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4


class Backend(str):
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name):
        return str.__new__(cls, str(name).lower())


class ProcessGroup:
    """A group made by new_group: the global `ranks` in it, and on a member the Gloo group
    connecting them (None on the ranks outside it, where collectives on it do nothing and
    return None, as in torch)."""

    def __init__(self, ranks, pg):
        self.ranks = list(ranks)
        self._pg = pg

    def rank(self):
        return self._pg.rank() if self._pg is not None else -1

    def size(self):
        return len(self.ranks)

    def __repr__(self):
        return f"ProcessGroup(ranks={self.ranks})"


class GroupMember:
    WORLD = object()  # the default group
    NON_GROUP_MEMBER = -100


_pg = None
_backend = None
_subgroups = []  # ProcessGroups made by new_group, in creation order


def is_available():
    return True


def is_gloo_available():
    return True


def is_nccl_available():
    """True when this build has the CUDA backend and libnccl.so.2 loads (no device needed)."""
    return _C._nccl_unavailable() == ""


def is_initialized():
    return _pg is not None


def _default_group(name):
    if _pg is None:
        raise RuntimeError(
            f"[{name}] the default process group has not been initialized; "
            "call oneflow_like.distributed.init_process_group first"
        )
    return _pg


def _group(name, group):
    """The Gloo group of `group`; None when this rank is not in it."""
    if group is None or group is GroupMember.WORLD:
        return _default_group(name)
    if not isinstance(group, ProcessGroup):
        raise TypeError(
            f"[{name}] group must be None, GroupMember.WORLD or a group from new_group: "
            f"got {type(group).__name__}"
        )
    _default_group(name)
    if group not in _subgroups:
        raise RuntimeError(f"[{name}] {group} was destroyed")
    return group._pg


def _grank(name, group, r, what):
    """Global rank `r` (a src / dst argument) as a rank of `group`."""
    if group is None or group is GroupMember.WORLD:
        return int(r)
    if int(r) not in group.ranks:
        raise ValueError(f"[{name}] {what} rank {r} is not in {group}")
    return group.ranks.index(int(r))


def _env(name, var):
    v = os.environ.get(var)
    if v is None:
        raise ValueError(
            f"[{name}] init_method='env://' needs the environment variable {var} "
            "(the launcher `python -m oneflow_like.distributed.run` sets it)"
        )
    return v


def _seconds(timeout):
    if timeout is None:
        timeout = default_pg_timeout
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _check_nccl(name):
    import oneflow_like as flow

    if not flow.cuda.is_available():
        raise RuntimeError(
            f"[{name}] backend='nccl' needs a CUDA device and NCCL, and this machine "
            "has no CUDA device; use backend='gloo' with CPU tensors"
        )
    why = _C._nccl_unavailable()
    if why:
        raise RuntimeError(f"[{name}] backend='nccl' is unavailable: {why}")


_ROUTED = "cpu:gloo,cuda:nccl"


def _parse_backend(name, backend):
    """'gloo', 'nccl' or 'cpu:gloo,cuda:nccl' (torch's device:backend list; a list without a
    cuda:nccl entry means gloo)."""
    b = str(backend or "gloo").lower().replace(" ", "")
    if ":" not in b:
        if b not in ("gloo", "nccl"):
            raise ValueError(
                f"[{name}] unknown backend {backend!r}: use 'gloo', 'nccl' or '{_ROUTED}'"
            )
        return b
    pairs = {}
    for part in b.split(","):
        device, _, be = part.partition(":")
        if (
            device not in ("cpu", "cuda")
            or be not in ("gloo", "nccl")
            or (device, be)
            == (
                "cpu",
                "nccl",
            )
        ):
            raise ValueError(
                f"[{name}] unsupported backend {backend!r}: use 'gloo', 'nccl' or '{_ROUTED}'"
            )
        pairs[device] = be
    if pairs.get("cuda") != "nccl":
        return "gloo"
    return _ROUTED if "cpu" in pairs else "nccl"


def _nccl_device(name, device_id, rank):
    """This rank's CUDA device: device_id when given, else LOCAL_RANK (or the rank) modulo the
    device count, as torch does."""
    import oneflow_like as flow

    count = flow.cuda.device_count()
    if device_id is None:
        return int(os.environ.get("LOCAL_RANK", rank)) % count
    if isinstance(device_id, int):
        index = device_id
    else:
        d = _C.device(device_id) if isinstance(device_id, str) else device_id
        if d.type != "cuda":
            raise ValueError(f"[{name}] device_id must be a CUDA device: got {device_id}")
        index = d.index
    if not 0 <= index < count:
        raise ValueError(
            f"[{name}] device_id {device_id} is not a CUDA device of this machine "
            f"({count} device(s))"
        )
    return index


class _RoutedGroup:
    """backend='cpu:gloo,cuda:nccl': a Gloo and an NCCL group over the same ranks (the NCCL one
    meets through the Gloo one's store); each collective goes to the NCCL group when its tensor is
    on CUDA, else to Gloo. Barriers and nn.Graph's collectives use Gloo."""

    def __init__(self, gloo, nccl):
        self.gloo, self.nccl = gloo, nccl

    def _pick(self, t):
        return self.nccl if t.is_cuda else self.gloo

    def rank(self):
        return self.gloo.rank()

    def size(self):
        return self.gloo.size()

    def timeout(self):
        return self.gloo.timeout()

    def device(self):
        return self.nccl.device()

    def new_group(self, ranks, index, timeout):
        return _RoutedGroup(
            self.gloo.new_group(ranks, index, timeout), self.nccl.new_group(ranks, index, timeout)
        )

    def all_reduce(self, t, op, check=True):
        return self._pick(t).all_reduce(t, op, check)

    def all_reduce_op(self, t, op):
        return self.gloo.all_reduce_op(t, op)

    def broadcast_op(self, t, root):
        return self.gloo.broadcast_op(t, root)

    def broadcast(self, t, root):
        return self._pick(t).broadcast(t, root)

    def all_gather(self, outs, t):
        return self._pick(t).all_gather(outs, t)

    def reduce_scatter(self, out, ins, op):
        return self._pick(out).reduce_scatter(out, ins, op)

    def reduce(self, t, root, op):
        return self._pick(t).reduce(t, root, op)

    def gather(self, outs, t, root):
        return self._pick(t).gather(outs, t, root)

    def scatter(self, out, ins, root):
        return self._pick(out).scatter(out, ins, root)

    def send(self, t, dst, tag):
        return self._pick(t).send(t, dst, tag)

    def recv(self, t, src, tag):
        return self._pick(t).recv(t, src, tag)

    def barrier(self):
        return self.gloo.barrier()

    def monitored_barrier(self, timeout, wait_all_ranks):
        return self.gloo.monitored_barrier(timeout, wait_all_ranks)

    def all_to_all_single(self, out, inp, out_splits, in_splits):
        return _all_to_all_of(self._pick(out)).all_to_all_single(out, inp, out_splits, in_splits)

    def shutdown(self):
        try:
            self.nccl.shutdown()
        finally:
            self.gloo.shutdown()


def _nccl_of(pg, tensor):
    """The NCCL group that a collective of `pg` on `tensor` runs on (None: Gloo)."""
    if isinstance(pg, _C._ProcessGroupNccl):
        return pg
    if isinstance(pg, _RoutedGroup) and tensor.is_cuda:
        return pg.nccl
    return None


def _device_of(pg):
    """Where `pg`'s own tensors (object collectives, DDP's checks) live: its CUDA device for an
    NCCL group, else the CPU (Gloo takes those, also in 'cpu:gloo,cuda:nccl')."""
    if isinstance(pg, _C._ProcessGroupNccl):
        return f"cuda:{pg.device()}"
    return "cpu"


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    """Joins this process to the default group. init_method: None or "env://" (MASTER_ADDR,
    MASTER_PORT, and RANK / WORLD_SIZE unless given) or "tcp://host:port". Rank 0 serves the
    rendezvous store on that address; every rank must pass the same world_size."""
    global _pg, _backend
    name = "init_process_group"
    if _pg is not None:
        raise RuntimeError(f"[{name}] trying to initialize the default process group twice")
    backend = Backend(_parse_backend(name, backend))
    if backend != Backend.GLOO:
        _check_nccl(name)
    if store is not None:
        if init_method is not None:
            raise ValueError(f"[{name}] cannot specify both init_method and store")
        if rank is None or rank < 0 or world_size is None or world_size <= 0:
            raise ValueError(
                f"[{name}] with store= pass rank and world_size: got rank={rank}, "
                f"world_size={world_size}"
            )
        if not isinstance(store, Store):
            raise TypeError(
                f"[{name}] store must be a TCPStore, FileStore, HashStore or PrefixStore: "
                f"got {type(store).__name__}"
            )
        host, port = _meet_through_store(name, store, int(rank), _seconds(timeout))
        init_method = f"tcp://{host}:{port}"
    init_method = init_method or "env://"
    if init_method.startswith("env://"):
        host = _env(name, "MASTER_ADDR")
        port = _env(name, "MASTER_PORT")
    elif init_method.startswith("tcp://"):
        host, _, port = init_method[len("tcp://") :].rstrip("/").rpartition(":")
        if not host:
            raise ValueError(
                f"[{name}] init_method must look like tcp://host:port: got {init_method!r}"
            )
    else:
        raise ValueError(
            f"[{name}] unsupported init_method {init_method!r}: use 'env://' or 'tcp://host:port'"
        )
    if rank is None or rank < 0:
        rank = int(_env(name, "RANK"))
    if world_size is None or world_size < 0:
        world_size = int(_env(name, "WORLD_SIZE"))
    try:
        port = int(port)
    except ValueError:
        raise ValueError(f"[{name}] the master port must be an integer: got {port!r}") from None
    # ONEFLOW_LIKE_DIST_CHECK=0 turns the ranks' signature checks off, =all exchanges before
    # every collective (not only when the signature changes); debug level DETAIL
    # (TORCH_DISTRIBUTED_DEBUG) means "all" whatever ONEFLOW_LIKE_DIST_CHECK says.
    check_env = os.environ.get("ONEFLOW_LIKE_DIST_CHECK", "1").lower()
    detail = get_debug_level() == DebugLevel.DETAIL
    check = check_env != "0" or detail
    check_every_op = check_env == "all" or detail
    rank, world_size, seconds = int(rank), int(world_size), _seconds(timeout)
    if backend == Backend.NCCL:
        device = _nccl_device(name, device_id, rank)
        _pg = _C._ProcessGroupNccl(host, port, rank, world_size, seconds, device)
    elif backend == _ROUTED:
        device = _nccl_device(name, device_id, rank)
        gloo = _C._ProcessGroupGloo(host, port, rank, world_size, seconds, check, check_every_op)
        try:
            nccl = _C._ProcessGroupNccl.over_gloo(gloo, device)
        except BaseException:
            gloo.shutdown()
            raise
        _pg = _RoutedGroup(gloo, nccl)
    else:
        _pg = _C._ProcessGroupGloo(host, port, rank, world_size, seconds, check, check_every_op)
    _backend = backend
    if get_debug_level() != DebugLevel.OFF:
        logging.getLogger(__name__).info(
            "rank %d of %d joined the %s group at %s:%s (signature checks %s)",
            rank,
            world_size,
            backend,
            host,
            port,
            "on" if check else "off",
        )


def destroy_process_group(group=None):
    """Waits for the issued collectives and closes the connections (of every group when group
    is None, else of that sub-group only)."""
    global _pg, _backend
    pg = _group("destroy_process_group", group)
    if group is not None and group is not GroupMember.WORLD:
        _subgroups.remove(group)
        if pg is not None:
            pg.shutdown()
        return
    for g in reversed(_subgroups):
        if g._pg is not None:
            g._pg.shutdown()
    _subgroups.clear()
    _pg, _backend = None, None
    pg.shutdown()


def get_rank(group=None):
    """This process's rank in `group` (-1 when it is not a member)."""
    pg = _group("get_rank", group)
    return pg.rank() if pg is not None else -1


def get_world_size(group=None):
    """The number of ranks in `group` (-1 when this process is not a member, as in torch)."""
    pg = _group("get_world_size", group)
    return pg.size() if pg is not None else -1


def get_group_rank(group, global_rank):
    """The rank in `group` of the process whose global rank is `global_rank`."""
    if group is None or group is GroupMember.WORLD:
        return int(global_rank)
    _group("get_group_rank", group)
    if int(global_rank) not in group.ranks:
        raise ValueError(f"[get_group_rank] global rank {global_rank} is not part of {group}")
    return group.ranks.index(int(global_rank))


def get_global_rank(group, group_rank):
    """The global rank of the process that is rank `group_rank` of `group`."""
    if group is None or group is GroupMember.WORLD:
        return int(group_rank)
    _group("get_global_rank", group)
    if not 0 <= int(group_rank) < len(group.ranks):
        raise ValueError(f"[get_global_rank] group rank {group_rank} is out of range for {group}")
    return group.ranks[int(group_rank)]


def get_process_group_ranks(group):
    """The global ranks of `group`."""
    if group is None or group is GroupMember.WORLD:
        return list(range(_default_group("get_process_group_ranks").size()))
    return list(group.ranks)


def get_backend(group=None):
    """The backend of `group` ('gloo', 'nccl' or 'cpu:gloo,cuda:nccl'); ValueError on a rank
    outside it, as torch."""
    pg = _group("get_backend", group)
    if pg is None:
        raise ValueError(f"[get_backend] this rank is not in {group}: invalid process group")
    return _backend


def _finish(work, async_op):
    if work is None:  # a group this rank is not in: nothing to do, as in torch
        return None
    if async_op:
        return work
    work.wait()
    return None


def _issue(pg, async_op, method, *args):
    """pg.method(*args): the work handle with async_op, else None once it finished (raising its
    error). A Gloo group waits inside the call (wait=True), without the GIL: a collective that is
    ready as it is issued runs on this thread rather than on the collective stream's worker (no
    hand-off there and back; still ordered by the VM like any collective). None when this rank is
    not in the group."""
    if pg is None:
        return None
    if not async_op and type(pg) is _C._ProcessGroupGloo:
        return getattr(pg, method)(*args, wait=True)
    return _finish(getattr(pg, method)(*args), async_op)


class _TracedWork:
    """The work handle of a collective recorded in an nn.Graph trace: it runs inside the compiled
    graph, in order with the graph's other ops, so there is nothing to wait for."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def _traced(tensor):
    """Whether a collective on `tensor` belongs to the nn.Graph being traced."""
    return tensor.is_lazy or _C._tracing_active()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `tensor` over all ranks, in place. Inside nn.Graph's build() it becomes a
    collective of the compiled graph."""
    pg = _group("all_reduce", group)
    if pg is None:
        return None
    if _traced(tensor):
        pg.all_reduce_op(tensor, int(op))
        return _TracedWork() if async_op else None
    return _issue(pg, async_op, "all_reduce", tensor, int(op))


def broadcast(tensor, src, group=None, async_op=False):
    """Copies rank `src`'s `tensor` into every rank's `tensor` (inside nn.Graph's build(): a
    collective of the compiled graph)."""
    pg = _group("broadcast", group)
    if pg is None:
        return None
    src = _grank("broadcast", group, src, "src")
    if _traced(tensor):
        pg.broadcast_op(tensor, src)
        return _TracedWork() if async_op else None
    return _issue(pg, async_op, "broadcast", tensor, src)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's `tensor` (world_size tensors of its shape and dtype)."""
    pg = _group("all_gather", group)
    return _issue(pg, async_op, "all_gather", list(tensor_list), tensor)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor (world_size * n elements, or world_size along dim 0) = ranks' inputs."""
    pg = _group("all_gather_into_tensor", group)
    if pg is None:
        return None
    chunks = _chunks(output_tensor, input_tensor, pg.size())
    return _issue(pg, async_op, "all_gather", chunks, input_tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output = the reduction over ranks of input_list[rank]."""
    pg = _group("reduce_scatter", group)
    return _issue(pg, async_op, "reduce_scatter", output, list(input_list), int(op))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output = this rank's block of the reduction over ranks of `input` (world_size blocks)."""
    pg = _group("reduce_scatter_tensor", group)
    if pg is None:
        return None
    chunks = _chunks(input, output, pg.size())
    return _issue(pg, async_op, "reduce_scatter", output, chunks, int(op))


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """The reduction over ranks into rank `dst`'s `tensor` (the others keep theirs)."""
    pg = _group("reduce", group)
    dst = _grank("reduce", group, dst, "dst")
    return _issue(pg, async_op, "reduce", tensor, dst, int(op))


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """On rank `dst`: gather_list[r] = rank r's `tensor`; the other ranks pass no list."""
    pg = _group("gather", group)
    dst = _grank("gather", group, dst, "dst")
    return _issue(pg, async_op, "gather", list(gather_list or []), tensor, dst)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """tensor = rank `src`'s scatter_list[rank]; only `src` passes the list."""
    pg = _group("scatter", group)
    src = _grank("scatter", group, src, "src")
    return _issue(pg, async_op, "scatter", tensor, list(scatter_list or []), src)


def _chunks(big, small, n):
    if big.numel() != small.numel() * n:
        raise ValueError(
            f"[collective] the large tensor must hold world_size ({n}) x {small.numel()} "
            f"elements: got {big.numel()}"
        )
    flat = big.reshape(-1)
    k = small.numel()
    return [flat[i * k : (i + 1) * k].reshape(small.shape) for i in range(n)]


def send(tensor, dst, group=None, tag=0):
    """Sends `tensor` to rank `dst` (blocks until the peer has received it)."""
    pg = _group("send", group)
    _issue(pg, False, "send", tensor, _grank("send", group, dst, "dst"), int(tag))


def recv(tensor, src=None, group=None, tag=0):
    """Receives into `tensor` from rank `src`; returns src."""
    if src is None:
        raise NotImplementedError("[recv] receiving from any source (src=None) is not supported")
    pg = _group("recv", group)
    if pg is None:  # not a member of `group`
        return -1
    _issue(pg, False, "recv", tensor, _grank("recv", group, src, "src"), int(tag))
    return int(src)


def isend(tensor, dst, group=None, tag=0):
    pg = _group("isend", group)
    return pg and pg.send(tensor, _grank("isend", group, dst, "dst"), int(tag))


def irecv(tensor, src=None, group=None, tag=0):
    if src is None:
        raise NotImplementedError("[irecv] receiving from any source (src=None) is not supported")
    pg = _group("irecv", group)
    return pg and pg.recv(tensor, _grank("irecv", group, src, "src"), int(tag))


class P2POp:
    """One send or receive of batch_isend_irecv: `op` is isend or irecv, `peer` a global rank."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError(
                f"[P2POp] op must be oneflow_like.distributed.isend or irecv: got {op!r}"
            )
        if peer is None:
            if group_peer is None:
                raise ValueError("[P2POp] needs a peer (a global rank) or group_peer")
            peer = get_global_rank(group, group_peer)
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, int(peer), group, tag

    def __repr__(self):
        return f"P2POp({self.op.__name__}, {self.tensor.dtype}{list(self.tensor.shape)}, peer={self.peer})"


def batch_isend_irecv(p2p_op_list):
    """Issues the sends and receives together and returns their work handles (one per op). On
    NCCL they form one NCCL group call, so they may pair with each other (a rank with itself
    included); on Gloo each runs as isend / irecv."""
    ops = list(p2p_op_list)
    if not ops or not all(isinstance(o, P2POp) for o in ops):
        raise ValueError("[batch_isend_irecv] needs a non-empty list of P2POp")
    group = ops[0].group
    if any(o.group is not group for o in ops):
        raise ValueError("[batch_isend_irecv] every P2POp must use the same group")
    pg = _group("batch_isend_irecv", group)
    if pg is None:
        return []
    nccl = _nccl_of(pg, ops[0].tensor)
    if nccl is None:
        return [o.op(o.tensor, o.peer, o.group, o.tag) for o in ops]
    peers = [_grank("batch_isend_irecv", group, o.peer, "peer") for o in ops]
    work = nccl.batch_send_recv([o.op is isend for o in ops], [o.tensor for o in ops], peers)
    return [work] * len(ops)


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank has reached it (bounded by the group's timeout)."""
    pg = _group("barrier", group)
    return _issue(pg, async_op, "barrier")


def new_group(
    ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False
):
    """A sub-group of the global `ranks` (all ranks when None). As in torch, every rank of the
    default group calls new_group with the same ranks, in the same order of calls; the members
    connect a Gloo group of their own (its own timeout, default the default group's), the
    others get a handle on which collectives do nothing. The sub-group has the default group's
    backend (Gloo, NCCL on this rank's device, or both). With use_local_synchronization=True
    only the members call it (in the same order among themselves for the same ranks): the
    group's rendezvous key comes from its ranks and the count of such calls for those ranks."""
    name = "new_group"
    world = _default_group(name)
    if backend is not None:
        wanted = _parse_backend(name, backend)
        if wanted != _backend and _backend != _ROUTED:
            raise ValueError(
                f"[{name}] backend={backend!r}: a sub-group uses the default group's backend "
                f"({_backend!r}); init_process_group('{_ROUTED}') makes groups for both"
            )
    members = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members) or not members:
        raise ValueError(f"[{name}] ranks must be distinct and non-empty: got {ranks}")
    bad = [r for r in members if not 0 <= r < world.size()]
    if bad:
        raise ValueError(
            f"[{name}] ranks {bad} are out of range for world_size {world.size()}: got {ranks}"
        )
    if use_local_synchronization:
        # Keys of their own (negative, so never one of the counted groups' 1, 2, ...): the
        # members agree on them without the other ranks taking part.
        key = tuple(members)
        _local_group_count[key] = _local_group_count.get(key, 0) + 1
        digest = hashlib.sha256(f"{key}:{_local_group_count[key]}".encode()).digest()
        index = -1 - int.from_bytes(digest[:7], "little")
    else:
        _new_group_count[0] += 1
        index = _new_group_count[0]
    pg = None
    if world.rank() in members:
        seconds = world.timeout() if timeout is None else _seconds(timeout)
        pg = world.new_group(members, index, seconds)
    group = ProcessGroup(members, pg)
    _subgroups.append(group)
    return group


_new_group_count = [0]  # new_group calls on this rank (every rank counts alike)
_local_group_count = {}  # use_local_synchronization calls on this rank, by their ranks


def _bytes_tensor(data, device, size=None):
    """`data` (bytes) as a uint8 tensor on `device`, zero-padded to `size` bytes (padded here, so
    a CUDA tensor needs only the copy)."""
    import oneflow_like as flow

    buf = np.zeros(max(len(data), size or 0), dtype=np.uint8)
    buf[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    return flow.from_numpy(buf).to(device)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = rank r's picklable `obj` (sizes first, then the padded pickles; on the
    group's CUDA device with NCCL)."""
    import oneflow_like as flow

    pg = _group("all_gather_object", group)
    if pg is None:
        return None
    dev = _device_of(pg)
    data = pickle.dumps(obj)
    sizes = [flow.zeros(1, dtype=flow.int64).to(dev) for _ in range(pg.size())]
    all_gather(sizes, flow.tensor([len(data)]).to(dev), group=group)
    longest = max(int(s.item()) for s in sizes)
    padded = _bytes_tensor(data, dev, longest)
    outs = [flow.zeros(longest, dtype=flow.uint8).to(dev) for _ in range(pg.size())]
    all_gather(outs, padded, group=group)
    for r, (o, s) in enumerate(zip(outs, sizes)):
        object_list[r] = pickle.loads(o.numpy()[: int(s.item())].tobytes())


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Replaces object_list's items on every rank by rank `src`'s (picklable objects)."""
    import oneflow_like as flow

    pg = _group("broadcast_object_list", group)
    if pg is None:
        return None
    dev = _device_of(pg)
    data = pickle.dumps(list(object_list))
    t = _bytes_tensor(data, dev)
    size = flow.tensor([len(data)]).to(dev)
    broadcast(size, src, group=group)
    mine = pg.rank() == _grank("broadcast_object_list", group, src, "src")
    buf = t if mine else flow.zeros(int(size.item()), dtype=flow.uint8).to(dev)
    broadcast(buf, src, group=group)
    object_list[:] = pickle.loads(buf.numpy().tobytes())


# ---- The rest of torch.distributed's API (issue 16) ----

_store_inits = [0]  # init_process_group(store=...) calls on this rank (every rank counts alike)


def _tcp_of(store):
    """The TCPStore under `store` (through PrefixStores), or None."""
    while isinstance(store, PrefixStore):
        store = store.underlying_store
    return store if isinstance(store, TCPStore) else None


def _meet_through_store(name, store, rank, seconds):
    """init_process_group(store=...): rank 0 publishes through `store` the address of the
    group's own rendezvous (a free port on MASTER_ADDR, the TCPStore's host, or 127.0.0.1); the
    other ranks read it (waiting up to the timeout). Returns (host, port)."""
    import socket

    _store_inits[0] += 1
    key = f"ofl/default_pg/{_store_inits[0]}/addr"
    if rank == 0:
        tcp = _tcp_of(store)
        host = os.environ.get("MASTER_ADDR") or (tcp.host if tcp is not None else "127.0.0.1")
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        store.set(key, f"{host}:{port}")
        return host, port
    try:
        store.wait([key], datetime.timedelta(seconds=seconds))
    except DistStoreError as e:
        raise RuntimeError(
            f"[{name}] rank {rank}: rank 0 did not publish the group's address through "
            f"{type(store).__name__} within {seconds:g} s: {e}"
        ) from None
    host, _, port = store.get(key).decode().rpartition(":")
    return host, int(port)


def _all_to_all_of(pg):
    if not hasattr(pg, "all_to_all_single"):
        raise RuntimeError(
            "[all_to_all] is not supported on backend 'nccl' (CUDA tensors) here; use Gloo "
            "with CPU tensors"
        )
    return pg


def _tensor_args(name, tensors, what):
    import oneflow_like as flow

    tensors = list(tensors)
    for t in tensors:
        if not isinstance(t, flow.Tensor):
            raise TypeError(f"[{name}] {what} must hold tensors: got {type(t).__name__}")
    dtypes = sorted({str(t.dtype) for t in tensors})
    if len(dtypes) > 1:
        raise ValueError(f"[{name}] every tensor of {what} must have one dtype: got {dtypes}")
    return tensors


def _even_splits(name, t, n, what):
    rows = t.shape[0] if t.dim() > 0 else 0
    if rows % n:
        raise ValueError(
            f"[{name}] dim 0 of the {what} ({rows}) must be divisible by world_size ({n}) "
            f"when no {what}_split_sizes are given"
        )
    return [rows // n] * n


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """Splits `input` along dim 0 (input_split_sizes[r] rows to rank r, or equal parts) and
    writes into `output` what each rank sent this one (output_split_sizes[r] rows from rank r).
    One gloo::alltoallv on the tensors' bytes; the ranks' splits must pair up."""
    name = "all_to_all_single"
    pg = _group(name, group)
    if pg is None:
        return None
    pg = _all_to_all_of(pg)
    n = pg.size()
    out_splits = (
        _even_splits(name, output, n, "output")
        if output_split_sizes is None
        else [int(x) for x in output_split_sizes]
    )
    in_splits = (
        _even_splits(name, input, n, "input")
        if input_split_sizes is None
        else [int(x) for x in input_split_sizes]
    )
    return _issue(pg, async_op, "all_to_all_single", output, input, out_splits, in_splits)


def _flat(tensors, dtype):
    import oneflow_like as flow

    if not tensors:
        return flow.zeros(0, dtype=dtype)
    return flow.cat([t.reshape(-1) for t in tensors])


def _unflatten_into(flat, tensors):
    """Copies consecutive pieces of the 1-D `flat` into `tensors` (in place, VM-ordered after
    the collective that wrote `flat`)."""
    at = 0
    for t in tensors:
        k = t.numel()
        t.copy_(flat[at : at + k].reshape(t.shape))
        at += k


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """output_tensor_list[r] = rank r's input_tensor_list[this rank] (tensors of any shapes that
    pair up between ranks, one dtype): the inputs concatenated, one all_to_all_single, then
    copied out."""
    name = "all_to_all"
    pg = _group(name, group)
    if pg is None:
        return None
    outs = _tensor_args(name, output_tensor_list, "output_tensor_list")
    ins = _tensor_args(name, input_tensor_list, "input_tensor_list")
    n = pg.size()
    if len(outs) != n or len(ins) != n:
        raise ValueError(
            f"[{name}] needs world_size ({n}) input and output tensors: got {len(ins)} inputs "
            f"and {len(outs)} outputs"
        )
    if outs[0].dtype != ins[0].dtype:
        raise ValueError(
            f"[{name}] inputs ({ins[0].dtype}) and outputs ({outs[0].dtype}) must have one dtype"
        )
    import oneflow_like as flow

    flat_in = _flat(ins, ins[0].dtype)
    flat_out = flow.empty(sum(t.numel() for t in outs), dtype=outs[0].dtype).to(outs[0].device)
    work = _issue(
        _all_to_all_of(pg),
        async_op,
        "all_to_all_single",
        flat_out,
        flat_in,
        [t.numel() for t in outs],
        [t.numel() for t in ins],
    )
    _unflatten_into(flat_out, outs)
    return work


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """all_reduce of every tensor of `tensors` (one dtype) as one collective over their
    concatenation, copied back into each."""
    name = "all_reduce_coalesced"
    pg = _group(name, group)
    if pg is None:
        return None
    ts = _tensor_args(name, tensors, "tensors")
    if not ts:
        raise ValueError(f"[{name}] needs at least one tensor")
    flat = _flat(ts, ts[0].dtype)
    work = _issue(pg, async_op, "all_reduce", flat, int(op))
    _unflatten_into(flat, ts)
    return work


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """output_tensor_lists[r][i] = rank r's input_tensor_list[i]: one all-gather of the inputs'
    concatenation, copied out."""
    import oneflow_like as flow

    name = "all_gather_coalesced"
    pg = _group(name, group)
    if pg is None:
        return None
    ins = _tensor_args(name, input_tensor_list, "input_tensor_list")
    n = pg.size()
    lists = [list(x) for x in output_tensor_lists]
    if len(lists) != n:
        raise ValueError(
            f"[{name}] output_tensor_lists needs world_size ({n}) lists: got {len(lists)}"
        )
    for r, lst in enumerate(lists):
        shapes = [tuple(t.shape) for t in lst]
        want = [tuple(t.shape) for t in ins]
        if shapes != want or any(t.dtype != i.dtype for t, i in zip(lst, ins)):
            raise ValueError(
                f"[{name}] output_tensor_lists[{r}] must match input_tensor_list's shapes "
                f"{want} and dtype: got {shapes}"
            )
    flat = _flat(ins, ins[0].dtype if ins else flow.float32)
    out = flow.empty(n * flat.numel(), dtype=flat.dtype)
    work = _issue(pg, async_op, "all_gather", _chunks(out, flat, n), flat)
    for r in range(n):
        _unflatten_into(out[r * flat.numel() : (r + 1) * flat.numel()], lists[r])
    return work


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """On rank `dst`: object_gather_list[r] = rank r's picklable `obj` (the pickles' sizes are
    all-gathered, then the padded pickles gathered)."""
    import oneflow_like as flow

    name = "gather_object"
    pg = _group(name, group)
    if pg is None:
        return None
    mine = pg.rank() == _grank(name, group, dst, "dst")
    if mine and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(
            f"[{name}] on dst rank {dst} object_gather_list must be a list of world_size "
            f"({pg.size()}) items"
        )
    dev = _device_of(pg)
    data = pickle.dumps(obj)
    sizes = [flow.zeros(1, dtype=flow.int64).to(dev) for _ in range(pg.size())]
    all_gather(sizes, flow.tensor([len(data)]).to(dev), group=group)
    longest = max(int(s.item()) for s in sizes)
    outs = [flow.zeros(longest, dtype=flow.uint8).to(dev) for _ in range(pg.size())] if mine else []
    gather(_bytes_tensor(data, dev, longest), outs, dst=dst, group=group)
    for r, (o, s) in enumerate(zip(outs, sizes)):
        object_gather_list[r] = pickle.loads(o.numpy()[: int(s.item())].tobytes())


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=0, group=None
):
    """scatter_object_output_list[0] = rank src's scatter_object_input_list[this rank] (the
    pickles' sizes are scattered, then the pickles padded to the longest)."""
    import oneflow_like as flow

    name = "scatter_object_list"
    pg = _group(name, group)
    if pg is None:
        return None
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError(f"[{name}] scatter_object_output_list must be a non-empty list")
    n = pg.size()
    mine = pg.rank() == _grank(name, group, src, "src")
    dev = _device_of(pg)
    if mine:
        items = list(scatter_object_input_list or [])
        if len(items) != n:
            raise ValueError(
                f"[{name}] on src rank {src} scatter_object_input_list must hold world_size "
                f"({n}) objects: got {len(items)}"
            )
        pickles = [pickle.dumps(o) for o in items]
        longest = flow.tensor([max(len(p) for p in pickles)]).to(dev)
    else:
        longest = flow.zeros(1, dtype=flow.int64).to(dev)
    broadcast(longest, src, group=group)
    k = int(longest.item())
    size = flow.zeros(1, dtype=flow.int64).to(dev)
    buf = flow.zeros(k, dtype=flow.uint8).to(dev)
    sizes = [flow.tensor([len(p)]).to(dev) for p in pickles] if mine else None
    bufs = [_bytes_tensor(p, dev, k) for p in pickles] if mine else None
    scatter(size, sizes, src=src, group=group)
    scatter(buf, bufs, src=src, group=group)
    scatter_object_output_list[0] = pickle.loads(buf.numpy()[: int(size.item())].tobytes())


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it: the other ranks report to rank 0,
    which waits up to `timeout` (default the group's) and raises naming the first missing rank
    (all of them with wait_all_ranks=True, in torch's words: "Rank 1 failed to pass
    monitoredBarrier in 2000 ms"); the ranks that arrived then raise too. Gloo only."""
    name = "monitored_barrier"
    pg = _group(name, group)
    if pg is None:
        return None
    if not hasattr(pg, "monitored_barrier"):
        raise RuntimeError(f"[{name}] needs a Gloo group (backend 'gloo' or '{_ROUTED}')")
    seconds = pg.timeout() if timeout is None else _seconds(timeout)
    return _issue(pg, False, "monitored_barrier", seconds, bool(wait_all_ranks))


def new_subgroups(
    group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """Splits the ranks of `group` (default: all) into consecutive sub-groups of `group_size`
    (default: this machine's CUDA device count) with new_group; returns (this rank's sub-group,
    every sub-group). Every rank calls it alike."""
    import oneflow_like as flow

    name = "new_subgroups"
    ranks = get_process_group_ranks(group)
    if group_size is None:
        if not flow.cuda.is_available():
            raise ValueError(
                f"[{name}] the default group_size (the CUDA device count) needs CUDA; pass "
                "group_size"
            )
        group_size = flow.cuda.device_count()
    group_size = int(group_size)
    if group_size <= 0:
        raise ValueError(f"[{name}] group_size must be positive: got {group_size}")
    if group_size > len(ranks) or len(ranks) % group_size:
        raise ValueError(
            f"[{name}] the world size ({len(ranks)}) must be divisible by group_size "
            f"({group_size})"
        )
    return new_subgroups_by_enumeration(
        [ranks[i : i + group_size] for i in range(0, len(ranks), group_size)],
        timeout=timeout,
        backend=backend,
        pg_options=pg_options,
    )


def new_subgroups_by_enumeration(
    ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """One new_group per list of global ranks (the lists must not overlap); returns (the
    sub-group holding this rank or None, every sub-group). Every rank calls it alike."""
    name = "new_subgroups_by_enumeration"
    lists = [list(r) for r in (ranks_per_subgroup_list or [])]
    if not lists:
        raise ValueError(f"[{name}] ranks_per_subgroup_list must be a non-empty list of lists")
    seen = {}
    for i, ranks in enumerate(lists):
        for r in ranks:
            if r in seen:
                raise ValueError(
                    f"[{name}] rank {r} has appeared in both subgroup {lists[seen[r]]} and "
                    f"{ranks}"
                )
            seen[r] = i
    me = get_rank()
    cur, subgroups = None, []
    for ranks in lists:
        g = new_group(ranks, timeout=timeout, backend=backend, pg_options=pg_options)
        subgroups.append(g)
        if me in g.ranks:
            cur = g
    return cur, subgroups


class DebugLevel(enum.IntEnum):
    """torch.distributed.DebugLevel. DETAIL keeps the Gloo ranks' signature check on even with
    ONEFLOW_LIKE_DIST_CHECK=0; INFO and DETAIL log each group's creation
    (logger 'oneflow_like.distributed')."""

    OFF = 0
    INFO = 1
    DETAIL = 2


_debug_level = [None]  # read from the environment on first use


def set_debug_level(level):
    if not isinstance(level, DebugLevel):
        raise TypeError(f"[set_debug_level] level must be a DebugLevel: got {level!r}")
    _debug_level[0] = level


def get_debug_level():
    if _debug_level[0] is None:
        set_debug_level_from_env()
    return _debug_level[0]


def set_debug_level_from_env():
    """From ONEFLOW_LIKE_DISTRIBUTED_DEBUG, else TORCH_DISTRIBUTED_DEBUG: OFF, INFO or DETAIL
    (unset: OFF)."""
    for var in ("ONEFLOW_LIKE_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG"):
        value = os.environ.get(var)
        if value is None:
            continue
        try:
            _debug_level[0] = DebugLevel[value.strip().upper()]
        except KeyError:
            raise ValueError(
                f"[set_debug_level_from_env] {var} must be OFF, INFO or DETAIL: got {value!r}"
            ) from None
        return
    _debug_level[0] = DebugLevel.OFF


def is_torchelastic_launched():
    """Whether this process was started by a torchelastic-style launcher (torchrun, or
    python -m oneflow_like.distributed.run, which sets TORCHELASTIC_RUN_ID)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None
