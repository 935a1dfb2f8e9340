#!/usr/bin/env bash
# Installs the C++ API into a fresh prefix (tools/cpp_api/install.sh, what `make install` runs)
# and builds against the installed tree only, as a user outside this repository would:
#   1. the public headers include nothing but themselves and the C++ standard library;
#   2. g++ -std=c++17 app.cc $(pkg-config --cflags --libs oneflow_like) builds and runs;
#   3. CMake find_package(oneflow_like) builds examples/cpp; serve answers the frozen artifacts'
#      batches exactly as Python did, train_digits reaches the Python example's accuracy.
set -euo pipefail
lib=$(pwd)/$1
work=${TEST_TMPDIR:-$(mktemp -d)}
prefix=$work/prefix
rm -rf "$prefix" "$work/build"
tools/cpp_api/install.sh "$prefix" "$lib"

echo "== 1. the installed headers need only the standard library"
deps=$(echo '#include <oneflow_like/oneflow_like.h>' |
       g++ -std=c++17 -x c++ -M -I"$prefix/include" - | tr ' \\' '\n\n' | grep '^/' || true)
foreign=$(echo "$deps" | grep -v "^$prefix/include/" |
          grep -Ev '^/usr/(include/c\+\+/|lib/gcc/|include/x86_64-linux-gnu/|include/[a-z_0-9-]+\.h$|include/(bits|sys|asm|asm-generic|linux)/)' || true)
if [ -n "$foreign" ]; then echo "public headers pull in non-standard headers:"; echo "$foreign"; exit 1; fi
echo "ok: $(echo "$deps" | grep -c "^$prefix/include/") API headers, the rest from the C++ library"

echo "== 2. pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cat >"$work/app.cc" <<'CC'
#include <oneflow_like/oneflow_like.h>
#include <iostream>
namespace ofl = oneflow_like;
int main() {
  ofl::Tensor x = ofl::arange(6, ofl::kFloat32).reshape({2, 3}).requires_grad_();
  ofl::Tensor y = ofl::relu(x.matmul(ofl::ones({3, 2}))).sum();
  y.backward();
  std::cout << y << "\n" << x.grad() << "\n";
  try {
    ofl::ones({2, 3}) + ofl::ones({4});
  } catch (const ofl::Error& e) {
    std::cout << "caught: " << e.what() << "\n";
  }
  return y.item<float>() == 30.f ? 0 : 1;
}
CC
g++ -std=c++17 -Wall -Werror "$work/app.cc" $(pkg-config --cflags --libs oneflow_like) -o "$work/app"
"$work/app" | tee "$work/app.out"
grep -q "caught: \[add\] shapes cannot be broadcast" "$work/app.out"
[ "$(pkg-config --modversion oneflow_like)" = "$(cat tools/cpp_api/VERSION)" ]

echo "== 3. CMake find_package + the examples"
cmake -S examples/cpp -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
for m in mlp cnn; do
  "$work/build/serve" "tests/testdata/artifacts/2/${m}_infer.oflx" "tests/testdata/artifacts/2/${m}_infer.npz"
done
"$work/build/train_digits" --epochs 30 --min-accuracy 0.95
