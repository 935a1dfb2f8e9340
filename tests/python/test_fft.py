"""flow.fft (issue 19) on FFTW3: every transform against NumPy's (complex128 reference) for
float32/float64 inputs with n/s, dim and norm as torch; gradients against finite differences in
float64 and torch 1.13's; fftfreq/fftshift; stft/istft against torch; a spectral-conv layer
(rfft2 -> complex weight multiply -> irfft2) that trains, with torch's gradients."""
import numpy as np
import pytest

import oneflow_like as flow

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")
RNG = np.random.default_rng(1919)
NORMS = [None, "backward", "ortho", "forward"]


def rand(*shape):
    return RNG.standard_normal(shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


def check(got, want, f32):
    rtol, atol = (1e-4, 1e-4) if f32 else (1e-10, 1e-10)
    np.testing.assert_allclose(
        got.detach().numpy(), want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max())
    )


# (name, flow fn, numpy fn, input is complex, kwargs)
CASES = [
    ("fft", flow.fft.fft, np.fft.fft, True, {}),
    ("fft_n_pad", flow.fft.fft, np.fft.fft, True, {"n": 11}),
    ("fft_n_trunc_dim0", flow.fft.fft, np.fft.fft, True, {"n": 3, "dim": 0}),
    ("fft_real_in", flow.fft.fft, np.fft.fft, False, {}),
    ("ifft", flow.fft.ifft, np.fft.ifft, True, {"dim": 1}),
    ("fft2", flow.fft.fft2, np.fft.fft2, True, {}),
    ("ifft2_s", flow.fft.ifft2, np.fft.ifft2, True, {"s": (4, 6)}),
    ("fftn", flow.fft.fftn, np.fft.fftn, True, {}),
    ("fftn_dims", flow.fft.fftn, np.fft.fftn, True, {"dim": (0, 2)}),
    ("ifftn_s", flow.fft.ifftn, np.fft.ifftn, True, {"s": (3, 5)}),
    ("rfft", flow.fft.rfft, np.fft.rfft, False, {}),
    ("rfft_n_odd", flow.fft.rfft, np.fft.rfft, False, {"n": 9, "dim": 1}),
    ("irfft", flow.fft.irfft, np.fft.irfft, True, {}),
    ("irfft_n_odd", flow.fft.irfft, np.fft.irfft, True, {"n": 7}),
    ("rfft2", flow.fft.rfft2, np.fft.rfft2, False, {}),
    ("irfft2", flow.fft.irfft2, np.fft.irfft2, True, {}),
    ("irfft2_s", flow.fft.irfft2, np.fft.irfft2, True, {"s": (5, 9)}),
    ("rfftn", flow.fft.rfftn, np.fft.rfftn, False, {}),
    ("rfftn_dims_order", flow.fft.rfftn, np.fft.rfftn, False, {"dim": (2, 0)}),
    ("irfftn", flow.fft.irfftn, np.fft.irfftn, True, {"dim": (0, 1)}),
    ("hfft", flow.fft.hfft, np.fft.hfft, True, {}),
    ("hfft_n", flow.fft.hfft, np.fft.hfft, True, {"n": 9}),
    ("ihfft", flow.fft.ihfft, np.fft.ihfft, False, {}),
]


def np_ref(fn, a, kw, norm):
    kw = dict(kw)
    if "dim" in kw:
        d = kw.pop("dim")
        kw["axes" if isinstance(d, tuple) else "axis"] = d
    if (
        "s" in kw
        and "axes" not in kw
        and fn in (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn)
    ):
        kw["axes"] = tuple(range(a.ndim - len(kw["s"]), a.ndim))
    return fn(a, norm=norm or "backward", **kw)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, ffn, nfn, cplx, kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("f32", [True, False])
def test_forward_matches_numpy(name, ffn, nfn, cplx, kw, norm, f32):
    a = crand(4, 6, 5) if cplx else rand(4, 6, 5)
    want = np_ref(nfn, a, kw, norm)
    dt = (
        (flow.complex64 if cplx else flow.float32)
        if f32
        else (flow.complex128 if cplx else flow.float64)
    )
    x = flow.tensor(a, dtype=dt)
    got = ffn(x, norm=norm, **kw)
    out_real = nfn in (np.fft.irfft, np.fft.irfft2, np.fft.irfftn, np.fft.hfft)
    if out_real:
        assert got.dtype == (flow.float32 if f32 else flow.float64)
    else:
        assert got.dtype == (flow.complex64 if f32 else flow.complex128)
    check(got, want, f32)


def test_integer_input_promotes_to_complex64():
    y = flow.fft.fft(flow.arange(8))
    assert y.dtype == flow.complex64
    np.testing.assert_allclose(y.detach().numpy(), np.fft.fft(np.arange(8)), atol=1e-5)


