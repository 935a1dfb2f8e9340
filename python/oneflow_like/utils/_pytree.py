"""torch.utils._pytree: nested containers (tuples, lists, dicts, OrderedDicts, defaultdicts,
namedtuples, and types registered with register_pytree_node) flattened into their leaves and a
TreeSpec that rebuilds them, and the tree_map family on top."""
import collections
from typing import Any, NamedTuple

__all__ = [
    "PyTree", "TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten",
    "tree_leaves", "tree_structure", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_all", "tree_any", "tree_all_only", "tree_any_only", "tree_is_leaf", "SUPPORTED_NODES",
]  # fmt: skip

PyTree = Any


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Any  # node -> (children, context)
    unflatten_fn: Any  # (children, context) -> node


SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, **_):
    """Makes `cls` a container: flatten_fn(node) -> (children, context), unflatten_fn(children,
    context) -> node."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"[register_pytree_node] {cls} is already registered as a pytree node")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


_register_pytree_node = register_pytree_node


def _is_namedtuple_instance(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                     lambda c, keys: dict(zip(keys, c)))  # fmt: skip
register_pytree_node(
    collections.OrderedDict,
    lambda d: (list(d.values()), list(d.keys())),
    lambda c, keys: collections.OrderedDict(zip(keys, c)),
)
register_pytree_node(
    collections.defaultdict,
    lambda d: (list(d.values()), (d.default_factory, list(d.keys()))),
    lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)),
)
register_pytree_node(
    collections.deque,
    lambda d: (list(d), d.maxlen),
    lambda c, maxlen: collections.deque(c, maxlen=maxlen),
)


def _node_type(x):
    if _is_namedtuple_instance(x):
        return "namedtuple"
    return type(x) if type(x) in SUPPORTED_NODES else None


class TreeSpec:
    """The structure of a pytree: its node type, context (dict keys, ...) and children's specs."""

    def __init__(self, type, context, children_specs):
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_leaves = sum(s.num_leaves for s in self.children_specs)
        self.num_nodes = 1 + sum(s.num_nodes for s in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        return (
            isinstance(other, TreeSpec)
            and not other.is_leaf()
            and self.type == other.type
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    def __repr__(self, indent=0):
        name = self.type.__name__ if isinstance(self.type, type) else str(self.type)
        kids = ", ".join(repr(s) for s in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{kids}])"

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves, self.num_nodes = 1, 1

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and other.is_leaf()

    def __repr__(self, indent=0):
        return "*"


def tree_is_leaf(tree, is_leaf=None):
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) is None


def tree_flatten(tree, is_leaf=None):
    """(leaves in order, TreeSpec)."""
    leaves = []

    def walk(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return LeafSpec()
        kind = _node_type(node)
        if kind == "namedtuple":
            children, context, kind = list(node), type(node), "namedtuple"
        else:
            children, context = SUPPORTED_NODES[kind].flatten_fn(node)
        return TreeSpec(kind, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The pytree of `treespec`'s structure holding `leaves`."""
    leaves = list(leaves)
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"[tree_unflatten] expected a TreeSpec, got {type(treespec).__name__}")
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"[tree_unflatten] treespec.unflatten(leaves): `leaves` has length {len(leaves)} but "
            f"the spec refers to a pytree that holds {treespec.num_leaves} items ({treespec})."
        )
    it = iter(leaves)

    def build(spec):
        if spec.is_leaf():
            return next(it)
        children = [build(s) for s in spec.children_specs]
        if spec.type == "namedtuple":
            return spec.context(*children)
        return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)

    return build(treespec)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """func applied to every leaf (with the matching leaves of `rests`, same structure)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_leaves_like(r, spec, is_leaf) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def _leaves_like(tree, spec, is_leaf):
    leaves, other = tree_flatten(tree, is_leaf)
    if other != spec:
        raise ValueError(f"[tree_map] the trees have different structures: {spec} vs {other}")
    return leaves


def tree_map_(func, tree, *rests, is_leaf=None):
    """func on every leaf for its side effects; returns `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_leaves_like(r, spec, is_leaf) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _only(types, func):
    types = types if isinstance(types, tuple) else (types,)
    return lambda x: func(x) if isinstance(x, types) else x


def tree_map_only(types, func, tree, is_leaf=None):
    """func on the leaves that are instances of `types`; other leaves stay."""
    return tree_map(_only(types, func), tree, is_leaf=is_leaf)


def tree_map_only_(types, func, tree, is_leaf=None):
    return tree_map_(_only(types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all_only(types, pred, tree, is_leaf=None):
    types = types if isinstance(types, tuple) else (types,)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


def tree_any_only(types, pred, tree, is_leaf=None):
    types = types if isinstance(types, tuple) else (types,)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))
