"""torch.nn.attention.bias: causal masks for q_len != kv_len, usable as
F.scaled_dot_product_attention's attn_mask.

causal_upper_left(L, S): query i attends to keys j <= i (the mask's diagonal starts at the
upper-left corner). causal_lower_right(L, S): query i attends to keys j <= i + S - L (the
diagonal ends at the lower-right corner: the last query sees every key, as when the queries are
the last L of S tokens). A row with no allowed key gives zeros, as PyTorch's math backend.
"""
import enum

from oneflow_like import _C

__all__ = ["CausalVariant", "CausalBias", "causal_upper_left", "causal_lower_right"]


class CausalVariant(enum.IntEnum):
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal attention mask described by (variant, seq_len_q, seq_len_kv); materialize()
    gives the boolean mask (True where attention is allowed)."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise TypeError(
                f"[CausalBias] variant must be a CausalVariant, got {type(variant).__name__}"
            )
        for name, v in (("seq_len_q", seq_len_q), ("seq_len_kv", seq_len_kv)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"[CausalBias] {name} must be a non-negative int, got {v!r}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv

    def materialize(self, device=None):
        """The (seq_len_q, seq_len_kv) bool mask, True where query i may attend to key j."""
        L, S = self.seq_len_q, self.seq_len_kv
        ones = _C.ones(L, S, dtype=_C.bool, device=device or "cpu")
        if self.variant == CausalVariant.UPPER_LEFT:
            return ones.tril(0)
        return ones.tril(S - L)

    def _check(self, query, key):
        L, S = query.shape[-2], key.shape[-2]
        if (L, S) != (self.seq_len_q, self.seq_len_kv):
            raise ValueError(
                f"[scaled_dot_product_attention] CausalBias was made for seq_len_q="
                f"{self.seq_len_q}, seq_len_kv={self.seq_len_kv} but query {tuple(query.shape)}"
                f" and key {tuple(key.shape)} have {L} and {S}"
            )

    def __repr__(self):
        return (
            f"CausalBias(variant={self.variant.name}, seq_len_q={self.seq_len_q}, "
            f"seq_len_kv={self.seq_len_kv})"
        )


def causal_upper_left(*size):
    """torch.nn.attention.bias.causal_upper_left(seq_len_q, seq_len_kv)."""
    if len(size) != 2:
        raise AssertionError(
            f"[causal_upper_left] takes two sizes (seq_len_q, seq_len_kv), got {len(size)}"
        )
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size):
    """torch.nn.attention.bias.causal_lower_right(seq_len_q, seq_len_kv)."""
    if len(size) != 2:
        raise AssertionError(
            f"[causal_lower_right] takes two sizes (seq_len_q, seq_len_kv), got {len(size)}"
        )
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
