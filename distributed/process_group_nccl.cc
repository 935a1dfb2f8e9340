#include "distributed/process_group_nccl.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/str_join.h"
#include "device/cuda/device.h"
#include "distributed/nccl_api.h"
#include "distributed/tcp_store.h"
#include "oneflow_like/base/allocator.h"
#include "vm/instructions_builder.h"

namespace oneflow_like {
namespace distributed {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kPrefix = "ofl/nccl/";  // the store keys of a world group
constexpr size_t kBarrierBytes = 4;           // one int32

// Polling: yields for the first few hundred rounds (most waits are short), then sleeps 50 us,
// growing to 1 ms.
class Backoff {
 public:
  void Pause() {
    if (rounds_ < 100000) ++rounds_;
    if (rounds_ < 256) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 50 * (rounds_ - 255))));
  }

 private:
  int rounds_ = 0;
};

int64_t Ms(std::chrono::milliseconds d) {
  return static_cast<int64_t>(d.count());
}

}  // namespace

// The device side of one instruction's Work: a CUDA event recorded on the compute stream after
// its NCCL kernels. While it waits it polls NCCL's asynchronous error; past the group's timeout
// (counted from the enqueue) it aborts the communicator, which also stops the kernels.
class NcclCompletion : public DeviceCompletion {
 public:
  NcclCompletion(const std::shared_ptr<ProcessGroupNccl>& pg, cudaEvent_t event, const char* op,
                 std::string what)
      : pg_(pg),
        device_(pg->device()),
        event_(event),
        op_(op),
        what_(std::move(what)),
        where_(pg->Where()),
        limit_(pg->options().timeout),
        enqueued_(Clock::now()) {}
  ~NcclCompletion() override {
    cuda::DeviceGuard guard(device_);
    cudaEventDestroy(event_);
    (void)cudaGetLastError();
  }

  StatusOr<bool> Query() override {
    std::shared_ptr<ProcessGroupNccl> pg = pg_.lock();
    // After an abort the kernels stop early: whatever they wrote is not the result.
    if (pg && pg->aborted_) return Aborted(*pg);
    cuda::DeviceGuard guard(device_);
    cudaError_t e = cudaEventQuery(event_);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) {
      (void)cudaGetLastError();
      Status s = cuda::CudaStatus(e, "cudaEventQuery", __FILE__, __LINE__);
      return Status(s.code(), absl::StrFormat("[%s] %s (%s): waiting for the NCCL kernels: %s", op_,
                                              where_, what_, s.message()));
    }
    if (pg) {
      RETURN_IF_ERROR(pg->PollAsyncError(op_, what_));
      if (pg->aborted_) return Aborted(*pg);
    }
    return false;
  }

  StatusOr<bool> Wait(int64_t timeout_ms) override {
    const auto start = Clock::now();
    Backoff backoff;
    for (;;) {
      ASSIGN_OR_RETURN(bool done, Query());
      if (done) return true;
      const auto now = Clock::now();
      if (now - enqueued_ > limit_) {
        Status why = absl::DeadlineExceededError(absl::StrFormat(
            "[%s] %s (%s): the NCCL work did not finish within the timeout (%d ms): a peer "
            "exited, stalled or called a different collective; the communicator was aborted",
            op_, where_, what_, Ms(limit_)));
        if (std::shared_ptr<ProcessGroupNccl> pg = pg_.lock()) return pg->Abort(why);
        return why;
      }
      if (timeout_ms >= 0 && now - start >= std::chrono::milliseconds(timeout_ms)) return false;
      backoff.Pause();
    }
  }

 private:
  Status Aborted(ProcessGroupNccl& pg) {
    std::lock_guard<std::mutex> lock(pg.broken_mu_);
    return absl::UnavailableError(
        absl::StrFormat("[%s] %s (%s): the communicator was aborted before this op was seen to "
                        "finish, so its result is not valid: %s",
                        op_, where_, what_, pg.broken_.message()));
  }

  std::weak_ptr<ProcessGroupNccl> pg_;
  int device_;
  cudaEvent_t event_;
  const char* op_;
  std::string what_, where_;
  std::chrono::milliseconds limit_;
  Clock::time_point enqueued_;
};

// ---- creation ----------------------------------------------------------------------------------

