#!/usr/bin/env bash
# The Python slice under ASan+UBSan (a CI step, `make sanitize`): _C.so and the runtime .so with our
# runtime core instrumented, run by the system python with gcc's libasan preloaded. Exits non-zero
# on a failing test or on any sanitizer report, including one from a child process.
# Usage: tools/sanitize_python.sh [bazel flags...]   (the Makefile passes its --disk_cache etc.)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
# Only these sources get -fsanitize (per_file_copt): the VM, the framework/ops/base, the bindings.
# Everything else keeps `make build`'s exact compile actions, so it is shared through the disk
# cache with the opt build that `make test` does next; only these files and the links are extra.
SAN_FILES='vm/.*\.cc,oneflow_like/.*\.cc,python/csrc/.*\.cc'
# vptr off: with -fvisibility=hidden each .so has its own typeinfo, which UBSan's vptr check
# reports as a type mismatch (a false positive across our two libraries).
SAN_COPTS='-fsanitize=address,-fsanitize=undefined,-fno-sanitize-recover=undefined,-fno-sanitize=vptr,-g1'
# The slice: the suites that exercise threads (VM workers, DataLoader workers, interrupts) and
# memory (growth, error paths, fuzzed op arguments).
SLICE=(test_threads.py test_errors.py test_memory_growth.py test_fuzz_ops.py test_interrupt.py
  test_data_workers.py)

bazel ${BAZEL_STARTUP:-} build "$@" --per_file_copt="$SAN_FILES@$SAN_COPTS" \
  --linkopt=-fsanitize=address --linkopt=-fsanitize=undefined \
  //python/csrc:_C.so //oneflow_like/api:liboneflow_like_runtime.so || exit 1
work=$(mktemp -d /tmp/ofl_asan_py.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A private copy of the package with the instrumented libraries (the checkout's stay untouched).
cp -r python/oneflow_like "$work/" && rm -f "$work"/oneflow_like/*.so
install -m 755 bazel-bin/python/csrc/_C.so bazel-bin/oneflow_like/api/liboneflow_like_runtime.so \
  "$work/oneflow_like/"
mkdir "$work/logs"
# detect_leaks=0: CPython keeps interned objects and arenas alive at exit by design, so LSan
# reports every interpreter allocation; leaks in our code are covered by the C++ tests under ASan
# (LSan on) and by test_memory_growth.py here.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$work/logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$work/logs/ubsan"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
(cd tests/python && PYTHONPATH="$work" "$PY" -m pytest -q -p no:cacheprovider "${SLICE[@]}")
rc=$?
unset LD_PRELOAD
if compgen -G "$work/logs/*" >/dev/null; then
  echo "SANITIZER REPORTS (python slice):"
  cat "$work"/logs/*
  exit 1
fi
exit $rc
