"""Ops on cuda whose CUDA kernels have no CPU-vs-CUDA case in kernels_test through the Python
API: the scan/ordering family (kernels/cuda/scan.cu) and the linalg family (kernels/cuda/linalg.cc,
the CPU's LAPACK kernels on host copies). Values, indices and gradients equal the CPU's. Skips
without a CUDA device; the GPU proof (tools/gpu/run.sh) runs this file."""

import numpy as np
import pytest

import oneflow_like as flow

pytestmark = pytest.mark.skipif(
    not flow.cuda.is_available(), reason="no CUDA device (the GPU proof, tools/gpu/run.sh, runs it)"
)


def test_scan_and_ordering_ops_on_cuda_match_the_cpu():
    """The scan/ordering family's CUDA kernels (kernels/cuda/scan.cu) through the Python API:
    values and indices equal the CPU's, gradients included."""
    rng = np.random.default_rng(4)
    a = np.floor(rng.uniform(-5, 5, (6, 33))).astype(np.float32)  # ties
    a[1, 3] = np.nan
    for dev_fn in [
        lambda t: flow.sort(t, dim=1, descending=True),
        lambda t: flow.sort(t, dim=0),
        lambda t: flow.topk(t, 4, dim=1),
        lambda t: flow.topk(t, 2, dim=0, largest=False),
        lambda t: flow.cummax(t, 1),
        lambda t: flow.cummin(t, 0),
        lambda t: flow.nanmedian(t, 1),
        lambda t: flow.kthvalue(t, 3, 1),
        lambda t: (flow.cumsum(t, 1),),
        lambda t: (flow.cumprod(t, 0),),
        lambda t: (flow.logcumsumexp(t, 1),),
        lambda t: (flow.argsort(t, 1, descending=True),),
    ]:
        cpu = dev_fn(flow.tensor(a))
        gpu = dev_fn(flow.tensor(a).to("cuda"))
        for c, g in zip(cpu, gpu):
            assert g.device.type == "cuda"
            np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-6, equal_nan=True)
    b = rng.uniform(0.5, 1.5, (4, 7))
    for fn in [
        lambda t: flow.cumprod(t, 1),
        lambda t: flow.logcumsumexp(t, 0),
        lambda t: flow.sort(t, 1)[0],
        lambda t: flow.topk(t, 3, 1)[0],
        lambda t: flow.cummax(t, 1)[0],
    ]:
        grads = []
        for dev in ("cpu", "cuda"):
            t = flow.tensor(b, device=dev).requires_grad_()
            (
                fn(t)
                * flow.arange(1, 1 + fn(t).numel(), device=dev, dtype=flow.float64).reshape(
                    fn(t).shape
                )
            ).sum().backward()
            grads.append(t.grad.cpu().numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


def _spd(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize(
    "name,fn,make",
    [
        ("inv", lambda t: (flow.linalg.inv(t),), "gen"),
        ("cholesky", lambda t: (flow.linalg.cholesky(t),), "spd"),
        ("solve", lambda t: (flow.linalg.solve(t, t[..., :2]),), "gen"),
        ("slogdet", lambda t: tuple(flow.linalg.slogdet(t)), "gen"),
        ("qr", lambda t: tuple(flow.linalg.qr(t)), "gen"),
        ("eigh", lambda t: (flow.linalg.eigh(t)[0],), "spd"),
        ("svdvals", lambda t: (flow.linalg.svdvals(t),), "gen"),
        ("lu_factor", lambda t: tuple(flow.linalg.lu_factor(t)), "gen"),
        (
            "solve_triangular",
            lambda t: (flow.linalg.solve_triangular(t.triu(), t, upper=True),),
            "spd",
        ),
        (
            "householder_product",
            lambda t: (flow.linalg.householder_product(*flow.geqrf(t)),),
            "gen",
        ),
        ("cholesky_ex", lambda t: tuple(flow.linalg.cholesky_ex(t)), "spd"),
        ("inv_ex", lambda t: tuple(flow.linalg.inv_ex(t)), "gen"),
    ],
)
def test_linalg_on_cuda_equals_the_cpu(name, fn, make):
    rng = np.random.default_rng(5)
    a = _spd(rng, 5, (3,)) if make == "spd" else rng.standard_normal((3, 5, 5)) + 3 * np.eye(5)
    cpu = fn(flow.tensor(a))
    gpu = fn(flow.tensor(a).to("cuda"))
    for c, g in zip(cpu, gpu):
        assert g.device.type == "cuda", name
        np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-10, atol=1e-10)


def test_linalg_on_cuda_gradients_and_errors():
    rng = np.random.default_rng(6)
    a = _spd(rng, 4)
    grads = []
    for dev in ("cpu", "cuda"):
        t = flow.tensor(a, device=dev).requires_grad_()
        (flow.linalg.inv(t).sum() + flow.linalg.cholesky(t).sum()).backward()
        grads.append(t.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)
    # a singular matrix raises the CPU's error, naming the op, and the runtime stays usable
    with pytest.raises(flow.linalg.LinAlgError, match="linalg.inv: .*singular"):
        flow.linalg.inv(flow.zeros(3, 3, device="cuda")).cpu()
    assert float(flow.ones(2, device="cuda").sum().item()) == 2.0


def test_complex_ops_composed_over_real_views_on_cuda():
    """Complex tensors on cuda: there are no CUDA complex kernels, but the transfers are byte
    copies and the composed ops (ops/complex.cc) run real CUDA kernels over view_as_real, their
    results being views of the stacked parts. Ops that would need a complex kernel name the op,
    complex64 and cuda."""
    rng = np.random.default_rng(19)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    b = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))).astype(np.complex64)
    x, y = flow.tensor(a).to("cuda"), flow.tensor(b).to("cuda")
    assert x.device.type == "cuda" and x.dtype == flow.complex64
    np.testing.assert_array_equal(x.cpu().numpy(), a)
    composed = [
        (lambda t, u: t + t * 2, lambda p, q: p + p * 2),
        (lambda t, u: t * (1 - 2j), lambda p, q: p * (1 - 2j)),
        (lambda t, u: t / (t + 3), lambda p, q: p / (p + 3)),
        (lambda t, u: t.exp(), lambda p, q: np.exp(p)),
        (lambda t, u: t.abs(), lambda p, q: np.abs(p)),
        (lambda t, u: t.sum(0), lambda p, q: p.sum(0)),
        (lambda t, u: t @ u, lambda p, q: p @ q),
        (lambda t, u: flow.view_as_real(t), lambda p, q: np.stack([p.real, p.imag], -1)),
        (lambda t, u: t.real * t.imag, lambda p, q: p.real * p.imag),
        (lambda t, u: flow.cat([t, t]), lambda p, q: np.concatenate([p, p])),
        (lambda t, u: t[flow.tensor([2, 0]).to("cuda")], lambda p, q: p[[2, 0]]),
        (lambda t, u: flow.fft.fft(t.cpu()), lambda p, q: np.fft.fft(p)),
    ]
    for fn, ref in composed:
        got = fn(x, y)
        np.testing.assert_allclose(got.cpu().numpy(), ref(a, b), rtol=1e-4, atol=1e-4)
    z = flow.tensor(a).to("cuda").requires_grad_()
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.cpu().numpy(), 2 * a, rtol=1e-5)
    with pytest.raises(TypeError, match=r"not supported for complex64 on cuda"):
        flow.fft.fft(x)
    with pytest.raises(TypeError, match=r"not supported for complex64 on cuda"):
        x.to(flow.complex128)
