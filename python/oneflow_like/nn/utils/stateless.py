"""torch.nn.utils.stateless: functional_call, a module's forward run with other tensors in place
of its parameters and buffers (by their state_dict names); the module is restored afterwards."""
from collections import defaultdict
import contextlib


def _tied_names(module):
    """name -> every name of the same tensor (parameters and buffers shared under two names)."""
    by_id = defaultdict(list)
    for name, t in module.named_parameters(remove_duplicate=False):
        by_id[id(t)].append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        by_id[id(t)].append(name)
    return {n: names for names in by_id.values() for n in names}


def _locate(module, name):
    owner_name, _, attr = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    for table in ("_parameters", "_buffers"):
        if attr in owner.__dict__[table]:
            return owner.__dict__[table], attr
    return None, attr


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights=True, strict=False):
    tensors = dict(tensors)
    if tie_weights:
        tied = _tied_names(module)
        for name in list(tensors):
            for other in tied.get(name, ()):
                if other in tensors and tensors[other] is not tensors[name]:
                    raise ValueError(
                        f"functional_call got multiple values for keys {sorted([name, other])}, "
                        "which are tied. Consider using tie_weights=False"
                    )
                tensors[other] = tensors[name]
    if strict:
        known = set(module.state_dict(keep_vars=True))
        missing = sorted(known - set(tensors))
        unexpected = sorted(set(tensors) - known)
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                msgs.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msgs)
            )
    saved = []
    try:
        for name, t in tensors.items():
            table, attr = _locate(module, name)
            if table is None:
                continue  # not a parameter or buffer of module: ignored unless strict
            saved.append((table, attr, table[attr]))
            table[attr] = t
        yield
    finally:
        for table, attr, old in reversed(saved):
            table[attr] = old


def functional_call(
    module, parameters_and_buffers, args, kwargs=None, *, tie_weights=True, strict=False
):
    """module(*args, **kwargs) computed with parameters_and_buffers ({name: tensor}) standing in
    for the module's own; gradients flow to the given tensors. tie_weights: a tensor given for
    one of several tied names serves them all; strict: every name must match exactly."""
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)
