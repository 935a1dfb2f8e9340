// Named-thread pool for intra-op CPU parallelism. Idle workers sleep on a condition variable
// (no spinning: these machines have 2 cores and the VM's stream threads need them).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace oneflow_like {

class ThreadPool {
 public:
  ThreadPool(int num_threads, std::string name);
  ~ThreadPool();
  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }  // + the caller
  // Runs fn(begin, end) over [0, n) in chunks of at least `grain`; the caller takes a chunk too.
  // Serial when n <= grain. Not reentrant from inside fn (nested calls run serially).
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop(int id);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0, job_chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::mutex run_mu_;  // one parallel region at a time
};

// The process-wide intra-op pool (size: hardware threads, at least 1; ONEFLOW_LIKE_NUM_THREADS
// overrides). Fork-safe: a forked child gets a fresh pool on its first call.
ThreadPool* IntraOpPool();
// Names the calling thread (visible in gdb, top -H, perf).
void SetCurrentThreadName(const std::string& name);

}  // namespace oneflow_like
