"""Recurrent layers with torch.nn's names, parameters and semantics: RNN (tanh/relu), LSTM (with
proj_size), GRU, any number of layers, bidirectional, dropout between layers, batch_first,
unbatched inputs and PackedSequence inputs; and the cells RNNCell, LSTMCell, GRUCell.

The input projection of a whole layer is one GEMM over every time step (x W_ih^T + b_ih for all
steps at once); each step then runs the recurrent GEMM and, for LSTM and GRU in f32/f64, the gate
arithmetic as one fused kernel with its own backward (_C._fused_lstm_cell / _fused_gru_cell; other
dtypes compose ordinary ops). ONEFLOW_LIKE_RNN=composed (or `_USE_FUSED_CELLS = False`) selects the
composed ops everywhere, to compare. Packed sequences shrink the batch step by step
(rows sorted by decreasing length), so a finished sequence keeps its last state.

The whole network can also run as one op, `_C._rnn_seq` (rnn.def's rnn_seq, PyTorch's _cudnn_rnn /
mkldnn_rnn): on cuda through cuDNN (f16/f32/f64, when flow.backends.cudnn.enabled), on the CPU
for f32 as a C++ loop of GEMMs and fused cells (kernels/cpu/rnn.cc) with its own
backpropagation through time. As in PyTorch, that op has no double backward (its backward op is
not differentiable); f64 on the CPU keeps the step loop above, which has one.
ONEFLOW_LIKE_RNN=cells (or `_USE_SEQ_OP = False`) keeps the step loop everywhere.
"""
import math
import os

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like.nn import functional as F
from oneflow_like.nn import init
from oneflow_like.nn.modules.linear import _empty
from oneflow_like.nn.modules.module import Module, Parameter
from oneflow_like.nn.utils.rnn import PackedSequence

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_USE_FUSED_CELLS = os.environ.get("ONEFLOW_LIKE_RNN", "") != "composed"
_USE_SEQ_OP = os.environ.get("ONEFLOW_LIKE_RNN", "") not in ("composed", "cells")


def _use_seq_op(x):
    """Whether the whole network runs as one rnn_seq op (cuDNN on cuda, the C++ loop for f32 on
    the CPU), as PyTorch picks _cudnn_rnn / mkldnn_rnn."""
    if not _USE_SEQ_OP:
        return False
    if x.device.type == "cuda":
        from oneflow_like.backends import cudnn

        # cuDNN's RNNs take f16/f32/f64 (autocast turns f32 into f16 there); not bf16.
        return cudnn.enabled and x.dtype in (flow.float16, flow.float32, flow.float64)
    return x.device.type == "cpu" and x.dtype == flow.float32


def _fused(*ts):
    return _USE_FUSED_CELLS and all(t.dtype in (flow.float32, flow.float64) for t in ts)


def _rnn_step(mode, xw, h, w_hh, b_hh):
    """One plain RNN step: xw = x W_ih^T + b_ih (precomputed)."""
    pre = xw + F.linear(h, w_hh, b_hh)
    return flow.tanh(pre) if mode == "RNN_TANH" else flow.relu(pre)


