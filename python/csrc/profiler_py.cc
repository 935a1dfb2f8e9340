// flow.profiler's C++ side: starts and stops a recording session and hands the raw events to
// python/oneflow_like/profiler, which builds the trace, key_averages and the Chrome JSON.
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/collective_instruction_policy.h"
#include "oneflow_like/base/trace_recorder.h"
#include "python/csrc/binding.h"
#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace python {
namespace {

// Event names come from C++ and Python (record_function); decode leniently so one bad byte
// cannot make the whole trace unreadable.
py::str Utf8(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

// ---- with_stack: each op call's Python stack, interned (Note [Profiler recording]) ----------
// A stack is keyed by its frames' (code object, instruction offset) pairs; its text ("file(line):
// function", innermost frame first, as torch.profiler's FunctionEvent.stack) is made once, when the
// stack is first seen. Guarded by the GIL: the hook runs only on a thread that holds it, and Start
// and Collect are called from Python.
struct StackTable {
  std::unordered_map<std::string, uint64_t> ids;
  std::vector<std::vector<std::string>> frames;  // id - 1 -> frames
  // The code objects of interned stacks, kept alive for the session so that an address in a key
  // cannot be reused by another function.
  std::unordered_set<PyObject*> codes;
  std::vector<std::pair<PyCodeObject*, int>> scratch_frames;
  std::string scratch_key;
  void Clear() {
    ids.clear();
    frames.clear();
    for (PyObject* c : codes) Py_DECREF(c);
    codes.clear();
  }
};
StackTable& Stacks() {
  static auto* t = new StackTable;  // leaked: the hook may run late in interpreter shutdown
  return *t;
}
constexpr int kMaxStackDepth = 128;

// The profiler's own frames (record_function's decorator wrapper) are left out, as torch leaves
// out its profiling helpers.
bool IsProfilerFrame(PyCodeObject* code) {
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file == nullptr) {
    PyErr_Clear();
    return false;
  }
  return std::strstr(file, "oneflow_like/profiler/") != nullptr;
}

uint64_t InternStack(PyThreadState* ts) {
  // Keyed by (code object, instruction offset): no line-table walk, no file-name check and no
  // allocation (scratch buffers, under the GIL) for a stack seen before.
  StackTable& t = Stacks();
  std::vector<std::pair<PyCodeObject*, int>>& frames = t.scratch_frames;
  std::string& key = t.scratch_key;
  frames.clear();
  key.clear();
  PyFrameObject* f = PyThreadState_GetFrame(ts);  // new reference (or null)
  while (f != nullptr && static_cast<int>(frames.size()) < kMaxStackDepth) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    const int lasti = PyFrame_GetLasti(f);
    frames.emplace_back(code, lasti);
    const uintptr_t part[2] = {reinterpret_cast<uintptr_t>(code), static_cast<uintptr_t>(lasti)};
    key.append(reinterpret_cast<const char*>(part), sizeof(part));  // no padding bytes
    Py_DECREF(code);  // kept alive by the frame, and by `codes` once interned
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  if (frames.empty()) return 0;
  auto it = t.ids.find(key);
  if (it != t.ids.end()) return it->second;
  std::vector<std::string> text;
  text.reserve(frames.size());
  for (const auto& [code, lasti] : frames) {
    if (t.codes.insert(reinterpret_cast<PyObject*>(code)).second)
      Py_INCREF(reinterpret_cast<PyObject*>(code));
    if (IsProfilerFrame(code)) continue;
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* fn = PyUnicode_AsUTF8(code->co_name);
    if (file == nullptr || fn == nullptr) PyErr_Clear();
    text.push_back(
        absl::StrCat(file ? file : "?", "(", PyCode_Addr2Line(code, lasti), "): ", fn ? fn : "?"));
  }
  uint64_t id = 0;  // only the profiler's own frames: no stack
  if (!text.empty()) {
    t.frames.push_back(std::move(text));
    id = t.frames.size();
  }
  t.ids.emplace(key, id);
  return id;
}

// The hook: only on a thread holding the GIL (not, e.g., a VM worker), and leaving any Python
// error pending at the op's end as it was (an op may end while an exception unwinds).
uint64_t CaptureStack() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return 0;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  const uint64_t id = InternStack(PyThreadState_Get());
  PyErr_Restore(type, value, traceback);
  return id;
}

