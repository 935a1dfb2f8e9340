"""nn.utils.rnn: PackedSequence and its helpers, as torch.nn.utils.rnn defines them.

A PackedSequence holds the time steps of a batch of variable-length sequences one after the other,
each step holding only the sequences still running (rows sorted by decreasing length):
`data` (sum of lengths, *), `batch_sizes` (steps,) int64 on the CPU, and the permutation between
the caller's batch order and the sorted one.
"""
from collections import namedtuple

import numpy as np

import oneflow_like as flow

__all__ = [
    "invert_permutation",
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "pack_sequence",
    "unpad_sequence",
    "unpack_sequence",
]


class PackedSequence(
    namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])
):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        move = lambda t: None if t is None else t.to(dev)  # noqa: E731
        return type(self)(
            data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices)
        )

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def double(self):
        return self.to(dtype=flow.float64)

    def float(self):
        return self.to(dtype=flow.float32)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """torch.nn.utils.rnn.invert_permutation: the permutation that undoes `permutation` (None
    stays None): out[permutation[i]] = i."""
    if permutation is None:
        return None
    inv = np.empty(len(permutation), dtype=np.int64)
    inv[permutation.cpu().numpy()] = np.arange(len(permutation), dtype=np.int64)
    return flow.tensor(inv, device=permutation.device)


def _lengths(lengths):
    if isinstance(lengths, flow.Tensor):
        if lengths.dim() != 1:
            raise ValueError(f"lengths must be a 1-D tensor, got shape {tuple(lengths.shape)}")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of `lengths`."""
    lens = _lengths(lengths)
    B = input.shape[0 if batch_first else 1]
    if len(lens) != B:
        raise ValueError(f"pack_padded_sequence: {len(lens)} lengths for a batch of {B}")
    if any(n <= 0 for n in lens):
        raise RuntimeError(
            "pack_padded_sequence: every length must be positive (no empty sequences), got "
            f"{lens}"
        )
    T = input.shape[1 if batch_first else 0]
    if max(lens) > T:
        raise ValueError(f"pack_padded_sequence: a length ({max(lens)}) exceeds the {T} steps")
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError(
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                f"`enforce_sorted` is True (got {lens}); pass enforce_sorted=False to sort inside"
            )
        order = None
    else:
        order = sorted(range(B), key=lambda i: -lens[i])  # stable: equal lengths keep their order
    x = input.transpose(0, 1) if batch_first else input
    if order is not None:
        sorted_indices = flow.tensor(order, dtype=flow.int64, device=input.device)
        x = x.index_select(1, sorted_indices)
        lens = [lens[i] for i in order]
    else:
        sorted_indices = None
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = flow.cat([x[t, :bs] for t, bs in enumerate(batch_sizes)], 0)
    return PackedSequence(data, flow.tensor(batch_sizes, dtype=flow.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded batch, lengths int64 tensor)."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    T, B = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                f"pad_packed_sequence: total_length ({total_length}) is less than the longest "
                f"sequence ({T})"
            )
    else:
        total_length = T
    steps, off = [], 0
    for bs in batch_sizes:
        step = data[off : off + bs]
        off += bs
        if bs < B:
            pad = flow.full(
                (B - bs,) + tuple(step.shape[1:]),
                padding_value,
                dtype=data.dtype,
                device=data.device,
            )
            step = flow.cat([step, pad], 0)
        steps.append(step)
    for _ in range(total_length - T):
        steps.append(
            flow.full(
                (B,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device
            )
        )
    out = flow.stack(steps, 0)
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(B)]
    lengths = flow.tensor(lengths, dtype=flow.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors (L_i, *) into (max L, B, *) (or (B, max L, *)), padding with padding_value."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    if isinstance(sequences, flow.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    T = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        n = T - s.shape[0]
        if n:
            pad = flow.full(
                (n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device
            )
            s = flow.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return flow.stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of (L_i, *) tensors."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :n] for i, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
