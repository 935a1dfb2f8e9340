"""Ahead-of-time compiler plugins for graph artifacts:

    python -m oneflow_like.apply_plugin model.oflx --plugin libx.so [--plugin liby.so] -o model_x.oflx

Runs the artifact's module through the compiler up to the plugin pass, lets each plugin take
and compile the ops it supports, and writes a new artifact whose dispatch ops hold the bytecode
(and the original partitions). `flow.load_graph(model_x.oflx)` then needs only the plugins'
dispatch libraries; where one is missing, that partition runs on the CPU, with a warning."""
import argparse
import os
import sys

from . import _C


def apply_plugin(src, plugins, dst):
    """Writes `dst` from `src` with `plugins` (paths) applied; returns the coverage report (the
    dict of nn.Graph.plugin_report())."""
    if isinstance(plugins, (str, os.PathLike)):
        plugins = [plugins]
    return _C._artifact_apply_plugins(
        os.fspath(src), [os.path.abspath(os.fspath(p)) for p in plugins], os.fspath(dst)
    )


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m oneflow_like.apply_plugin", description=__doc__)
    p.add_argument("model", help="the .oflx artifact to compile")
    p.add_argument("--plugin", action="append", required=True, help="compiler plugin library")
    p.add_argument("-o", "--output", required=True, help="the .oflx artifact to write")
    args = p.parse_args(argv)
    try:
        report = apply_plugin(args.model, args.plugin, args.output)
    except Exception as e:  # noqa: BLE001 - one line for the shell, not a traceback
        print(f"apply_plugin: {e}", file=sys.stderr)
        return 1
    print(report["text"], end="")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
