// ProcessGroupGloo: the ranks of one data-parallel job, connected by Gloo over TCP.
// Lifecycle: Create (rank 0 serves a TcpStore on host:port; all ranks check they agree on the
// world size, then Gloo's rendezvous connects every pair) -> collectives, each checked and then
// issued as a CollectiveInstructionPolicy on the CPU collective stream, returning a Work ->
// Shutdown (waits for the issued work, closes the connections).
// Every wait is bounded by the group's timeout: a peer that dies or stalls makes the op fail
// with an error naming the op, this rank and the tensor, never a hang.
// Before a collective whose signature (op, dtype, shape, root) differs from the previous checked
// collective's, the ranks exchange it (unless `check_signatures` is off), so a rank calling a
// different op or passing another shape fails with an error naming every rank's tensor instead
// of corrupting data or tripping Gloo's size check, which aborts the process (Note [Signature
// checks] in process_group.cc says why an unchanged signature needs no exchange).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/collective_instruction_policy.h"
#include "distributed/reduce_op.h"
#include "oneflow_like/framework/tensor.h"

namespace gloo {
class Context;
}

namespace oneflow_like {
namespace distributed {

class TcpStore;

struct ProcessGroupOptions {
  std::string host = "127.0.0.1";
  int port = 29500;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  bool check_signatures = true;
  // Exchange the signature before every collective, not only when it changes (debugging aid:
  // TORCH_DISTRIBUTED_DEBUG=DETAIL or ONEFLOW_LIKE_DIST_CHECK=all).
  bool check_every_op = false;
};

// new_group's first step on either backend: this rank (`rank` in the default group) publishes the
// member list under `prefix` and compares it with the first member's; a disagreement or a first
// member that never calls new_group (within the store's timeout) is a named error.
Status AgreeOnGroupMembers(TcpStore& store, const std::string& prefix, int rank,
                           const std::vector<int>& ranks);

class ProcessGroupGloo : public std::enable_shared_from_this<ProcessGroupGloo> {
 public:
  // While one is alive on a thread, that thread waits for each collective it issues at once
  // (async_op=False; the binding waits on the Work right after, without the GIL): a collective
  // that is ready when issued, with the collective stream idle, then runs on this thread (in
  // place on the tensor, as on the worker) instead of the stream's worker, saving the two
  // thread hand-offs (worker wake-up, the caller's wake-up) per op. Ordering is unchanged: it is
  // still an instruction of the VM that reads and writes its blobs and the group's order blob.
  class CallerWaits {
   public:
    CallerWaits();
    ~CallerWaits();
    CallerWaits(const CallerWaits&) = delete;
    CallerWaits& operator=(const CallerWaits&) = delete;

   private:
    bool outer_;
  };

  static StatusOr<std::shared_ptr<ProcessGroupGloo>> Create(const ProcessGroupOptions& options);
  ~ProcessGroupGloo();

  int rank() const { return options_.rank; }
  int size() const { return options_.world_size; }
  const ProcessGroupOptions& options() const { return options_; }
  // The store the ranks met through (the NCCL half of "cpu:gloo,cuda:nccl" meets there too).
  const std::shared_ptr<TcpStore>& store() const { return store_; }

