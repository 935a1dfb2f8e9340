#include "oneflow_like/base/thread_pool.h"

#include "oneflow_like/base/intra_op_threads.h"

#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <new>

namespace oneflow_like {

void SetCurrentThreadName(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

namespace {
thread_local bool t_in_parallel = false;
}

ThreadPool::ThreadPool(int num_threads, std::string name) {
  for (int i = 0; i + 1 < num_threads; ++i) {
    workers_.emplace_back([this, i, name] {
      SetCurrentThreadName(name + std::to_string(i));
      WorkerLoop(i);
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int) {
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* fn = job_;
    int64_t n = job_n_, chunk = job_chunk_, chunks = job_chunks_;
    l.unlock();
    t_in_parallel = true;
    for (int64_t c; (c = next_chunk_.fetch_add(1)) < chunks;)
      (*fn)(c * chunk, std::min(n, (c + 1) * chunk));
    t_in_parallel = false;
    l.lock();
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (workers_.empty() || n <= grain || t_in_parallel) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run(run_mu_);
  int64_t max_chunks = num_threads() * 4;
  int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, max_chunks);
  int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
  {
    std::lock_guard<std::mutex> l(mu_);
    job_ = &fn;
    job_n_ = n;
    job_chunk_ = chunk;
    job_chunks_ = chunks;
    next_chunk_.store(0);
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  cv_.notify_all();
  t_in_parallel = true;
  for (int64_t c; (c = next_chunk_.fetch_add(1)) < chunks;)
    fn(c * chunk, std::min(n, (c + 1) * chunk));
  t_in_parallel = false;
  std::unique_lock<std::mutex> l(mu_);
  done_cv_.wait(l, [&] { return pending_ == 0; });
  job_ = nullptr;
}

namespace {
std::atomic<ThreadPool*> g_intra_op_pool{nullptr};
std::atomic<int> g_intra_op_threads{0};  // 0: not decided yet
std::mutex g_intra_op_mu;
// Every pool made, by size (leaked with their idle workers: a kernel may still be running on a
// pool when another size is asked for, and pools are reused when their size comes back).
std::map<int, ThreadPool*>* g_pools = new std::map<int, ThreadPool*>();

int DefaultIntraOpThreads() {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* env = std::getenv("ONEFLOW_LIKE_NUM_THREADS")) n = std::atoi(env);
  return std::max(n, 1);
}

// After fork the child has none of the parent's workers, and the pools' mutexes may be held by
// threads that no longer exist: drop (leak) the old pools; the next IntraOpPool() makes a new one
// of the same size. Threads are not started inside the handler itself (fork handlers should stay
// minimal).
void IntraOpPoolAtForkChild() {
  g_intra_op_pool.store(nullptr, std::memory_order_release);
  g_pools = new std::map<int, ThreadPool*>();
  new (&g_intra_op_mu) std::mutex();  // may have been held by a parent thread at fork time
}

// The pool of n threads (made on first use). Under g_intra_op_mu.
ThreadPool* PoolOfSizeLocked(int n) {
  ThreadPool*& pool = (*g_pools)[n];
  if (pool == nullptr) pool = new ThreadPool(n, "ofl_intraop");
  return pool;
}

// The thread count, decided on first use. Under g_intra_op_mu.
int IntraOpThreadsLocked() {
  int n = g_intra_op_threads.load(std::memory_order_acquire);
  if (n == 0) {
    n = DefaultIntraOpThreads();
    g_intra_op_threads.store(n, std::memory_order_release);
  }
  return n;
}
}  // namespace

int IntraOpThreads() {
  const int n = g_intra_op_threads.load(std::memory_order_acquire);
  if (n > 0) return n;
  std::lock_guard<std::mutex> l(g_intra_op_mu);
  return IntraOpThreadsLocked();
}

void SetIntraOpThreads(int n) {
  n = std::max(n, 1);
  std::lock_guard<std::mutex> l(g_intra_op_mu);
  g_intra_op_threads.store(n, std::memory_order_release);
  // Made on the next IntraOpPool() call if it does not exist yet.
  auto it = g_pools->find(n);
  g_intra_op_pool.store(it == g_pools->end() ? nullptr : it->second, std::memory_order_release);
}

ThreadPool* IntraOpPool() {
  ThreadPool* pool = g_intra_op_pool.load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  static bool registered = [] {
    return pthread_atfork(nullptr, nullptr, IntraOpPoolAtForkChild) == 0;
  }();
  (void)registered;
  std::lock_guard<std::mutex> l(g_intra_op_mu);
  pool = g_intra_op_pool.load(std::memory_order_acquire);
  if (pool == nullptr) {
    pool = PoolOfSizeLocked(IntraOpThreadsLocked());
    g_intra_op_pool.store(pool, std::memory_order_release);
  }
  return pool;
}

}  // namespace oneflow_like
