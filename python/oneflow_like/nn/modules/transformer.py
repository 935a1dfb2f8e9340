"""MultiheadAttention, TransformerEncoder(Layer), TransformerDecoder(Layer) and Transformer (torch.nn semantics:
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
            scores = (q @ k.transpose(-2, -1)) * (1.0 / D**0.5)
            if is_causal and mask is None:
                mask = _causal(L, S, q.dtype, q.device)
            if mask is not None:
                scores = scores + mask
            weights = F.softmax(scores, -1)
            out = (F.dropout(weights, p, True) if p > 0 else weights) @ v
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


class _Layer(Module):
    """What the encoder and decoder layers share: self-attention, the feed-forward block and
    `n_norms` LayerNorms and residual dropouts (torch.nn's attribute names)."""

    _n_norms = 2

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
        n_norms = self._n_norms
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        if n_norms == 3:
            self.multihead_attn = MultiheadAttention(
                d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
            )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
            setattr(self, f"dropout{i}", Dropout(dropout))
        self._ff_dropout = f"dropout{n_norms}"
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        return self.dropout1(
            self._attend(self.self_attn, x, x, attn_mask, key_padding_mask, is_causal)
        )

    @staticmethod
    def _attend(attn, x, mem, attn_mask, key_padding_mask, is_causal):
        return attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]

    def _ff_block(self, x):
        y = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, self._ff_dropout)(y)


class TransformerEncoderLayer(_Layer):
    """Self-attention + feed-forward, each with residual and LayerNorm (post-norm unless norm_first)."""

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer, then an optional final norm. enable_nested_tensor
    and mask_check select torch's inference fast path (nested tensors for padded batches), an
    optimization with the same results: they are kept as attributes, the computation is the
    same dense one."""

    def __init__(
        self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True
    ):
        super().__init__()
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        for layer in self.layers:
            x = layer(
                x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal
            )
        return x if self.norm is None else self.norm(x)


class TransformerDecoderLayer(_Layer):
    """Self-attention, cross-attention over `memory`, feed-forward; each with residual and
    LayerNorm (post-norm unless norm_first), as torch.nn.TransformerDecoderLayer."""

    _n_norms = 3

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=False,
        memory_is_causal=False,
    ):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        return self.dropout2(
            self._attend(self.multihead_attn, x, mem, attn_mask, key_padding_mask, is_causal)
        )


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer, then an optional final norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal,
            )
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need", as torch.nn.Transformer:
    encoder and decoder stacks each ending in a LayerNorm; parameters xavier-initialised."""

    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        custom_encoder=None,
        custom_decoder=None,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        layer_kw = dict(
            dim_feedforward=dim_feedforward,
            dropout=dropout,
            activation=activation,
            layer_norm_eps=layer_norm_eps,
            batch_first=batch_first,
            norm_first=norm_first,
            bias=bias,
            **kw,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer_kw),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer_kw),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        b = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[b] != tgt.shape[b]:
            raise RuntimeError(
                f"the batch number of src ({src.shape[b]}) and tgt ({tgt.shape[b]}) must be equal"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(
                f"the feature number of src ({src.shape[-1]}) and tgt ({tgt.shape[-1]}) must be "
                f"equal to d_model ({self.d_model})"
            )
        memory = self.encoder(
            src,
            mask=src_mask,
            src_key_padding_mask=src_key_padding_mask,
            is_causal=bool(src_is_causal),
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """(sz, sz) float mask: -inf above the diagonal, 0 elsewhere."""
        return _causal(sz, sz, dtype or flow.get_default_dtype(), device)


def _activation(activation):
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation should be relu/gelu, not {activation}")
        return F.relu if activation == "relu" else F.gelu
    return activation
