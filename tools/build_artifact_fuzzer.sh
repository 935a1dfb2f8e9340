#!/bin/bash
# Builds the .oflx loader fuzzer (compiler/artifact/artifact_fuzzer.cc) with clang + libFuzzer +
# ASan/UBSan outside Bazel (whose toolchain is GCC). Usage: tools/build_artifact_fuzzer.sh OUT
# Needs clang-14, libfuzzer-14-dev, flatbuffers-compiler (Makefile DEBS). Reuses OUT when it is
# newer than every source.
set -euo pipefail
out=${1:?usage: build_artifact_fuzzer.sh OUT}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
srcs=(compiler/artifact/{artifact_fuzzer,artifact_file,artifact_reader,opset,versioned_module}.cc
      $(ls compiler/ir/*.cc | grep -v -e _test -e _fuzzer) oneflow_like/base/{dtype,shape}.cc)
if [ -x "$out" ]; then
  stale=0
  for f in "${srcs[@]}" compiler/artifact/*.h compiler/artifact/artifact.fbs compiler/ir/*.h; do
    [ "$f" -nt "$out" ] && stale=1 && break
  done
  [ $stale = 0 ] && exit 0
fi
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
mkdir -p "$gen/compiler/artifact"
flatc --cpp -o "$gen/compiler/artifact" compiler/artifact/artifact.fbs
absl=$(grep -o -- '-labsl_[a-z0-9_]*' third_party/absl.BUILD | tr '\n' ' ')
clang++-14 -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I. -I"$gen" "${srcs[@]}" $absl -o "$out.tmp"
mv "$out.tmp" "$out"
