"""F.ctc_loss: the CTC forward (alpha) recursion in log space, one step per time frame, over
existing ops (gather, logsumexp, where), so autograd gives the gradient. Re-exported by
nn.functional."""
import numpy as np

import oneflow_like as flow

# log(0) stand-in: finite so that logsumexp over impossible paths stays NaN-free.
_NEG = -1e30


def _lengths(x):
    return [int(v) for v in (x.numpy().tolist() if isinstance(x, flow.Tensor) else x)]


def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """log_probs (T, N, C) (or (T, C)), targets (N, S) padded or 1-D concatenated, lengths per
    sample. Returns the negative log likelihood of the targets (reduction: 'none', 'sum', or
    'mean' = the mean over the batch of each loss divided by its target length)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    T, N, _ = log_probs.shape
    in_len, tg_len = _lengths(input_lengths), _lengths(target_lengths)
    tg = targets.numpy().astype(np.int64)
    S = max(tg_len) if tg_len else 0
    padded = np.full((N, S), blank, dtype=np.int64)
    offset = 0
    for n in range(N):
        row = tg[offset : offset + tg_len[n]] if tg.ndim == 1 else tg[n, : tg_len[n]]
        offset += tg_len[n]
        padded[n, : tg_len[n]] = row
    L = 2 * S + 1
    ext = np.full((N, L), blank, dtype=np.int64)
    ext[:, 1::2] = padded
    skip = np.zeros((N, L), dtype=bool)  # s may come from s - 2: a label unlike the one before
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    dev, dt = log_probs.device, log_probs.dtype
    ext_t = flow.tensor(ext, device=dev)
    skip_t = flow.tensor(skip, device=dev)
    start = np.full((N, L), False)
    start[:, 0] = True
    start[:, 1] = np.array(tg_len) > 0 if L > 1 else False
    neg = flow.full((N, L), _NEG, dtype=dt, device=dev)
    pad1 = flow.full((N, 1), _NEG, dtype=dt, device=dev)
    pad2 = flow.full((N, 2), _NEG, dtype=dt, device=dev)
    alpha = flow.where(flow.tensor(start, device=dev), log_probs[0].gather(1, ext_t), neg)
    for t in range(1, T):
        prev1 = flow.cat([pad1, alpha[:, :-1]], 1)
        prev2 = flow.where(skip_t, flow.cat([pad2, alpha[:, :-2]], 1), neg)
        step = flow.stack([alpha, prev1, prev2], 0).logsumexp(0) + log_probs[t].gather(1, ext_t)
        active = flow.tensor([t < n for n in in_len], device=dev).unsqueeze(1)
        alpha = flow.where(active, step, alpha)
    last = flow.tensor([[2 * k, max(2 * k - 1, 0)] for k in tg_len], device=dev)
    ends = alpha.gather(1, last)
    same = flow.tensor([k == 0 for k in tg_len], device=dev)
    nll = -flow.where(same, ends[:, 0], ends.logsumexp(1))
    impossible = nll > -_NEG / 2
    inf = flow.full((N,), float("inf"), dtype=dt, device=dev)
    nll = flow.where(impossible, flow.zeros_like(nll) if zero_infinity else inf, nll)
    if reduction == "none":
        return nll[0] if unbatched else nll
    if reduction == "sum":
        return nll.sum()
    div = flow.tensor([max(k, 1) for k in tg_len], dtype=dt, device=dev)
    return (nll / div).mean()


__all__ = ["ctc_loss"]