ProcessGroupNccl::ProcessGroupNccl(ProcessGroupOptions options, int device)
    : options_(std::move(options)),
      device_(device),
      order_(std::make_shared<vm::Blob>(Device::CPU(), 0)) {}

ProcessGroupNccl::~ProcessGroupNccl() = default;

std::string ProcessGroupNccl::Unavailable() {
  StatusOr<const NcclApi*> api = Nccl();
  return api.ok() ? "" : std::string(api.status().message());
}

StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::Create(
    const ProcessGroupOptions& options, int device) {
  return Make("init_process_group", options, device, nullptr, kPrefix);
}

StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::CreateWithStore(
    const ProcessGroupOptions& options, int device, std::shared_ptr<TcpStore> store,
    const std::string& prefix) {
  if (!store)
    return absl::UnavailableError(
        "[init_process_group] the nccl group's store is gone (the gloo group was shut down)");
  return Make("init_process_group", options, device, std::move(store), prefix);
}

StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::Make(
    const char* label, const ProcessGroupOptions& options, int device,
    std::shared_ptr<TcpStore> store, const std::string& prefix) {
  if (options.world_size < 1)
    return InvalidArgument("[%s] world_size must be >= 1: got %d", label, options.world_size);
  if (options.rank < 0 || options.rank >= options.world_size)
    return InvalidArgument("[%s] rank %d is out of range for world_size %d", label, options.rank,
                           options.world_size);
  std::shared_ptr<ProcessGroupNccl> pg(new ProcessGroupNccl(options, device));
  Status st;
  if (store) {
    pg->store_ = std::move(store);
  } else {
    auto made = TcpStore::Create(options.host, options.port, options.rank == 0, options.timeout);
    if (made.ok())
      pg->store_ = std::move(*made);
    else
      st = made.status();
  }
  if (st.ok()) st = pg->Connect(prefix);
  if (!st.ok()) {
    {
      std::lock_guard<std::mutex> lock(pg->comm_mu_);
      if (pg->comm_ != nullptr) {
        cuda::DeviceGuard guard(device);
        pg->api_->CommAbort(pg->comm_);
        pg->comm_ = nullptr;
      }
    }
    if (pg->barrier_buf_ != nullptr) {
      GetAllocator(Device(DeviceType::kCUDA, device))->Deallocate(pg->barrier_buf_, kBarrierBytes);
      pg->barrier_buf_ = nullptr;
    }
    return Status(st.code(),
                  absl::StrFormat("[%s] rank %d of %d (nccl, cuda:%d): %s", label, options.rank,
                                  options.world_size, device, st.message()));
  }
  return pg;
}

