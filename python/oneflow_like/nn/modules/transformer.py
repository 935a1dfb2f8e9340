"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder (torch.nn semantics:
sequence-first unless batch_first=True; bool masks are True where attention is NOT allowed)."""
import copy

import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn import init
from oneflow_like.nn.modules.dropout import Dropout
from oneflow_like.nn.modules.linear import Linear, _empty
from oneflow_like.nn.modules.module import Module, ModuleList, Parameter
from oneflow_like.nn.modules.normalization import LayerNorm


class MultiheadAttention(Module):
    """Packed input projection in_proj_weight (3E, E) / in_proj_bias (3E,), then out_proj."""

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if (
            add_bias_kv
            or add_zero_attn
            or (kdim not in (None, embed_dim))
            or (vdim not in (None, embed_dim))
        ):
            raise NotImplementedError(
                "add_bias_kv, add_zero_attn and kdim/vdim != embed_dim are not supported"
            )
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
            )
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim = embed_dim // num_heads
        self.batch_first = batch_first
        self.in_proj_weight = Parameter(_empty((3 * embed_dim, embed_dim), device, dtype))
        if bias:
            self.in_proj_bias = Parameter(_empty((3 * embed_dim,), device, dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        """Returns (output, weights): weights (B, L, S) averaged over heads (or (B, H, L, S)),
        None when need_weights=False."""
        batched = query.dim() == 3
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        if not self.batch_first:  # (L, B, E) -> (B, L, E)
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        B, L, E = query.shape
        S = key.shape[1]
        H, D = self.num_heads, self.head_dim
        q, k, v = self._project(query, key, value)
        q = q.reshape(B, L, H, D).transpose(1, 2)
        k = k.reshape(B, S, H, D).transpose(1, 2)
        v = v.reshape(B, S, H, D).transpose(1, 2)
        mask = _merge_masks(attn_mask, key_padding_mask, B, H, L, S, q.dtype, q.device)
        p = self.dropout if self.training else 0.0
        if need_weights:
            scores = flow.matmul(q, k.transpose(-2, -1)) * (1.0 / D**0.5)
            if is_causal and mask is None:
                mask = _causal(L, S, q.dtype, q.device)
            if mask is not None:
                scores = scores + mask
            weights = F.softmax(scores, -1)
            out = flow.matmul(F.dropout(weights, p, True) if p > 0 else weights, v)
        else:
            weights = None
            out = F.scaled_dot_product_attention(q, k, v, mask, p, is_causal and mask is None)
        out = self.out_proj(out.transpose(1, 2).reshape(B, L, E))
        if not self.batch_first:
            out = out.transpose(0, 1)
        if weights is not None and average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        return out, weights

    def _project(self, query, key, value):
        w, b = self.in_proj_weight, self.in_proj_bias
        E = self.embed_dim
        if query is key and key is value:  # self-attention: one matmul for q, k and v
            qkv = F.linear(query, w, b)
            return qkv[..., :E], qkv[..., E : 2 * E], qkv[..., 2 * E :]
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E : 2 * E], b[2 * E :])
        return (
            F.linear(query, w[:E], bq),
            F.linear(key, w[E : 2 * E], bk),
            F.linear(value, w[2 * E :], bv),
        )

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


def _to_additive(mask, dtype, device):
    """A bool mask (True = masked) becomes 0 / -inf; a float mask is already additive."""
    if mask.dtype == flow.bool:
        return flow.zeros(*mask.shape, dtype=dtype, device=device).masked_fill(mask, float("-inf"))
    return mask.to(dtype)


def _causal(L, S, dtype, device):
    upper = flow.ones(L, S, dtype=flow.bool, device=device).triu(1)
    return _to_additive(upper, dtype, device)


def _merge_masks(attn_mask, key_padding_mask, B, H, L, S, dtype, device):
    """One additive mask broadcastable to (B, H, L, S), or None."""
    mask = None
    if attn_mask is not None:
        mask = _to_additive(attn_mask, dtype, device)
        if mask.dim() == 3:  # (B*H, L, S)
            mask = mask.reshape(B, H, L, S)
    if key_padding_mask is not None:
        kpm = _to_additive(key_padding_mask, dtype, device).reshape(B, 1, 1, S)
        mask = kpm if mask is None else mask + kpm
    return mask


class TransformerEncoderLayer(Module):
    """Self-attention + feed-forward, each with residual and LayerNorm (post-norm unless norm_first)."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in ("relu", "gelu"):
                raise ValueError(f"activation should be relu/gelu, not {activation}")
            activation = F.relu if activation == "relu" else F.gelu
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer, then an optional final norm."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        for layer in self.layers:
            x = layer(
                x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal
            )
        return x if self.norm is None else self.norm(x)
