"""Learning-rate schedulers. Each scheduler computes the lr of epoch e in closed form from the
groups' initial lr (`_lr_at`), so schedulers compose by delegation (SequentialLR) rather than by
chaining in-place updates. step() advances one epoch (or one batch, for OneCycleLR)."""
import math
import warnings

from oneflow_like.optim.optimizer import Optimizer


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for g in optimizer.param_groups:
            if last_epoch == -1:
                g.setdefault("initial_lr", g["lr"])
            elif "initial_lr" not in g:
                raise KeyError("param 'initial_lr' is not specified in param_groups when resuming")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _lr_at(self, epoch):
        """The list of group lrs at `epoch` (>= 0)."""
        raise NotImplementedError

    def get_last_lr(self):
        return self._last_lr

    def get_lr(self):
        return self._lr_at(max(self.last_epoch, 0))

    def step(self, epoch=None):
        if epoch is not None:
            warnings.warn("passing an epoch to step() is deprecated", UserWarning)
            self.last_epoch = epoch
        else:
            self.last_epoch += 1
        self._apply(self.get_lr())

    def _apply(self, lrs):
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr
        self._last_lr = list(lrs)

    def state_dict(self):
        return {
            k: v
            for k, v in self.__dict__.items()
            if k != "optimizer" and not callable(v) and k not in self._unsaved
        }

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    _unsaved = ("lr_lambdas", "_schedulers")


_LRScheduler = LRScheduler


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch); one lambda, or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = (
            list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        )
        if len(self.lr_lambdas) != n:
            raise ValueError(f"expected {n} lr_lambdas, got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        return [b * f(e) for b, f in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        return [b * self.gamma ** (e // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        k = sum(1 for m in self.milestones if m <= e)
        return [b * self.gamma**k for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        return [b * self.gamma**e for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        c = (1.0 + math.cos(math.pi * e / self.T_max)) / 2.0
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]


class LinearLR(LRScheduler):
    """The lr factor moves linearly from start_factor to end_factor over total_iters epochs
    (a linear warm-up with the defaults)."""

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        if not (0 < start_factor <= 1 and 0 <= end_factor <= 1):
            raise ValueError("start_factor must be in (0, 1] and end_factor in [0, 1]")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        f = (
            self.start_factor
            + (self.end_factor - self.start_factor) * min(e, self.total_iters) / self.total_iters
        )
        return [b * f for b in self.base_lrs]


class ConstantLR(LRScheduler):
    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        f = self.factor if e < self.total_iters else 1.0
        return [b * f for b in self.base_lrs]


class SequentialLR(LRScheduler):
    """Runs schedulers[i] from milestones[i-1] on, each seeing epochs counted from its start:
    e.g. SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=5), CosineAnnealingLR(opt, 95)], [5])."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR expects {len(schedulers) - 1} milestones, got {len(milestones)}"
            )
        for s in schedulers:
            if s.optimizer is not optimizer:
                raise ValueError("SequentialLR: every scheduler must belong to the same optimizer")
        self._schedulers = list(schedulers)
        self.milestones = list(milestones)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, e):
        i = sum(1 for m in self.milestones if m <= e)
        start = self.milestones[i - 1] if i > 0 else 0
        return self._schedulers[i]._lr_at(e - start)


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: lr rises from max_lr/div_factor to max_lr over
    pct_start of total_steps, then anneals to initial_lr/final_div_factor (cos or linear);
    momentum (or Adam's beta1) cycles inversely between max_momentum and base_momentum."""

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(
                    "You must define either total_steps OR (epochs AND steps_per_epoch)"
                )
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"total_steps must be positive, got {total_steps}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy}")
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        n = len(optimizer.param_groups)
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * n
        for g, m in zip(optimizer.param_groups, max_lrs):
            if last_epoch == -1:
                g["initial_lr"] = m / div_factor
                g["max_lr"] = m
                g["min_lr"] = g["initial_lr"] / final_div_factor
        end = float(pct_start * total_steps) - 1
        if three_phase:
            self._phases = [
                (end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (
                    float(2 * pct_start * total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = optimizer.defaults
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError(
                    "optimizer must support momentum or betas with cycle_momentum enabled"
                )
            self._use_betas = "betas" in defaults
            bms = (
                list(base_momentum)
                if isinstance(base_momentum, (list, tuple))
                else [base_momentum] * n
            )
            mms = (
                list(max_momentum)
                if isinstance(max_momentum, (list, tuple))
                else [max_momentum] * n
            )
            if last_epoch == -1:
                for g, bm, mm in zip(optimizer.param_groups, bms, mms):
                    g["base_momentum"], g["max_momentum"] = bm, mm
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _values_at(self, e):
        """[(lr, momentum or None)] per group."""
        if e > self.total_steps:
            raise ValueError(
                f"Tried to step {e} times. The specified number of total steps is {self.total_steps}"
            )
        out = []
        for g in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._phases):
                if e <= end_step or i == len(self._phases) - 1:
                    pct = (
                        (e - start_step) / (end_step - start_step) if end_step > start_step else 1.0
                    )
                    lr = self._anneal(g[lr0], g[lr1], pct)
                    mom = self._anneal(g[m0], g[m1], pct) if self.cycle_momentum else None
                    break
                start_step = end_step
            out.append((lr, mom))
        return out

    def _lr_at(self, e):
        return [lr for lr, _ in self._values_at(e)]

    def step(self, epoch=None):
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        values = self._values_at(self.last_epoch)
        if self.cycle_momentum:
            for g, (_, mom) in zip(self.optimizer.param_groups, values):
                if self._use_betas:
                    g["betas"] = (mom,) + tuple(g["betas"][1:])
                else:
                    g["momentum"] = mom
        self._apply([lr for lr, _ in values])