Status ProcessGroupNccl::Connect(const std::string& prefix) {
  ASSIGN_OR_RETURN(api_, Nccl());
  nccl_version_ = api_->version;
  RETURN_IF_ERROR(cuda::CheckDevice(device_));
  const int rank = options_.rank, size = options_.world_size;
  const int64_t timeout_ms = Ms(options_.timeout);
  // Agree on the world size and catch a rank started twice before NCCL's rendezvous, whose own
  // failure would only be a timeout.
  ASSIGN_OR_RETURN(int64_t joined, store_->Add(absl::StrCat(prefix, "joined/", rank), 1));
  if (joined > 1) return InvalidArgument("two processes were started as rank %d", rank);
  const std::string mine = std::to_string(size);
  RETURN_IF_ERROR(
      store_->Set(absl::StrCat(prefix, "world_size/", rank), {mine.begin(), mine.end()}));
  auto check = [&](int other) -> Status {
    auto got = store_->Get(absl::StrCat(prefix, "world_size/", other));
    if (!got.ok())
      return Status(got.status().code(),
                    absl::StrFormat("rank %d did not join within the timeout (%d ms; is it "
                                    "running, with the same MASTER_ADDR:MASTER_PORT and "
                                    "backend?): %s",
                                    other, timeout_ms, got.status().message()));
    std::string theirs(got->begin(), got->end());
    if (theirs == mine) return Status();
    return InvalidArgument(
        "world_size mismatch: this rank has world_size=%d but rank %d has world_size=%s (every "
        "rank must be started with the same value)",
        size, other, theirs);
  };
  if (rank != 0) RETURN_IF_ERROR(check(0));
  for (int r = 1; rank == 0 && r < size; ++r) RETURN_IF_ERROR(check(r));

  // Rank 0 makes NCCL's unique id (the address of its bootstrap) and hands it out.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  const std::string id_key = absl::StrCat(prefix, "unique_id");
  if (rank == 0) {
    ncclResult_t r = api_->GetUniqueId(&id);
    if (r != ncclSuccess)
      return absl::UnavailableError(
          absl::StrCat("ncclGetUniqueId failed: ", NcclErrorText(*api_, r, nullptr)));
    const char* bytes = reinterpret_cast<const char*>(&id);
    RETURN_IF_ERROR(store_->Set(id_key, std::vector<char>(bytes, bytes + sizeof(id))));
  } else {
    auto got = store_->Get(id_key);
    if (!got.ok())
      return Status(got.status().code(),
                    absl::StrFormat("rank 0 did not publish NCCL's unique id within the timeout "
                                    "(%d ms): %s",
                                    timeout_ms, got.status().message()));
    if (got->size() != sizeof(id))
      return Internal("NCCL's unique id from rank 0 has %d bytes, this NCCL expects %d",
                      int64_t(got->size()), int64_t(sizeof(id)));
    std::memcpy(&id, got->data(), sizeof(id));
  }

  // A non-blocking communicator: init returns at once and is polled, so it has a time limit.
  cuda::DeviceGuard guard(device_);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = api_->CommInitRankConfig(&comm, size, id, rank, &config);
  auto give_up = [&](Status s) {
    if (comm != nullptr) api_->CommAbort(comm);
    return s;
  };
  if (r != ncclSuccess && r != ncclInProgress)
    return give_up(absl::UnavailableError(absl::StrFormat(
        "ncclCommInitRankConfig on cuda:%d failed: %s", device_, NcclErrorText(*api_, r, comm))));
  if (comm == nullptr) return Internal("ncclCommInitRankConfig returned no communicator");
  const auto deadline = Clock::now() + options_.timeout;
  Backoff backoff;
  for (;;) {
    ncclResult_t state = ncclInProgress;
    ncclResult_t q = api_->CommGetAsyncError(comm, &state);
    if (q != ncclSuccess) state = q;
    if (state == ncclSuccess) break;
    if (state != ncclInProgress)
      return give_up(absl::UnavailableError(
          absl::StrFormat("NCCL could not create the communicator on cuda:%d: %s", device_,
                          NcclErrorText(*api_, state, comm))));
    if (Clock::now() > deadline)
      return give_up(absl::DeadlineExceededError(absl::StrFormat(
          "NCCL's communicator on cuda:%d was not ready within the timeout (%d ms): every rank "
          "must reach init_process_group, each with a GPU of its own (NCCL refuses two ranks on "
          "one GPU)",
          device_, timeout_ms)));
    backoff.Pause();
  }
  {
    std::lock_guard<std::mutex> lock(comm_mu_);
    comm_ = comm;
  }
  Allocator* allocator = GetAllocator(Device(DeviceType::kCUDA, device_));
  if (allocator == nullptr) return Internal("no allocator for cuda:%d", device_);
  ASSIGN_OR_RETURN(barrier_buf_, allocator->Allocate(kBarrierBytes));
  // Nobody leaves before everyone is connected: rank 0's store must outlive the others' reads.
  ASSIGN_OR_RETURN(int64_t ready, store_->Add(absl::StrCat(prefix, "ready"), 1));
  if (ready == size) RETURN_IF_ERROR(store_->Set(absl::StrCat(prefix, "all_ready"), {'1'}));
  return store_->Get(absl::StrCat(prefix, "all_ready")).status();
}

StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::NewGroup(
    const std::vector<int>& ranks, int64_t index, std::chrono::milliseconds timeout) {
  auto me = std::find(ranks.begin(), ranks.end(), rank());
  if (me == ranks.end())
    return InvalidArgument("[new_group] rank %d is not in ranks [%s]", rank(),
                           absl::StrJoin(ranks, ", "));
  if (!store_) return absl::UnavailableError("[new_group] the process group was destroyed");
  ProcessGroupOptions o = options_;
  o.rank = static_cast<int>(me - ranks.begin());
  o.world_size = static_cast<int>(ranks.size());
  o.timeout = timeout;
  const std::string prefix = absl::StrCat("ofl/ncclgroup/", index, "/");
  RETURN_IF_ERROR(AgreeOnGroupMembers(*store_, prefix, rank(), ranks));
  ASSIGN_OR_RETURN(std::shared_ptr<ProcessGroupNccl> pg,
                   Make("new_group", o, device_, store_, prefix));
  // One issue order for the groups of a device: their kernels share its compute stream, where a
  // collective waiting for peers holds up everything after it (two ranks meeting a group's op and
  // a sub-group's in different orders would deadlock).
  pg->order_ = order_;
  return pg;
}

