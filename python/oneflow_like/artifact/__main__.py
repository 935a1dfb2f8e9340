"""python -m oneflow_like.artifact info|print|upgrade|downgrade|verify FILE ...

  info FILE                 versions, signature, tensors and sizes
  print FILE                the module as HLO text (upgraded to the current op set)
  upgrade FILE OUT          rewrite in the current op set
  downgrade FILE OUT --to N rewrite in op-set N (fails if the module uses something newer)
  verify FILE               full check: header, checksum, module, signature, compilation
"""
import argparse
import sys

from oneflow_like import _C
from oneflow_like.artifact import OPSET_CURRENT, OPSET_MIN, describe, load_graph


def _shape(dtype, shape):
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def _info(path):
    d = describe(path)
    print(f"file:            {d['path']} ({d['file_size']} bytes)")
    print(f"format version:  {d['format_version']}")
    print(f"producer:        {d['producer']} (op-set {d['producer_opset']})")
    print(f"op-set version:  {d['opset_version']} (this build reads {OPSET_MIN}..{OPSET_CURRENT})")
    print(f"checksum:        {d['checksum']:016x}")
    print(f"module:          {d['module']} ({'training step' if d['training'] else 'inference'})")
    for kind in ("inputs", "outputs"):
        for name, dtype, shape in d[kind]:
            print(f"{kind[:-1]:>6} {name}: {_shape(dtype, shape)}")
    weights = 0
    for name, role, dtype, shape, offset, nbytes in d["tensors"]:
        weights += nbytes
        print(f"tensor {name}: {_shape(dtype, shape)} {role} @{offset} ({nbytes} bytes)")
    print(
        f"sizes:           header+module {d['data_offset']} bytes, tensors {weights} bytes, "
        f"data region {d['data_size']} bytes"
    )


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m oneflow_like.artifact",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("info", "print", "verify"):
        sub.add_parser(name).add_argument("file")
    up = sub.add_parser("upgrade")
    up.add_argument("file")
    up.add_argument("out")
    down = sub.add_parser("downgrade")
    down.add_argument("file")
    down.add_argument("out")
    down.add_argument("--to", type=int, required=True, help="target op-set version")
    a = p.parse_args(argv)
    try:
        if a.cmd == "info":
            _info(a.file)
        elif a.cmd == "print":
            describe(a.file)
            sys.stdout.write(_C._artifact_hlo_text(a.file))
        elif a.cmd == "upgrade":
            describe(a.file)
            _C._artifact_rewrite(a.file, a.out, OPSET_CURRENT)
        elif a.cmd == "downgrade":
            describe(a.file)
            _C._artifact_rewrite(a.file, a.out, a.to)
        elif a.cmd == "verify":
            g = load_graph(a.file)
            print(f"{a.file}: OK (op-set {g.opset_version}, {len(g.state_dict())} tensors)")
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
