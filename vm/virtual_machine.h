// VirtualMachine: the process-wide singleton that owns the stream threads around the engine.
// Receive() is a cheap enqueue from any thread; work runs on the streams' worker threads (or
// inline, see stream.h). Sync points block on a per-instruction notification, never on a spin.
// Backpressure: Receive blocks while more than max_in_flight instructions are live.
#pragma once
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "vm/engine.h"
#include "vm/stream.h"

namespace oneflow_like {
namespace vm {

struct VmOptions {
  int64_t max_in_flight = 1 << 16;
  int64_t inline_cost_limit = 1 << 14;  // elements; 0 disables inline execution
  // An idle worker polls its queue this many times (one `pause` each, about 12 ns here: 200 is
  // ~2.5 us) before sleeping on its condition variable. Catches back-to-back work without a
  // wake-up and burns at most that much per idle transition; vm/README.md has the figures.
  int spin_iterations = 200;
};

class VirtualMachine {
 public:
  explicit VirtualMachine(VmOptions options = {});
  ~VirtualMachine();                // drains and joins
  static VirtualMachine* Get();     // the singleton (created on first use; recreated after fork)
  static void ShutdownSingleton();  // drains and joins the singleton's threads (atexit)

  // Fast path for small CPU work: if the CPU compute stream is idle and no live instruction
  // touches `ins` / `outs`, runs `fn` on the caller's thread now, under the VM lock so nothing
  // can be ordered against it meanwhile, and returns true. A failure is recorded on `outs` like
  // an instruction's (raised at the next sync). Returns false, having done nothing, otherwise.
  bool TryRunInline(const DependenceVector& ins, const DependenceVector& outs, int64_t cost,
                    absl::FunctionRef<Status()> fn);
  StatusOr<Stream*> GetStream(const Device& device, StreamRole role);
  void Receive(std::unique_ptr<Instruction> instr);
  void Receive(std::vector<std::unique_ptr<Instruction>> instrs);  // one lock for the batch
  // Blocks until every instruction received so far is done; returns the first error recorded
  // since the previous SyncAll for work this thread issued (or that was issued from inside an
  // instruction), then forgets those. Another thread's errors stay for that thread: a kernel
  // error is raised only in the thread whose op failed.
  Status SyncAll();
  // This thread's issuer id (assigned on first use; 0 inside an instruction).
  static uint64_t ThisThreadIssuer();
  // Marks `error` as reported (a sync access raised it), so SyncAll does not raise it again.
  void ForgetError(const Status& error);
  // Frees a blob now if nothing live uses it; otherwise enqueues a ReleaseTensor instruction.
  void ReleaseBlob(BlobPtr blob);
  // Drains (everything received runs), stops and joins the worker threads. Idempotent and safe
  // to call from several threads. Afterwards the VM still works: instructions run inline on
  // the thread that makes them ready.
  void Shutdown();
  bool is_shut_down() const { return shut_down_.load(std::memory_order_acquire); }
  // True on a VM worker thread and while an instruction runs inline (such callers never block
  // on backpressure: they may be what the in-flight instructions are waiting for).
  static bool InsideInstruction();
  int64_t num_live();
  const VmOptions& options() const { return options_; }
  // Safe while instructions run (read atomically by the dispatching threads).
  void set_inline_cost_limit(int64_t v) { inline_cost_limit_.store(v, std::memory_order_relaxed); }
  int64_t inline_cost_limit() const { return inline_cost_limit_.load(std::memory_order_relaxed); }

 private:
  void Dispatch(std::vector<Instruction*>& ready);  // called without mu_ held
  bool TryEnqueue(Stream* s, Instruction* instr);   // false if the stream's worker has stopped
  void RunHere(Instruction* instr, std::vector<Instruction*>* ready);
  void Finish(Instruction* instr, std::vector<Instruction*>* ready);
  bool AtCapacityLocked() const;
  void WorkerLoop(Stream* s);
  bool CanRunInline(Instruction* instr);

  VmOptions options_;
  std::mutex mu_;  // guards engine_, streams_, unreported_errors_
  std::condition_variable capacity_cv_;
  VirtualMachineEngine engine_;
  std::map<std::pair<int, int>, std::unique_ptr<Stream>> streams_;  // (device key, role)
  // Errors of failed instructions not yet reported to the user (distinct, oldest first, at most
  // 64: the oldest is dropped), with the thread that issued the failed work.
  struct PendingError {
    uint64_t issuer;
    Status status;
  };
  std::vector<PendingError> unreported_errors_;
  void RecordErrorLocked(uint64_t issuer, const Status& s);
  std::atomic<bool> shut_down_{false};
  std::atomic<Stream*> cpu_compute_{nullptr};  // cached for TryRunInline
  std::atomic<int64_t> inline_cost_limit_;
  std::mutex shutdown_mu_;  // serialises Shutdown callers
};

}  // namespace vm
}  // namespace oneflow_like
