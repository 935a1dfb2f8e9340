#!/usr/bin/env bash
# Step 1 of the GPU proof (kernels/cuda/README.md "GPU proof"): builds HERE everything the GPU
# machine needs and packs it into the git-ignored folder .gpu/ (one .tar.xz, well under the device
# tool's 64 MiB carry limit):
#   bin/  the CUDA C++ test binaries (cuda_api_test, device_test, kernels_test and the compiler's
#         GPU backend: gpu_executable_test, gpu_compile_test, nvrtc_test) and the public C++
#         API's api_test (its CUDA cases; liboneflow_like.so travels in lib/)
#   py/   _C.so built for CPython 3.12 (the GPU machine's interpreter) + liboneflow_like_runtime.so
#   lib/  every shared library those need that the GPU machine lacks (oneDNN, OpenBLAS, Gloo,
#         abseil, ...); glibc, libstdc++ and the CUDA libraries (cudart, cuBLAS(Lt), cuDNN) are the
#         machine's own (its PyTorch venv ships the CUDA ones as nvidia-* wheels).
# Step 2, on the GPU machine: tools/gpu/run.sh (see that file).
#
#   tools/gpu/prepare.sh            # then: device run, carry [".gpu"], command "tools/gpu/run.sh"
#
# The cp312 extension is the same Bazel target with two repositories overridden: @python points
# at pyenv's 3.12 headers ($PY312_HOME, default ~/.pyenv/versions/3.12.1) and @pybind11 at
# pybind11 2.13 headers from PyPI (Debian's 2.10 predates CPython 3.12 and NumPy 2, which the GPU
# machine has). Only //python/csrc is recompiled for it; the next `make build` puts the 3.11 one
# back from the disk cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=$ROOT/.gpu
CACHE=$HOME/.cache/oneflow_like
FLAGS=(--disk_cache="$CACHE/bazel-disk-v2" --config=cuda)
PY312_HOME=${PY312_HOME:-$HOME/.pyenv/versions/3.12.1}
PYBIND11_VERSION=2.13.6

[ -x /usr/local/cuda/bin/nvcc ] || { echo "prepare.sh: nvcc not found at /usr/local/cuda" >&2; exit 1; }
[ -f "$PY312_HOME/include/python3.12/Python.h" ] || {
  echo "prepare.sh: no CPython 3.12 headers under $PY312_HOME/include/python3.12 (set PY312_HOME)" >&2
  exit 1
}

TESTS=(//device/cuda:cuda_api_test //device/cuda:device_test //kernels/cuda:kernels_test
  //compiler/backends/gpu:gpu_executable_test //compiler/backends/gpu:gpu_compile_test
  //compiler/backends/gpu:nvrtc_test //tests/cpp:api_test)
BINS=()
for t in "${TESTS[@]}"; do p=${t#//}; BINS+=("bazel-bin/${p%%:*}/${p##*:}"); done
echo "== building the CUDA test binaries and the runtime (--config=cuda)"
bazel build "${FLAGS[@]}" "${TESTS[@]}" //oneflow_like/api:liboneflow_like_runtime.so

echo "== building _C.so for CPython 3.12"
REPOS=$CACHE/gpu-repos
mkdir -p "$REPOS/python" "$REPOS/pybind11" "$CACHE/wheels"
if [ ! -d "$REPOS/python/include/python3.12" ]; then
  cp -r "$PY312_HOME/include" "$REPOS/python/"
fi
cat >"$REPOS/python/BUILD" <<'EOF'
package(default_visibility = ["//visibility:public"])
cc_library(name = "headers", hdrs = glob(["include/python3.12/**/*.h"]), includes = ["include/python3.12"])
EOF
touch "$REPOS/python/WORKSPACE"
if [ ! -f "$REPOS/pybind11/include/pybind11/pybind11.h" ]; then
  whl=$CACHE/wheels/pybind11-$PYBIND11_VERSION-py3-none-any.whl
  [ -f "$whl" ] || /usr/bin/python3 -m pip download -q --no-deps "pybind11==$PYBIND11_VERSION" -d "$CACHE/wheels"
  rm -rf "$REPOS/pybind11/tmp" && mkdir -p "$REPOS/pybind11/tmp"
  (cd "$REPOS/pybind11/tmp" && unzip -q "$whl" 'pybind11/include/*')
  mv "$REPOS/pybind11/tmp/pybind11/include" "$REPOS/pybind11/include" && rm -rf "$REPOS/pybind11/tmp"
fi
cat >"$REPOS/pybind11/BUILD" <<'EOF'
package(default_visibility = ["//visibility:public"])
cc_library(name = "pybind11", hdrs = glob(["include/**/*.h"]), includes = ["include"], deps = ["@python//:headers"])
EOF
touch "$REPOS/pybind11/WORKSPACE"
bazel build "${FLAGS[@]}" --override_repository=python="$REPOS/python" \
  --override_repository=pybind11="$REPOS/pybind11" //python/csrc:_C.so

echo "== staging"
rm -rf "$OUT" && mkdir -p "$OUT/stage/bin" "$OUT/stage/py" "$OUT/stage/lib"
install -m 755 "${BINS[@]}" "$OUT/stage/bin/"
install -m 755 bazel-bin/python/csrc/_C.so bazel-bin/oneflow_like/api/liboneflow_like_runtime.so \
  "$OUT/stage/py/"
strip --strip-debug "$OUT"/stage/bin/* "$OUT"/stage/py/*.so
# Put main's 3.11 extension back in bazel-bin (a disk-cache hit) so `make test` is unaffected.
bazel build "${FLAGS[@]}" //python/csrc:_C.so >/dev/null 2>&1 || true

# The libraries to carry: the ldd closure, less the C runtime, libstdc++ and the CUDA libraries.
# ldd runs on the build tree's files: the test binaries find Bazel's _solib_k8 libraries through
# their $ORIGIN-relative RUNPATH, which the staged copies would lose.
SKIP='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas|libcudnn|libnccl|libnvrtc|libnvJitLink)'
for f in "${BINS[@]}" bazel-bin/oneflow_like/api/liboneflow_like_runtime.so; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $SKIP ]] && continue
  [[ $name == liboneflow_like_runtime.so ]] && continue
  cp -L "$path" "$OUT/stage/lib/$name"
done
missing=$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$OUT/stage/lib:$OUT/stage/py" \
  ldd "$OUT"/stage/bin/* "$OUT"/stage/py/*.so | grep "not found" | sort -u || true)
[ -z "$missing" ] || { echo "prepare.sh: the staged files miss: $missing" >&2; exit 1; }
strip --strip-unneeded "$OUT"/stage/lib/* 2>/dev/null || true

git rev-parse HEAD >"$OUT/stage/COMMIT"
echo "== packing"
tar -C "$OUT/stage" -cf - . | xz -T0 -6 >"$OUT/bundle.tar.xz"
rm -rf "$OUT/stage"
size=$(stat -c %s "$OUT/bundle.tar.xz")
echo "prepare.sh: $OUT/bundle.tar.xz is $((size / 1048576)) MiB (commit $(git rev-parse --short HEAD))"
if [ "$size" -gt $((56 * 1048576)) ]; then
  echo "prepare.sh: the bundle leaves too little of the 64 MiB carry limit for the tree" >&2
  exit 1
fi
