// Shared by the op-table introspection bindings (flow._C._<family>_table()): an attribute struct's
// defaults as a Python dict, in declaration order (one call into binding.cc per field), and the
// rows themselves as static data that one function in binding.cc (DefTableSpec) turns into dicts.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
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

// A table row: its cells in the family's column order, joined by '|' at compile time
// (`#name "|" #grad`), and the attribute struct's defaults (null when the row has none). One
// string per row keeps the tables' static data small: a pointer each, not one per cell.
struct TableRow {
  const char* cells;
  pybind11::dict (*attrs)() = nullptr;
};
// The columns, joined the same way ("name|grad|#nd"); a leading '#' marks an integer column.
struct TableSpec {
  const char* op_cols;
  const TableRow* ops;
  size_t n_ops;
  const char* api_cols;  // null: the table is the list of op rows alone
  const TableRow* apis;
  size_t n_apis;
};
// Defines m.<name>(): {"ops": [row dicts], "apis": [row dicts]}, or the op rows' list alone.
void DefTableSpec(pybind11::module_& m, const char* name, const TableSpec& spec);

template <size_t R>
void DefTable(pybind11::module_& m, const char* name, const char* cols, const TableRow (&rows)[R]) {
  DefTableSpec(m, name, {cols, rows, R, nullptr, nullptr, 0});
}
template <size_t R, size_t AR>
void DefTable(pybind11::module_& m, const char* name, const char* cols, const TableRow (&rows)[R],
              const char* api_cols, const TableRow (&api_rows)[AR]) {
  DefTableSpec(m, name, {cols, rows, R, api_cols, api_rows, AR});
}

}  // namespace python
}  // namespace oneflow_like
