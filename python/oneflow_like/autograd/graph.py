"""torch.autograd.graph: the recorded graph's nodes (grad_fn objects) and the hooks on it.

- Node (a tensor's grad_fn): name(), next_functions, metadata, register_hook(fn(grad_inputs,
  grad_outputs)) and register_prehook(fn(grad_outputs)); a hook may return replacements.
- saved_tensors_hooks(pack_hook, unpack_hook): while active (thread-local, nestable, the innermost
  pair wins), every tensor an op or a custom Function saves for backward goes through pack_hook
  when it is saved, and backward gets it back from unpack_hook; save_on_cpu on top of it;
  disable_saved_tensors_hooks(message).
- register_multi_grad_hook(tensors, fn, mode="all" | "any"), get_gradient_edge,
  increment_version.
"""
import threading

from .. import _C

Node = _C.Node


class _EngineHookHandle:
    """What the engine's register_*hook methods return (torch.utils.hooks.RemovableHandle's
    interface): remove() takes the hook out; also a context manager."""

    def __init__(self, remover):
        self._remover = remover

    def remove(self):
        if self._remover is not None:
            self._remover()
            self._remover = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _check_callable(fn, what):
    if not callable(fn):
        raise TypeError(f"{what}: expected a callable hook, got {type(fn).__name__}")


def _node_register_hook(self, fn):
    """Registers fn(grad_inputs, grad_outputs) -> None | new grad_inputs, run after this node
    computed its gradients (grad_inputs: for its forward inputs)."""
    _check_callable(fn, f"{self.name()}.register_hook")
    return _EngineHookHandle(self._register_hook(fn))


def _node_register_prehook(self, fn):
    """Registers fn(grad_outputs) -> None | new grad_outputs, run before this node runs."""
    _check_callable(fn, f"{self.name()}.register_prehook")
    return _EngineHookHandle(self._register_prehook(fn))


Node.register_hook = _node_register_hook
Node.register_prehook = _node_register_prehook


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) -> object runs on every tensor saved for backward while
    it is active; unpack_hook(object) -> tensor gives it back (same shape and dtype) when
    backward needs it. Thread-local and nestable (the innermost pair is used)."""

    def __init__(self, pack_hook, unpack_hook):
        _check_callable(pack_hook, "saved_tensors_hooks")
        _check_callable(unpack_hook, "saved_tensors_hooks")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Tensors saved for backward are kept as CPU copies (pinned with pin_memory=True) and moved
    back to their device when backward needs them."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = tensor.detach().cpu()
            if tensor.device.type == "cpu":
                packed = packed.clone()  # a copy of its own, as torch's pinned buffer
            if _cuda_available():
                packed = packed.pin_memory()
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


def _cuda_available():
    from .. import cuda

    return cuda.is_available()


class disable_saved_tensors_hooks:
    """Context manager / decorator: saved_tensors_hooks raises RuntimeError(error_message)
    while it is active (and entering it raises if a pair is already active)."""

    def __init__(self, error_message):
        self.error_message = str(error_message)

    def __enter__(self):
        self.prev = _C._saved_tensors_hooks_disabled_message()
        _C._set_saved_tensors_hooks_disabled(self.error_message)
        return self

    def __exit__(self, *exc):
        _C._set_saved_tensors_hooks_disabled(self.prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)

        return wrapper


def get_gradient_edge(tensor):
    """(node, input_nr): where a gradient of `tensor` flows (its grad_fn, or its leaf's
    AccumulateGrad node)."""
    return _C._gradient_edge(tensor)


def increment_version(tensor):
    """Marks `tensor` as modified in place: backward through a graph that saved it raises."""
    _C._increment_version(tensor)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Registers fn on several tensors, once per backward pass:
    mode="all": fn(grads) after the gradients of all the tensors this backward computes are
    computed (grads[i] is None for a tensor it does not reach);
    mode="any": fn(grad) with the first of their gradients computed."""
    if mode not in ("all", "any"):
        raise ValueError(
            f"register_multi_grad_hook: expects mode to be one of ('all', 'any'), " f"got {mode!r}"
        )
    _check_callable(fn, "register_multi_grad_hook")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "any":
        state = {"task": None}

        def make_hook(i):
            def hook(grad):
                task = _C._current_graph_task_id()
                with lock:
                    if state["task"] == task:
                        return None
                    state["task"] = task
                fn(grad)
                return None

            return hook

    else:
        nodes = [get_gradient_edge(t)[0] if t.requires_grad else None for t in tensors]
        state = {"task": None, "grads": None, "count": 0, "expected": 0}

        def make_hook(i):
            def hook(grad):
                task = _C._current_graph_task_id()
                call = False
                with lock:
                    if state["task"] != task:
                        state["task"] = task
                        state["grads"] = [None] * len(tensors)
                        state["count"] = 0
                        state["expected"] = sum(
                            1 for n in nodes if n is not None and _C._will_engine_execute_node(n)
                        )
                    state["grads"][i] = grad
                    state["count"] += 1
                    if state["count"] == state["expected"]:
                        grads, state["grads"] = state["grads"], None
                        call = True
                if call:
                    fn(grads)
                return None

            return hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)
