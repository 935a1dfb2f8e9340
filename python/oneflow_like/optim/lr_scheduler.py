"""Learning-rate schedulers. Each scheduler states the lr of epoch e in closed form from the
groups' initial lr (`_lr_at`); SequentialLR composes them by delegation. step() advances one
epoch (or one batch, for OneCycleLR/CyclicLR) and, like PyTorch's chainable schedulers, scales the
group's current lr by the schedule's own ratio lr(e) / lr(e - 1): alone, a scheduler gives its
closed form exactly; several stepped on one optimizer (ChainedScheduler, or a warm-up next to a
decay) multiply. Schedules that set absolute values in PyTorch (LambdaLR, OneCycleLR, CyclicLR,
CosineAnnealingWarmRestarts) have _chainable = False. ReduceLROnPlateau reacts to a metric."""
import math
import warnings

from oneflow_like.optim.optimizer import Optimizer


def _verbose(verbose):
    """torch 2.x's handling of the deprecated `verbose` argument: passing it warns; True still
    prints each lr change (the messages torch printed)."""
    if verbose == "deprecated":
        return False
    warnings.warn(
        "The verbose parameter is deprecated. Please use get_last_lr() to access the learning "
        "rate.",
        UserWarning,
        stacklevel=3,
    )
    return bool(verbose)


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1, verbose="deprecated"):
        self.verbose = _verbose(verbose)
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

    _chainable = True

    def step(self, epoch=None):
        if epoch is not None:
            warnings.warn("passing an epoch to step() is deprecated", UserWarning)
            self.last_epoch = epoch
            self._apply(self._lr_at(max(epoch, 0)))
            return
        self.last_epoch += 1
        new = self.get_lr()
        if self._chainable:
            old = self._lr_at(self.last_epoch - 1) if self.last_epoch > 0 else self.base_lrs
            groups = self.optimizer.param_groups
            new = [self._chain(g["lr"], o, n) for g, o, n in zip(groups, old, new)]
        self._apply(new)

    def _chain(self, current, old, new):
        """The next lr given the group's current one. current == old: nothing else changed the
        lr, so the closed form; else this schedule's step ratio applied to current."""
        if current == old or old == 0:
            return new
        return current * (new / old)

    def _apply(self, lrs):
        for i, (g, lr) in enumerate(zip(self.optimizer.param_groups, lrs)):
            g["lr"] = lr
            self.print_lr(self.verbose, i, lr)
        self._last_lr = list(lrs)

    def print_lr(self, is_verbose, group, lr, epoch=None):
        """Prints the group's new lr when is_verbose (torch's message)."""
        if is_verbose:
            if epoch is None:
                print(f"Adjusting learning rate of group {group} to {lr:.4e}.")
            else:
                e = f"{epoch:.2f}" if isinstance(epoch, float) else f"{epoch:5d}"
                print(f"Epoch {e}: adjusting learning rate of group {group} to {lr:.4e}.")

    def state_dict(self):
        """The scheduler's attributes but the optimizer and callables; those of the schedulers
        it composes (SequentialLR, ChainedScheduler) nested under "_schedulers"."""
        sd = {
            k: v
            for k, v in self.__dict__.items()
            if k != "optimizer" and not callable(v) and k not in self._unsaved
        }
        if "_schedulers" in self.__dict__:
            sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        for s, sd in zip(self.__dict__.get("_schedulers", []), state_dict.pop("_schedulers", [])):
            s.load_state_dict(sd)
        self.__dict__.update(state_dict)

    _unsaved = ("lr_lambdas", "_schedulers")