def _lstm_step(xw, h, c, w_hh, b_hh, w_hr):
    gates = xw + F.linear(h, w_hh, b_hh)
    if _fused(gates, c):
        h, c = _C._fused_lstm_cell(gates, c)
    else:
        i, f, g, o = gates.chunk(4, -1)
        c = flow.sigmoid(f) * c + flow.sigmoid(i) * flow.tanh(g)
        h = flow.sigmoid(o) * flow.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(xw, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    if _fused(xw, gh, h):
        return _C._fused_gru_cell(xw, gh, h)
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = flow.sigmoid(xr + hr)
    z = flow.sigmoid(xz + hz)
    n = flow.tanh(xn + r * hn)
    return n + z * (h - n)  # (1 - z) * n + z * h


class RNNBase(Module):
    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"dropout should be a number in range [0, 1], got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(
                f"hidden_size ({hidden_size}) and num_layers ({num_layers}) must be positive"
            )
        if proj_size < 0 or (proj_size and mode != "LSTM"):
            raise ValueError(f"proj_size ({proj_size}) must be >= 0 and only LSTM supports it")
        if proj_size >= hidden_size and proj_size:
            raise ValueError(f"proj_size ({proj_size}) has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else real_hidden * dirs
                shapes = [
                    ("weight_ih", (gate_size, in_size)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                for name, shape in shapes:
                    setattr(self, name + sfx, Parameter(_empty(shape, device, dtype)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def all_weights(self):
        return [
            [getattr(self, n) for n in self._flat_weights_names if n.endswith(sfx)]
            for sfx in self._suffixes()
        ]

    def _suffixes(self):
        dirs = 2 if self.bidirectional else 1
        return [
            f"_l{k}" + ("_reverse" if d else "")
            for k in range(self.num_layers)
            for d in range(dirs)
        ]

    def _weights(self, sfx):
        get = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    # ---- forward ------------------------------------------------------------------------

    def forward(self, input, hx=None):
        is_lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        real_hidden = self.proj_size or self.hidden_size
        if packed:
            x, batch_sizes = input.data, [int(b) for b in input.batch_sizes.tolist()]
            B, unbatched = batch_sizes[0], False
            if x.dim() != 2:
                raise ValueError(f"{type(self).__name__}: packed data must be 2-D, got {x.dim()}-D")
        else:
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{type(self).__name__}: expected a 2-D (unbatched) or 3-D input, "
                    f"got {input.dim()}-D of shape {tuple(input.shape)}"
                )
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else input
            if self.batch_first and not unbatched:
                x = x.transpose(0, 1)
            T, B = x.shape[0], x.shape[1]
            batch_sizes = [B] * T
        feat = x.shape[-1]
        if feat != self.input_size:
            raise ValueError(
                f"{type(self).__name__}: input.size(-1) must be equal to input_size. "
                f"Expected {self.input_size}, got {feat}"
            )
        h0, c0 = self._initial_state(hx, is_lstm, unbatched, B, real_hidden, x)
        if packed and input.sorted_indices is not None:
            h0 = h0.index_select(1, input.sorted_indices)
            if c0 is not None:
                c0 = c0.index_select(1, input.sorted_indices)
        if _use_seq_op(x):
            layer_in, h_n, c_n = self._run_seq(x, h0, c0, batch_sizes if packed else [])
        else:
            layer_in, h_n, c_n = self._run_steps(x, h0, c0, batch_sizes, packed)
        if packed:
            if input.unsorted_indices is not None:
                h_n = h_n.index_select(1, input.unsorted_indices)
                if c_n is not None:
                    c_n = c_n.index_select(1, input.unsorted_indices)
            output = PackedSequence(
                layer_in, input.batch_sizes, input.sorted_indices, input.unsorted_indices
            )
        else:
            output = layer_in
            if unbatched:
                output, h_n = output.squeeze(1), h_n.squeeze(1)
                c_n = None if c_n is None else c_n.squeeze(1)
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if is_lstm else h_n)

    def _run_seq(self, x, h0, c0, batch_sizes):
        """The whole network as one rnn_seq op. Returns (output, h_n, c_n or None)."""
        weights = [getattr(self, n) for n in self._flat_weights_names]
        ins = [x.contiguous(), h0.contiguous()]
        if c0 is not None:
            ins.append(c0.contiguous())
        ins += weights
        # train: whether a backward may follow (the op then allows one); dropout only in training.
        need_grad = flow.is_grad_enabled() and any(t.requires_grad for t in ins)
        outs = _C._rnn_seq(
            ins,
            mode=self.mode,
            hidden_size=self.hidden_size,
            proj_size=self.proj_size,
            num_layers=self.num_layers,
            bidirectional=self.bidirectional,
            has_bias=self.bias,
            dropout=self.dropout if self.training else 0.0,
            train=bool(need_grad or self.training),
            batch_sizes=list(batch_sizes),
        )
        return outs[0], outs[1], (outs[2] if c0 is not None else None)

    def _run_steps(self, x, h0, c0, batch_sizes, packed):
        """The step loop (one GEMM per layer for the inputs, then per step the recurrent GEMM
        and the cell). Returns (output, h_n, c_n or None)."""
        is_lstm = self.mode == "LSTM"
        dirs = 2 if self.bidirectional else 1
        # Time-major step inputs: padded (T, B, F) or packed rows split by batch size.
        layer_in = x
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                idx = layer * dirs + d
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(
                    f"_l{layer}" + ("_reverse" if d else "")
                )
                xw = F.linear(layer_in, w_ih, b_ih)  # every step's input projection at once
                out, h, c = self._run_direction(
                    xw,
                    batch_sizes,
                    packed,
                    bool(d),
                    h0[idx],
                    None if c0 is None else c0[idx],
                    w_hh,
                    b_hh,
                    w_hr,
                )
                outs.append(out)
                hs.append(h)
                cs.append(c)
            layer_in = outs[0] if dirs == 1 else flow.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = flow.stack(hs, 0)
        c_n = flow.stack(cs, 0) if is_lstm else None
        return layer_in, h_n, c_n

    def _initial_state(self, hx, is_lstm, unbatched, B, real_hidden, x):
        dirs = 2 if self.bidirectional else 1
        n = self.num_layers * dirs
        name = type(self).__name__
        if hx is None:
            kw = dict(dtype=x.dtype, device=x.device)
            h0 = flow.zeros(n, B, real_hidden, **kw)
            return h0, (flow.zeros(n, B, self.hidden_size, **kw) if is_lstm else None)
        if is_lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{name}: hx must be a tuple (h_0, c_0)")
            h0, c0 = hx
        else:
            h0, c0 = hx, None
        if unbatched:
            h0 = h0.unsqueeze(1)
            c0 = None if c0 is None else c0.unsqueeze(1)
        for t, size, what in [(h0, real_hidden, "h_0"), (c0, self.hidden_size, "c_0")]:
            if t is not None and tuple(t.shape) != (n, B, size):
                raise ValueError(
                    f"{name}: expected {what} of shape {(n, B, size)}, got {tuple(t.shape)}"
                )
        return h0, c0

    def _run_direction(self, xw, batch_sizes, packed, reverse, h, c, w_hh, b_hh, w_hr):
        """Runs one direction of one layer over the precomputed input projections `xw`.
        Returns (outputs in xw's layout, final h, final c)."""
        T = len(batch_sizes)
        if packed:
            offsets = [0]
            for bs in batch_sizes:
                offsets.append(offsets[-1] + bs)
        outs = [None] * T
        for s in range(T):
            t = T - 1 - s if reverse else s
            bs = batch_sizes[t]
            step = xw[offsets[t] : offsets[t + 1]] if packed else xw[t]
            full = bs == h.shape[0]
            h_in = h if full else h[:bs]
            if self.mode == "LSTM":
                c_in = c if full else c[:bs]
                h_new, c_new = _lstm_step(step, h_in, c_in, w_hh, b_hh, w_hr)
                c = c_new if full else flow.cat([c_new, c[bs:]], 0)
            elif self.mode == "GRU":
                h_new = _gru_step(step, h_in, w_hh, b_hh)
            else:
                h_new = _rnn_step(self.mode, step, h_in, w_hh, b_hh)
            h = h_new if full else flow.cat([h_new, h[bs:]], 0)
            outs[t] = h_new
        out = flow.cat(outs, 0) if packed else flow.stack(outs, 0)
        return out, h, c


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if len(args) > 3:  # RNN(input, hidden, layers, nonlinearity, ...) positional form
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_empty((num_chunks * hidden_size, input_size), device, dtype))
        self.weight_hh = Parameter(_empty((num_chunks * hidden_size, hidden_size), device, dtype))
        if bias:
            self.bias_ih = Parameter(_empty((num_chunks * hidden_size,), device, dtype))
            self.bias_hh = Parameter(_empty((num_chunks * hidden_size,), device, dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        stdv = 1.0 / math.sqrt(hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        nl = getattr(self, "nonlinearity", "tanh")
        return s + (f", nonlinearity={nl}" if nl != "tanh" else "")

    def _prepare(self, input, hx, n_states):
        """(batched input, states or zeros, unbatched?) with shape checks."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: expected a 1-D or 2-D input, got {input.dim()}-D")
        if input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: input has {input.shape[-1]} features, expected {self.input_size}"
            )
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            z = flow.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            states = [z] * n_states
        else:
            states = list(hx) if n_states > 1 else [hx]
            states = [s.unsqueeze(0) if unbatched else s for s in states]
            for s in states:
                if tuple(s.shape) != (x.shape[0], self.hidden_size):
                    raise ValueError(
                        f"{name}: hidden state of shape {tuple(s.shape)}, expected "
                        f"{(x.shape[0], self.hidden_size)}"
                    )
        return x, states, unbatched


class RNNCell(RNNCellBase):
    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rnn_step(
            mode, F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh
        )
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        xw = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(xw, h, c, self.weight_hh, self.bias_hh, None)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h
