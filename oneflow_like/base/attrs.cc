#include "oneflow_like/base/attrs.h"

#include "absl/strings/str_join.h"

namespace oneflow_like {

std::string AttrMap::ToString() const {
  std::string out;
  for (auto& [name, v] : items_) {
    if (!out.empty()) out += ", ";
    absl::StrAppend(&out, name, "=");
    std::visit(
        [&](auto&& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
            absl::StrAppend(&out, x);
          else if constexpr (std::is_same_v<T, bool>)
            absl::StrAppend(&out, x ? "true" : "false");
          else if constexpr (std::is_same_v<T, DType>)
            absl::StrAppend(&out, DTypeName(x));
          else if constexpr (std::is_same_v<T, std::string>)
            absl::StrAppend(&out, "\"", x, "\"");
          else
            absl::StrAppend(&out, "{", absl::StrJoin(x, ","), "}");
        },
        v);
  }
  return out;
}

}  // namespace oneflow_like
