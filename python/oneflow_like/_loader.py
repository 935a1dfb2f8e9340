"""Finds the compiled extension `_C`: next to this file after `make build`, or in Bazel's
runfiles (python/csrc/_C.so) when run as a py_test."""
import importlib.machinery
import importlib.util
import os
import sys


def load_extension():
    # oneDNN (convolutions) runs on OpenMP threads that by default spin at every barrier. With as
    # many threads as cores (2 on our machines), a spinner that loses its core to another thread
    # stalls each convolution for a scheduler tick; sleeping threads measured 1.3-1.6x faster CNN
    # steps (eager and graph). Read when libgomp loads, i.e. here, unless something loaded it
    # first; a value the user set wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "_C.so"), os.path.join(os.path.dirname(here), "csrc", "_C.so")]
    for base in [os.environ.get("RUNFILES_DIR"), os.environ.get("TEST_SRCDIR")]:
        if base:
            candidates.append(os.path.join(base, "oneflow_like", "python", "csrc", "_C.so"))
    for path in candidates:
        if os.path.exists(path):
            loader = importlib.machinery.ExtensionFileLoader("oneflow_like._C", path)
            spec = importlib.util.spec_from_file_location("oneflow_like._C", path, loader=loader)
            module = importlib.util.module_from_spec(spec)
            sys.modules["oneflow_like._C"] = module
            loader.exec_module(module)
            return module
    raise ImportError(
        "oneflow_like: the compiled extension _C.so was not found; run `make build` in the repository "
        "root (it builds with Bazel and copies python/oneflow_like/_C.so). Looked in: "
        + ", ".join(candidates)
    )
