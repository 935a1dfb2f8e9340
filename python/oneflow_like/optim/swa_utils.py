"""torch.optim.swa_utils: stochastic weight averaging and exponential moving averages of a model's
weights (AveragedModel), the SWA learning-rate schedule (SWALR) and recomputing batch-norm
statistics for averaged weights (update_bn)."""
import copy
import itertools
import math

import oneflow_like as flow
from oneflow_like.nn.modules.module import Module
from oneflow_like.nn.modules.normalization import _BatchNorm
from oneflow_like.optim.lr_scheduler import LRScheduler

__all__ = [
    "AveragedModel",
    "SWALR",
    "update_bn",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
]


def get_swa_avg_fn():
    """The running mean: averaged + (current - averaged) / (num_averaged + 1)."""

    def swa_update(averaged, current, num_averaged):
        return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average: decay * averaged + (1 - decay) * current."""

    def ema_update(averaged, current, num_averaged):
        return decay * averaged + (1 - decay) * current

    return ema_update


def _multi(avg_fn):
    def update(averaged_list, current_list, num_averaged):
        for avg, cur in zip(averaged_list, current_list):
            avg.copy_(avg_fn(avg, cur, num_averaged))

    return update


def get_swa_multi_avg_fn():
    """get_swa_avg_fn over lists of tensors, updated in place."""
    return _multi(get_swa_avg_fn())


def get_ema_multi_avg_fn(decay=0.999):
    """get_ema_avg_fn over lists of tensors, updated in place."""
    return _multi(get_ema_avg_fn(decay))


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers=True) are the average of
    the values passed to update_parameters: the equal-weight running mean by default, or
    avg_fn(averaged, current, num_averaged) per tensor / multi_avg_fn(averaged_list,
    current_list, num_averaged) in place. Without use_buffers the buffers follow the model's."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("[AveragedModel] pass only one of avg_fn and multi_avg_fn")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", flow.tensor(0, dtype=flow.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tracked(self, model):
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model):
        averaged = self._tracked(self.module)
        current = self._tracked(model)
        if len(averaged) != len(current):
            raise ValueError(
                f"[AveragedModel.update_parameters] the model has {len(current)} tensors to "
                f"average, the averaged copy {len(averaged)}"
            )
        n = int(self.n_averaged.item())
        with flow.no_grad():
            pairs = [(a.detach(), c.detach().to(a.device)) for a, c in zip(averaged, current)]
            if n == 0:
                for a, c in pairs:
                    a.copy_(c)
            elif self.multi_avg_fn is not None:
                count = self.n_averaged.to(pairs[0][0].device) if pairs else self.n_averaged
                self.multi_avg_fn([a for a, _ in pairs], [c for _, c in pairs], count)
            else:
                fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for a, c in pairs:
                    count = self.n_averaged.to(a.device)
                    a.copy_(fn(a, c, count))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs steps ('cos' or 'linear'), then
    holds it. Each step infers the lr the annealing started from out of the current one, so it
    composes with an lr changed by hand as PyTorch's does."""

    _chainable = False

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        groups = optimizer.param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError(
                    f"[SWALR] swa_lr must have one value per param group: {len(groups)} groups, "
                    f"{len(swa_lr)} values"
                )
            lrs = list(swa_lr)
        else:
            lrs = [swa_lr] * len(groups)
        for lr, g in zip(lrs, groups):
            g["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _linear_anneal(t):
        return t

    def _progress(self, step):
        return self.anneal_func(min(1.0, max(0.0, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        step = self.last_epoch  # steps taken, counting the constructor's
        if self.anneal_epochs == 0:
            step = max(1, step)
        before, now = self._progress(step - 1), self._progress(step)
        lrs = []
        for g in self.optimizer.param_groups:
            # The lr the annealing started from: current = swa * before + start * (1 - before).
            start = g["swa_lr"] if before == 1 else (g["lr"] - before * g["swa_lr"]) / (1 - before)
            lrs.append(g["swa_lr"] * now + start * (1 - now))
        return lrs

    def step(self, epoch=None):
        if epoch is not None:
            raise TypeError("[SWALR] step() takes no epoch")
        super().step()


def update_bn(loader, model, device=None):
    """Recomputes every batch norm's running statistics of `model` with one pass over `loader`
    (a cumulative average over its batches; a batch that is a list or tuple gives its first
    element as the input), then restores the modules' momentum and the model's mode."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and module.running_mean is not None:
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with flow.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)
