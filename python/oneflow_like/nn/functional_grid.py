"""F.affine_grid and F.grid_sample (4-d input: bilinear and nearest, zeros / border / reflection
padding), composed from matmul, gather and elementwise ops, so autograd reaches both the input
and the grid. Re-exported by nn.functional."""
import oneflow_like as flow


def _base_coords(n, align_corners, dtype, device):
    """The normalized centres of n pixels along one axis, in [-1, 1]."""
    if align_corners:
        return flow.linspace(-1.0, 1.0, n, dtype=dtype, device=device) * (1.0 if n > 1 else 0.0)
    return (flow.arange(n, dtype=dtype, device=device) * 2 + 1) / n - 1


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta (N, 2, 3)
    (or (N, 3, 4)) for an output of `size` (N, C, H, W) (or (N, C, D, H, W))."""
    align = bool(align_corners)
    size = list(size)
    k = len(size) - 2
    if k not in (2, 3):
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    want = (size[0], k, k + 1)
    if tuple(theta.shape) != want:
        raise ValueError(
            f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. "
            f"Got {list(theta.shape)}."
        )
    spatial = size[2:]  # (H, W) or (D, H, W); coordinates are ordered x, y(, z)
    axes = [_base_coords(s, align, theta.dtype, theta.device) for s in spatial]
    ones = flow.ones(*spatial, 1, dtype=theta.dtype, device=theta.device)
    coords = []
    for d in reversed(range(k)):  # x varies along the last spatial dim
        shape = [1] * k
        shape[d] = spatial[d]
        coords.append((axes[d].reshape(*shape, 1) * ones))
    base = flow.cat(coords + [ones], -1).reshape(1, -1, k + 1)
    grid = base @ theta.transpose(1, 2)
    return grid.reshape(size[0], *spatial, k)


def _unnormalize(g, size, align):
    if align:
        return (g + 1) / 2 * (size - 1)
    return ((g + 1) * size - 1) / 2


def _reflect(x, twice_low, twice_high):
    if twice_low == twice_high:
        return x * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = (x - low).abs()
    extra = flow.fmod(x, span)
    flips = flow.floor(x / span)
    even = flow.fmod(flips, 2.0) == 0
    return flow.where(even, extra + low, span - extra + low)


def _source_coords(g, size, padding_mode, align):
    x = _unnormalize(g, size, align)
    if padding_mode == "border":
        x = x.clamp(0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align else _reflect(x, -1, 2 * size - 1)
        x = x.clamp(0, size - 1)
    return x


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) sampled at grid (N, Ho, Wo, 2) ((x, y) in [-1, 1]); out-of-range
    samples follow padding_mode. Returns (N, C, Ho, Wo)."""
    if mode not in ("bilinear", "nearest"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[-1] != 2:
        raise ValueError(
            "grid_sample: 4-D input (N, C, H, W) with a grid (N, H_out, W_out, 2) expected, got "
            f"{tuple(input.shape)} and {tuple(grid.shape)}"
        )
    align = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    x = _source_coords(grid[..., 0], w, padding_mode, align)
    y = _source_coords(grid[..., 1], h, padding_mode, align)
    flat = input.reshape(n, c, h * w)

    def tap(yi, xi):
        """input at integer (yi, xi) (float tensors), 0 outside."""
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).to(flow.int64).reshape(n, 1, -1)
        vals = flat.gather(2, idx.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return vals * inside.to(input.dtype).unsqueeze(1)

    if mode == "nearest":
        return tap(flow.round(y).detach(), flow.round(x).detach())
    x0, y0 = flow.floor(x).detach(), flow.floor(y).detach()
    wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (
        tap(y0, x0) * wy0 * wx0
        + tap(y0, x0 + 1) * wy0 * wx1
        + tap(y0 + 1, x0) * wy1 * wx0
        + tap(y0 + 1, x0 + 1) * wy1 * wx1
    )


__all__ = ["affine_grid", "grid_sample"]
