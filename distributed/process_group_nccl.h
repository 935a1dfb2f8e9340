// ProcessGroupNccl: the ranks of a data-parallel job connected by NCCL, one CUDA device per rank
// (the caller picks it: LOCAL_RANK % device count, as torch does).
// Lifecycle: Create (rank 0 makes NCCL's unique id and sets it in the TcpStore, the others get
// it; every rank then creates a non-blocking communicator on its device, polled until ready) ->
// collectives, each checked on the caller's thread and issued as a CollectiveInstructionPolicy
// on the compute stream of the group's device, where it enqueues the NCCL kernels and retires
// (eager CUDA is asynchronous: that one stream orders the collective against every kernel on the
// device); the Work it returns waits for a CUDA event recorded after the NCCL kernels ->
// Shutdown (waits for the issued work, finalizes and destroys the communicator).
// Every wait is bounded by the group's timeout: init, each enqueue (a non-blocking communicator
// answers ncclInProgress until NCCL has accepted the call) and each Work's wait, which also polls
// NCCL's asynchronous error. On a timeout or an NCCL error the communicator is aborted
// (ncclCommAbort, which also stops kernels waiting for peers) and the op fails naming itself,
// this rank and the tensor; the group is unusable from then on.
// NCCL itself (libnccl.so.2) is loaded with dlopen on first use (nccl_api.h). Built for real only
// with --config=cuda; without it Unavailable() says why and Create fails
// (process_group_nccl_stub.cc).
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/collective_instruction_policy.h"
#include "distributed/process_group.h"
#include "distributed/reduce_op.h"
#include "oneflow_like/framework/tensor.h"

