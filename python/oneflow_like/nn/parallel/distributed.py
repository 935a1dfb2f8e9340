"""DistributedDataParallel: data-parallel training across processes (oneflow_like.distributed).

At construction rank 0's parameters and buffers are broadcast to every rank. Parameters are
grouped into buckets of at most `bucket_cap_mb` (25 MB by default), in reverse registration
order (roughly the order backward produces their gradients), one flat tensor per bucket. A hook
on each parameter copies its gradient into its slice of the bucket and hands back that slice as
`.grad` (gradients are views into the bucket); when a bucket's last gradient arrives its
all-reduce (average) is issued asynchronously, in bucket order on every rank, while backward
goes on issuing the remaining gradients: the VM runs the collective on its own stream (Gloo) or
enqueues it on the device's compute stream behind the gradient kernels (NCCL), in parallel with
the rest of backward. When backward returns, the remaining buckets are reduced
and all reductions waited for (so a failed rank raises from loss.backward()).

Inside nn.Graph (a graph whose build() runs backward through this module) the same buckets
become collectives of the compiled graph: each bucket's gradients are concatenated, all-reduced
by one custom-call that calls the process group on the graph's buffers, and sliced back into
the parameters' .grad before the optimizer's traced step.

A parameter that got no gradient is an error naming it unless find_unused_parameters=True
(then it counts as a zero gradient). Inside `no_sync()` gradients only accumulate locally; the
next backward outside it reduces the accumulated sums.
"""
import contextlib
import weakref

import numpy as np

import oneflow_like as flow
from oneflow_like.nn.modules.module import Module


class _Bucket:
    def __init__(self, index, params, dtype, device):
        self.index = index
        self.params = params  # [(name, param)]
        numels = [p.numel() for _, p in params]
        self.flat = flow.zeros(sum(numels), dtype=dtype).to(device)
        self.views, off = [], 0
        for (_, p), n in zip(params, numels):
            self.views.append(self.flat[off : off + n].view(p.shape))
            off += n
        self.pending = len(params)
        self.work = None


