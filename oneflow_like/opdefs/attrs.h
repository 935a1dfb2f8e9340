// Host side of the op tables' attribute structs: read once from an op call's AttrMap (missing
// attributes keep the table's defaults) and written back into one. Field types: bool, double,
// std::vector<int64_t>, std::string, DType, and integers/enums stored as int64. Each field is one
// call into attrs.cc (the AttrMap lookups and writes are not inlined per struct: with a table per
// family that kept the runtime library's size where it was).
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "oneflow_like/base/attrs.h"
#include "oneflow_like/opdefs/ternary.h"

namespace oneflow_like {
namespace opdefs {
namespace detail {
// The stored types; another integer or an enum goes through int64_t.
template <typename T>
inline constexpr bool kStored =
    std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::string> ||
    std::is_same_v<T, DType>;
// *field = the attribute `name` of m when m has it (else *field, the default, is left alone).
void ReadField(const AttrMap& m, const char* name, bool* field);
void ReadField(const AttrMap& m, const char* name, double* field);
void ReadField(const AttrMap& m, const char* name, int64_t* field);
void ReadField(const AttrMap& m, const char* name, std::vector<int64_t>* field);
void ReadField(const AttrMap& m, const char* name, std::string* field);
void ReadField(const AttrMap& m, const char* name, DType* field);
void WriteField(AttrMap* m, const char* name, bool v);
void WriteField(AttrMap* m, const char* name, double v);
void WriteField(AttrMap* m, const char* name, int64_t v);
void WriteField(AttrMap* m, const char* name, const std::vector<int64_t>& v);
void WriteField(AttrMap* m, const char* name, const std::string& v);
void WriteField(AttrMap* m, const char* name, DType v);
}  // namespace detail

template <typename Attrs>
Attrs ReadAttrs(const AttrMap& m) {
  Attrs a;
  ForEachAttr(a, [&](const char* name, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (detail::kStored<T>) {
      detail::ReadField(m, name, &field);
    } else {
      static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "an attribute's type");
      int64_t v = static_cast<int64_t>(field);
      detail::ReadField(m, name, &v);
      field = static_cast<T>(v);
    }
  });
  return a;
}

template <typename Attrs>
AttrMap ToAttrMap(Attrs a) {
  AttrMap m;
  ForEachAttr(a, [&](const char* name, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (detail::kStored<T>)
      detail::WriteField(&m, name, field);
    else
      detail::WriteField(&m, name, static_cast<int64_t>(field));
  });
  return m;
}

}  // namespace opdefs
}  // namespace oneflow_like
