"""nn.Graph pictures: DOT of the optimized graph (fusions as clusters, bytes on edges) and its SVG
through Graphviz's `dot` (skipped, visibly, where Graphviz is not installed)."""
import os
import re
import shutil

import pytest

import oneflow_like as flow

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz `dot` not installed (Debian: graphviz)"
)


class MLP(flow.nn.Graph):
    def __init__(self):
        super().__init__()
        self.l1 = flow.nn.Linear(16, 32)

    def build(self, x):
        return (flow.relu(self.l1(x)) * 2.0 + 1.0).sum(1).exp()


def compiled_graph():
    g = MLP()
    g(flow.randn(8, 16))
    return g


def test_dot_has_fusion_clusters_and_bytes_on_edges():
    dot = compiled_graph().to_dot()
    assert dot.startswith("digraph")
    clusters = re.findall(r"subgraph cluster_\d+ \{\s*label=\"([^\"]+)\"", dot)
    assert clusters and all(" ops) " in c for c in clusters)
    assert any("fusion" in c for c in clusters)
    # 8x32 f32 (the first layer's output) crosses an edge as 1.0 KiB.
    assert '[label="1.0 KiB"]' in dot
    assert dot.count("{") == dot.count("}")


def test_to_dot_before_compiling_raises():
    with pytest.raises(RuntimeError, match="not been compiled"):
        MLP().to_dot()


@needs_dot
def test_svg_contains_the_clusters(tmp_path):
    g = compiled_graph()
    path = g.to_svg(tmp_path / "mlp.svg")
    svg = open(path).read()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    n = len(re.findall(r"subgraph cluster_", g.to_dot()))
    assert svg.count('class="cluster"') == n >= 1
    assert "KiB" in svg


@needs_dot
def test_debug_dumps_svg_on_compile(tmp_path):
    g = MLP().debug(0, dump_to=tmp_path)
    g(flow.randn(8, 16))
    names = sorted(os.listdir(tmp_path))
    for suffix in (".trace.txt", ".hlo_after.txt", ".optimized.dot", ".optimized.svg"):
        assert "MLP" + suffix in names
    with pytest.raises(TypeError):
        g.debug("verbose")


def test_missing_dot_is_a_clear_error(tmp_path, monkeypatch):
    g = compiled_graph()
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    with pytest.raises(RuntimeError, match="Graphviz's `dot` was not found"):
        g.to_svg(tmp_path / "x.svg")
