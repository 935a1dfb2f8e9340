// The Python side of vm/issue_site.h: an instruction's issue site is the innermost Python frame
// outside the oneflow_like package (the user's line), interned by (code object, instruction
// offset) under the GIL. A site seen before costs a frame walk and one hash lookup; its text
// ("file.py:12 in f") is made once, when first seen, and read by any thread on failure.
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "python/csrc/binding.h"
#include "vm/issue_site.h"

namespace oneflow_like {
namespace python {
namespace {

struct SiteKeyHash {
  size_t operator()(const std::pair<PyCodeObject*, int>& k) const {
    return std::hash<const void*>()(k.first) * 31 + static_cast<size_t>(k.second);
  }
};

struct SiteTable {
  // Guarded by the GIL (the capture hook runs only on a thread holding it).
  std::unordered_map<std::pair<PyCodeObject*, int>, uint32_t, SiteKeyHash> ids;
  // Whether a code object belongs to the package (skipped for its caller). Each key holds a
  // reference, so its address cannot be reused by another code object.
  std::unordered_map<PyCodeObject*, bool> in_package;
  std::string package_dir;  // ".../oneflow_like/"
  std::mutex mu;            // guards texts: read by the VM's threads when an instruction fails
  std::vector<std::string> texts;  // id - 1 -> "file.py:12 in f"
};
SiteTable& Sites() {
  static auto* t = new SiteTable;  // leaked: hooks may run late in interpreter shutdown
  return *t;
}
constexpr int kMaxDepth = 32;
constexpr size_t kMaxSites = size_t{1} << 20;  // past this (generated code), sites are unnamed

bool InPackage(SiteTable& t, PyCodeObject* code) {
  auto it = t.in_package.find(code);
  if (it != t.in_package.end()) return it->second;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file == nullptr) PyErr_Clear();
  const bool in = file != nullptr && !t.package_dir.empty() &&
                  std::strncmp(file, t.package_dir.data(), t.package_dir.size()) == 0;
  Py_INCREF(reinterpret_cast<PyObject*>(code));
  t.in_package.emplace(code, in);
  return in;
}

uint32_t Intern(SiteTable& t, PyCodeObject* code, int lasti) {
  auto it = t.ids.find({code, lasti});
  if (it != t.ids.end()) return it->second;
  if (t.texts.size() >= kMaxSites) return 0;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file == nullptr) PyErr_Clear();
  const char* fn = PyUnicode_AsUTF8(code->co_name);
  if (fn == nullptr) PyErr_Clear();
  std::string text =
      absl::StrCat(file ? file : "?", ":", PyCode_Addr2Line(code, lasti), " in ", fn ? fn : "?");
  uint32_t id;
  {
    std::lock_guard<std::mutex> l(t.mu);
    t.texts.push_back(std::move(text));
    id = static_cast<uint32_t>(t.texts.size());
  }
  t.ids.emplace(std::make_pair(code, lasti), id);  // `code` is kept alive by in_package
  return id;
}

uint32_t CaptureSite() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return 0;
  SiteTable& t = Sites();
  // A release may be issued while an exception unwinds: leave the pending error as it was.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  uint32_t id = 0;
  PyFrameObject* f = PyThreadState_GetFrame(PyThreadState_Get());  // new reference (or null)
  PyCodeObject* innermost = nullptr;
  int innermost_lasti = 0;
  for (int depth = 0; f != nullptr && depth < kMaxDepth; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    const int lasti = PyFrame_GetLasti(f);
    const bool in = InPackage(t, code);  // holds its own reference from here on
    Py_DECREF(code);
    if (!in) {
      id = Intern(t, code, lasti);
      innermost = nullptr;
      break;
    }
    if (innermost == nullptr) {
      innermost = code;
      innermost_lasti = lasti;
    }
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  if (innermost != nullptr) id = Intern(t, innermost, innermost_lasti);  // only package frames
  PyErr_Restore(type, value, traceback);
  return id;
}

std::string DescribeSite(uint32_t id) {
  SiteTable& t = Sites();
  std::lock_guard<std::mutex> l(t.mu);
  return id >= 1 && id <= t.texts.size() ? t.texts[id - 1] : std::string();
}

// `package_dir`: the oneflow_like package's directory, whose frames name their caller instead;
// None turns the capture off (errors then name no line).
void SetIssueSites(py::object package_dir) {
  if (package_dir.is_none()) {
    vm::SetIssueSiteHooks({});
    return;
  }
  std::string dir = package_dir.cast<std::string>();
  if (!dir.empty() && dir.back() != '/') dir += '/';
  Sites().package_dir = dir;  // under the GIL, as every reader
  vm::SetIssueSiteHooks({&CaptureSite, &DescribeSite});
}

void BindIssueSites(py::module_& m, TensorClass&) {
  m.def("_set_issue_sites", &SetIssueSites, py::arg("package_dir"),
        "Names the Python line that issued an op in its asynchronous errors (None: off).");
}
OFL_PY_BINDING(BindIssueSites);

}  // namespace
}  // namespace python
}  // namespace oneflow_like