// ---- checks ------------------------------------------------------------------------------------

std::string ProcessGroupNccl::Where() const {
  return absl::StrFormat("rank %d of %d on cuda:%d", rank(), size(), device_);
}

std::string ProcessGroupNccl::Describe(const Tensor& t) const {
  return absl::StrCat(DTypeLongName(t.dtype()), "[", absl::StrJoin(t.shape().dims(), ", "), "] on ",
                      t.device().ToString());
}

StatusOr<TensorBytes> ProcessGroupNccl::Bytes(const char* op, const Tensor& t) const {
  if (!t.defined()) return InvalidArgument("[%s] rank %d: got an undefined tensor", op, rank());
  if (t.is_lazy())
    return InvalidArgument(
        "[%s] rank %d: the nccl backend takes eager CUDA tensors, not values traced by nn.Graph "
        "(collectives inside nn.Graph need backend='gloo')",
        op, rank());
  if (!t.device().is_cuda())
    return InvalidArgument(
        "[%s] rank %d: the nccl backend takes CUDA tensors on this rank's device cuda:%d: got %s "
        "(move it with .to('cuda:%d'), or use backend='gloo' or 'cpu:gloo,cuda:nccl' for CPU "
        "tensors)",
        op, rank(), device_, Describe(t), device_);
  if (t.device().index() != device_)
    return InvalidArgument(
        "[%s] rank %d: this rank's NCCL group runs on cuda:%d (LOCAL_RANK %% device count, or "
        "init_process_group's device_id): got %s",
        op, rank(), device_, Describe(t));
  if (!t.is_contiguous())
    return InvalidArgument(
        "[%s] rank %d: tensors must be contiguous: got %s with strides that "
        "are not (call .contiguous())",
        op, rank(), Describe(t));
  const DType dt = t.dtype();
  if (dt == DType::kI16 || dt == DType::kU16 || IsFloat8(dt) || IsComplex(dt))
    return TypeError(
        "[%s] rank %d: NCCL has no %s element type: got %s (cast it, or use "
        "backend='gloo')",
        op, rank(), DTypeLongName(dt), Describe(t));
  const int64_t esize = DTypeSize(dt);
  return TensorBytes{t.blob(), t.offset() * esize, t.numel() * esize};
}

StatusOr<std::vector<TensorBytes>> ProcessGroupNccl::ListBytes(const char* op,
                                                               const TensorList& list,
                                                               const Tensor& like,
                                                               const char* role) const {
  if (static_cast<int>(list.size()) != size())
    return InvalidArgument("[%s] rank %d: needs world_size (%d) %s tensors: got %d", op, rank(),
                           size(), role, int(list.size()));
  std::vector<TensorBytes> out;
  for (const Tensor& t : list) {
    if (!t.defined() || t.dtype() != like.dtype() || !(t.shape() == like.shape()))
      return InvalidArgument("[%s] rank %d: every %s must be shaped like %s: got %s", op, rank(),
                             role, Describe(like), t.defined() ? Describe(t) : "undefined");
    ASSIGN_OR_RETURN(TensorBytes b, Bytes(op, t));
    out.push_back(b);
  }
  return out;
}

Status ProcessGroupNccl::CheckPeer(const char* op, int peer, const char* what) const {
  if (peer < 0 || peer >= size())
    return InvalidArgument("[%s] rank %d: %s rank %d is out of range for world_size %d", op, rank(),
                           what, peer, size());
  return Status();
}

Status ProcessGroupNccl::Usable(const char* op) const {
  std::lock_guard<std::mutex> lock(broken_mu_);
  if (broken_.ok()) return Status();
  return absl::UnavailableError(
      absl::StrFormat("[%s] rank %d: the process group is unusable after an earlier failure: %s",
                      op, rank(), broken_.message()));
}

