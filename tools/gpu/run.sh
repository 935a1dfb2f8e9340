#!/usr/bin/env bash
# Step 2 of the GPU proof, run ON the GPU machine from the repo root with .gpu/ carried (step 1 is
# tools/gpu/prepare.sh, here). Unpacks the bundle, points the loader at it and at the machine's
# CUDA libraries (its PyTorch venv's nvidia-* wheels), then runs, each under a time limit:
#   1. the CUDA C++ tests (cuda_api_test, device_test, kernels_test: every CUDA kernel vs the CPU;
#      the compiler's GPU backend: nvrtc_test, gpu_compile_test, gpu_executable_test) and the
#      public C++ API's api_test (added in session 15, not yet run on a GPU: its CUDA cases)
#   2. the Python op tables on cuda (op_testing's checks with OFL_TEST_DEVICE=cuda); the NCCL
#      process group at world size 1 (tests/python/test_distributed_nccl.py; libnccl.so.2 from
#      the venv's nvidia-nccl-cu13 wheel, found through CUDA_DIRS below)
#   3. nn.Graph on cuda, device errors at the next sync, mixed precision
#      (tests/python/test_graph_cuda.py, test_cuda_async.py, test_cuda_amp.py), then examples/train_digits.py --device cuda, eager then compiled
#   4. benchmarks/bench_gpu.py (beside torch in the same run)
#   5. benchmarks/profile_gpu.py (kernels and CUDA runtime calls through CUPTI; its log only)
# and prints one summary table. Each step's full log goes to /tmp/ofl_gpu/logs/<step>.log, packed
# into $OUT/logs.tar.gz when $OUT is set (the device tool returns that folder and only a few
# files). Exits non-zero when a step failed.
#   tools/gpu/run.sh [--quick]      # --quick: fewer epochs and benchmark iterations
# The whole run keeps within RUN_BUDGET seconds (default 540 with --quick, so that one device
# command of at most 600 s returns its summary and logs; 3000 otherwise): each step's limit is cut
# to what is left, and a step that would get under 20 s is skipped (SKIPPED in the summary).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
B=/tmp/ofl_gpu
LOGS=$B/logs  # packed into $OUT/logs.tar.gz at the end (the device tool returns few files)
rm -rf "$B" && mkdir -p "$B" "$LOGS"
[ -f .gpu/bundle.tar.xz ] || { echo "run.sh: .gpu/bundle.tar.xz missing: run tools/gpu/prepare.sh and carry .gpu" >&2; exit 2; }
xz -dc .gpu/bundle.tar.xz | tar -C "$B" -xf - || exit 2
PY=${PYTHON:-python3}
SITE=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
CUDA_DIRS=$(find "$SITE/nvidia" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH=$B/lib:$B/py:${CUDA_DIRS}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
install -m 755 "$B"/py/_C.so "$B"/py/liboneflow_like_runtime.so python/oneflow_like/
export PYTHONPATH=$ROOT/python PYTHONUNBUFFERED=1

echo "bundle built from $(cat "$B/COMMIT"); tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
$PY --version
for f in "$B"/bin/* "$B"/py/*.so; do
  miss=$(ldd "$f" | grep "not found")
  [ -z "$miss" ] || echo "MISSING libraries for $(basename "$f"): $miss"
done

ROWS=()
FAILED=0
T_START=$(date +%s)
if [ $QUICK = 1 ]; then BUDGET=${RUN_BUDGET:-540}; else BUDGET=${RUN_BUDGET:-3000}; fi
step() { # name limit_s summary_cmd -- command...
  local name=$1 limit=$2 summ=$3
  shift 4
  local t0 t1 rc left
  left=$((BUDGET - ($(date +%s) - T_START) - 10))
  if [ "$left" -lt 20 ]; then
    ROWS+=("$(printf '%-18s %-9s %5ss  %s' "$name" "SKIPPED" 0 "run budget ${BUDGET}s spent")")
    echo "---- $name: SKIPPED (run budget spent)"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}')
  local s
  s=$($summ "$LOGS/$name.log" | tr '\n' ' ' | cut -c1-110)
  [ $rc -eq 124 ] && s="TIMED OUT after ${limit}s; $s"
  local status=ok
  [ $rc -ne 0 ] && { status="FAIL($rc)"; FAILED=1; }
  ROWS+=("$(printf '%-18s %-9s %5ss  %s' "$name" "$status" "$secs" "$s")")
  echo "---- $name: $status in ${secs}s"
  if [ $rc -ne 0 ]; then
    grep -E "FAILED|Error|error|Failure|Expected|Which is|Value of|actual|assert" "$LOGS/$name.log" | head -40
    tail -n 15 "$LOGS/$name.log"
  fi
}
gtest_sum() { grep -E "^\[  (PASSED|FAILED|  SKIPPED) +\]|tests? ran" "$1" | head -4; }
pytest_sum() { tail -n 1 "$1"; }
train_sum() { grep -E "epochs in|accuracy|compiled for" "$1" | sed "s/, final loss/ loss/" | head -6; }
bench_sum() { grep -E "^GPU:" "$1"; }
prof_sum() { grep -cE "^==" "$1" | sed 's/$/ profiles (see the log)/'; }

EPOCHS=()
[ $QUICK = 1 ] && EPOCHS=(--epochs 2)
BQ=()
[ $QUICK = 1 ] && BQ=(--quick)
step cuda_api_test ${T_API:-60} gtest_sum -- "$B/bin/cuda_api_test" --gtest_brief=1
step cpp_api_test ${T_CPP:-120} gtest_sum -- env TEST_TMPDIR=$B "$B/bin/api_test" --gtest_brief=1
step device_test ${T_DEV:-90} gtest_sum -- "$B/bin/device_test" --gtest_brief=1
step kernels_test ${T_KER:-240} gtest_sum -- "$B/bin/kernels_test" --gtest_brief=1
step gpu_compiler ${T_GPUC:-120} gtest_sum -- bash -c "'$B/bin/nvrtc_test' --gtest_brief=1 && '$B/bin/gpu_compile_test' --gtest_brief=1 && '$B/bin/gpu_executable_test' --gtest_brief=1"
step op_tables_cuda ${T_OPS:-180} pytest_sum -- env OFL_TEST_DEVICE=cuda $PY -m pytest -q -p no:cacheprovider \
  -n 8 tests/python/test_ops_elementwise.py tests/python/test_losses.py
# The other op tables (matmul, nn, reduce, scan, shape/index, special, fused RNN cells) on cuda.
step op_tables_more ${T_OPS2:-240} pytest_sum -- env OFL_TEST_DEVICE=cuda $PY -m pytest -q -p no:cacheprovider \
  -n 8 tests/python/test_ops_matmul.py tests/python/test_ops_nn.py tests/python/test_ops_nn3d.py \
  tests/python/test_ops_reduce.py tests/python/test_ops_scan.py tests/python/test_ops_shape_index.py \
  tests/python/test_special.py tests/python/test_rnn_fused.py tests/python/test_rnn_seq.py \
  tests/python/test_basic_ops.py
step nccl ${T_NCCL:-180} pytest_sum -- env OFL_REQUIRE_NCCL=1 NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=WARN \
  $PY -m pytest -q -rs -p no:cacheprovider tests/python/test_distributed_nccl.py
step graph_cuda ${T_GRAPH:-240} pytest_sum -- $PY -m pytest -q -p no:cacheprovider tests/python/test_graph_cuda.py tests/python/test_cuda_async.py tests/python/test_cuda_amp.py tests/python/test_cuda_ops.py tests/python/test_cuda_attention.py tests/python/test_runtime_info.py
# The CUDA cases of the other test files (int16 kernels, dlpack, amp, serialization, profiler,
# RNG state, complex-on-cuda errors, compat names), selected by 'cuda' in the test id.
step cuda_misc ${T_MISC:-150} pytest_sum -- $PY -m pytest -q -p no:cacheprovider -k cuda \
  tests/python/test_dtypes_more.py tests/python/test_fft.py tests/python/test_dlpack.py \
  tests/python/test_amp.py tests/python/test_serialization.py tests/python/test_profiler.py \
  tests/python/test_global_state.py tests/python/test_tensor_methods_compat.py \
  tests/python/test_compat_names.py tests/python/test_distributed.py
step train_digits ${T_TRAIN:-240} train_sum -- $PY examples/train_digits.py --device cuda --mode both "${EPOCHS[@]}" --out "$B/runs"
step bench_gpu ${T_BENCH:-300} bench_sum -- $PY benchmarks/bench_gpu.py "${BQ[@]}"
step profile_gpu ${T_PROF:-120} prof_sum -- $PY benchmarks/profile_gpu.py

echo
echo "==== GPU proof summary ===="
for r in "${ROWS[@]}"; do echo "$r"; done
echo
[ -f "$LOGS/bench_gpu.log" ] && sed -n '/^metric/,$p' "$LOGS/bench_gpu.log"
[ -n "${OUT:-}" ] && tar -C "$B" -czf "$OUT/logs.tar.gz" logs
exit $FAILED
