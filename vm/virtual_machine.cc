#include "vm/virtual_machine.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>
#include <typeinfo>

#include "absl/strings/match.h"
#include "oneflow_like/base/thread_pool.h"
#include "vm/instruction_policies.h"
#include "vm/issue_site.h"

// Profiler hooks, declared weakly (Note [Profiler recording], base/trace_recorder.h).
namespace oneflow_like::profiler {
extern std::atomic<bool> g_enabled __attribute__((weak));
struct ThreadRecorder;
ThreadRecorder* BeginInstruction(int64_t track, int64_t* outer) __attribute__((weak));
void EndInstruction(ThreadRecorder* recorder, int64_t outer, int64_t track, const char* literal,
                    std::string_view name, int64_t begin, int64_t end, uint64_t flow_in, bool error)
    __attribute__((weak));
void NoteInlineRun(int64_t track, int64_t begin, int64_t end, bool error) __attribute__((weak));
void NoteIssue(uint64_t flow_id) __attribute__((weak));
void NameTrack(int64_t track, std::string_view name) __attribute__((weak));
}  // namespace oneflow_like::profiler

namespace oneflow_like {
namespace vm {

namespace {
// ---- profiling: one span per executed instruction on its stream's track, and a flow arrow from
// the op call that issued it (Note [Profiler recording]).
inline bool ProfilerOn() {
  return &profiler::g_enabled != nullptr && profiler::g_enabled.load(std::memory_order_relaxed);
}
// The profiler's clock (profiler::NowTicks in base/trace_recorder.h): the TSC.
inline int64_t Ticks() {
  return static_cast<int64_t>(__builtin_ia32_rdtsc());
}
// The same numbering as profiler::StreamTrack (trace_recorder.h).
int64_t TrackOf(const Device& device, StreamRole role) {
  return (int64_t{1} << 24) +
         (int64_t{static_cast<int>(device.type())} * 1024 + device.index()) * 8 +
         static_cast<int>(role);
}
// Flow ids: the instruction id, with bits of the VM's address on top (tests run several VMs);
// bit 39 is left clear: the recorder sets it on work TryRunInline ran without an instruction
// (then the low bits are its call id; NoteInlineRun in base/trace_recorder.cc).
uint64_t FlowId(const void* vm, uint64_t id) {
  return ((reinterpret_cast<uintptr_t>(vm) >> 4) & 0xFFFFF) << 40 |
         (id & ((uint64_t{1} << 40) - 1));
}
// Records the issue of the instruction about to get id `next_id`, if an op call is issuing it.
void RecordIssue(const void* vm, uint64_t next_id) {
  profiler::NoteIssue(FlowId(vm, next_id));
}
void RunOnStream(const void* vm, Instruction* instr) {
  Stream* s = instr->stream();
  if (!ProfilerOn()) {
    s->policy()->Run(instr);
    return;
  }
  const int64_t track = TrackOf(s->device(), s->role());
  // An instruction may run another inline: the outer track is restored after.
  int64_t outer = 0;
  profiler::ThreadRecorder* recorder = profiler::BeginInstruction(track, &outer);
  const int64_t begin = Ticks();
  s->policy()->Run(instr);
  const int64_t end = Ticks();
  // The two instructions every eager op makes are named without building DebugName's string:
  // an op call's by the op call that issued it, at export (Launch issues every one inside a
  // profiled call; one issued before the session began shows as "instruction"), a release's by
  // a literal. (typeid's address: exact within this library; another type falls through.)
  const std::type_info& type = typeid(*instr->policy());
  const char* literal = &type == &typeid(OpCallInstructionPolicy)          ? ""
                        : &type == &typeid(ReleaseTensorInstructionPolicy) ? "release_tensor"
                                                                           : nullptr;
  profiler::EndInstruction(recorder, outer, track, literal,
                           literal == nullptr ? instr->DebugName() : std::string(), begin, end,
                           FlowId(vm, instr->id()), !instr->status().ok());
}

inline void CpuRelax() {
  __builtin_ia32_pause();
}
// Depth of VM work on this thread: > 0 on worker threads and while an instruction runs inline.
thread_local int t_instruction_depth = 0;
struct InstructionScope {
  InstructionScope() { ++t_instruction_depth; }
  ~InstructionScope() { --t_instruction_depth; }
};
}  // namespace

bool VirtualMachine::InsideInstruction() {
  return t_instruction_depth > 0;
}

namespace {
std::atomic<uint64_t> g_next_issuer{1};
thread_local uint64_t t_issuer = 0;
}  // namespace

uint64_t VirtualMachine::ThisThreadIssuer() {
  if (InsideInstruction()) return 0;
  if (t_issuer == 0) t_issuer = g_next_issuer.fetch_add(1, std::memory_order_relaxed);
  return t_issuer;
}

void VirtualMachine::RecordErrorLocked(uint64_t issuer, const Status& s) {
  for (const PendingError& e : unreported_errors_)
    if (e.status == s) return;
  if (unreported_errors_.size() >= 64) unreported_errors_.erase(unreported_errors_.begin());
  unreported_errors_.push_back({issuer, s});
}

VirtualMachine::VirtualMachine(VmOptions options)
    : options_(options), inline_cost_limit_(options.inline_cost_limit) {}

VirtualMachine::~VirtualMachine() {
  Shutdown();
}

StatusOr<Stream*> VirtualMachine::GetStream(const Device& device, StreamRole role) {
  std::pair<int, int> key{static_cast<int>(device.type()) * 1024 + device.index(),
                          static_cast<int>(role)};
  std::lock_guard<std::mutex> l(mu_);
  auto it = streams_.find(key);
  if (it != streams_.end()) return it->second.get();
  ASSIGN_OR_RETURN(auto policy, CreateStreamPolicy(device, role));
  auto s = std::make_unique<Stream>(device, role, std::move(policy));
  Stream* raw = s.get();
  if (shut_down_.load(std::memory_order_acquire)) {
    raw->stop_ = true;  // no new threads after shutdown: this stream's work runs inline
  } else if (!raw->policy()->RunsInline()) {
    raw->worker_ = std::thread([this, raw] { WorkerLoop(raw); });
  }
  if (&profiler::g_enabled != nullptr) profiler::NameTrack(TrackOf(device, role), raw->name());
  streams_.emplace(key, std::move(s));
  if (device.is_cpu() && role == StreamRole::kCompute)
    cpu_compute_.store(raw, std::memory_order_release);
  return raw;
}

bool VirtualMachine::TryRunInline(const DependenceVector& ins, const DependenceVector& outs,
                                  int64_t cost, absl::FunctionRef<Status()> fn) {
  if (cost < 0 || cost > inline_cost_limit() || shut_down_.load(std::memory_order_acquire))
    return false;
  Stream* s = cpu_compute_.load(std::memory_order_acquire);
  if (s == nullptr) {
    auto made = GetStream(Device::CPU(), StreamRole::kCompute);
    if (!made.ok()) return false;
    s = *made;
  }
  // Before the lock: the front end's hook may run Python (which may free tensors).
  const uint32_t site = CaptureIssueSite();
  std::lock_guard<std::mutex> l(mu_);
  if (s->queued_.load(std::memory_order_acquire) != 0 || s->busy_.load(std::memory_order_acquire))
    return false;
  for (Dependence* d : ins)
    if (d->last_writer != nullptr || d->has_error()) return false;
  for (Dependence* d : outs)
    if (!d->idle() || d->has_error()) return false;
  Status st;
  // Profiled: the run is stored with its issuing op call's span (no flow start: the caller is
  // this thread), which names it at export; outside an op call it is not recorded.
  const bool profiled = ProfilerOn();
  const int64_t begin = profiled ? Ticks() : 0;
  try {
    st = fn();
  } catch (const std::exception& e) {
    st = Internal("exception: %s", e.what());
  } catch (...) {
    st = Internal("unknown exception");
  }
  if (profiled) profiler::NoteInlineRun(TrackOf(s->device(), s->role()), begin, Ticks(), !st.ok());
  if (!st.ok()) {
    st = WithIssueSite(st, site);
    for (Dependence* d : outs) d->mark_error(st);
    RecordErrorLocked(ThisThreadIssuer(), st);
  } else {
    for (Dependence* d : outs) d->clear_error();
  }
  return true;
}

bool VirtualMachine::AtCapacityLocked() const {
  // Threads doing VM work never wait: the instructions in flight may be waiting on them.
  return engine_.num_live() >= options_.max_in_flight &&
         !shut_down_.load(std::memory_order_relaxed) && t_instruction_depth == 0;
}

void VirtualMachine::Receive(std::unique_ptr<Instruction> instr) {
  std::vector<Instruction*> ready;
  instr->issuer_ = ThisThreadIssuer();
  instr->issue_site_ = CaptureIssueSite();
  {
    std::unique_lock<std::mutex> l(mu_);
    if (AtCapacityLocked()) capacity_cv_.wait(l, [&] { return !AtCapacityLocked(); });
    if (ProfilerOn()) RecordIssue(this, engine_.num_received());
    engine_.Receive(std::move(instr), &ready);
  }
  Dispatch(ready);
}

void VirtualMachine::Receive(std::vector<std::unique_ptr<Instruction>> instrs) {
  std::vector<Instruction*> ready;
  const uint64_t issuer = ThisThreadIssuer();
  const uint32_t site = CaptureIssueSite();
  for (auto& i : instrs) {
    i->issuer_ = issuer;
    i->issue_site_ = site;
  }
  std::unique_lock<std::mutex> l(mu_);
  for (auto& i : instrs) {
    if (AtCapacityLocked()) {
      // Hand over what is ready before waiting: the capacity may be held by exactly those.
      if (!ready.empty()) {
        l.unlock();
        Dispatch(ready);
        l.lock();
      }
      capacity_cv_.wait(l, [&] { return !AtCapacityLocked(); });
    }
    if (ProfilerOn()) RecordIssue(this, engine_.num_received());
    engine_.Receive(std::move(i), &ready);
  }
  l.unlock();
  Dispatch(ready);
}

bool VirtualMachine::CanRunInline(Instruction* instr) {
  Stream* s = instr->stream();
  if (!s->policy()->AllowsInlineSmall()) return false;
  int64_t cost = instr->policy()->CostHint();
  int64_t limit = inline_cost_limit_.load(std::memory_order_relaxed);
  return limit > 0 && cost >= 0 && cost <= limit &&
         s->queued_.load(std::memory_order_acquire) == 0 &&
         !s->busy_.load(std::memory_order_acquire);
}

bool VirtualMachine::TryEnqueue(Stream* s, Instruction* instr) {
  {
    std::lock_guard<std::mutex> l(s->mu_);
    if (s->stop_)
      return false;  // checked under the queue's lock: a stopped worker never misses work
    s->queue_.push_back(instr);
    s->queued_.fetch_add(1, std::memory_order_release);
  }
  s->cv_.notify_one();
  return true;
}

void VirtualMachine::RunHere(Instruction* instr, std::vector<Instruction*>* ready) {
  // The scope covers Finish too: destroying the instruction may issue more (a captured tensor's
  // release), and this thread must not park on backpressure with `ready` still undispatched.
  InstructionScope scope;
  RunOnStream(this, instr);
  Finish(instr, ready);
}

void VirtualMachine::Dispatch(std::vector<Instruction*>& ready) {
  // Runs inline what may run inline (possibly making more ready), queues the rest.
  while (!ready.empty()) {
    Instruction* instr = ready.back();
    ready.pop_back();
    Stream* s = instr->stream();
    if (!s->policy()->RunsInline() && !CanRunInline(instr) && TryEnqueue(s, instr)) continue;
    RunHere(instr, &ready);
  }
}

void VirtualMachine::Finish(Instruction* instr, std::vector<Instruction*>* ready) {
  std::unique_ptr<Instruction> erased;
  bool wake;
  {
    std::lock_guard<std::mutex> l(mu_);
    // Only an instruction's own failure is recorded; one that just carries its input's error on
    // was recorded by the producer, before this instruction could run. (Recording it again here
    // raced with a sync access that had already raised and forgotten it: the access's waiter
    // wakes before its instruction finishes, so flow.sync() raised a seen error a second time.)
    if (!instr->status().ok() && !(instr->status() == instr->input_error()))
      RecordErrorLocked(instr->issuer(), instr->status());
    erased = engine_.Retire(instr, ready);
    wake = engine_.num_live() < options_.max_in_flight;
  }
  if (wake) capacity_cv_.notify_all();
  // Destroyed outside mu_: a policy's captures (tensors, callbacks) may call back into the VM.
  erased.reset();
}

void VirtualMachine::WorkerLoop(Stream* s) {
  SetCurrentThreadName(absl::StrCat("ofl_", s->device().is_cpu() ? "cpu" : "cuda",
                                    s->device().index(), "_", StreamRoleName(s->role())));
  InstructionScope worker_scope;
  Status init = s->policy()->InitThread(s->device());
  std::vector<Instruction*> ready;
  for (;;) {
    // Short bounded spin: a training loop keeps the worker fed without a wake-up per op.
    for (int i = 0; i < options_.spin_iterations && s->queued_.load(std::memory_order_acquire) == 0;
         ++i)
      CpuRelax();
    Instruction* instr;
    {
      std::unique_lock<std::mutex> l(s->mu_);
      s->cv_.wait(l, [&] { return s->stop_ || !s->queue_.empty(); });
      if (s->queue_.empty()) return;  // stop requested and drained
      instr = s->queue_.front();
      s->queue_.pop_front();
      s->busy_.store(true, std::memory_order_release);
      s->queued_.fetch_sub(1, std::memory_order_release);
    }
    if (init.ok()) {
      RunOnStream(this, instr);
    } else {
      instr->status_ = init;
    }
    ready.clear();
    Finish(instr, &ready);
    s->busy_.store(false, std::memory_order_release);
    Dispatch(ready);
  }
}

void VirtualMachine::ForgetError(const Status& error) {
  if (error.ok()) return;
  std::lock_guard<std::mutex> l(mu_);
  unreported_errors_.erase(std::remove_if(unreported_errors_.begin(), unreported_errors_.end(),
                                          [&](const PendingError& e) {
                                            // The recorded error may carry the issue site's
                                            // suffix that the reporter's copy lacks.
                                            return e.status.code() == error.code() &&
                                                   absl::StartsWith(e.status.message(),
                                                                    error.message());
                                          }),
                           unreported_errors_.end());
}

Status VirtualMachine::SyncAll() {
  auto sync = std::make_shared<SyncPoint>();
  auto stream = GetStream(Device::CPU(), StreamRole::kControl);
  if (!stream.ok()) return stream.status();
  Receive(std::make_unique<Instruction>(*stream, std::make_unique<BarrierInstructionPolicy>(sync)));
  (void)sync->Wait();
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t me = ThisThreadIssuer();
  auto mine = [&](const PendingError& e) { return e.issuer == me || e.issuer == 0; };
  auto it = std::find_if(unreported_errors_.begin(), unreported_errors_.end(), mine);
  Status s = it == unreported_errors_.end() ? Status() : it->status;
  unreported_errors_.erase(
      std::remove_if(unreported_errors_.begin(), unreported_errors_.end(), mine),
      unreported_errors_.end());
  return s;
}

void VirtualMachine::ReleaseBlob(BlobPtr blob) {
  // The common case (the last access retired, or every access ran inline): no VM lock.
  if (blob->dependence()->no_live_access()) {
    blob->Free();
    return;
  }
  bool idle;
  {
    std::lock_guard<std::mutex> l(mu_);
    idle = blob->dependence()->idle();
  }
  if (idle) {
    blob->Free();
    return;
  }
  auto stream = GetStream(blob->device(), StreamRole::kCompute);
  if (!stream.ok()) {
    blob->Free();  // unreachable for a blob that has live accesses on that stream
    return;
  }
  Receive(std::make_unique<Instruction>(
      *stream, std::make_unique<ReleaseTensorInstructionPolicy>(std::move(blob))));
}

int64_t VirtualMachine::num_live() {
  std::lock_guard<std::mutex> l(mu_);
  return engine_.num_live();
}

void VirtualMachine::Shutdown() {
  std::lock_guard<std::mutex> once(shutdown_mu_);
  if (shut_down_.load(std::memory_order_acquire)) return;
  (void)SyncAll();  // drain: everything received so far runs to completion
  std::vector<Stream*> streams;
  {
    std::lock_guard<std::mutex> l(mu_);
    shut_down_.store(true, std::memory_order_release);  // no more backpressure waits
    for (auto& kv : streams_) streams.push_back(kv.second.get());
  }
  capacity_cv_.notify_all();
  // Workers drain their queues and exit; later work (from other threads) runs inline.
  for (Stream* s : streams) {
    {
      std::lock_guard<std::mutex> l(s->mu_);
      s->stop_ = true;
    }
    s->cv_.notify_all();
  }
  for (Stream* s : streams) {
    if (s->worker_.joinable()) s->worker_.join();
  }
}

// ---- singleton ----
namespace {
std::atomic<VirtualMachine*> g_vm{nullptr};
std::mutex g_vm_mu;

void AtForkPrepare() {
  // Drain so no blob carries access records of instructions the child would never finish.
  // Skipped when forking from inside an instruction: that instruction cannot finish first.
  VirtualMachine* vm = g_vm.load();
  if (vm == nullptr || VirtualMachine::InsideInstruction() || vm->is_shut_down()) return;
  auto sync = std::make_shared<SyncPoint>();
  auto stream = vm->GetStream(Device::CPU(), StreamRole::kControl);
  if (stream.ok()) {
    vm->Receive(
        std::make_unique<Instruction>(*stream, std::make_unique<BarrierInstructionPolicy>(sync)));
    (void)sync->Wait();
  }
}
constexpr int64_t kSingletonMaxInFlight = 1024;

// g_vm_mu is held across fork so the child never inherits it locked by a vanished thread.
void AtForkPrepareLock() {
  g_vm_mu.lock();
}
void AtForkParent() {
  g_vm_mu.unlock();
}
// The parent's worker threads do not exist in the child: leak the old VM, start anew on demand.
void AtForkChild() {
  g_vm.store(nullptr);
  g_vm_mu.unlock();
}
}  // namespace

VirtualMachine* VirtualMachine::Get() {
  VirtualMachine* vm = g_vm.load(std::memory_order_acquire);
  if (vm) return vm;
  static bool once = [] {
    // Prepare handlers run in reverse order of registration: lock last, after the drain.
    pthread_atfork(AtForkPrepareLock, AtForkParent, AtForkChild);
    pthread_atfork(AtForkPrepare, nullptr, nullptr);
    std::atexit(ShutdownSingleton);
    return true;
  }();
  (void)once;
  std::lock_guard<std::mutex> l(g_vm_mu);
  vm = g_vm.load();
  if (!vm) {
    VmOptions opts;
    // The process-wide VM keeps at most this many instructions queued ahead of the caller: deep
    // enough that streams never starve (an eager training step issues a few hundred), shallow
    // enough that Ctrl-C, an error or a sync waits for little (a loop of 256x256 matmuls queued
    // 35k instructions under the old 65536 and took 40 s to drain after KeyboardInterrupt).
    opts.max_in_flight = kSingletonMaxInFlight;
    if (const char* env = std::getenv("ONEFLOW_LIKE_VM_MAX_IN_FLIGHT"))
      opts.max_in_flight = std::max<int64_t>(1, std::atoll(env));
    if (const char* env = std::getenv("ONEFLOW_LIKE_VM_INLINE_LIMIT"))
      opts.inline_cost_limit = std::atoll(env);
    if (const char* env = std::getenv("ONEFLOW_LIKE_VM_SPIN"))
      opts.spin_iterations = std::atoi(env);
    vm = new VirtualMachine(opts);  // leaked on purpose: threads are joined by Shutdown at exit
    g_vm.store(vm);
  }
  return vm;
}

void VirtualMachine::ShutdownSingleton() {
  if (VirtualMachine* vm = g_vm.load()) vm->Shutdown();
}

}  // namespace vm
}  // namespace oneflow_like