// ---- running -----------------------------------------------------------------------------------

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Issue(const char* name, std::string what,
                                                        std::vector<TensorBytes> reads,
                                                        std::vector<TensorBytes> writes,
                                                        Launch launch) {
  if (shut_down_)
    return absl::UnavailableError(absl::StrFormat("[%s] the process group was destroyed", name));
  RETURN_IF_ERROR(Usable(name));
  auto work = std::make_shared<Work>();
  auto self = shared_from_this();
  CollectiveInstructionPolicy::DeviceFn run = [self, name, what, launch = std::move(launch)](
                                                  oneflow_like::Stream* stream, Work* w,
                                                  const std::vector<TensorBytes>& r,
                                                  const std::vector<TensorBytes>& wr) {
    return self->RunOnStream(name, what, stream, w, r, wr, launch);
  };
  RETURN_IF_ERROR(vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    return b->Push(Device(DeviceType::kCUDA, device_), vm::StreamRole::kCompute,
                   std::make_unique<CollectiveInstructionPolicy>(
                       name, std::move(reads), std::move(writes), order_, std::move(run), work));
  }));
  last_work_ = work;
  return work;
}

Status ProcessGroupNccl::RunOnStream(const char* name, const std::string& what,
                                     oneflow_like::Stream* stream, Work* work,
                                     const std::vector<TensorBytes>& reads,
                                     const std::vector<TensorBytes>& writes, const Launch& launch) {
  if (stream == nullptr || stream->device() != Device(DeviceType::kCUDA, device_))
    return Internal("[%s] %s: the instruction does not run on cuda:%d's compute stream", name,
                    Where(), device_);
  auto* s = static_cast<cudaStream_t>(stream->native_handle());
  cuda::DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(comm_mu_);
  RETURN_IF_ERROR(Usable(name));
  if (comm_ == nullptr)
    return absl::UnavailableError(
        absl::StrFormat("[%s] %s: the communicator was destroyed", name, Where()));
  running_op_ = name;
  running_what_ = what;
  Status st = launch(s, reads, writes);
  // NCCL's own CUDA calls on this thread must not become the next kernel's launch error.
  (void)cudaGetLastError();
  RETURN_IF_ERROR(st);
  cudaEvent_t event = nullptr;
  CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t e = cudaEventRecord(event, s);
  if (e != cudaSuccess) {
    cudaEventDestroy(event);
    (void)cudaGetLastError();
    return cuda::CudaStatus(e, "cudaEventRecord", __FILE__, __LINE__);
  }
  work->SetDeviceCompletion(
      std::make_shared<NcclCompletion>(shared_from_this(), event, name, what));
  return Status();
}

Status ProcessGroupNccl::Failure(const char* op, const std::string& what, int result,
                                 const char* hint) {
  return absl::UnavailableError(
      absl::StrFormat("[%s] %s (%s): %s%s", op, Where(), what,
                      NcclErrorText(*api_, static_cast<ncclResult_t>(result), comm_), hint));
}

Status ProcessGroupNccl::AwaitLocked(int result) {
  constexpr const char* kHint =
      ". A peer exited, was killed or failed, or the ranks called different collectives; the "
      "communicator was aborted";
  const auto r = static_cast<ncclResult_t>(result);
  if (r != ncclSuccess && r != ncclInProgress)
    return AbortLocked(Failure(running_op_, running_what_, r, kHint));
  // A non-blocking communicator answers ncclInProgress until NCCL has enqueued the call; no other
  // call may use it before then.
  const auto deadline = Clock::now() + options_.timeout;
  Backoff backoff;
  for (;;) {
    ncclResult_t state = ncclInProgress;
    ncclResult_t q = api_->CommGetAsyncError(comm_, &state);
    if (q != ncclSuccess) state = q;
    if (state == ncclSuccess) return Status();
    if (state != ncclInProgress)
      return AbortLocked(Failure(running_op_, running_what_, state, kHint));
    if (Clock::now() > deadline)
      return AbortLocked(absl::DeadlineExceededError(absl::StrFormat(
          "[%s] %s (%s): NCCL did not accept the call within the timeout (%d ms); the "
          "communicator was aborted",
          running_op_, Where(), running_what_, Ms(options_.timeout))));
    backoff.Pause();
  }
}

