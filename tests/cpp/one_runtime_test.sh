#!/usr/bin/env bash
# The runtime exists once: liboneflow_like_runtime.so defines it (spot checks of the framework,
# the VM, lazy mode, artifacts and distributed), and both front ends, the C++ API's
# liboneflow_like.so and the Python extension _C.so, list it as NEEDED and define none of those
# symbols themselves (they would if a BUILD change linked the runtime's objects into them again).
set -euo pipefail
runtime=$1
shift
probes=('oneflow_like::functional::Add(' 'oneflow_like::vm::VirtualMachine::' 'oneflow_like::Dispatch('
        'oneflow_like::lazy::' 'oneflow_like::artifact::LoadGraph(' 'oneflow_like::distributed::')
# Strong definitions only (T, D, B, R: an object file's own code and data); the inline functions and
# templates of the runtime's headers that a front end instantiates are weak (W, V, u) or local.
defined() {
  { nm -C --defined-only "$1" 2>/dev/null || true; nm -DC --defined-only "$1"; } |
    awk '$2 ~ /^[TDBR]$/' | cut -d' ' -f3-
}
rsyms=$(defined "$runtime")
for p in "${probes[@]}"; do
  grep -qF "$p" <<<"$rsyms" || { echo "runtime lacks $p"; exit 1; }
done
for lib in "$@"; do
  dyn=$(readelf -d "$lib")  # (not piped into grep -q: with pipefail, readelf's SIGPIPE fails it)
  grep -q 'NEEDED.*\[liboneflow_like_runtime.so\]' <<<"$dyn" ||
    { echo "$(basename "$lib") does not link liboneflow_like_runtime.so"; exit 1; }
  syms=$(defined "$lib")
  for p in "${probes[@]}"; do
    if grep -qF "$p" <<<"$syms"; then
      echo "$(basename "$lib") carries its own copy of runtime code: $(grep -F "$p" <<<"$syms" | head -1)"
      exit 1
    fi
  done
  echo "ok: $(basename "$lib") ($(stat -L -c %s "$lib") bytes) links the runtime ($(stat -L -c %s "$runtime") bytes)"
done
