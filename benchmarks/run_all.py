"""Runs every benchmark: each benchmarks/bench_*.py in turn (same interpreter, PYTHONPATH=python),
then the VM's C++ benchmark through Bazel when bazel is on PATH. `make bench` calls this.

    PYTHONPATH=python /usr/bin/python3 benchmarks/run_all.py [--quick] [name-filter ...]

Extra arguments that do not start with "--" select scripts whose name contains one of them;
"--quick" is passed on to each script. Exits non-zero when any benchmark failed.
"""
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _make_bazel_flags():
    """The flags `make build` passes (Makefile BFLAGS), so this run reuses its analysis cache."""
    flags = [
        "--disk_cache="
        + os.path.join(os.path.expanduser("~"), ".cache", "oneflow_like", "bazel-disk")
    ]
    if os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        flags.append("--config=cuda")
    return flags + os.environ.get("EXTRA_BAZEL_FLAGS", "").split()


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    filters = [a for a in argv if not a.startswith("--")]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.join(ROOT, "python"), env.get("PYTHONPATH")] if p
    )
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # PyTorch's OpenMP threads spin otherwise

    scripts = sorted(glob.glob(os.path.join(HERE, "bench_*.py")))
    if filters:
        scripts = [s for s in scripts if any(f in os.path.basename(s) for f in filters)]
    failed = []
    for script in scripts:
        name = os.path.basename(script)
        print(f"=== {name} {' '.join(flags)}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, script] + flags, cwd=ROOT, env=env)
        print(
            f"=== {name}: {'ok' if rc == 0 else f'exit {rc}'} in {time.perf_counter() - t0:.0f} s\n",
            flush=True,
        )
        if rc != 0:
            failed.append(name)

    if not filters or any("vm" in f for f in filters):
        if shutil.which("bazel"):
            cmd = (
                ["bazel", "run", "-c", "opt"]
                + _make_bazel_flags()
                + ["//benchmarks:vm_bench", "--", "quick"]
            )
            print("=== " + " ".join(cmd), flush=True)
            t0 = time.perf_counter()
            rc = subprocess.call(cmd, cwd=ROOT)
            print(
                f"=== vm_bench: {'ok' if rc == 0 else f'exit {rc}'} in {time.perf_counter() - t0:.0f} s\n",
                flush=True,
            )
            if rc != 0:
                failed.append("vm_bench")
        else:
            print("=== vm_bench: skipped (bazel not on PATH)\n", flush=True)

    if failed:
        print("failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
