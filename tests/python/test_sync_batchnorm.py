"""nn.SyncBatchNorm across processes (Gloo on the CPU), launched with flow.multiprocessing.spawn:
2 ranks, each with half of a batch, must give what one BatchNorm gives on the whole batch: the
outputs, the input gradients, the summed weight/bias gradients and the running statistics."""
import os
import socket

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.multiprocessing as mp

WORLD = 2


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _data(shape):
    rs = np.random.RandomState(0)
    x = rs.randn(*shape).astype(np.float32) * 3 + 1
    dy = rs.randn(*shape).astype(np.float32)
    return x, dy


def _rank(rank, port, shape, affine, momentum, out):
    import oneflow_like.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD
    )
    try:
        x, dy = _data(shape)
        half = shape[0] // WORLD
        xs = flow.tensor(x[rank * half : (rank + 1) * half], requires_grad=True)
        bn = flow.nn.SyncBatchNorm(shape[1], affine=affine, momentum=momentum)
        with flow.no_grad():
            if affine:
                bn.weight.copy_(flow.arange(1.0, shape[1] + 1.0))
                bn.bias.fill_(0.5)
        for _ in range(2):  # two steps: the running statistics move twice
            y = bn(xs)
        y.backward(flow.tensor(dy[rank * half : (rank + 1) * half]))
        grads = [bn.weight.grad, bn.bias.grad] if affine else []
        for g in grads:
            dist.all_reduce(g)  # as DDP would (summed here, to compare with one process)
        np.savez(
            os.path.join(out, f"rank{rank}.npz"),
            y=y.detach().numpy(),
            gx=xs.grad.numpy(),
            rm=bn.running_mean.numpy(),
            rv=bn.running_var.numpy(),
            nbt=bn.num_batches_tracked.numpy(),
            **({"gw": grads[0].numpy(), "gb": grads[1].numpy()} if affine else {}),
        )
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    "shape,affine,momentum",
    [((8, 3, 5), True, 0.1), ((4, 2, 3, 3), False, None), ((6, 4), True, 0.3)],
)
def test_sync_batchnorm_equals_one_process(tmp_path, shape, affine, momentum):
    ctx = mp.start_processes(
        _rank,
        args=(_free_port(), shape, affine, momentum, str(tmp_path)),
        nprocs=WORLD,
        join=False,
        start_method="spawn",
    )
    waited = 0
    while not ctx.join(timeout=5):
        waited += 5
        assert waited < 120, "SyncBatchNorm ranks did not finish in 120 s"
    x, dy = _data(shape)
    xt = flow.tensor(x, requires_grad=True)
    bn = flow.nn.BatchNorm1d(shape[1]) if len(shape) < 4 else flow.nn.BatchNorm2d(shape[1])
    bn = type(bn)(shape[1], affine=affine, momentum=momentum)
    with flow.no_grad():
        if affine:
            bn.weight.copy_(flow.arange(1.0, shape[1] + 1.0))
            bn.bias.fill_(0.5)
    for _ in range(2):
        y = bn(xt)
    y.backward(flow.tensor(dy))
    ranks = [np.load(os.path.join(tmp_path, f"rank{r}.npz")) for r in range(WORLD)]
    np.testing.assert_allclose(
        np.concatenate([r["y"] for r in ranks]), y.detach().numpy(), atol=1e-5
    )
    np.testing.assert_allclose(np.concatenate([r["gx"] for r in ranks]), xt.grad.numpy(), atol=1e-5)
    for r in ranks:
        np.testing.assert_allclose(r["rm"], bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r["rv"], bn.running_var.numpy(), rtol=1e-5, atol=1e-6)
        assert int(r["nbt"]) == 2
        if affine:
            np.testing.assert_allclose(r["gw"], bn.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(r["gb"], bn.bias.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_sync_batchnorm_single_process_is_batchnorm():
    x = flow.randn(6, 3, 4)
    sbn, bn = flow.nn.SyncBatchNorm(3, eps=1e-3, momentum=0.2), flow.nn.BatchNorm1d(
        3, eps=1e-3, momentum=0.2
    )
    assert flow.allclose(sbn(x), bn(x), atol=1e-6)
    assert flow.allclose(sbn.running_var, bn.running_var)
    converted = flow.nn.SyncBatchNorm.convert_sync_batchnorm(
        flow.nn.Sequential(flow.nn.BatchNorm2d(4))
    )
    assert type(converted[0]) is flow.nn.SyncBatchNorm
    with pytest.raises(ValueError, match="at least 2D"):
        sbn(flow.randn(3))
