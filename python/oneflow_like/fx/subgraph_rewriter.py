"""torch.fx.subgraph_rewriter: find every occurrence of a pattern graph in a GraphModule and
replace it with a replacement graph (`replace_pattern(gm, pattern, replacement)`).

The pattern and the replacement are callables (traced with symbolic_trace) or Graphs/GraphModules
with the same placeholders. Matching starts from the nodes that produce the pattern's outputs
and walks the pattern backwards: a pattern placeholder matches any value (the same value each
time it is used), any other pattern node matches a node of the same op and target whose
arguments match in turn (constants must be equal). A match is used only when the nodes it
covers, apart from the ones producing its outputs, have no users outside it, and it shares no
node with an earlier match; then the replacement is inlined before the match's last node with
its placeholders bound to what they matched, the outputs' users are pointed at the replacement's
outputs, and the covered nodes are removed. Returns the matches, as torch's."""
from collections import namedtuple

from .graph import Graph
from .node import Node, map_arg

__all__ = ["Match", "replace_pattern"]

Match = namedtuple("Match", ["anchor", "nodes_map"])


def _as_graph(obj):
    from .graph_module import GraphModule
    from .tracer import symbolic_trace

    if isinstance(obj, Graph):
        return obj
    if isinstance(obj, GraphModule):
        return obj.graph
    if callable(obj):
        return symbolic_trace(obj).graph
    raise TypeError(f"[replace_pattern] expected a callable, Graph or GraphModule, got {obj!r}")


def _outputs(graph):
    out = [n for n in graph.nodes if n.op == "output"]
    if len(out) != 1:
        raise ValueError("[replace_pattern] a pattern graph must have exactly one output node")
    flat = []
    map_arg(out[0].args[0], flat.append)
    return flat


class _Matcher:
    def __init__(self, pattern):
        self.pattern = pattern
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        self.outputs = _outputs(pattern)

    def _same_arg(self, p, g, m):
        if isinstance(p, Node):
            return isinstance(g, Node) and self._match(p, g, m)
        if isinstance(p, (list, tuple)):
            return (
                isinstance(g, (list, tuple))
                and len(p) == len(g)
                and all(self._same_arg(a, b, m) for a, b in zip(p, g))
            )
        if isinstance(p, dict):
            return (
                isinstance(g, dict)
                and p.keys() == g.keys()
                and all(self._same_arg(p[k], g[k], m) for k in p)
            )
        if isinstance(g, Node):
            return False
        try:
            return bool(p == g)
        except Exception:
            return False

    def _match(self, p, g, m):
        """Whether pattern node p matches graph node g, extending the node map m."""
        if p in m:
            return m[p] is g
        if p.op == "placeholder":
            m[p] = g
            return True
        if p.op != g.op or p.target != g.target:
            return False
        trial = dict(m)
        trial[p] = g
        if not self._same_arg(p.args, g.args, trial) or not self._same_arg(
            p.kwargs, g.kwargs, trial
        ):
            return False
        m.clear()
        m.update(trial)
        return True

    def matches(self, graph):
        """Every node map that matches the whole pattern, anchored at each graph node that the
        pattern's last output matches (the other outputs are searched for in turn)."""
        nodes = graph.nodes
        outs = [o for o in self.outputs if isinstance(o, Node)]
        if not outs:
            raise ValueError("[replace_pattern] the pattern returns no node")

        def extend(i, m):
            if i == len(outs):
                return m
            if outs[i] in m:
                return extend(i + 1, m)
            for g in nodes:
                trial = dict(m)
                if self._match(outs[i], g, trial):
                    done = extend(i + 1, trial)
                    if done is not None:
                        return done
            return None

        found = []
        for node in nodes:
            m = {}
            if self._match(outs[-1], node, m):
                full = extend(0, m)
                if full is not None:
                    found.append(Match(anchor=node, nodes_map=full))
        return found


def _self_contained(match, outputs):
    """Only the nodes producing outputs may be used outside the match; placeholders' values are
    outside it by definition."""
    inner = {g for p, g in match.nodes_map.items() if p.op != "placeholder"}
    produced = {match.nodes_map[o] for o in outputs if isinstance(o, Node)}
    for g in inner - produced:
        if any(u not in inner for u in g.users):
            return False
    return True


def replace_pattern(gm, pattern, replacement):
    """Replaces every non-overlapping occurrence of `pattern` in gm.graph with `replacement` and
    recompiles gm. Returns the list of Match(anchor, nodes_map) that were replaced."""
    p_graph, r_graph = _as_graph(pattern), _as_graph(replacement)
    matcher = _Matcher(p_graph)
    r_placeholders = [n for n in r_graph.nodes if n.op == "placeholder"]
    if len(r_placeholders) != len(matcher.placeholders):
        raise ValueError(
            f"[replace_pattern] the pattern takes {len(matcher.placeholders)} inputs but the "
            f"replacement takes {len(r_placeholders)}"
        )
    graph = gm.graph
    used, replaced = set(), []
    for match in matcher.matches(graph):
        inner = {g for p, g in match.nodes_map.items() if p.op != "placeholder"}
        if inner & used or not _self_contained(match, matcher.outputs):
            continue
        used |= inner
        replaced.append(match)
    order = {n: i for i, n in enumerate(graph.nodes)}
    redirect = {}  # an earlier match's output -> what replaced it (a later match may read it)

    def current(node):
        while node in redirect:
            node = redirect[node]
        return node

    for match in replaced:
        inner = sorted(
            (g for p, g in match.nodes_map.items() if p.op != "placeholder"), key=order.get
        )
        val_map = {
            r: current(match.nodes_map[p]) for r, p in zip(r_placeholders, matcher.placeholders)
        }
        with graph.inserting_before(inner[-1]):
            for node in r_graph.nodes:
                if node.op == "placeholder":
                    continue
                if node.op == "output":
                    new_out = map_arg(node.args[0], lambda n: val_map[n])
                    break
                val_map[node] = graph.node_copy(node, lambda n: val_map[n])
        old = [match.nodes_map[o] for o in matcher.outputs]
        new = new_out if isinstance(new_out, (list, tuple)) else [new_out]
        if len(new) != len(old):
            raise ValueError(
                f"[replace_pattern] the pattern returns {len(old)} values but the replacement "
                f"returns {len(new)}"
            )
        for o, n in zip(old, new):
            o.replace_all_uses_with(n)
            redirect[o] = n
        for g in reversed(inner):
            if not g.users:
                graph.erase_node(g)
    graph.lint()
    gm.recompile()
    return replaced
