// Shared by the op-table introspection bindings (flow._C._<family>_table()): an attribute struct's
// defaults as a Python dict, in declaration order, and a table row as a dict (TableDict). Both are
// calls into binding.cc per field or cell, so the tables' many rows and structs add little code.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/binary.h"

namespace oneflow_like {
namespace python {
namespace table_detail {
void PutDefault(pybind11::dict* d, const char* name, bool v);
void PutDefault(pybind11::dict* d, const char* name, double v);
void PutDefault(pybind11::dict* d, const char* name, int64_t v);
void PutDefault(pybind11::dict* d, const char* name, const std::vector<int64_t>& v);
void PutDefault(pybind11::dict* d, const char* name, const std::string& v);
void PutDefault(pybind11::dict* d, const char* name, DType v);
}  // namespace table_detail

template <typename Attrs>
pybind11::dict AttrsDict() {
  pybind11::dict d;
  Attrs a;
  opdefs::ForEachAttr(a, [&](const char* n, auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (opdefs::detail::kStored<T>)
      table_detail::PutDefault(&d, n, v);
    else
      table_detail::PutDefault(&d, n, static_cast<int64_t>(v));
  });
  return d;
}

// One key and value of a table row (a column's text, a number, a flag or a Python object).
struct TableCell {
  TableCell(const char* key, const char* text);
  TableCell(const char* key, int v);
  TableCell(const char* key, int64_t v);
  TableCell(const char* key, bool v);
  TableCell(const char* key, pybind11::object v);
  const char* key;
  pybind11::object value;
};
pybind11::dict TableDict(std::initializer_list<TableCell> cells);

}  // namespace python
}  // namespace oneflow_like