  // In place on `t` (every rank passes the same shape and dtype). `check` = false skips the
  // signature exchange for callers that verified the layout once (DDP's buckets).
  StatusOr<std::shared_ptr<Work>> AllReduce(const Tensor& t, ReduceOp op, bool check = true);
  StatusOr<std::shared_ptr<Work>> Broadcast(const Tensor& t, int root);
  // outputs[r] receives rank r's `input` (world_size tensors of input's shape and dtype).
  StatusOr<std::shared_ptr<Work>> AllGather(const TensorList& outputs, const Tensor& input);
  // output = the reduction over ranks of inputs[rank] (world_size tensors of output's shape).
  StatusOr<std::shared_ptr<Work>> ReduceScatter(const Tensor& output, const TensorList& inputs,
                                                ReduceOp op);
  // The reduction over ranks into `t` on `root` (other ranks' tensors are left as they were).
  StatusOr<std::shared_ptr<Work>> Reduce(const Tensor& t, int root, ReduceOp op);
  // On `root`: outputs[r] = rank r's input (other ranks pass no outputs).
  StatusOr<std::shared_ptr<Work>> Gather(const TensorList& outputs, const Tensor& input, int root);
  // output = root's inputs[rank] (only `root` passes inputs).
  StatusOr<std::shared_ptr<Work>> Scatter(const Tensor& output, const TensorList& inputs, int root);
  StatusOr<std::shared_ptr<Work>> Send(const Tensor& t, int dst, int tag);
  StatusOr<std::shared_ptr<Work>> Recv(const Tensor& t, int src, int tag);
  StatusOr<std::shared_ptr<Work>> Barrier();
  // all_to_all_single: input's in_splits[r] rows (dim 0) go to rank r,
  // output's out_splits[r] rows come from rank r (gloo::alltoallv, on the tensors' own bytes).
  // Each list has world_size entries summing to its tensor's dim 0; before the exchange the
  // ranks compare dtype and trailing dims and check that their splits pair up (unless
  // check_signatures is off).
  StatusOr<std::shared_ptr<Work>> AllToAll(const Tensor& output, const Tensor& input,
                                           const std::vector<int64_t>& out_splits,
                                           const std::vector<int64_t>& in_splits);
  // torch's monitored_barrier, through the store: every other rank reports to rank 0 and waits
  // for its answer; rank 0 waits up to `timeout` and fails naming the ranks that did not arrive
  // (the first, or all with `wait_all_ranks`), and its answer makes the ranks that arrived fail
  // with the same message. A failure marks the group broken (the missing ranks are behind in
  // the collective order).
  StatusOr<std::shared_ptr<Work>> MonitoredBarrier(std::chrono::milliseconds timeout,
                                                   bool wait_all_ranks);

  // Compiled graphs (graph_collectives.h): the collective runs now, on the calling thread (the
  // graph's launch), on `n` contiguous elements at `data`. These use a tag space of their own,
  // so they never pair with the collective stream's ops; every rank's graph issues them in the
  // same (compiled, deterministic) order. No signature exchange: the graph was traced from the
  // same program on every rank.
  Status AllReduceNow(void* data, DType dtype, int64_t n, ReduceOp op, const std::string& what);
  Status BroadcastNow(void* data, int64_t bytes, int root, const std::string& what);
  // The asynchronous all-reduce of a compiled graph's "dist_all_reduce_async_start": takes the
  // next graph tag now, on the calling thread (so every rank pairs the same ops whatever the
  // timing), and runs the all-reduce on this group's graph-collective thread (one per group,
  // first in, first out) while the graph goes on. The future holds its status; nothing else may
  // touch `data` until it is ready.
  std::shared_future<Status> AllReduceAsync(void* data, DType dtype, int64_t n, ReduceOp op,
                                            std::string what);
  // The baseline of benchmarks/bench_distributed.py: Gloo's all-reduce (ring, SUM, the reduce
  // function AllReduce uses) of `t` in place, called directly on this thread on this group's
  // context (no VM instruction, no signature check, no Python), `iters` times; returns each
  // call's seconds. `t` must be idle (no unfinished VM work on it). Tags of its own (bit 29 set),
  // so it never pairs with another collective; every rank must call it alike.
  StatusOr<std::vector<double>> TimeRawGlooAllReduce(const Tensor& t, int iters);
  // Signature exchanges run so far (tests: an unchanged signature is not exchanged again).
  int64_t signature_exchanges() const { return signature_exchanges_.load(); }
  // This group's key in the registry that graph collectives look groups up in.
  int64_t id() const { return id_; }
  // The live group with this id (null when destroyed or unknown).
  static std::shared_ptr<ProcessGroupGloo> FindById(int64_t id);
  // torch.distributed.new_group, on a member: a group of the global `ranks` (sorted, this rank
  // among them) meeting through this group's store under the key prefix of `index` (every rank
  // of this group counts the new_group calls alike). Its rank is this rank's place in `ranks`.
  StatusOr<std::shared_ptr<ProcessGroupGloo>> NewGroup(const std::vector<int>& ranks, int64_t index,
                                                       std::chrono::milliseconds timeout);
  // Waits for the issued work (each op is bounded by the timeout), then drops the connections.
  Status Shutdown();