def test_errors():
    x = flow.tensor(rand(4))
    with pytest.raises(ValueError, match='Invalid normalization mode: "sideways"'):
        flow.fft.fft(x, norm="sideways")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        flow.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="expects a real input tensor"):
        flow.fft.rfft(flow.tensor(crand(4)))
    with pytest.raises(IndexError, match="dim 3 out of range"):
        flow.fft.fft(x, dim=3)
    with pytest.raises(RuntimeError, match="same length"):
        flow.fft.fftn(flow.tensor(rand(3, 4)), s=(3,), dim=(0, 1))


def test_freq_and_shift():
    for n in (7, 8):
        np.testing.assert_allclose(
            flow.fft.fftfreq(n, d=0.5).detach().numpy(), np.fft.fftfreq(n, d=0.5), rtol=1e-6
        )
        np.testing.assert_allclose(
            flow.fft.rfftfreq(n).detach().numpy(), np.fft.rfftfreq(n), rtol=1e-6
        )
    assert flow.fft.fftfreq(4, dtype=flow.float64).dtype == flow.float64
    a = rand(5, 6)
    np.testing.assert_array_equal(
        flow.fft.fftshift(flow.tensor(a)).detach().numpy(), np.fft.fftshift(a)
    )
    np.testing.assert_array_equal(
        flow.fft.ifftshift(flow.tensor(a), dim=1).detach().numpy(), np.fft.ifftshift(a, axes=1)
    )
    c = crand(5, 4)
    np.testing.assert_array_equal(
        flow.fft.fftshift(flow.tensor(c), dim=(0,)).detach().numpy(), np.fft.fftshift(c, axes=0)
    )


# ---- gradients ---------------------------------------------------------------------------------


def weighted_loss(t, w):
    """A real loss touching both parts: sum(w_re * re(t) + w_im * im(t)) (real t: w_re only)."""
    if t.dtype.is_complex:
        return (flow.view_as_real(t) * w).sum()
    return (t * w[..., 0]).sum()


def fd_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    flat, gf = a.reshape(-1), g.reshape(-1)
    units = (1.0, 1j) if np.iscomplexobj(a) else (1.0,)
    for i in range(flat.size):
        for u in units:
            p, m = flat.copy(), flat.copy()
            p[i] += eps * u
            m[i] -= eps * u
            gf[i] += (f(p.reshape(a.shape)) - f(m.reshape(a.shape))) / (2 * eps) * u
    return g


GRAD_CASES = [c for c in CASES if c[0] in ("fft", "fft_n_pad", "fft_n_trunc_dim0", "fft_real_in", "ifft2_s", "fftn_dims",
                                          "rfft", "rfft_n_odd", "irfft", "irfft_n_odd", "rfft2", "irfft2_s",
                                          "rfftn_dims_order", "hfft", "hfft_n", "ihfft")]  # fmt: skip


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("name, ffn, nfn, cplx, kw", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_backward_finite_differences(name, ffn, nfn, cplx, kw, norm):
    a = crand(3, 4, 5) if cplx else rand(3, 4, 5)
    out_shape = np_ref(nfn, a, kw, norm).shape
    w = flow.tensor(rand(*out_shape, 2))

    def f(v):
        return float(weighted_loss(ffn(flow.tensor(v), norm=norm, **kw), w).detach().numpy())

    x = flow.tensor(a).requires_grad_()
    weighted_loss(ffn(x, norm=norm, **kw), w).backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), fd_grad(f, a), rtol=1e-6, atol=1e-7)


@needs_torch
@pytest.mark.parametrize(
    "name", ["fft", "ifft", "rfft", "irfft", "rfft2", "irfft2", "fftn", "hfft", "ihfft"]
)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_gradients_match_torch(name, norm):
    cplx_in = name in ("fft", "ifft", "irfft", "irfft2", "fftn", "hfft")
    a = crand(4, 6) if cplx_in else rand(4, 6)
    tx = torch.tensor(a, requires_grad=True)
    ty = getattr(torch.fft, name)(tx, norm=norm)
    wt = torch.tensor(rand(*ty.shape, 2) if ty.is_complex() else rand(*ty.shape))
    ty = ty.resolve_conj()
    (torch.view_as_real(ty) * wt).sum().backward() if ty.is_complex() else (
        ty * wt
    ).sum().backward()
    fx = flow.tensor(a).requires_grad_()
    fy = getattr(flow.fft, name)(fx, norm=norm)
    wf = flow.tensor(wt.detach().numpy())
    (flow.view_as_real(fy) * wf).sum().backward() if fy.dtype.is_complex else (
        fy * wf
    ).sum().backward()
    np.testing.assert_allclose(
        fy.detach().numpy(), ty.detach().resolve_conj().detach().numpy(), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(
        fx.grad.detach().numpy(), tx.grad.resolve_conj().detach().numpy(), rtol=1e-10, atol=1e-10
    )


def test_cuda_or_graph_complex_is_a_clear_error():
    class G(flow.nn.Graph):
        def build(self, x):
            return flow.fft.rfft(x)

    with pytest.raises(Exception, match=r"\[fft_r2c\] nn.Graph does not support complex64"):
        G()(flow.tensor(rand(8), dtype=flow.float32))


# ---- stft / istft --------------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize(
    "center, pad_mode", [(True, "reflect"), (True, "constant"), (False, "reflect")]
)
@pytest.mark.parametrize("normalized", [False, True])
def test_stft_matches_torch(center, pad_mode, normalized):
    a = rand(2, 200)
    win = torch.hann_window(48, dtype=torch.float64)
    kw = dict(
        n_fft=64,
        hop_length=16,
        win_length=48,
        center=center,
        pad_mode=pad_mode,
        normalized=normalized,
    )
    want = torch.stft(torch.tensor(a), window=win, return_complex=True, **kw)
    got = flow.stft(
        flow.tensor(a), window=flow.tensor(win.detach().numpy()), return_complex=True, **kw
    )
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)
    r = flow.stft(
        flow.tensor(a[0]), window=flow.tensor(win.detach().numpy()), return_complex=False, **kw
    )
    np.testing.assert_allclose(
        r.detach().numpy(), torch.view_as_real(want[0]).detach().numpy(), rtol=1e-10, atol=1e-10
    )


