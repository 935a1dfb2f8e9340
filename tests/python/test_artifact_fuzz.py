"""Fuzzes the .oflx loader (compiler/artifact/artifact_fuzzer.cc: ParseArtifact, upgrade, lower,
re-serialise) with libFuzzer + ASan + UBSan for a bounded number of runs, starting from frozen
artifacts. A crash, sanitizer report or error without the file's name fails the test."""
import glob
import os
import shutil
import subprocess
import tempfile

import pytest

HERE = os.path.dirname(os.path.realpath(__file__))  # the source tree, also under Bazel
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RUNS = int(os.environ.get("ONEFLOW_LIKE_FUZZ_RUNS", "20000"))


def _tools():
    missing = [t for t in ("clang++-14", "flatc") if shutil.which(t) is None]
    if not glob.glob("/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a"):
        missing.append("libclang_rt.fuzzer (clang-14)")
    return missing


@pytest.mark.skipif(bool(_tools()), reason=f"needs {_tools()} (Makefile DEBS)")
def test_loader_survives_fuzzing(tmp_path):
    cache = os.environ.get("TEST_TMPDIR") or tempfile.gettempdir()
    fuzzer = os.path.join(cache, "oflx_artifact_fuzzer")
    subprocess.run(
        [os.path.join(ROOT, "tools", "build_artifact_fuzzer.sh"), fuzzer], check=True, timeout=900
    )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "testdata", "artifacts", "1", "*.oflx"))):
        shutil.copy(f, corpus)
    r = subprocess.run(
        [fuzzer, f"-runs={RUNS}", "-seed=1", "-max_len=65536", "-timeout=20", str(corpus)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-4000:]
    assert f"Done {RUNS} runs" in r.stderr, r.stderr[-2000:]