class DistributedDataParallel(Module):
    """Wraps `module` (kept as .module). Arguments follow torch.nn.parallel's (process_group: a
    group from dist.new_group, default the world); device_ids,
    output_device, gradient_as_bucket_view and static_graph are accepted (gradients are always
    bucket views). CPU parameters reduce over Gloo, CUDA ones over NCCL (the module on this
    rank's device: LOCAL_RANK % device count)."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        init_sync=True,
    ):
        super().__init__()
        import oneflow_like.distributed as dist

        if not dist.is_initialized():
            raise RuntimeError(
                "[DistributedDataParallel] the default process group is not initialized; "
                "call oneflow_like.distributed.init_process_group first"
            )
        if dist._group("DistributedDataParallel", process_group) is None:
            raise ValueError(
                f"[DistributedDataParallel] this rank ({dist.get_rank()}) is not a member of "
                f"process_group {process_group}"
            )
        self._group = process_group
        # The group's first rank plays torch's "rank 0": its parameters win at construction.
        self._src = dist.get_global_rank(process_group, 0)
        self._dist = dist
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_cap_mb = 25 if bucket_cap_mb is None else bucket_cap_mb
        self.require_backward_grad_sync = True
        self._named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._pg = dist._group("DistributedDataParallel", process_group)
        if init_sync:
            self._sync_from_rank0([p for _, p in module.named_parameters()])
            self._sync_from_rank0(list(module.buffers()))
        self._buckets = self._make_buckets()
        self._check_bucket_layout()
        self._where = {}  # id(param) -> (bucket, slot)
        for b in self._buckets:
            for i, (_, p) in enumerate(b.params):
                self._where[id(p)] = (b, i)
                p.register_hook(self._make_hook(p))
        self._reset()

    # ---- construction ------------------------------------------------------------------------

    def _sync_from_rank0(self, tensors):
        works = [
            self._dist.broadcast(t.detach(), self._src, group=self._group, async_op=True)
            for t in tensors
        ]
        for w in works:
            w.wait()

    def _make_buckets(self):
        cap = int(self.bucket_cap_mb * 1024 * 1024)
        buckets, cur, size = [], [], 0
        for name, p in reversed(self._named):
            nbytes = p.numel() * p.element_size()
            first = cur[0][1] if cur else None
            if cur and (size + nbytes > cap or p.dtype != first.dtype or p.device != first.device):
                buckets.append(cur)
                cur, size = [], 0
            cur.append((name, p))
            size += nbytes
        if cur:
            buckets.append(cur)
        return [_Bucket(i, ps, ps[0][1].dtype, ps[0][1].device) for i, ps in enumerate(buckets)]

    def _check_bucket_layout(self):
        """Every rank must bucket the same parameters the same way (the construction-time
        broadcasts already compared each parameter's shape and dtype between ranks): then the
        buckets' all-reduces can skip the per-op signature exchange."""
        mine = flow.tensor([len(self._buckets)] + [b.flat.numel() for b in self._buckets])
        mine = mine.to(self._dist._device_of(self._pg))  # the group's own device (NCCL: CUDA)
        rank0 = mine.clone()
        self._dist.broadcast(
            rank0, self._src, group=self._group
        )  # a different bucket count fails here, naming the shapes
        if not np.array_equal(rank0.numpy(), mine.numpy()):
            raise RuntimeError(
                "[DistributedDataParallel] the ranks bucket the parameters differently (bucket "
                f"sizes {mine.numpy()[1:].tolist()} here, {rank0.numpy()[1:].tolist()} on rank 0): "
                "pass the same bucket_cap_mb and model on every rank"
            )

    # ---- per iteration -----------------------------------------------------------------------

    def _reset(self):
        self._ready = set()
        self._next_bucket = 0
        self._callback_queued = False
        self._traced = {}  # nn.Graph tracing: id(param) -> lazy gradient (reduced once sliced)
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None

    def _make_hook(self, param):
        ref = weakref.ref(self)  # the hook stays on the parameter; the wrapper may go away

        def hook(grad):
            ddp = ref()
            if ddp is None or not ddp.require_backward_grad_sync:
                return None
            return ddp._on_grad(param, grad)

        return hook

    def _on_grad(self, p, grad):
        if grad.is_lazy:
            return self._on_traced_grad(p, grad)
        bucket, slot = self._where[id(p)]
        self._check_second_grad(p)
        if not self._callback_queued:
            flow.autograd._queue_callback(self._finalize)
            self._callback_queued = True
        view = bucket.views[slot]
        with flow.no_grad():
            # Gradients accumulated under no_sync() join this step's reduction.
            view.copy_(grad if p.grad is None else p.grad + grad)
        p.grad = None  # the autograd engine then stores the returned view as .grad
        self._mark_ready(p, bucket)
        return view

    def _on_traced_grad(self, p, grad):
        """nn.Graph tracing: keep the lazy gradient (autograd stores it as .grad for now); the
        bucket's reduction is traced when its last gradient arrives."""
        self._check_second_grad(p)
        if not self._callback_queued:
            flow.autograd._queue_callback(self._finalize)
            self._callback_queued = True
        self._traced[id(p)] = grad if p.grad is None else p.grad + grad
        self._mark_ready(p, self._where[id(p)][0])
        return None

    def _check_second_grad(self, p):
        if id(p) in self._ready:
            bucket, slot = self._where[id(p)]
            raise RuntimeError(
                f"[DistributedDataParallel] parameter '{bucket.params[slot][0]}' received a second "
                "gradient in one iteration (a backward run twice, or retain_graph reuse); call "
                "forward again first"
            )

    def _reduce_traced(self, b):
        """One traced all-reduce per bucket: concatenate, reduce, slice back (graph buffers)."""
        flat = flow.cat([self._traced[id(p)].reshape(-1) for _, p in b.params])
        self._dist.all_reduce(flat, self._dist.ReduceOp.AVG, group=self._group)
        off = 0
        for _, p in b.params:
            n = p.numel()
            self._traced[id(p)] = flat[off : off + n].view(p.shape)
            off += n

    def _mark_ready(self, p, bucket):
        self._ready.add(id(p))
        bucket.pending -= 1
        # Reductions start in bucket order on every rank, so all ranks issue the same sequence.
        while (
            self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0
        ):
            b = self._buckets[self._next_bucket]
            if self._traced:
                self._reduce_traced(b)
            else:
                b.work = self._pg.all_reduce(b.flat, self._dist.ReduceOp.AVG, check=False)
            self._next_bucket += 1

    def _finalize(self):
        missing = [(n, p) for b in self._buckets for n, p in b.params if id(p) not in self._ready]
        if missing and not self.find_unused_parameters:
            names = ", ".join(n for n, _ in missing)
            self._reset()
            raise RuntimeError(
                f"[DistributedDataParallel] these parameters received no gradient in this "
                f"backward: {names}. Every parameter must take part in the loss, or pass "
                "find_unused_parameters=True (their gradients then count as zero)"
            )
        if self._traced:
            self._finalize_traced(missing)
            return
        for _, p in missing:  # find_unused_parameters: a zero (or locally accumulated) gradient
            bucket, slot = self._where[id(p)]
            view = bucket.views[slot]
            with flow.no_grad():
                if p.grad is None:
                    view.zero_()
                else:
                    view.copy_(p.grad)
            p.grad = view
            self._mark_ready(p, bucket)
        works = [b.work for b in self._buckets]
        self._reset()
        for w in works:
            w.wait()

    def _finalize_traced(self, missing):
        for _, p in missing:
            self._traced[id(p)] = flow.zeros_like(p) if p.grad is None else p.grad
            self._mark_ready(p, self._where[id(p)][0])
        for b in self._buckets:
            for _, p in b.params:
                p.grad = self._traced[id(p)]
        self._reset()

    # ---- module API --------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._callback_queued:  # a backward stopped half way: start the iteration afresh
            self._reset()
        # Buffers follow rank 0 in training steps only: an evaluation that only some ranks run
        # must not issue collectives the others never meet.
        if self.broadcast_buffers and self.training and flow.is_grad_enabled():
            for b in self.module.buffers():
                # In a trace the buffer itself (a captured tensor) is written, so the traced
                # broadcast orders before the forward's own updates (a detached alias would be
                # assigned back after them).
                t = b if flow._C._tracing_active() else b.detach()
                self._dist.broadcast(t, self._src, group=self._group, async_op=True)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of backward passes inside only accumulate locally (no communication)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


__all__ = ["DistributedDataParallel"]