_LRScheduler = LRScheduler


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch); one lambda, or one per group. Absolute, as in
    PyTorch: it overrides what other schedulers did to the lr."""

    _chainable = False

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose="deprecated"):
        self.lr_lambdas = _per_group("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        return [b * f(e) for b, f in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose="deprecated"):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        return [b * self.gamma ** (e // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose="deprecated"):
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        k = sum(1 for m in self.milestones if m <= e)
        return [b * self.gamma**k for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1, verbose="deprecated"):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        return [b * self.gamma**e for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1, verbose="deprecated"):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        c = (1.0 + math.cos(math.pi * e / self.T_max)) / 2.0
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]

    def _chain(self, current, old, new):
        # The ratio applies to the distance above eta_min, as in PyTorch's recursive form.
        if current == old or old == self.eta_min:
            return new
        return self.eta_min + (current - self.eta_min) * (
            (new - self.eta_min) / (old - self.eta_min)
        )


class LinearLR(LRScheduler):
    """The lr factor moves linearly from start_factor to end_factor over total_iters epochs
    (a linear warm-up with the defaults)."""

    def __init__(
        self,
        optimizer,
        start_factor=1.0 / 3,
        end_factor=1.0,
        total_iters=5,
        last_epoch=-1,
        verbose="deprecated",
    ):
        if not (0 < start_factor <= 1 and 0 <= end_factor <= 1):
            raise ValueError("start_factor must be in (0, 1] and end_factor in [0, 1]")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        f = (
            self.start_factor
            + (self.end_factor - self.start_factor) * min(e, self.total_iters) / self.total_iters
        )
        return [b * f for b in self.base_lrs]


class ConstantLR(LRScheduler):
    def __init__(
        self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose="deprecated"
    ):
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        f = self.factor if e < self.total_iters else 1.0
        return [b * f for b in self.base_lrs]


class SequentialLR(LRScheduler):
    """Runs schedulers[i] from milestones[i-1] on, each seeing epochs counted from its start:
    e.g. SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=5), CosineAnnealingLR(opt, 95)], [5])."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose="deprecated"):
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR expects {len(schedulers) - 1} milestones, got {len(milestones)}"
            )
        for s in schedulers:
            if s.optimizer is not optimizer:
                raise ValueError("SequentialLR: every scheduler must belong to the same optimizer")
        self._schedulers = list(schedulers)
        self.milestones = list(milestones)
        if last_epoch == -1:  # undo the lr changes the schedulers made when they were built
            for g in optimizer.param_groups:
                g["lr"] = g.get("initial_lr", g["lr"])
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        i = sum(1 for m in self.milestones if m <= e)
        start = self.milestones[i - 1] if i > 0 else 0
        return self._schedulers[i]._lr_at(e - start)


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: lr rises from max_lr/div_factor to max_lr over
    pct_start of total_steps, then anneals to initial_lr/final_div_factor (cos or linear);
    momentum (or Adam's beta1) cycles inversely between max_momentum and base_momentum."""

    _chainable = False

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
        verbose="deprecated",
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
        max_lrs = _per_group("OneCycleLR", optimizer, max_lr)
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
            self._use_betas = _momentum_kind("OneCycleLR", optimizer)
            bms = _per_group("OneCycleLR", optimizer, base_momentum)
            mms = _per_group("OneCycleLR", optimizer, max_momentum)
            if last_epoch == -1:
                for g, bm, mm in zip(optimizer.param_groups, bms, mms):
                    g["base_momentum"], g["max_momentum"] = bm, mm
        super().__init__(optimizer, last_epoch, verbose)

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
            _set_momentum(self.optimizer, [mom for _, mom in values], self._use_betas)
        self._apply([lr for lr, _ in values])


def _per_group(name, optimizer, value):
    """One value per param group: a list/tuple of that length, or one value for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"[{name}] expected {n} values, got {len(value)}")
        return list(value)
    return [value] * n


def _set_momentum(optimizer, momenta, use_betas):
    for g, m in zip(optimizer.param_groups, momenta):
        if use_betas:
            g["betas"] = (m,) + tuple(g["betas"][1:])
        else:
            g["momentum"] = m


def _momentum_kind(name, optimizer):
    """True where the optimizer's momentum is Adam's beta1; ValueError where it has none."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            f"[{name}] optimizer must support momentum or beta1 with `cycle_momentum` enabled"
        )
    return "betas" in optimizer.defaults