@needs_torch
def test_istft_inverts_stft_and_matches_torch():
    a = rand(2, 256)
    win = torch.hann_window(64, dtype=torch.float64)
    spec = torch.stft(torch.tensor(a), 64, hop_length=16, window=win, return_complex=True)
    want = torch.istft(spec, 64, hop_length=16, window=win, length=256)
    got = flow.istft(
        flow.tensor(spec.detach().numpy()),
        64,
        hop_length=16,
        window=flow.tensor(win.detach().numpy()),
        length=256,
    )
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(got.detach().numpy(), a, rtol=1e-9, atol=1e-10)


@needs_torch
def test_stft_gradient_matches_torch():
    a = rand(120)
    win = torch.hann_window(32, dtype=torch.float64)
    tx = torch.tensor(a, requires_grad=True)
    torch.stft(tx, 32, hop_length=8, window=win, return_complex=True).abs().sum().backward()
    fx = flow.tensor(a).requires_grad_()
    flow.stft(
        fx, 32, hop_length=8, window=flow.tensor(win.detach().numpy()), return_complex=True
    ).abs().sum().backward()
    np.testing.assert_allclose(
        fx.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-8, atol=1e-10
    )


def test_stft_requires_return_complex():
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        flow.stft(flow.tensor(rand(64)), 16)


# ---- a spectral-conv layer (FNO style) -----------------------------------------------------------


class SpectralConv2d(flow.nn.Module):
    def __init__(self, channels, modes, dtype):
        super().__init__()
        self.modes = modes
        scale = 1.0 / channels
        w = scale * RNG.standard_normal((channels, channels, modes, modes, 2))
        self.weight = flow.nn.Parameter(flow.tensor(w, dtype=dtype))

    def forward(self, x):  # x: [B, C, H, W] real
        xf = flow.fft.rfft2(x, norm="ortho")
        w = flow.view_as_complex(self.weight)
        m = self.modes
        low = flow.view_as_complex(flow.view_as_real(xf)[:, :, :m, :m].contiguous())
        # out[b, o, h, w] = sum_i low[b, i, h, w] * weight[i, o, h, w]
        prod = low.unsqueeze(2) * w.unsqueeze(0)
        out_low = prod.sum(1)
        pad_h, pad_w = xf.shape[-2] - m, xf.shape[-1] - m
        r = flow.view_as_real(out_low)
        r = flow.nn.functional.pad(r, (0, 0, 0, pad_w, 0, pad_h))
        return flow.fft.irfft2(flow.view_as_complex(r.contiguous()), s=x.shape[-2:], norm="ortho")


def torch_spectral(x, weight, m):
    xf = torch.fft.rfft2(x, norm="ortho")
    w = torch.view_as_complex(weight)
    out_low = (xf[:, :, :m, :m].unsqueeze(2) * w.unsqueeze(0)).sum(1)
    out = torch.zeros(xf.shape[0], w.shape[1], xf.shape[-2], xf.shape[-1], dtype=xf.dtype)
    out[:, :, :m, :m] = out_low
    return torch.fft.irfft2(out, s=x.shape[-2:], norm="ortho")


def test_spectral_conv_trains():
    flow.manual_seed(0)
    layer = SpectralConv2d(2, 3, flow.float32)
    x = flow.tensor(rand(4, 2, 8, 8), dtype=flow.float32)
    target = flow.tensor(rand(4, 2, 8, 8), dtype=flow.float32) * 0.1
    opt = flow.optim.Adam(layer.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        loss = ((layer(x) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach().numpy()))
    assert losses[-1] < 0.7 * losses[0]


@needs_torch
def test_spectral_conv_gradients_match_torch():
    layer = SpectralConv2d(3, 3, flow.float64)
    a = rand(2, 3, 8, 7)
    x = flow.tensor(a).requires_grad_()
    y = layer(x)
    (y * y).sum().backward()
    tw = torch.tensor(layer.weight.detach().numpy(), requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    ty = torch_spectral(tx, tw, 3)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        layer.weight.grad.detach().numpy(), tw.grad.detach().numpy(), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-9, atol=1e-12
    )