void Start(bool record_shapes, bool profile_memory, bool with_stack) {
  if (profiler::Enabled())
    throw py::value_error("[profiler] a profiler is already recording; profilers do not nest");
  Stacks().Clear();
  profiler::SetStackHook(&CaptureStack);
  profiler::Start(record_shapes, profile_memory, with_stack);
}

// Stops recording after the VM drained, so every instruction issued while recording is in.
void Stop() {
  Status drained;
  {
    py::gil_scoped_release release;
    drained = vm::VirtualMachine::Get()->SyncAll();
  }
  profiler::Stop();
  Check(drained);
}

// A stream track's name in the trace: the collective stream ("cpu/collective") is "collectives";
// a lazy-job stream is the lazy launcher. Other streams keep the VM's name ("cpu/compute",
// "cuda:0/h2d", ...).
py::str TrackLabel(int64_t track, const std::string& name) {
  const Device collective = distributed::CollectiveStreamDevice();
  const int role = static_cast<int>(distributed::kCollectiveStreamRole);
  const int lazy = static_cast<int>(vm::StreamRole::kLazyJob);
  if (track == profiler::StreamTrack(static_cast<int>(collective.type()), collective.index(), role))
    return Utf8("collectives");
  if (track >= profiler::kStreamTrackBase && (track - profiler::kStreamTrackBase) % 8 == lazy)
    return Utf8(absl::StrCat("lazy launcher (", name, ")"));
  return Utf8(name);
}

// (events, track_names, dropped, stacks). An event: (type, track, begin_ns, end_ns, flow_id,
// call_id, value, name, category, args) with type 0 = span, 1 = flow start, 2 = counter; an op
// call's span holds its stack id in `value` (0: none); stacks: {id: [frames, innermost first]}.
py::tuple Collect() {
  profiler::Collected c;
  {
    py::gil_scoped_release release;
    c = profiler::Collect();
  }
  py::list events;
  for (const auto& e : c.events) {
    py::str name = e.static_name != nullptr ? Utf8(e.static_name) : Utf8(e.name);
    events.append(py::make_tuple(static_cast<int>(e.type), e.track, e.begin_ns, e.end_ns, e.flow_id,
                                 e.call_id, e.value, name, Utf8(e.category), Utf8(e.args)));
  }
  py::list tracks;
  for (const auto& [track, name] : c.track_names)
    tracks.append(py::make_tuple(track, TrackLabel(track, name)));
  py::dict stacks;
  const StackTable& t = Stacks();
  for (size_t i = 0; i < t.frames.size(); ++i) {
    py::list frames;
    for (const std::string& fr : t.frames[i]) frames.append(Utf8(fr));
    stacks[py::int_(i + 1)] = frames;
  }
  return py::make_tuple(events, tracks, c.dropped, stacks);
}

void BindProfiler(py::module_& m, TensorClass&) {
  m.def("_profiler_start", &Start, py::arg("record_shapes"), py::arg("profile_memory"),
        py::arg("with_stack") = false);
  m.def("_profiler_stop", &Stop);
  m.def("_profiler_collect", &Collect);
  m.def("_profiler_enabled", [] { return profiler::Enabled(); });
  m.def("_profiler_now_ns", [] { return profiler::NowNs(); });
  m.def("_profiler_thread_track", [] { return profiler::ThisThreadTrack(); });
  m.def("_profiler_stream_track", [](int device_type, int index, int role) {
    return profiler::StreamTrack(device_type, index, role);
  });
}

}  // namespace
OFL_PY_BINDING(BindProfiler);
}  // namespace python
}  // namespace oneflow_like
