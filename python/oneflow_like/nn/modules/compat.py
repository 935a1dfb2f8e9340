"""torch.nn layers of issue 19: AdaptiveLogSoftmaxWithLoss, FractionalMaxPool2d/3d,
CrossMapLRN2d, LazyInstanceNorm1d/2d/3d, NLLLoss2d and the deprecated Container."""
import warnings
from collections import namedtuple

import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn.modules import lazy, misc
from oneflow_like.nn.modules.container import ModuleList, Sequential
from oneflow_like.nn.modules.linear import Linear
from oneflow_like.nn.modules.loss import NLLLoss
from oneflow_like.nn.modules.module import Module

_module_to = Module.to


def _to(self, *args, memory_format=None, **kwargs):
    """Module.to(..., memory_format=torch.channels_last): accepted; parameters keep their
    values (and row-major strides: this runtime has no channels-last storage)."""
    if memory_format is not None and not isinstance(memory_format, flow.memory_format):
        raise TypeError(
            f"[Module.to] memory_format must be a torch.memory_format, got "
            f"{type(memory_format).__name__}"
        )
    if not args and not kwargs:
        return self
    return _module_to(self, *args, **kwargs)


_to.__doc__ = (_module_to.__doc__ or "") + "\n" + _to.__doc__
Module.to = _to

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al. 2016): the `cutoffs[0]` most frequent
    classes and one entry per cluster live in the head; cluster i (classes cutoffs[i] to
    cutoffs[i+1]) is a two-layer projection of width in_features // div_value ** (i + 1).
    forward(input, target) -> (output: the target log-probabilities, loss: their negated mean)."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        cutoffs = list(cutoffs)
        if (
            cutoffs != sorted(cutoffs)
            or not cutoffs
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "[AdaptiveLogSoftmaxWithLoss] cutoffs should be a sequence of unique, positive "
                f"integers sorted in an increasing order, where each value is between 1 and "
                f"n_classes-1 = {n_classes - 1}; got {cutoffs}"
            )
        kw = dict(device=device, dtype=dtype)
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(Linear(in_features, hsz, bias=False, **kw),
                           Linear(hsz, osz, bias=False, **kw))  # fmt: skip
            )

    def reset_parameters(self):
        self.head.reset_parameters()
        for seq in self.tail:
            for lin in seq:
                lin.reset_parameters()

    def _check(self, input, who):
        if input.dim() not in (1, 2) or input.shape[-1] != self.in_features:
            raise RuntimeError(
                f"[AdaptiveLogSoftmaxWithLoss.{who}] input should be (N, {self.in_features}) or "
                f"({self.in_features},), got {list(input.shape)}"
            )

    def forward(self, input, target):
        self._check(input, "forward")
        unbatched = input.dim() == 1
        if unbatched != (target.dim() == 0) or (
            not unbatched and input.shape[0] != target.shape[0]
        ):
            raise RuntimeError(
                f"[AdaptiveLogSoftmaxWithLoss] input {list(input.shape)} and target "
                f"{list(target.shape)} should have the same batch size"
            )
        if unbatched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        n = target.shape[0]
        t = target.to("cpu").tolist()
        if n and (min(t) < 0 or max(t) >= self.n_classes):
            raise RuntimeError(
                f"[AdaptiveLogSoftmaxWithLoss] Target values should be in [0, "
                f"{self.n_classes - 1}], but values in range [{min(t)}, {max(t)}] were found."
            )
        # Head column of each row: its class (shortlist) or its cluster's entry.
        head_col = list(t)
        output = flow.zeros(n, dtype=input.dtype, device=input.device)
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            rows = [r for r, c in enumerate(t) if low <= c < high]
            if not rows:
                continue
            for r in rows:
                head_col[r] = self.shortlist_size + i
            rows_t = flow.tensor(rows, dtype=flow.int64, device=input.device)
            rel = flow.tensor([t[r] - low for r in rows], dtype=flow.int64, device=input.device)
            logp = F.log_softmax(self.tail[i](input.index_select(0, rows_t)), dim=1)
            output = output.index_add(0, rows_t, logp.gather(1, rel.unsqueeze(1)).squeeze(1))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        cols = flow.tensor(head_col, dtype=flow.int64, device=input.device).unsqueeze(1)
        output = output + head_logprob.gather(1, cols).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output.squeeze(0) if unbatched else output, loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return flow.cat(parts, dim=1)

    def log_prob(self, input):
        """(N, n_classes) log-probabilities of every class."""
        self._check(input, "log_prob")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        out = self._full_log_prob(x, self.head(x))
        return out.squeeze(0) if unbatched else out

    def predict(self, input):
        """The most likely class of each row (argmax of log_prob)."""
        return self.log_prob(input).argmax(dim=-1)


