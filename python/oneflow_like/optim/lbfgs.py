"""L-BFGS (torch.optim.LBFGS): a quasi-Newton method over all parameters flattened into one
vector. step(closure) runs up to max_iter iterations, each: the two-loop recursion over the last
history_size (s, y) pairs gives a direction d; the step length is lr (the first iteration
scaled by 1 / |g|_1), or with line_search_fn="strong_wolfe" the length that satisfies the strong
Wolfe conditions (Nocedal & Wright, Algorithms 3.5 and 3.6, with cubic interpolation).
The closure re-evaluates the model and returns the loss; it must call backward().
"""
import math

import oneflow_like as flow
from oneflow_like.optim.optimizer import Optimizer


def _dot(a, b):
    return float((a * b).sum())


def _abs_max(v):
    return float(v.abs().max())


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds (the
    interval between the points by default); the bounds' midpoint when the cubic has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3.0 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        t = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2.0 * d2))
    else:
        t = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2.0 * d2))
    return min(max(t, lo), hi)


class _Point:
    """A trial step t along d with its loss f, flat gradient g and directional derivative gtd."""

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Finds t with f(t) <= f + c1 t gtd and |f'(t)| <= -c2 gtd. evaluate(t) -> (loss, flat grad)
    at x + t d. Returns (loss, flat grad, t, evaluations)."""
    d_norm = _abs_max(d)
    start = _Point(0.0, f, g, gtd)

    def at(t):
        f_t, g_t = evaluate(t)
        return _Point(t, f_t, g_t, _dot(g_t, d))

    new, prev, evals, it = at(t), start, 1, 0
    bracket, done = None, False
    # Bracketing phase: grow t until an interval is known to hold an acceptable step.
    while it < max_ls:
        if new.f > f + c1 * new.t * gtd or (it > 1 and new.f >= prev.f) or new.gtd >= 0:
            bracket = [prev, new]
            break
        if abs(new.gtd) <= -c2 * gtd:
            bracket, done = [new], True
            break
        lo, hi = new.t + 0.01 * (new.t - prev.t), new.t * 10.0
        t_next = _cubic_minimum(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd, (lo, hi))
        prev, new = new, at(t_next)
        evals, it = evals + 1, it + 1
    if bracket is None:
        bracket = [start, new]
    # Zoom phase: shrink the bracket; `low` is the end with the lower loss.
    low = 0 if bracket[0].f <= bracket[-1].f else 1
    insufficient = False
    while not done and it < max_ls and len(bracket) == 2:
        a, b = bracket
        if abs(b.t - a.t) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        t_min, t_max = min(a.t, b.t), max(a.t, b.t)
        eps = 0.1 * (t_max - t_min)
        # A trial too close to an end makes little progress: move it inside by eps.
        if min(t_max - t, t - t_min) < eps:
            if insufficient or t >= t_max or t <= t_min:
                t = t_max - eps if abs(t - t_max) < abs(t - t_min) else t_min + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        new = at(t)
        evals, it = evals + 1, it + 1
        high = 1 - low
        if new.f > f + c1 * t * gtd or new.f >= bracket[low].f:
            bracket[high] = new
            low = 0 if bracket[0].f <= bracket[1].f else 1
        else:
            if abs(new.gtd) <= -c2 * gtd:
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
    best = bracket[low] if len(bracket) == 2 else bracket[0]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
    ):
        if not lr >= 0.0:
            raise ValueError(f"[LBFGS] Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(
                f"[LBFGS] line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}"
            )
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("[LBFGS] doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the parameters as one flat vector ----------------------------------------------------

    def _flat_grad(self):
        parts = [
            (
                p.grad.to_dense().reshape(-1)  # a sparse grad (Embedding(sparse=True)) as torch
                if p.grad is not None
                else flow.zeros(p.numel(), dtype=p.dtype)
            )
            for p in self._params
        ]
        return flow.cat(parts, 0)

    def _add_to_params(self, step_size, direction):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset : offset + n].reshape(tuple(p.shape)), alpha=step_size)
            offset += n

    def _evaluate_at(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are put back to x afterwards."""
        self._add_to_params(t, d)
        with flow.enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, g

    def step(self, closure):
        if closure is None:
            raise RuntimeError("[LBFGS] step() requires a closure that re-evaluates the model")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with flow.enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        with flow.no_grad():
            g = self._flat_grad()
            if _abs_max(g) <= tol_grad:
                return orig_loss
            d, t = state.get("d"), state.get("t")
            old_dirs, old_stps = state.get("old_dirs", []), state.get("old_stps", [])
            ro, h_diag = state.get("ro", []), state.get("H_diag", 1.0)
            prev_g, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d, old_dirs, old_stps, ro, h_diag = -g, [], [], [], 1.0
                else:
                    y, s = g - prev_g, d * t
                    ys = _dot(y, s)
                    if ys > 1e-10:  # keep the pair only where the curvature is positive
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                        old_dirs.append(y), old_stps.append(s), ro.append(1.0 / ys)
                        h_diag = ys / _dot(y, y)
                    d = self._two_loop(g, old_dirs, old_stps, ro, h_diag)
                prev_g, prev_loss = g.clone(), loss
                t = min(1.0, 1.0 / float(g.abs().sum())) * lr if state["n_iter"] == 1 else lr
                gtd = _dot(g, d)
                if gtd > -tol_change:  # not a descent direction
                    break
                if line_search is not None:
                    x0 = [p.clone() for p in self._params]
                    loss, g, t, ls_evals = _strong_wolfe(
                        lambda t_: self._evaluate_at(closure, x0, t_, d), t, d, loss, g, gtd
                    )
                    self._add_to_params(t, d)
                else:
                    self._add_to_params(t, d)
                    ls_evals = 0
                    if n_iter != max_iter:
                        with flow.enable_grad():
                            loss = float(closure())
                        g = self._flat_grad()
                        ls_evals = 1
                evals += ls_evals
                state["func_evals"] += ls_evals
                if (
                    n_iter == max_iter
                    or evals >= max_eval
                    or _abs_max(g) <= tol_grad
                    or _abs_max(d) * abs(t) <= tol_change
                    or abs(loss - prev_loss) < tol_change
                ):
                    break
            state.update(
                d=d,
                t=t,
                old_dirs=old_dirs,
                old_stps=old_stps,
                ro=ro,
                H_diag=h_diag,
                prev_flat_grad=prev_g,
                prev_loss=prev_loss,
            )
        return orig_loss

    @staticmethod
    def _two_loop(g, old_dirs, old_stps, ro, h_diag):
        """-H g for the L-BFGS inverse-Hessian estimate H of the stored (s, y) pairs."""
        q = -g
        alphas = [0.0] * len(old_dirs)
        for i in reversed(range(len(old_dirs))):
            alphas[i] = _dot(old_stps[i], q) * ro[i]
            q = q - old_dirs[i] * alphas[i]
        r = q * h_diag
        for i in range(len(old_dirs)):
            beta = _dot(old_dirs[i], r) * ro[i]
            r = r + old_stps[i] * (alphas[i] - beta)
        return r