struct ncclComm;     // nccl.h's ncclComm_t is ncclComm*
struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace oneflow_like {
namespace distributed {

class TcpStore;
struct NcclApi;

// One send or receive of BatchSendRecv (torch.distributed.P2POp).
struct P2POp {
  bool is_send = true;
  Tensor tensor;
  int peer = 0;
};

class ProcessGroupNccl : public std::enable_shared_from_this<ProcessGroupNccl> {
 public:
  // Why NCCL groups cannot be made in this process ("" when they can): a build without CUDA, or
  // libnccl.so.2 that does not load. Does not need a device.
  static std::string Unavailable();
  // Rank 0 serves a TcpStore on options.host:port; every rank uses CUDA device `device`.
  static StatusOr<std::shared_ptr<ProcessGroupNccl>> Create(const ProcessGroupOptions& options,
                                                            int device);
  // Meets through an existing store (the NCCL half of "cpu:gloo,cuda:nccl"), keys under `prefix`.
  static StatusOr<std::shared_ptr<ProcessGroupNccl>> CreateWithStore(
      const ProcessGroupOptions& options, int device, std::shared_ptr<TcpStore> store,
      const std::string& prefix);
  // Without Shutdown the communicator is left to the process's exit (no NCCL call here: this may
  // run while the interpreter and the CUDA runtime are being torn down).
  ~ProcessGroupNccl();

  int rank() const { return options_.rank; }
  int size() const { return options_.world_size; }
  int device() const { return device_; }
  const ProcessGroupOptions& options() const { return options_; }
  int nccl_version() const { return nccl_version_; }

  // The collectives of ProcessGroupGloo, on contiguous CUDA tensors of this group's device, with
  // the same arguments and results. NCCL does not compare the ranks' shapes: a mismatch hangs
  // until the timeout aborts the group (or corrupts data), as in torch.
  StatusOr<std::shared_ptr<Work>> AllReduce(const Tensor& t, ReduceOp op);
  StatusOr<std::shared_ptr<Work>> Broadcast(const Tensor& t, int root);
  StatusOr<std::shared_ptr<Work>> AllGather(const TensorList& outputs, const Tensor& input);
  StatusOr<std::shared_ptr<Work>> ReduceScatter(const Tensor& output, const TensorList& inputs,
                                                ReduceOp op);
  StatusOr<std::shared_ptr<Work>> Reduce(const Tensor& t, int root, ReduceOp op);
  // Gather / Scatter as grouped ncclSend / ncclRecv (NCCL has no such collectives).
  StatusOr<std::shared_ptr<Work>> Gather(const TensorList& outputs, const Tensor& input, int root);
  StatusOr<std::shared_ptr<Work>> Scatter(const Tensor& output, const TensorList& inputs, int root);
  StatusOr<std::shared_ptr<Work>> Send(const Tensor& t, int dst);
  StatusOr<std::shared_ptr<Work>> Recv(const Tensor& t, int src);
  // The sends and receives in one NCCL group call (torch's batch_isend_irecv): they may pair
  // with each other, a rank with itself included.
  StatusOr<std::shared_ptr<Work>> BatchSendRecv(const std::vector<P2POp>& ops);
  // An all-reduce of one element (as torch does); its Work finishes with the device work before.
  StatusOr<std::shared_ptr<Work>> Barrier();
  // torch.distributed.new_group on a member (see ProcessGroupGloo::NewGroup): an NCCL group of the
  // global `ranks` on this rank's device, meeting through this group's store. It shares this
  // group's issue order (both enqueue on the device's one compute stream).
  StatusOr<std::shared_ptr<ProcessGroupNccl>> NewGroup(const std::vector<int>& ranks, int64_t index,
                                                       std::chrono::milliseconds timeout);
  // Waits for the issued work (bounded), then finalizes and destroys the communicator (aborts it
  // when that fails or times out).
  Status Shutdown();

 private:
  friend class NcclCompletion;
  // Runs on the stream's thread with the communicator locked: enqueues the NCCL work on `stream`.
  using Launch = std::function<Status(CUstream_st* stream, const std::vector<TensorBytes>& reads,
                                      const std::vector<TensorBytes>& writes)>;

  ProcessGroupNccl(ProcessGroupOptions options, int device);
  // `label` ("init_process_group", "new_group") starts its errors.
  static StatusOr<std::shared_ptr<ProcessGroupNccl>> Make(const char* label,
                                                          const ProcessGroupOptions& options,
                                                          int device,
                                                          std::shared_ptr<TcpStore> store,
                                                          const std::string& prefix);
  // The unique id through the store (keys under `prefix`), then the communicator.
  Status Connect(const std::string& prefix);
  // `t` checked (eager, CUDA, this group's device, contiguous) as bytes in its blob.
  StatusOr<TensorBytes> Bytes(const char* op, const Tensor& t) const;
  // `list` must hold world_size tensors shaped like `like`.
  StatusOr<std::vector<TensorBytes>> ListBytes(const char* op, const TensorList& list,
                                               const Tensor& like, const char* role) const;
  Status CheckPeer(const char* op, int peer, const char* what) const;
  std::string Describe(const Tensor& t) const;
  StatusOr<std::shared_ptr<Work>> Issue(const char* name, std::string what,
                                        std::vector<TensorBytes> reads,
                                        std::vector<TensorBytes> writes, Launch launch);
  // The body of every instruction (comm_mu_ held around `launch`).
  Status RunOnStream(const char* name, const std::string& what, oneflow_like::Stream* stream,
                     Work* work, const std::vector<TensorBytes>& reads,
                     const std::vector<TensorBytes>& writes, const Launch& launch);
  // With comm_mu_ held, inside a Launch: `result` is what an NCCL call returned (an
  // ncclResult_t); waits while the communicator reports ncclInProgress (bounded by the timeout).
  // Failure aborts the group; errors name the running op.
  Status AwaitLocked(int result);
  // With comm_mu_ held: the calls `body` makes (ncclSend/ncclRecv/...; it returns the first
  // failure as an ncclResult_t) inside ncclGroupStart/End, then AwaitLocked.
  Status GroupLocked(const std::function<int()>& body);
  // With comm_mu_ held: aborts the communicator (if still there), marks the group broken with
  // `why` (kept if it was already broken) and returns the group's error.
  Status AbortLocked(Status why);
  Status Abort(Status why);
  // Fails when the group was aborted, destroyed or is being shut down.
  Status Usable(const char* op) const;
  // Called while a Work waits: NCCL's asynchronous error (a failed peer, a network error)
  // aborts the group. Skips the check when the stream's thread holds the communicator.
  Status PollAsyncError(const char* op, const std::string& what);
  std::string Where() const;  // "rank 0 of 2 on cuda:0"
  // "[op] rank 0 of 2 on cuda:0 (float32[4] on cuda:0): NCCL error ... <hint>" for `result`.
  Status Failure(const char* op, const std::string& what, int result, const char* hint);

  ProcessGroupOptions options_;
  int device_;
  const NcclApi* api_ = nullptr;  // set by Connect
  int nccl_version_ = 0;
  std::shared_ptr<TcpStore> store_;  // shared with the sub-groups made by NewGroup
  vm::BlobPtr order_;  // written by every collective (shared with sub-groups): issue order
  std::shared_ptr<Work> last_work_;  // caller's thread only
  void* barrier_buf_ = nullptr;      // 4 bytes on the device (the caching allocator's)
  std::mutex comm_mu_;               // NCCL calls on comm_ (not thread-safe; abort frees it)
  ncclComm* comm_ = nullptr;         // under comm_mu_
  const char* running_op_ = "";      // under comm_mu_: the op a Launch is enqueueing
  std::string running_what_;         // under comm_mu_: its tensor
  mutable std::mutex broken_mu_;
  Status broken_;  // under broken_mu_: the first failure (the communicator is then aborted)
  std::atomic<bool> aborted_{false};
  std::atomic<bool> shut_down_{false};
};

}  // namespace distributed
}  // namespace oneflow_like
