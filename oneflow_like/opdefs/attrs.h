// Host side of the op tables' attribute structs: read once from an op call's AttrMap (missing
// attributes keep the table's defaults) and written back into one. Field types: bool, double,
// std::vector<int64_t>, std::string, DType, and integers/enums stored as int64.
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "oneflow_like/base/attrs.h"
#include "oneflow_like/opdefs/ternary.h"

namespace oneflow_like {
namespace opdefs {

template <typename Attrs>
Attrs ReadAttrs(const AttrMap& m) {
  Attrs a;
  ForEachAttr(a, [&](const char* name, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, bool>)
      field = m.Bool(name, field);
    else if constexpr (std::is_same_v<T, double>)
      field = m.Float(name, field);
    else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
      field = m.Has(name) ? m.Ints(name) : field;
    else if constexpr (std::is_same_v<T, std::string>)
      field = m.Str(name, field);
    else if constexpr (std::is_same_v<T, DType>)
      field = m.Dtype(name, field);
    else
      field = static_cast<T>(m.Int(name, field));
  });
  return a;
}

template <typename Attrs>
AttrMap ToAttrMap(Attrs a) {
  AttrMap m;
  ForEachAttr(a, [&](const char* name, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> ||
                  std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::string> ||
                  std::is_same_v<T, DType>)
      m.Set(name, field);
    else
      m.Set(name, static_cast<int64_t>(field));
  });
  return m;
}

}  // namespace opdefs
}  // namespace oneflow_like
