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

// One cell of a table row: a column's text or a number. Constexpr, so a family's rows are static
// data; one builder (DefTable, binding.cc) turns every family's rows into Python dicts.
struct TableValue {
  constexpr TableValue() = default;
  constexpr TableValue(const char* t) : text(t) {}  // NOLINT: rows are braced lists of cells
  constexpr TableValue(int n) : num(n) {}           // NOLINT
  const char* text = nullptr;                       // null: the cell is the number
  int64_t num = 0;
};
// A row: its cells in the family's column order, and the attribute struct's defaults (null when
// the row has none).
struct TableRow {
  TableValue cells[8];
  pybind11::dict (*attrs)() = nullptr;
};
struct TableSpec {
  const char* const* op_cols;
  size_t n_op_cols;
  const TableRow* ops;
  size_t n_ops;
  const char* const* api_cols;  // null: the table is the list of op rows alone
  size_t n_api_cols;
  const TableRow* apis;
  size_t n_apis;
};
// Defines m.<name>(): {"ops": [row dicts], "apis": [row dicts]}, or the op rows' list alone.
void DefTableSpec(pybind11::module_& m, const char* name, const TableSpec& spec);

template <size_t C, size_t R>
void DefTable(pybind11::module_& m, const char* name, const char* const (&cols)[C],
              const TableRow (&rows)[R]) {
  static_assert(C <= 8, "a table row holds 8 cells");
  DefTableSpec(m, name, {cols, C, rows, R, nullptr, 0, nullptr, 0});
}
template <size_t C, size_t R, size_t AC, size_t AR>
void DefTable(pybind11::module_& m, const char* name, const char* const (&cols)[C],
              const TableRow (&rows)[R], const char* const (&api_cols)[AC],
              const TableRow (&api_rows)[AR]) {
  static_assert(C <= 8 && AC <= 8, "a table row holds 8 cells");
  DefTableSpec(m, name, {cols, C, rows, R, api_cols, AC, api_rows, AR});
}

}  // namespace python
}  // namespace oneflow_like
