#!/usr/bin/env bash
# Checks the dynamic symbol table of liboneflow_like.so: every defined symbol belongs to the public
# API (oneflow_like::v1, its typeinfo and vtables), no symbol mentions abseil or a runtime type,
# and the API's entry points are there.
set -euo pipefail
lib=$1
# Demangled names; a template's starts with its return type (float, std::vector<float, ...>), dropped.
syms=$(nm -DC --defined-only "$lib" | cut -d' ' -f3- |
       sed -E '/^(typeinfo|vtable) for /!s/^(std::vector<[a-z ]+, std::allocator<[a-z ]+> > |[a-z ]+\*? )(oneflow_like::)/\2/')
n=$(echo "$syms" | wc -l)
bad=$(echo "$syms" | grep -Ev '^((typeinfo|typeinfo name|vtable) for )?oneflow_like::v1::' || true)
if [ -n "$bad" ]; then echo "exported symbols outside the public API:"; echo "$bad" | head -20; exit 1; fi
leak=$(echo "$syms" | grep -E 'absl|pybind|oneflow_like::(Tensor|TensorImpl|Device|DType|vm|functional|lazy|hlo|artifact)\b' || true)
if [ -n "$leak" ]; then echo "exported symbols naming internal types:"; echo "$leak" | head -20; exit 1; fi
for want in 'oneflow_like::v1::Tensor::backward' 'oneflow_like::v1::matmul(' \
            'oneflow_like::v1::Graph::Load' 'typeinfo for oneflow_like::v1::Error' \
            'oneflow_like::v1::exp(' 'oneflow_like::v1::nn::Linear::forward' \
            'oneflow_like::v1::optim::Adam::step'; do
  grep -qF "$want" <<<"$syms" || { echo "missing export: $want"; exit 1; }
done
# The runtime's own symbols stay local (spot checks).
if nm -D --defined-only "$lib" | grep -q '_ZN12oneflow_like10functional'; then
  echo "runtime functional entries exported"; exit 1
fi
echo "ok: $n exported symbols, all in oneflow_like::v1"
