#!/usr/bin/env bash
# Installs the C++ API under PREFIX: include/oneflow_like/ (the public headers and the op tables
# they expand), lib/liboneflow_like.so with the runtime it sits on (lib/liboneflow_like_runtime.so,
# found through its RUNPATH $ORIGIN), lib/pkgconfig/oneflow_like.pc and
# lib/cmake/oneflow_like/oneflow_likeConfig{,Version}.cmake.
#   tools/cpp_api/install.sh PREFIX [liboneflow_like.so [liboneflow_like_runtime.so]]
#   (`make install PREFIX=dir`)
# Run from the repository root (or a Bazel runfiles tree with the same layout).
set -euo pipefail
prefix=${1:?usage: install.sh PREFIX [liboneflow_like.so [liboneflow_like_runtime.so]]}
lib=${2:-bazel-bin/oneflow_like/api/liboneflow_like.so}
runtime=${3:-$(dirname "$lib")/liboneflow_like_runtime.so}
here=$(dirname "$0")
version=$(cat "$here/VERSION")
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
install -d "$prefix/include/oneflow_like/opdefs" "$prefix/lib/pkgconfig" \
  "$prefix/lib/cmake/oneflow_like"
install -m 644 include/oneflow_like/*.h "$prefix/include/oneflow_like/"
install -m 644 oneflow_like/opdefs/*.def "$prefix/include/oneflow_like/opdefs/"
install -m 755 "$lib" "$prefix/lib/liboneflow_like.so"
install -m 755 "$runtime" "$prefix/lib/liboneflow_like_runtime.so"
for f in oneflow_like.pc oneflow_likeConfig.cmake oneflow_likeConfigVersion.cmake; do
  case $f in *.pc) dest=$prefix/lib/pkgconfig ;; *) dest=$prefix/lib/cmake/oneflow_like ;; esac
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" "$here/$f.in" >"$dest/$f"
done
echo "installed the oneflow_like C++ API $version under $prefix"
