"""torch.stft / torch.istft (PyTorch 2.x signatures) composed from framing (Tensor.unfold), a
window multiply, the transforms of flow.fft and overlap-add (nn.functional.fold)."""
import sys

from .. import _C


def _flow():
    return sys.modules[__name__.split(".")[0]]


def _window(fn, window, win_length, n_fft, like):
    flow = _flow()
    if not 0 < win_length <= n_fft:
        raise RuntimeError(
            f"[{fn}] expected 0 < win_length <= n_fft, got win_length={win_length}, n_fft={n_fft}"
        )
    if window is None:
        window = flow.ones(
            win_length,
            dtype=like.dtype.to_real() if like.dtype.is_complex else like.dtype,
            device=like.device,
        )
    if window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"[{fn}] expected a 1D window tensor of size equal to win_length={win_length}, but got window with size {tuple(window.shape)}"
        )
    if win_length < n_fft:  # centred in n_fft points, zeros either side
        left = (n_fft - win_length) // 2
        parts = [window]
        if left:
            parts.insert(0, flow.zeros(left, dtype=window.dtype, device=window.device))
        right = n_fft - win_length - left
        if right:
            parts.append(flow.zeros(right, dtype=window.dtype, device=window.device))
        window = flow.cat(parts)
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):  # fmt: skip
    """The short-time Fourier transform: [(B,) n_fft // 2 + 1 (onesided) or n_fft, frames]."""
    flow = _flow()
    from . import fft, rfft

    if (
        return_complex is None
        and not input.dtype.is_complex
        and (window is None or not window.dtype.is_complex)
    ):
        raise RuntimeError(
            "[stft] stft requires the return_complex parameter be given for real inputs, and will further "
            "require that return_complex=True in a future PyTorch release."
        )
    if input.dim() not in (1, 2):
        raise RuntimeError(f"[stft] expected a 1D or 2D tensor, got {tuple(input.shape)}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"[stft] expected hop_length > 0, but got hop_length={hop}")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    if center:
        pad = n_fft // 2
        x = flow.nn.functional.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"[stft] expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    w = _window("stft", window, win_length, n_fft, x)
    frames = x.unfold(-1, n_fft, hop) * w  # [B, frames, n_fft]
    complex_in = frames.dtype.is_complex
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("[stft] Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = rfft(frames, dim=-1, norm=norm) if onesided else fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(1, 2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else _C._view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):  # fmt: skip
    """The inverse of stft by overlap-add, divided by the summed squared window."""
    flow = _flow()
    from . import ifft, irfft

    if not input.dtype.is_complex:
        raise RuntimeError(f"[istft] requires a complex-valued input tensor, got {input.dtype}")
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"[istft] expected a tensor with 2 or 3 dimensions, got {tuple(input.shape)}"
        )
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    spec = input.unsqueeze(0) if input.dim() == 2 else input  # [B, freq, frames]
    n_frames = spec.shape[-1]
    if onesided is None:
        onesided = spec.shape[-2] != n_fft
    if onesided and spec.shape[-2] != n_fft // 2 + 1:
        raise RuntimeError(
            f"[istft] expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 when onesided=True, but got {spec.shape[-2]}"
        )
    norm = "ortho" if normalized else "backward"
    spec = spec.transpose(1, 2)  # [B, frames, freq]
    if return_complex:
        if onesided:
            raise RuntimeError("[istft] cannot have onesided output if return_complex=True")
        frames = ifft(spec, n=n_fft, dim=-1, norm=norm)
    else:  # as torch: a two-sided input's first n_fft // 2 + 1 bins through irfft
        frames = irfft(spec, n=n_fft, dim=-1, norm=norm)
    w = _window("istft", window, win_length, n_fft, frames)
    frames = frames * w
    full = n_fft + hop * (n_frames - 1)
    fold = flow.nn.functional.fold

    def overlap_add(f):  # [B, frames, n_fft] real -> [B, full]
        cols = f.transpose(1, 2)
        return fold(cols, output_size=(1, full), kernel_size=(1, n_fft), stride=(1, hop)).reshape(
            f.shape[0], full
        )

    if frames.dtype.is_complex:
        r = _C._view_as_real(frames)
        y = _C._view_as_complex(
            flow.stack([overlap_add(r[..., 0]), overlap_add(r[..., 1])], -1).contiguous()
        )
    else:
        y = overlap_add(frames)
    sq = (w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft)
    env = overlap_add(sq.contiguous())
    start = n_fft // 2 if center else 0
    end = full - n_fft // 2 if center else full
    if length is not None:
        end = min(start + length, full)
    y = (
        y[:, start:end]
        if not y.dtype.is_complex
        else _C._view_as_complex(_C._view_as_real(y)[:, start:end].contiguous())
    )
    env = env[:, start:end]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError(
            "[istft] window overlap add min: the window's squared sum is zero somewhere (NOLA fails)"
        )
    if y.dtype.is_complex:
        r = _C._view_as_real(y) / env.unsqueeze(-1)
        y = _C._view_as_complex(r.contiguous())
    else:
        y = y / env
    if length is not None and y.shape[-1] < length:
        from . import _resize

        y = _resize(y, y.dim() - 1, length)
    return y.squeeze(0) if input.dim() == 2 else y
