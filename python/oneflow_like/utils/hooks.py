"""torch.utils.hooks: RemovableHandle (what register_*_hook methods return) over any dict of
hooks, removable by `handle.remove()` or by leaving a `with` block; warn_if_has_hooks."""
import itertools
import warnings
import weakref


class RemovableHandle:
    """A handle on `hooks_dict[id]`; `extra_dict` (one dict or a list) is cleaned up with it."""

    next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)
        if extra_dict is None:
            extra = []
        elif isinstance(extra_dict, list):
            extra = extra_dict
        else:
            extra = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None and self.id in d:
            del d[self.id]
        for ref in self.extra_dict_ref:
            e = ref()
            if e is not None and self.id in e:
                del e[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def warn_if_has_hooks(tensor):
    """Warns when a tensor with backward hooks is serialized (the hooks are not saved)."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks:
        warnings.warn(
            f"backward hooks were registered on a tensor being serialized; they are not saved: "
            f"{list(hooks)}"
        )
