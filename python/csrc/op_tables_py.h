// Shared by the op-table introspection bindings (flow._C._unary_table(), _binary_table()):
// an attribute struct's defaults as a Python dict, in declaration order.
#pragma once
#include <pybind11/pybind11.h>

#include "oneflow_like/opdefs/binary.h"

namespace oneflow_like {
namespace python {

template <typename Attrs>
pybind11::dict AttrsDict() {
  pybind11::dict d;
  Attrs a;
  opdefs::ForEachAttr(a, [&](const char* n, auto& v) { d[n] = v; });
  return d;
}

}  // namespace python
}  // namespace oneflow_like
