"""Optimizer base: param groups (each a dict with "params" and hyper-parameters), per-parameter
state, zero_grad, and a state_dict that names parameters by their index across groups."""
from collections import OrderedDict, defaultdict
import copy
import functools

import oneflow_like as flow


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _check_hparams(name, **values):
    """Each value (a number, or a tuple of numbers) must be >= 0; ValueError naming it otherwise."""
    for k, v in values.items():
        for x in v if isinstance(v, tuple) else (v,):
            if not x >= 0.0:
                raise ValueError(f"[{name}] Invalid {k} value: {v}")


def _check_betas(name, betas):
    """Adam-family (beta1, beta2): each in [0, 1); ValueError naming the optimizer otherwise."""
    if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
        raise ValueError(f"[{name}] Invalid beta parameters: {betas}")


def _flags(name, foreach=None, capturable=False, differentiable=False, fused=None):
    """PyTorch's implementation switches. foreach/capturable/fused choose among kernels that give
    the same result; they are kept in the groups (as in PyTorch) and change nothing here."""
    if differentiable:
        raise NotImplementedError(
            f"[{name}] differentiable=True is not supported: optimizer steps run under no_grad"
        )
    return dict(foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)


def _with_step_hooks(step):
    """Wraps a subclass's step() to run the registered pre/post hooks once per outer call."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        d = self.__dict__
        if d.get("_in_step") or not (d.get("_step_pre_hooks") or d.get("_step_post_hooks")):
            return step(self, *args, **kwargs)
        for hook in list(d.get("_step_pre_hooks", {}).values()):
            res = hook(self, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError(
                        f"optimizer step pre-hook must return None or (args, kwargs), got {res!r}"
                    )
                args, kwargs = res
        d["_in_step"] = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            d["_in_step"] = False
        for hook in list(d.get("_step_post_hooks", {}).values()):
            hook(self, args, kwargs)
        return out

    return wrapper


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (args, kwargs), before each step(); returns
        a handle whose remove() unregisters it."""
        return self._add_step_hook("_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs), after each step(); returns a removable handle."""
        return self._add_step_hook("_step_post_hooks", hook)

    def _add_step_hook(self, table_name, hook):
        from oneflow_like.nn.modules.module import _RemovableHandle

        table = self.__dict__.setdefault(table_name, OrderedDict())
        handle = _RemovableHandle(table)
        table[handle.id] = hook
        return handle

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, flow.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got a Tensor"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, flow.Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, flow.Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {k}"
                )
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def _lazy_state(self, p, **init):
        """The state of p; on first use filled from init (name -> a callable making the value)."""
        state = self.state[p]
        if not state:
            for k, make in init.items():
                state[k] = make()
        return state

    def zero_grad(self, set_to_none=True):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    with flow.no_grad():
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    # Whether step() takes sparse COO gradients (nn.Embedding(sparse=True)); the others raise
    # torch's error.
    _sparse_grads = False

    def _grads(self, group):
        """(param, grad) for the group's params that have a grad; grad negated when maximize."""
        maximize = group.get("maximize", False)
        for p in group["params"]:
            g = p.grad
            if g is not None:
                if g.is_sparse and not self._sparse_grads:
                    name = type(self).__name__
                    hint = ", please consider SparseAdam instead" if name == "Adam" else ""
                    raise RuntimeError(f"{name} does not support sparse gradients{hint}")
                yield p, (-g if maximize else g)

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with flow.enable_grad():
            return closure()

    # ---- state dict -------------------------------------------------------------------------

    def state_dict(self):
        """{"state": {index: {name: tensor or number}}, "param_groups": [{..., "params": [index]}]};
        tensors are the live state (copy before mutating)."""
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {
            index[id(p)]: s
            for g in self.param_groups
            for p in g["params"]
            for s in [self.state.get(p)]
            if s
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(groups)} parameter groups, "
                f"the optimizer has {len(self.param_groups)}"
            )
        for i, (mine, saved) in enumerate(zip(self.param_groups, groups)):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group {i} of size "
                    f"{len(saved['params'])} that doesn't match the size of the "
                    f"optimizer's group ({len(mine['params'])})"
                )
        by_index = {}
        for mine, saved in zip(self.param_groups, groups):
            for p, idx in zip(mine["params"], saved["params"]):
                by_index[idx] = p
        saved_state = state_dict["state"]
        self.state = defaultdict(dict)
        for idx, s in saved_state.items():
            p = by_index.get(int(idx))
            if p is None:
                continue
            self.state[p] = {k: _to_like(v, p) for k, v in s.items()}
        for mine, saved in zip(self.param_groups, groups):
            for k, v in saved.items():
                if k != "params":
                    mine[k] = copy.deepcopy(v)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)


_FLOAT_DTYPES = tuple(getattr(flow, n) for n in ("float16", "bfloat16", "float32", "float64"))


def _to_like(v, p):
    """State tensors follow their parameter's device; floating ones its dtype too ("step" stays).
    Lists and tuples of them (L-BFGS's history) are copied element by element."""
    if isinstance(v, (list, tuple)):
        return type(v)(_to_like(x, p) for x in v)
    if not isinstance(v, flow.Tensor):
        return v
    with flow.no_grad():
        if v.dim() > 0 and v.dtype != p.dtype and v.dtype in _FLOAT_DTYPES:
            v = v.to(p.dtype)
        return v.to(p.device).clone()
