#!/usr/bin/env bash
# The runtime under a sanitizer (a CI step, `make sanitize`): the C++ tests of the VM, the
# framework, the compiler and the distributed layer, then a thread/memory slice of tests/python,
# all against one build whose runtime core is instrumented. Exits non-zero on a failing test or
# on any sanitizer report, including one from a child process.
# Usage: tools/sanitize.sh asan|tsan [bazel flags...]   (the Makefile passes its --disk_cache etc.)
#
# Only our runtime's sources get -fsanitize (--per_file_copt, at -O0, which compiles about as fast
# as the opt build where -O1 took twice as long): ASan+UBSan the VM, oneflow_like/ (framework,
# ops, base, lazy mode, the C++ API) and the compiler, with their C++ tests; TSan the VM and the
# framework core (base, framework), where the threads meet. The bindings (python/csrc: pybind11,
# the slowest files to compile) and the distributed layer are linked with the sanitizer runtime
# but not instrumented, which keeps CI's cold time down; SAN_WIDE=1 (by hand) instruments them
# too under ASan and adds the distributed layer's C++ tests. Kernels (kernels/cpu), oneDNN,
# OpenBLAS and the CUDA objects keep `make build`'s exact compile actions, so they are shared
# through the disk cache with the opt build that `make test` does next: what is extra is these
# files and the links. The sanitizer runtime is linked into every target binary (--linkopt).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: tools/sanitize.sh asan|tsan [bazel flags...]}
shift
PY=${PY:-/usr/bin/python3}
case $mode in
  asan)
    SAN_FILES='^(vm|oneflow_like|compiler)/.*\.cc$'
    LAYERS='//vm/... + //oneflow_like/... + //compiler/...'
    if [ -n "${SAN_WIDE:-}" ]; then
      SAN_FILES='^(vm|oneflow_like|compiler|distributed|python/csrc)/.*\.cc$'
      LAYERS="$LAYERS + //distributed/..."
    fi
    # vptr off: with -fvisibility=hidden each .so has its own typeinfo, which UBSan's vptr check
    # reports as a type mismatch (a false positive across our libraries).
    COPTS='-fsanitize=address,-fsanitize=undefined,-fno-sanitize-recover=undefined,-fno-sanitize=vptr,-O0,-U_FORTIFY_SOURCE,-g1'
    LINK=(--linkopt=-fsanitize=address --linkopt=-fsanitize=undefined)
    PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    # The C++ tests run with LeakSanitizer on. In Python, detect_leaks=0: CPython keeps interned
    # objects and arenas alive at exit by design, so LSan would report the interpreter; leaks in
    # our code are covered by the C++ tests and by test_memory_growth.py.
    # allocator_may_return_null (here and for TSan): the tests ask for allocations that can never
    # fit (flow.zeros(1 << 40)) to check the runtime's out-of-memory error; the sanitizer's
    # allocator would end the process instead.
    CC_ENV=(--test_env=ASAN_OPTIONS=abort_on_error=1:allocator_may_return_null=1
      --test_env=UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
    py_env() {
      export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:log_path=$1/asan"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$1/ubsan"
    }
    # The suites that exercise threads (VM workers and Python threads at once) and memory (the
    # error paths: impossible allocations, overflowing shapes, failing kernels, pending errors).
    # Next: test_fuzz_ops, test_interrupt and test_data_workers (not yet run through ASan to the
    # end). Not test_memory_growth.py: it measures the resident set, which ASan's quarantine
    # inflates (it runs in `make test`).
    SLICE=(test_threads.py test_errors.py)
    ;;
  tsan)
    # The layers whose threads meet: the VM's workers and queues, the framework's dispatch,
    # autograd, tensors' free lists and the allocator (base). The ops' schemas and the bindings
    # run on the calling thread; they are linked with the TSan runtime but not instrumented.
    SAN_FILES='^(vm|oneflow_like/(base|framework))/.*\.cc$'
    LAYERS='//vm/... + //oneflow_like/...'
    COPTS='-fsanitize=thread,-O0,-U_FORTIFY_SOURCE,-g1'
    LINK=(--linkopt=-fsanitize=thread)
    PRELOAD="$(gcc -print-file-name=libtsan.so)"
    SUPP="suppressions=$PWD/tools/tsan.supp"
    CC_ENV=(--test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:$SUPP)
    # report_signal_unsafe=0: CPython's own signal handler (Ctrl-C tests) calls malloc; that is
    # the interpreter's business, not ours.
    py_env() {
      export TSAN_OPTIONS="halt_on_error=1:report_signal_unsafe=0:allocator_may_return_null=1:$SUPP:log_path=$1/tsan"
    }
    # Python threads issuing ops, backward and optimizer steps at once, each thread's errors
    # its own. (test_errors and test_interrupt are yet to be run through TSan to the end;
    # DataLoader workers fork, which TSan does not follow.)
    SLICE=(test_threads.py)
    ;;
  *)
    echo "tools/sanitize.sh: unknown mode '$mode' (asan or tsan)" >&2
    exit 2
    ;;
esac
FLAGS=("$@" "--per_file_copt=$SAN_FILES@$COPTS" "${LINK[@]}")

# The C++ tests of the instrumented layers (the CUDA-only ones skip without a device).
targets=$(bazel ${BAZEL_STARTUP:-} query --noshow_progress "kind(cc_test, $LAYERS)" 2>/dev/null)
[ -n "$targets" ] || { echo "tools/sanitize.sh: no C++ test targets found" >&2; exit 1; }
start=$(date +%s)
# shellcheck disable=SC2086
bazel ${BAZEL_STARTUP:-} test "${FLAGS[@]}" "${CC_ENV[@]}" $targets
rc=$?
echo "sanitize $mode: C++ tests exited $rc after $(($(date +%s) - start)) s"
[ $rc -eq 0 ] || exit $rc

bazel ${BAZEL_STARTUP:-} build "${FLAGS[@]}" //python/csrc:_C.so \
  //oneflow_like/api:liboneflow_like_runtime.so || exit 1
work=$(mktemp -d /tmp/ofl_${mode}_py.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A private copy of the package with the instrumented libraries (the checkout's stay untouched).
cp -r python/oneflow_like "$work/" && rm -f "$work"/oneflow_like/*.so
install -m 755 bazel-bin/python/csrc/_C.so bazel-bin/oneflow_like/api/liboneflow_like_runtime.so \
  "$work/oneflow_like/"
mkdir "$work/logs"
# --capture=sys below: pytest leaves file descriptor 2 alone, so a report the runtime writes to
# stderr (and the failing test's name) reaches this log even when the sanitizer ends the process.
py_env "$work/logs"
(cd tests/python && LD_PRELOAD="$PRELOAD" PYTHONPATH="$work" \
  "$PY" -m pytest -q -p no:cacheprovider --capture=sys "${SLICE[@]}")
rc=$?
echo "sanitize $mode: Python slice exited $rc after $(($(date +%s) - start)) s in all"
# A report, not allocator_may_return_null's warnings ("failed to allocate"), which ASan also logs.
reports=$(grep -l -E "ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" \
  "$work"/logs/* 2>/dev/null)
if [ -n "$reports" ]; then
  echo "SANITIZER REPORTS ($mode, Python slice):"
  cat $reports
  exit 1
fi
exit $rc
