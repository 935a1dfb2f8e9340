#include "compiler/thunks/thunks.h"

#include <algorithm>

#include "oneflow_like/base/thread_pool.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "absl/strings/str_join.h"

// Profiler hooks, declared weakly (Note [Profiler recording], base/trace_recorder.h).
namespace oneflow_like::profiler {
extern std::atomic<bool> g_enabled __attribute__((weak));
int64_t CurrentTrack() __attribute__((weak));
void RecordSpan(int64_t track, std::string_view name, const char* category, int64_t begin_ns,
                int64_t end_ns, uint64_t flow_in, uint64_t call_id, std::string_view args)
    __attribute__((weak));
}  // namespace oneflow_like::profiler

namespace oneflow_like::hlo {
namespace {
// The profiler's clock (profiler::NowTicks in base/trace_recorder.h): the TSC.
inline int64_t Ticks() {
  return static_cast<int64_t>(__builtin_ia32_rdtsc());
}
// Each thunk as a span nested in the LaunchLazyJob instruction's span on its stream's track.
Status ExecuteProfiled(ThunkSequence& seq, const Thunk::ExecuteParams& p, int64_t track) {
  for (auto& t : seq) {
    const int64_t begin = Ticks();
    Status s = t->ExecuteOnStream(p);
    const int64_t end = Ticks();
    profiler::RecordSpan(track, t->name(), "thunk", begin, end, 0, 0,
                         absl::StrCat("\"kind\": \"", ThunkKindString(t->kind()), "\""));
    RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}
}  // namespace

const char* ThunkKindString(Thunk::Kind k) {
  static const char* kNames[] = {"kernel",       "gemm",       "convolution", "copy",
                                 "memset",       "sequential", "while",       "conditional",
                                 "library-call", "evaluator",  "dispatch"};
  return kNames[static_cast<int>(k)];
}

std::string Thunk::ToString(int indent) const {
  std::string d = Details();
  return absl::StrCat(std::string(indent, ' '), ThunkKindString(kind_), " %", name_,
                      d.empty() ? "" : " ", d, "\n");
}

std::string ThunkSequenceToString(const ThunkSequence& seq, int indent) {
  std::string s;
  for (const auto& t : seq) s += t->ToString(indent);
  return s;
}

Status PrepareAll(ThunkSequence& seq, const Thunk::PrepareParams& p) {
  for (auto& t : seq) RETURN_IF_ERROR(t->Prepare(p));
  return absl::OkStatus();
}
Status InitializeAll(ThunkSequence& seq, const Thunk::InitializeParams& p) {
  for (auto& t : seq) RETURN_IF_ERROR(t->Initialize(p));
  return absl::OkStatus();
}
// ONEFLOW_LIKE_THUNK_PROFILE=1 prints each thunk's wall time to stderr (a debugging aid).
Status ExecuteAll(ThunkSequence& seq, const Thunk::ExecuteParams& p) {
  static const bool profile = [] {
    const char* e = std::getenv("ONEFLOW_LIKE_THUNK_PROFILE");
    return e != nullptr && e[0] != '\0' && e[0] != '0';
  }();
  if (&profiler::g_enabled != nullptr && profiler::g_enabled.load(std::memory_order_relaxed)) {
    const int64_t track = profiler::CurrentTrack();
    if (track != 0) return ExecuteProfiled(seq, p, track);
  }
  if (!profile) {
    for (auto& t : seq) RETURN_IF_ERROR(t->ExecuteOnStream(p));
    return absl::OkStatus();
  }
  for (auto& t : seq) {
    auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(t->ExecuteOnStream(p));
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "[thunk-profile] %9.1f us  %s\n", us,
                 t->ToString(0).substr(0, 160).c_str());
  }
  return absl::OkStatus();
}

namespace {
std::string Slices(const std::vector<BufferSlice>& v) {
  std::vector<std::string> parts;
  for (const auto& s : v) parts.push_back(s.ToString());
  return absl::StrJoin(parts, ", ");
}
void CopyIfDifferent(const BufferAllocations& b, const BufferSlice& src, const BufferSlice& dst) {
  char *s = b.Get(src), *d = b.Get(dst);
  if (s != d && dst.size > 0) std::memmove(d, s, dst.size);
}
}  // namespace

Status KernelThunk::Initialize(const InitializeParams& p) {
  if (p.kernels == nullptr) return Internal("[kernel %s] no kernel library", name());
  ASSIGN_OR_RETURN(void* sym, p.kernels->Resolve(kernel_name_));
  fn_ = reinterpret_cast<CpuKernelFn>(sym);
  // Row kernels (the C++ dialect's row loops) export their row length; others have none.
  auto row = p.kernels->Resolve(kernel_name_ + "_row");
  row_ = row.ok() ? std::max<int64_t>(1, *reinterpret_cast<const int64_t*>(*row)) : 1;
  return absl::OkStatus();
}

Status KernelThunk::ExecuteOnStream(const ExecuteParams& p) {
  if (fn_ == nullptr) return Internal("[kernel %s] not initialized", name());
  char* ptrs[64];
  if (args_.size() > 64) return Internal("[kernel %s] too many arguments", name());
  for (size_t i = 0; i < args_.size(); ++i) ptrs[i] = p.buffers->Get(args_[i]);
  if (work_ < 2 * kParallelWork || num_elements_ < 2) {
    fn_(ptrs, 0, num_elements_);
    return absl::OkStatus();
  }
  // Grain in output elements so that each chunk does about kParallelWork operations.
  const int64_t per_element = std::max<int64_t>(1, work_ / std::max<int64_t>(1, num_elements_));
  const int64_t grain = std::max<int64_t>(1, kParallelWork / per_element);
  CpuKernelFn fn = fn_;
  if (row_ > 1 && row_ <= grain) {
    // Chunks of whole rows: no partial rows at chunk edges.
    const int64_t n = num_elements_, row = row_, rows = (n + row - 1) / row;
    IntraOpPool()->ParallelFor(rows, grain / row, [fn, &ptrs, n, row](int64_t b, int64_t e) {
      fn(ptrs, b * row, std::min(n, e * row));
    });
    return absl::OkStatus();
  }
  IntraOpPool()->ParallelFor(num_elements_, grain,
                             [fn, &ptrs](int64_t b, int64_t e) { fn(ptrs, b, e); });
  return absl::OkStatus();
}

std::string KernelThunk::Details() const {
  return absl::StrCat(kernel_name_, " n=", num_elements_,
                      work_ > num_elements_ ? absl::StrCat(" work=", work_) : "",
                      row_ > 1 ? absl::StrCat(" row=", row_) : "", " args=[", Slices(args_), "]");
}

Status CopyThunk::ExecuteOnStream(const ExecuteParams& p) {
  CopyIfDifferent(*p.buffers, src_, dst_);
  return absl::OkStatus();
}

std::string CopyThunk::Details() const {
  return absl::StrCat(src_.ToString(), " -> ", dst_.ToString());
}

Status MemsetThunk::ExecuteOnStream(const ExecuteParams& p) {
  std::memset(p.buffers->Get(dst_), byte_, dst_.size);
  return absl::OkStatus();
}

std::string SequentialThunk::ToString(int indent) const {
  return absl::StrCat(Thunk::ToString(indent), ThunkSequenceToString(thunks_, indent + 2));
}

Status WhileThunk::Prepare(const PrepareParams& p) {
  RETURN_IF_ERROR(PrepareAll(condition_, p));
  return PrepareAll(body_, p);
}
Status WhileThunk::Initialize(const InitializeParams& p) {
  RETURN_IF_ERROR(InitializeAll(condition_, p));
  return InitializeAll(body_, p);
}

Status WhileThunk::ExecuteOnStream(const ExecuteParams& p) {
  for (size_t k = 0; k < state_.size(); ++k) CopyIfDifferent(*p.buffers, init_[k], state_[k]);
  while (true) {
    RETURN_IF_ERROR(ExecuteAll(condition_, p));
    if (*reinterpret_cast<const bool*>(p.buffers->Get(pred_)) == false) break;
    RETURN_IF_ERROR(ExecuteAll(body_, p));
    for (size_t k = 0; k < state_.size(); ++k) CopyIfDifferent(*p.buffers, results_[k], state_[k]);
  }
  return absl::OkStatus();
}

std::string WhileThunk::ToString(int indent) const {
  std::string pad(indent + 2, ' ');
  return absl::StrCat(Thunk::ToString(indent), pad, "condition (pred ", pred_.ToString(), "):\n",
                      ThunkSequenceToString(condition_, indent + 4), pad, "body:\n",
                      ThunkSequenceToString(body_, indent + 4));
}

Status ConditionalThunk::Prepare(const PrepareParams& p) {
  for (auto& b : branches_) RETURN_IF_ERROR(PrepareAll(b, p));
  return absl::OkStatus();
}
Status ConditionalThunk::Initialize(const InitializeParams& p) {
  for (auto& b : branches_) RETURN_IF_ERROR(InitializeAll(b, p));
  return absl::OkStatus();
}

Status ConditionalThunk::ExecuteOnStream(const ExecuteParams& p) {
  const int64_t n = branches_.size();
  int64_t b;
  if (is_pred_) {
    b = *reinterpret_cast<const bool*>(p.buffers->Get(index_)) ? 0 : 1;
  } else {
    int32_t v;
    std::memcpy(&v, p.buffers->Get(index_), 4);
    b = (v < 0 || v >= n) ? n - 1 : v;
  }
  RETURN_IF_ERROR(ExecuteAll(branches_[b], p));
  for (size_t k = 0; k < results_.size(); ++k)
    CopyIfDifferent(*p.buffers, branch_results_[b][k], results_[k]);
  return absl::OkStatus();
}

std::string ConditionalThunk::ToString(int indent) const {
  std::string s = Thunk::ToString(indent);
  for (size_t b = 0; b < branches_.size(); ++b)
    absl::StrAppend(&s, std::string(indent + 2, ' '), "branch ", b, ":\n",
                    ThunkSequenceToString(branches_[b], indent + 4));
  return s;
}

}  // namespace oneflow_like::hlo