class MultiplicativeLR(LRScheduler):
    """lr(e) = lr(e - 1) * lr_lambda(e) for e >= 1 (one lambda, or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose="deprecated"):
        self.lr_lambdas = _per_group("MultiplicativeLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        out = []
        for b, f in zip(self.base_lrs, self.lr_lambdas):
            for k in range(1, e + 1):
                b = b * f(k)
            out.append(b)
        return out

    def step(self, epoch=None):
        if epoch is not None or self.last_epoch < 0:
            return super().step(epoch)
        self.last_epoch += 1
        groups = self.optimizer.param_groups
        self._apply([g["lr"] * f(self.last_epoch) for g, f in zip(groups, self.lr_lambdas)])


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose="deprecated"):
        if total_iters <= 0:
            raise ValueError(f"[PolynomialLR] total_iters must be positive, got {total_iters}")
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch, verbose)

    def _lr_at(self, e):
        f = (1.0 - min(e, self.total_iters) / self.total_iters) ** self.power
        return [b * f for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from initial_lr to eta_min over T_i epochs, then a restart with
    T_i *= T_mult (T_0 first). step(epoch) takes fractional epochs (e.g. epoch + i / iters)."""

    _chainable = False

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1, verbose="deprecated"):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(
                f"[CosineAnnealingWarmRestarts] expected positive integer T_0, got {T_0}"
            )
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(
                f"[CosineAnnealingWarmRestarts] expected integer T_mult >= 1, got {T_mult}"
            )
        self.T_0, self.T_mult, self.eta_min = T_0, T_mult, eta_min
        self.T_i, self.T_cur = T_0, last_epoch
        super().__init__(optimizer, last_epoch, verbose)

    def _cycle(self, e):
        """(T_cur, T_i) at epoch e >= 0 (a float)."""
        if e < self.T_0:
            return e, self.T_0
        if self.T_mult == 1:
            return e % self.T_0, self.T_0
        n = int(math.log(e / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
        return (
            e - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1),
            self.T_0 * self.T_mult**n,
        )

    def _lr_at(self, e):
        t_cur, t_i = self._cycle(e)
        c = (1.0 + math.cos(math.pi * t_cur / t_i)) / 2.0
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]

    def step(self, epoch=None):
        if epoch is None:
            epoch = self.last_epoch + 1
        elif epoch < 0:
            raise ValueError(
                f"[CosineAnnealingWarmRestarts] expected non-negative epoch, got {epoch}"
            )
        self.last_epoch = math.floor(epoch)
        self.T_cur, self.T_i = self._cycle(epoch)
        self._apply(self._lr_at(epoch))