 private:
  explicit ProcessGroupGloo(ProcessGroupOptions options);
  // Gives `pg` its id and makes FindById find it (graph_collectives.cc).
  static void Register(const std::shared_ptr<ProcessGroupGloo>& pg);
  Status Connect();
  // Gloo's full mesh over `store` (keys under `prefix`).
  Status ConnectMesh(const std::string& prefix);
  using Fn = CollectiveInstructionPolicy::Fn;
  StatusOr<std::shared_ptr<Work>> Issue(std::string name, std::vector<TensorBytes> reads,
                                        std::vector<TensorBytes> writes, Fn fn);
  // Run on the collective stream at the start of every collective that has a signature: records
  // it (for Diagnose) and, when `exchange` and it differs from the last agreed signature,
  // compares it across ranks (Note [Signature checks]).
  Status CheckSignature(const char* op, const std::vector<int64_t>& sig, const std::string& what,
                        bool exchange = true);
  // After a collective's Gloo call failed: every surviving rank publishes the op's signature in
  // the store and reads the others' for a bounded time; if they differ, the failure becomes the
  // named mismatch (the Gloo error stays otherwise).
  Status Diagnose(const std::string& op, Status failure);

  // Wraps a Gloo call: exceptions become errors naming the op, the rank and `what`; the first
  // failure marks the group broken, so later ops fail at once instead of waiting on dead peers.
  Status Guard(const char* op, const std::string& what, const std::function<void()>& body);
  // On `root`: `list` checked against `like` (world_size tensors); elsewhere it must be empty.
  StatusOr<std::vector<TensorBytes>> RootList(const char* op, const TensorList& list,
                                              const Tensor& like, int root, const char* role);
  // gloo::allreduce of `n` elements of `esize` bytes at `data`, in place, under Guard, with
  // `tag` (0: the collective stream's next tag).
  Status GlooAllReduce(const char* op, const std::string& what, void* data, int64_t n,
                       int64_t esize, const ReduceFn& fn, uint32_t tag = 0);
  // gloo::broadcast of `bytes` at `data` from `root`, under Guard, with `tag`.
  Status GlooBroadcast(const std::string& what, void* data, int64_t bytes, int root, uint32_t tag);
  // reduce_scatter's ring: blocks[b] (`count` elements of `esize` bytes each) summed over the
  // ranks into `out` for b = rank (the collective stream's thread, under Guard).
  Status RingReduceScatter(const std::string& what, const std::vector<TensorBytes>& blocks,
                           void* out, int64_t count, int64_t esize, const ReduceFn& fn);
  uint32_t NextTag() { return next_tag_++; }
  // Graph collectives' tags: bit 30 set, apart from the collective stream's NextTag().
  uint32_t NextGraphTag() { return (next_graph_tag_++ & 0x3fffffffu) | 0x40000000u; }
  Status AllReduceTagged(void* data, DType dtype, int64_t n, ReduceOp op, const std::string& what,
                         uint32_t tag);
  // The graph-collective thread: started by the first AllReduceAsync; StopGraphWorker runs what
  // is queued (each op bounded by the timeout), then joins it (Shutdown, the destructor).
  void GraphWorkerLoop();
  void StopGraphWorker();

  ProcessGroupOptions options_;
  std::shared_ptr<TcpStore> store_;  // shared with the sub-groups made by NewGroup
  std::shared_ptr<gloo::Context> context_;
  vm::BlobPtr order_;                // written by every collective: issue order on the stream
  std::shared_ptr<Work> last_work_;  // caller's thread only
  // Touched only by the group's collectives, which run one at a time in issue order (the order
  // blob), on the collective stream's worker or on a waiting issuer's thread (CallerWaits).
  uint32_t next_tag_ = 1;
  std::atomic<uint32_t> next_graph_tag_{1};
  uint32_t next_raw_tag_ = 1;  // TimeRawGlooAllReduce
  // Signature checks (Note [Signature checks]): the signature every rank agreed on last, the
  // running op's signature and its sequence number, and the exchanges' own tags (bit 31).
  std::vector<int64_t> agreed_sig_;
  std::vector<int64_t> current_sig_;
  int64_t op_seq_ = 0;
  uint32_t next_check_tag_ = 1;
  std::atomic<int64_t> signature_exchanges_{0};
  std::mutex broken_mu_;  // broken_ is also read and set by graph collectives' threads
  Status broken_;
  std::atomic<bool> shut_down_{false};
  int64_t id_ = 0;
  std::mutex graph_mu_;
  std::condition_variable graph_cv_;
  std::deque<std::packaged_task<Status()>> graph_queue_;  // under graph_mu_
  bool graph_stop_ = false;                               // under graph_mu_
  std::thread graph_worker_;
  // This group's keys in store_ (monitored_barrier's, Diagnose's): "ofl/" or new_group's prefix.
  std::string store_prefix_ = "ofl/";
};

}  // namespace distributed
}  // namespace oneflow_like