Status ProcessGroupNccl::GroupLocked(const std::function<int()>& body) {
  ncclResult_t r = api_->GroupStart();
  if (r != ncclSuccess) return AwaitLocked(r);
  const ncclResult_t calls = static_cast<ncclResult_t>(body());
  r = api_->GroupEnd();  // always closes the group, even after a failed call inside
  return AwaitLocked(calls != ncclSuccess && calls != ncclInProgress ? calls : r);
}

Status ProcessGroupNccl::AbortLocked(Status why) {
  if (comm_ != nullptr) {
    // Blocking even for a non-blocking communicator; kernels waiting for peers stop.
    ncclResult_t r = api_->CommAbort(comm_);
    comm_ = nullptr;
    if (r != ncclSuccess)
      why = Status(
          why.code(),
          absl::StrCat(why.message(), " (ncclCommAbort: ", NcclErrorText(*api_, r, nullptr), ")"));
  }
  std::lock_guard<std::mutex> lock(broken_mu_);
  if (broken_.ok())
    broken_ = Status(why.code(), absl::StrCat(why.message(),
                                              "; the process group is unusable from now on "
                                              "(destroy it and create a new one)"));
  aborted_ = true;  // after broken_: whoever sees the flag finds the reason
  return broken_;
}

Status ProcessGroupNccl::Abort(Status why) {
  cuda::DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(comm_mu_);
  return AbortLocked(std::move(why));
}

Status ProcessGroupNccl::PollAsyncError(const char* op, const std::string& what) {
  std::unique_lock<std::mutex> lock(comm_mu_, std::try_to_lock);
  if (!lock.owns_lock() || comm_ == nullptr) return Status();  // enqueueing now: next round
  ncclResult_t state = ncclSuccess;
  ncclResult_t q = api_->CommGetAsyncError(comm_, &state);
  if (q != ncclSuccess) state = q;
  if (state == ncclSuccess || state == ncclInProgress) return Status();
  cuda::DeviceGuard guard(device_);
  return AbortLocked(Failure(op, what, state,
                             ". NCCL reported it while this op ran (a peer exited or the network "
                             "failed); the communicator was aborted"));
}

// ---- shutdown ----------------------------------------------------------------------------------

Status ProcessGroupNccl::Shutdown() {
  if (shut_down_.exchange(true)) return Status();
  Status st;
  if (last_work_) st = last_work_->Wait();  // bounded: the device wait aborts at the timeout
  last_work_.reset();
  cuda::DeviceGuard guard(device_);
  {
    std::lock_guard<std::mutex> lock(comm_mu_);
    if (comm_ != nullptr) {
      // Finalize (flushes this rank's communication; non-blocking, so polled with the timeout),
      // then destroy; abort when either fails.
      Status fin;
      ncclResult_t r = api_->CommFinalize(comm_);
      ncclResult_t state = r;
      if (r == ncclSuccess || r == ncclInProgress) {
        const auto deadline = Clock::now() + options_.timeout;
        Backoff backoff;
        for (;;) {
          ncclResult_t q = api_->CommGetAsyncError(comm_, &state);
          if (q != ncclSuccess) state = q;
          if (state != ncclInProgress || Clock::now() > deadline) break;
          backoff.Pause();
        }
      }
      if (state == ncclSuccess) {
        r = api_->CommDestroy(comm_);
        comm_ = nullptr;  // freed, or in an unknown state after a failed destroy: not touched
        if (r != ncclSuccess)
          fin = absl::UnavailableError(
              absl::StrCat("ncclCommDestroy: ", NcclErrorText(*api_, r, nullptr)));
      } else {
        fin = state == ncclInProgress
                  ? absl::DeadlineExceededError(absl::StrFormat(
                        "ncclCommFinalize did not finish within the timeout (%d ms)",
                        Ms(options_.timeout)))
                  : absl::UnavailableError(
                        absl::StrCat("ncclCommFinalize: ", NcclErrorText(*api_, state, comm_)));
        api_->CommAbort(comm_);
        comm_ = nullptr;
      }
      if (!fin.ok() && st.ok())
        st = Status(fin.code(),
                    absl::StrFormat("[destroy_process_group] %s: %s", Where(), fin.message()));
    }
  }
  if (barrier_buf_ != nullptr) {
    GetAllocator(Device(DeviceType::kCUDA, device_))->Deallocate(barrier_buf_, kBarrierBytes);
    barrier_buf_ = nullptr;
  }
  store_.reset();
  return st;
}

}  // namespace distributed
}  // namespace oneflow_like