class CyclicLR(LRScheduler):
    """Cyclical learning rates, stepped once per batch: lr goes base_lr -> max_lr over
    step_size_up iterations and back over step_size_down; the amplitude is scaled by
    scale_fn (mode "triangular": 1, "triangular2": halved each cycle, "exp_range": gamma**it).
    With cycle_momentum, momentum (or beta1) moves inversely between max and base."""

    _chainable = False

    def __init__(
        self,
        optimizer,
        base_lr,
        max_lr,
        step_size_up=2000,
        step_size_down=None,
        mode="triangular",
        gamma=1.0,
        scale_fn=None,
        scale_mode="cycle",
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch=-1,
        verbose="deprecated",
    ):
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(
                f"[CyclicLR] mode must be one of 'triangular', 'triangular2', "
                f"'exp_range' (or give scale_fn), got {mode!r}"
            )
        base_lrs = _per_group("CyclicLR", optimizer, base_lr)
        if last_epoch == -1:
            for g, lr in zip(optimizer.param_groups, base_lrs):
                g["lr"] = lr
        self.max_lrs = _per_group("CyclicLR", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        self.mode, self.gamma = mode, gamma
        if scale_fn is None:
            self._scale_fn = {
                "triangular": lambda x: 1.0,
                "triangular2": lambda x: 1.0 / (2.0 ** (x - 1)),
                "exp_range": lambda x: gamma**x,
            }[mode]
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        else:
            self._scale_fn, self.scale_mode = scale_fn, scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._use_betas = _momentum_kind("CyclicLR", optimizer)
            self.base_momentums = _per_group("CyclicLR", optimizer, base_momentum)
            self.max_momentums = _per_group("CyclicLR", optimizer, max_momentum)
            if last_epoch == -1:
                _set_momentum(optimizer, self.max_momentums, self._use_betas)
        self._cyclic_base = base_lrs
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def _phase(self, e):
        """(fraction of the amplitude, scale) at iteration e."""
        cycle = math.floor(1 + e / self.total_size)
        x = 1.0 + e / self.total_size - cycle
        if x <= self.step_ratio:
            frac = x / self.step_ratio
        else:
            frac = (x - 1) / (self.step_ratio - 1)
        return frac, self._scale_fn(cycle if self.scale_mode == "cycle" else e)

    def _lr_at(self, e):
        frac, scale = self._phase(e)
        return [b + (m - b) * frac * scale for b, m in zip(self._cyclic_base, self.max_lrs)]

    def step(self, epoch=None):
        super().step(epoch)
        if self.cycle_momentum:
            frac, scale = self._phase(self.last_epoch)
            momenta = [
                mx - (mx - mn) * frac * scale
                for mn, mx in zip(self.base_momentums, self.max_momentums)
            ]
            _set_momentum(self.optimizer, momenta, self._use_betas)

    _unsaved = LRScheduler._unsaved + ("_scale_fn",)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in `schedulers` at each step(); their lr changes multiply."""

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("[ChainedScheduler] expects at least one scheduler")
        optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError(
                    f"[ChainedScheduler] expects all schedulers to belong to the same optimizer, "
                    f"but scheduler {i} ({type(s).__name__}) does not"
                )
        self.optimizer = optimizer
        self._schedulers = schedulers
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the lr by `factor` once the metric passed to step(metrics) has not improved
    (by threshold, relative or absolute) for more than `patience` epochs; then waits `cooldown`
    epochs. lr never goes below min_lr, and a change smaller than eps is not made."""

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
        verbose="deprecated",
    ):
        self.verbose = _verbose(verbose)
        if factor >= 1.0:
            raise ValueError(f"[ReduceLROnPlateau] factor should be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"[ReduceLROnPlateau] mode {mode!r} is unknown (use 'min' or 'max')")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"[ReduceLROnPlateau] threshold mode {threshold_mode!r} is unknown "
                "(use 'rel' or 'abs')"
            )
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.min_lrs = _per_group("ReduceLROnPlateau", optimizer, min_lr)
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs, self.cooldown_counter, self.last_epoch = 0, 0, 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def _is_better(self, a):
        if self.mode == "min":
            bar = (
                self.best * (1 - self.threshold)
                if self.threshold_mode == "rel"
                else self.best - self.threshold
            )
            return a < bar
        bar = (
            self.best * (1 + self.threshold)
            if self.threshold_mode == "rel"
            else self.best + self.threshold
        )
        return a > bar

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is not None:
            warnings.warn("passing an epoch to step() is deprecated", UserWarning)
            self.last_epoch = epoch
        else:
            self.last_epoch += 1
        if self._is_better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for i, (g, floor) in enumerate(zip(self.optimizer.param_groups, self.min_lrs)):
                new = max(g["lr"] * self.factor, floor)
                if g["lr"] - new > self.eps:
                    g["lr"] = new
                    if self.verbose:
                        print(
                            f"Epoch {self.last_epoch:5d}: reducing learning rate of group {i} "
                            f"to {new:.4e}."
                        )
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0


__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
