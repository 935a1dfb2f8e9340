// The per-field reads and writes of opdefs/attrs.h, out of line: every attribute struct's
// ReadAttrs/ToAttrMap is a list of calls to these.
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace opdefs {
namespace detail {

void ReadField(const AttrMap& m, const char* name, bool* field) {
  *field = m.Bool(name, *field);
}
void ReadField(const AttrMap& m, const char* name, double* field) {
  *field = m.Float(name, *field);
}
void ReadField(const AttrMap& m, const char* name, int64_t* field) {
  *field = m.Int(name, *field);
}
void ReadField(const AttrMap& m, const char* name, std::vector<int64_t>* field) {
  if (m.Has(name)) *field = m.Ints(name);
}
void ReadField(const AttrMap& m, const char* name, std::string* field) {
  *field = m.Str(name, *field);
}
void ReadField(const AttrMap& m, const char* name, DType* field) {
  *field = m.Dtype(name, *field);
}

void WriteField(AttrMap* m, const char* name, bool v) {
  m->Set(name, v);
}
void WriteField(AttrMap* m, const char* name, double v) {
  m->Set(name, v);
}
void WriteField(AttrMap* m, const char* name, int64_t v) {
  m->Set(name, v);
}
void WriteField(AttrMap* m, const char* name, const std::vector<int64_t>& v) {
  m->Set(name, v);
}
void WriteField(AttrMap* m, const char* name, const std::string& v) {
  m->Set(name, v);
}
void WriteField(AttrMap* m, const char* name, DType v) {
  m->Set(name, v);
}

}  // namespace detail
}  // namespace opdefs
}  // namespace oneflow_like