class _FractionalMaxPool(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):  # fmt: skip
        super().__init__()
        name = f"FractionalMaxPool{self._nd}d"
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratios = output_ratio if isinstance(output_ratio, (list, tuple)) else [output_ratio]
            if not all(0 < r < 1 for r in ratios):
                raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got {ratios})")
        self.kernel_size, self.output_size = kernel_size, output_size
        self.output_ratio, self.return_indices = output_ratio, return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples,
        )  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPool):
    """Fractional max pooling over (H, W) of (N, C, H, W) or (C, H, W) inputs."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """Fractional max pooling over (T, H, W) of (N, C, T, H, W) or (C, T, H, W) inputs."""

    _nd = 3


class CrossMapLRN2d(Module):
    """The legacy cross-channel LRN of (N, C, H, W) inputs: x * (k + alpha / size * s)^-beta,
    s the sum of squares over torch's legacy window of channels (it keeps channel 0 in every
    window once it entered, as torch's running sum does): the values torch gives. The gradient
    is the exact derivative of that (torch's hand-written legacy backward is not: it fails
    torch.autograd.gradcheck)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def _window(self, channels):
        """(C, C) 0/1 matrix: row c marks the channels summed for channel c."""
        pre_pad = int((self.size - 1) / 2 + 1)
        rows, cur = [], set(range(min(pre_pad, channels)))
        rows.append(sorted(cur))
        for c in range(1, channels):
            if c < channels - pre_pad + 1:
                cur.add(c + pre_pad - 1)
            if c > pre_pad:
                cur.discard(c - pre_pad)
            rows.append(sorted(cur))
        m = [[1.0 if j in set(r) else 0.0 for j in range(channels)] for r in rows]
        return m

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(
                f"[CrossMapLRN2d] expected a 4-d (N, C, H, W) input, got {list(input.shape)}"
            )
        m = flow.tensor(self._window(input.shape[1]), dtype=input.dtype, device=input.device)
        sq = (input * input).permute(0, 2, 3, 1)  # (N, H, W, C)
        s = flow.matmul(sq, m.t()).permute(0, 3, 1, 2)
        return input * (s * (self.alpha / self.size) + self.k).pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _lazy_instance_norm(target):
    base = lazy._lazy_batch_norm(target)

    class LazyInstanceNorm(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if not self.track_running_stats:
                self.running_mean = self.running_var = None

        def has_uninitialized_params(self):
            # affine=False, track_running_stats=False has no placeholder: the first call still
            # reads num_features from the input (torch would keep num_features = 0).
            return True

        def _size_from_input(self, input):
            # An unbatched input has one dim less: its channels are dim 0.
            return input.shape[0 if input.dim() == target._n + 1 else 1]

    LazyInstanceNorm.__name__ = LazyInstanceNorm.__qualname__ = "Lazy" + target.__name__
    LazyInstanceNorm.__doc__ = (
        f"{target.__name__} whose num_features is the channel dim of the first input "
        f"(affine=True and track_running_stats=True by default, as torch's lazy form)."
    )
    return LazyInstanceNorm


LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_instance_norm(c) for c in (misc.InstanceNorm1d, misc.InstanceNorm2d, misc.InstanceNorm3d)
)


class NLLLoss2d(NLLLoss):
    """Deprecated torch name of NLLLoss (which takes (N, C, H, W) inputs directly)."""


class Container(Module):
    """Deprecated torch.nn.Container(**modules): a Module holding the given submodules."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented "
                      "in nn.Module. Subclass that instead.")  # fmt: skip
        for key, value in kwargs.items():
            self.add_module(key, value)


__all__ = [
    "AdaptiveLogSoftmaxWithLoss",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "CrossMapLRN2d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "NLLLoss2d",
    "Container",
]
