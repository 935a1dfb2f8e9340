#!/usr/bin/env bash
# Formats (or with --check, verifies) every tracked C++/CUDA and Python source: clang-format with
# the root .clang-format, black with pyproject.toml. third_party/ is left as its authors wrote it.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
mapfile -t cfiles < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh' | grep -v '^third_party/')
mapfile -t pyfiles < <(git ls-files '*.py' | grep -v '^third_party/')
if [ "$mode" = "--check" ]; then
  rc=0
  bad=$(for f in "${cfiles[@]}"; do
          clang-format --style=file "$f" | cmp -s - "$f" || echo "$f"; done)
  if [ -n "$bad" ]; then
    echo "C++ files not formatted (run 'make format'):"; echo "$bad" | sed 's/^/  /'; rc=1
  fi
  black --check -q "${pyfiles[@]}" 2>/dev/null || {
    echo "Python files not formatted (run 'make format'):"
    black --check "${pyfiles[@]}" 2>&1 | grep '^would reformat' | sed 's/^/  /'; rc=1; }
  [ $rc = 0 ] && echo "format check: ${#cfiles[@]} C++ and ${#pyfiles[@]} Python files formatted"
  exit $rc
fi
clang-format -i --style=file "${cfiles[@]}"
black -q "${pyfiles[@]}"
