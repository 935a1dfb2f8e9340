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
import hashlib
import os
import pickle

import numpy as np

from oneflow_like import _C

__all__ = [
    "Backend",
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
        raise NotImplementedError(f"[{name}] store= is not supported; use init_method")
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
    check_env = os.environ.get("ONEFLOW_LIKE_DIST_CHECK", "1").lower()
    check = check_env != "0"
    check_every_op = (
        check_env == "all" or os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    )
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
    _group("get_backend", group)
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
