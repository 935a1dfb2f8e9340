"""python -m oneflow_like.mock_torch script.py ARGS: runs a PyTorch script on oneflow_like."""
import sys

from oneflow_like.mock_torch import run_script


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(
            "usage: python -m oneflow_like.mock_torch script.py [ARGS...]\n"
            "Runs script.py with `import torch` (and every torch.X) resolving to oneflow_like.",
            file=sys.stderr,
        )
        return 0 if argv else 2
    run_script(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
