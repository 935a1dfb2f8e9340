"""torch.nn.modules.utils: the argument helpers custom layers import (`from torch.nn.modules.utils
import _pair`): _single/_pair/_triple/_quadruple turn an int into a tuple (an iterable is kept),
_reverse_repeat_tuple gives F.pad's order, _list_with_default fills None from the input size."""
import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Each element of t repeated n times, in reverse order: (1, 2) with n=2 -> (2, 2, 1, 1)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """out_size with None entries taken from the trailing dims of `defaults` (a size)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips `prefix` from every key of state_dict that has it, in place (and from the keys of
    its `_metadata`, if any): loads a checkpoint saved from a DataParallel/DDP wrapper
    ("module.") into the bare model."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix) :]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        bare = prefix.rstrip(".")
        for key in [k for k in meta if k and (k == bare or k.startswith(prefix))]:
            meta["" if key == bare else key[len(prefix) :]] = meta.pop(key)
