// AttrMap: the attributes of an op call (axis lists, scalars, flags, dtypes), a small ordered
// list of (name, value). Read by kernels, gradient formulas and the HLO lowering alike.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {

using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, std::vector<double>,
                               DType, std::string>;

class AttrMap {
 public:
  AttrMap() = default;
  AttrMap(std::initializer_list<std::pair<const char*, AttrValue>> init)
      : items_(init.begin(), init.end()) {}

  AttrMap& Set(const char* name, AttrValue v) {
    for (auto& kv : items_)
      if (std::string_view(kv.first) == name) {
        kv.second = std::move(v);
        return *this;
      }
    items_.emplace_back(name, std::move(v));
    return *this;
  }
  bool Has(const char* name) const { return Find(name) != nullptr; }
  const AttrValue* Find(const char* name) const {
    for (auto& kv : items_)
      if (std::string_view(kv.first) == name) return &kv.second;
    return nullptr;
  }
  // Typed getters; a missing or mistyped attribute is a programmer bug, so they return a default
  // and the op's schema is expected to set every attribute its kernel reads.
  int64_t Int(const char* name, int64_t def = 0) const {
    auto* v = Get<int64_t>(name);
    return v ? *v : def;
  }
  double Float(const char* name, double def = 0) const {
    if (auto* v = Get<double>(name)) return *v;
    if (auto* i = Get<int64_t>(name)) return static_cast<double>(*i);
    return def;
  }
  bool Bool(const char* name, bool def = false) const {
    auto* v = Get<bool>(name);
    return v ? *v : def;
  }
  DType Dtype(const char* name, DType def = DType::kF32) const {
    auto* v = Get<DType>(name);
    return v ? *v : def;
  }
  const std::vector<int64_t>& Ints(const char* name) const {
    static const std::vector<int64_t> empty;
    auto* v = Get<std::vector<int64_t>>(name);
    return v ? *v : empty;
  }
  const std::vector<double>& Floats(const char* name) const {
    static const std::vector<double> empty;
    auto* v = Get<std::vector<double>>(name);
    return v ? *v : empty;
  }
  std::string Str(const char* name, const std::string& def = "") const {
    auto* v = Get<std::string>(name);
    return v ? *v : def;
  }
  const absl::InlinedVector<std::pair<const char*, AttrValue>, 4>& items() const { return items_; }
  std::string ToString() const;

 private:
  template <typename T>
  const T* Get(const char* name) const {
    const AttrValue* v = Find(name);
    return v ? std::get_if<T>(v) : nullptr;
  }
  // Names are string literals owned by the op's definition.
  absl::InlinedVector<std::pair<const char*, AttrValue>, 4> items_;
};

}  // namespace oneflow_like
