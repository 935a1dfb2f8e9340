"""Loss modules (torch.nn names and constructor arguments), each a thin wrapper over the
nn.functional loss of the same name. The legacy size_average/reduce flags fold into reduction."""
from oneflow_like.nn import functional as F
from oneflow_like.nn.modules.module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if reduction == "batchmean" and type(self).__name__ == "KLDivLoss":
            self.reduction = reduction
        else:
            self.reduction = F._reduction(type(self).__name__, size_average, reduce, reduction)

    # The functional form and the attributes passed to it by keyword (besides reduction).
    _fn = None
    _options = ()

    def forward(self, *inputs):
        options = {k: getattr(self, k) for k in self._options}
        return type(self)._fn(*inputs, reduction=self.reduction, **options)

    def extra_repr(self):
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    _fn, _options = F.l1_loss, ()


class MSELoss(_Loss):
    _fn, _options = F.mse_loss, ()


class SmoothL1Loss(_Loss):
    _fn, _options = F.smooth_l1_loss, ("beta",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta


class HuberLoss(_Loss):
    _fn, _options = F.huber_loss, ("delta",)

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta


class SoftMarginLoss(_Loss):
    _fn, _options = F.soft_margin_loss, ()


class KLDivLoss(_Loss):
    _fn, _options = F.kl_div, ("log_target",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target


class PoissonNLLLoss(_Loss):
    _fn, _options = F.poisson_nll_loss, ("log_input", "full", "eps")

    def __init__(
        self,
        log_input=True,
        full=False,
        size_average=None,
        eps=1e-8,
        reduce=None,
        reduction="mean",
    ):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps


class GaussianNLLLoss(_Loss):
    _fn, _options = F.gaussian_nll_loss, ("full", "eps")

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps


class BCELoss(_WeightedLoss):
    _fn, _options = F.binary_cross_entropy, ("weight",)


class BCEWithLogitsLoss(_Loss):
    _fn, _options = F.binary_cross_entropy_with_logits, ("weight", "pos_weight")

    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
    ):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)


class NLLLoss(_WeightedLoss):
    _fn, _options = F.nll_loss, ("weight", "ignore_index")

    def __init__(
        self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index


class CrossEntropyLoss(_WeightedLoss):
    _fn, _options = F.cross_entropy, ("weight", "ignore_index", "label_smoothing")

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index=-100,
        reduce=None,
        reduction="mean",
        label_smoothing=0.0,
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing


class MultiLabelSoftMarginLoss(_WeightedLoss):
    _fn, _options = F.multilabel_soft_margin_loss, ("weight",)


class MultiLabelMarginLoss(_Loss):
    _fn, _options = F.multilabel_margin_loss, ()


class MultiMarginLoss(_WeightedLoss):
    _fn, _options = F.multi_margin_loss, ("p", "margin", "weight")

    def __init__(
        self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"
    ):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"[MultiMarginLoss] only p == 1 and p == 2 are supported, got {p}")
        self.p, self.margin = p, margin


class _MarginLoss(_Loss):
    def __init__(self, margin, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    _fn, _options = F.margin_ranking_loss, ("margin",)

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)


class HingeEmbeddingLoss(_MarginLoss):
    _fn, _options = F.hinge_embedding_loss, ("margin",)

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)


class CosineEmbeddingLoss(_MarginLoss):
    _fn, _options = F.cosine_embedding_loss, ("margin",)

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)


class TripletMarginLoss(_MarginLoss):
    _fn, _options = F.triplet_margin_loss, ("margin", "p", "eps", "swap")

    def __init__(
        self,
        margin=1.0,
        p=2.0,
        eps=1e-6,
        swap=False,
        size_average=None,
        reduce=None,
        reduction="mean",
    ):
        super().__init__(margin, size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"[TripletMarginLoss] margin must be > 0, got {margin}")
        self.p, self.eps, self.swap = p, eps, swap


class TripletMarginWithDistanceLoss(_Loss):
    _fn, _options = F.triplet_margin_with_distance_loss, ("distance_function", "margin", "swap")

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"[TripletMarginWithDistanceLoss] margin must be > 0, got {margin}")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (F.ctc_loss): forward(log_probs, targets,
    input_lengths, target_lengths)."""

    _fn = staticmethod(F.ctc_loss)
    _options = ("blank", "zero_infinity")

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def extra_repr(self):
        return ""  # torch's CTCLoss() shows no options


__all__ = [
    "BCELoss",
    "CTCLoss",
    "BCEWithLogitsLoss",
    "CosineEmbeddingLoss",
    "CrossEntropyLoss",
    "GaussianNLLLoss",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "NLLLoss",
    "PoissonNLLLoss",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]


from oneflow_like.nn.modules._paths import late_names  # noqa: E402

__getattr__ = late_names(__name__)
