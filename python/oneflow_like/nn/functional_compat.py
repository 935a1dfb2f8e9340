"""nn.functional names of issue 19: fractional max pooling (2-d and 3-d, torch's pseudo-random
pooling regions, reproducible through _random_samples) and multi_head_attention_forward (the
functional form of nn.MultiheadAttention, torch's argument list and (L, N, E) layout).
Both are built from gather / max / matmul, so gradients come from those ops."""
import math

import numpy as np

import oneflow_like as flow

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "multi_head_attention_forward",
]

_NP_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16}


def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _interval_starts(samples, in_size, out_size, pool, np_dtype):
    """torch's generate_intervals for every plane: samples (P,) in [0, 1) -> starts (P, out)."""
    u = samples.astype(np_dtype)
    starts = np.empty((len(u), out_size), dtype=np.int64)
    if out_size > 1:
        alpha = np_dtype(in_size - pool) / np_dtype(out_size - 1)
        i = np.arange(out_size - 1, dtype=np_dtype)[None, :]
        first = ((i + u[:, None]) * alpha).astype(np.int64)
        starts[:, :-1] = first - (u * alpha).astype(np.int64)[:, None]
    starts[:, -1] = in_size - pool
    return starts


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples, nd):  # fmt: skip
    who = f"fractional_max_pool{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"[{who}] expects a {nd + 1}-d or {nd + 2}-d input, got shape {list(input.shape)}"
        )
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"[{who}] expects a floating input, got {input.dtype}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    sizes = tuple(x.shape[2:])
    k = _tuple(kernel_size, nd)
    if output_size is None and output_ratio is None:
        raise ValueError(f"[{who}] requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _tuple(output_ratio, nd)
        if not all(0 < r < 1 for r in ratio):
            raise ValueError(f"[{who}] output_ratio must be in (0, 1), got {output_ratio}")
        output_size = tuple(int(s * r) for s, r in zip(sizes, ratio))
    out = _tuple(output_size, nd)
    for s, o, kk in zip(sizes, out, k):
        if o + kk - 1 > s:
            raise RuntimeError(
                f"[{who}] output size {list(out)} + kernel {list(k)} - 1 is too large for the "
                f"input size {list(sizes)}"
            )
    if _random_samples is None:
        _random_samples = flow.rand(n, c, nd, dtype=x.dtype, device=x.device)
    elif tuple(_random_samples.shape) != (n, c, nd):
        raise RuntimeError(
            f"[{who}] _random_samples must have shape {[n, c, nd]}, got "
            f"{list(_random_samples.shape)}"
        )
    np_dtype = _NP_DTYPES.get(str(x.dtype).split(".")[-1], np.float32)
    u = _random_samples.detach().to("cpu").to(flow.float64).numpy().reshape(n * c, nd)
    # torch's sample order: 2-d (W, H); 3-d (T, H, W).
    sample_col = [1, 0] if nd == 2 else [0, 1, 2]
    starts = [
        _interval_starts(u[:, sample_col[d]], sizes[d], out[d], k[d], np_dtype) for d in range(nd)
    ]
    # Flat input offsets of every window element: (P, out..., k...) with P = n * c planes.
    strides = [int(np.prod(sizes[d + 1 :])) for d in range(nd)]
    flat = np.zeros((n * c,) + out + k, dtype=np.int64)
    for d in range(nd):
        shape = [n * c] + [1] * (2 * nd)
        shape[1 + d] = out[d]
        pos = starts[d].reshape(shape)
        kshape = [1] * (1 + 2 * nd)
        kshape[1 + nd + d] = k[d]
        pos = pos + np.arange(k[d]).reshape(kshape)
        flat = flat + pos * strides[d]
    n_out, n_win = int(np.prod(out)), int(np.prod(k))
    idx = flow.from_numpy(flat.reshape(n, c, n_out * n_win)).to(x.device)
    windows = flow.gather(x.reshape(n, c, -1), 2, idx).reshape(n, c, n_out, n_win)
    values, arg = windows.max(dim=-1)
    values = values.reshape((n, c) + out)
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    indices = flow.gather(idx.reshape(n, c, n_out, n_win), 3, arg.unsqueeze(-1))
    indices = indices.reshape((n, c) + out)
    return values, indices.squeeze(0) if unbatched else indices


def _fractional_api(nd, with_indices):
    def fn(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
           _random_samples=None):  # fmt: skip
        return _fractional_max_pool(
            input, kernel_size, output_size, output_ratio, with_indices or return_indices,
            _random_samples, nd,
        )  # fmt: skip

    dims = "(H, W)" if nd == 2 else "(T, H, W)"
    fn.__name__ = f"fractional_max_pool{nd}d" + ("_with_indices" if with_indices else "")
    fn.__doc__ = (
        f"Max over pseudo-random {dims} regions of each (N, C) plane (Graham, Fractional "
        f"Max-Pooling): windows start at torch's generate_intervals points of _random_samples "
        f"(N, C, {nd}) in [0, 1) (drawn when not given)"
        + ("; returns (values, indices)." if with_indices else ".")
    )
    return fn


fractional_max_pool2d = _fractional_api(2, False)
fractional_max_pool2d_with_indices = _fractional_api(2, True)
fractional_max_pool3d = _fractional_api(3, False)
fractional_max_pool3d_with_indices = _fractional_api(3, True)


def _float_mask(mask, dtype, who):
    if mask is None:
        return None
    if mask.dtype == flow.bool:
        return flow.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf")
        )
    if not mask.dtype.is_floating_point:
        raise RuntimeError(f"[{who}] masks must be bool or floating, got {mask.dtype}")
    return mask.to(dtype)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):  # fmt: skip
    """torch.nn.functional.multi_head_attention_forward: query (L, N, E) or (L, E), key and
    value (S, N, E) or (S, E); returns (output (L, N, E), weights (N, L, S) averaged over
    heads, (N, H, L, S) otherwise, or None when need_weights=False)."""
    who = "multi_head_attention_forward"
    F = flow.nn.functional
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    if E != embed_dim_to_check:
        raise RuntimeError(
            f"[{who}] was expecting embedding dimension of {embed_dim_to_check}, but got {E}"
        )
    if E % num_heads:
        raise RuntimeError(f"[{who}] embed_dim {E} not divisible by num_heads {num_heads}")
    hd = E // num_heads
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3, 0)
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3, 0)
    q, k, v = F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)
    if is_causal and attn_mask is None:
        attn_mask = flow.ones(L, key.shape[0], dtype=flow.bool, device=query.device).triu(1)
    attn_mask = _float_mask(attn_mask, q.dtype, who)
    if attn_mask is not None and attn_mask.dim() == 2:
        attn_mask = attn_mask.unsqueeze(0)
    kpm = _float_mask(key_padding_mask, q.dtype, who)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise RuntimeError(f"[{who}] bias_k/bias_v cannot be combined with static_k/v")
        k = flow.cat([k, bias_k.reshape(1, 1, E).expand(1, N, E)], dim=0)
        v = flow.cat([v, bias_v.reshape(1, 1, E).expand(1, N, E)], dim=0)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if kpm is not None:
            kpm = F.pad(kpm, (0, 1))
    q = q.reshape(L, N * num_heads, hd).transpose(0, 1)
    k = k.reshape(k.shape[0], N * num_heads, hd).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], N * num_heads, hd).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = flow.cat([k, flow.zeros(N * num_heads, 1, hd, dtype=k.dtype, device=k.device)], 1)
        v = flow.cat([v, flow.zeros(N * num_heads, 1, hd, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if kpm is not None:
            kpm = F.pad(kpm, (0, 1))
    S = k.shape[1]
    scores = flow.bmm(q * (1.0 / math.sqrt(hd)), k.transpose(1, 2))  # (N*H, L, S)
    if attn_mask is not None:
        scores = scores + attn_mask
    if kpm is not None:
        kpm = kpm.reshape(N, 1, 1, S).expand(N, num_heads, 1, S).reshape(N * num_heads, 1, S)
        scores = scores + kpm
    weights = F.softmax(scores, dim=-1)
    dropped = F.dropout(weights, dropout_p, training) if dropout_p > 0 else weights
    out = flow.bmm(dropped, v).transpose(0, 1).reshape(L * N, E)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(N, num_heads, L, S)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights
