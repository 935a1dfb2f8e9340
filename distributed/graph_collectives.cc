#include "distributed/graph_collectives.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "compiler/library/external_calls.h"
#include "kernels/kernel.h"
#include "oneflow_like/framework/op.h"
#include "oneflow_like/lazy/lower.h"

namespace oneflow_like {
namespace distributed {
namespace {

// id -> group, for kernels that only see the attrs. Ids are never reused.
std::mutex registry_mu;
int64_t next_id = 1;
absl::flat_hash_map<int64_t, std::weak_ptr<ProcessGroupGloo>>& Registry() {
  static auto* r = new absl::flat_hash_map<int64_t, std::weak_ptr<ProcessGroupGloo>>();
  return *r;
}

std::string Describe(DType dtype, const Shape& shape) {
  return absl::StrCat(DTypeLongName(dtype), "[", absl::StrJoin(shape.dims(), ", "), "]");
}

// Both ops: the output is the input's shape and dtype, on the CPU.
template <const char* kName>
Status InferCollective(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  RETURN_IF_ERROR(CheckNumInputs(kName, in, 1));
  const Tensor& t = in[0];
  if (!t.device().is_cpu())
    return InvalidArgument("[%s] the Gloo process group takes CPU tensors: got %s on %s", kName,
                           Describe(t.dtype(), t.shape()), t.device().ToString());
  out->push_back({t.shape(), t.dtype(), t.device()});
  return Status();
}

constexpr char kAllReduceName[] = "dist_all_reduce";
constexpr char kBroadcastName[] = "dist_broadcast";
const OpDef kDistAllReduce = OpSpec(kAllReduceName, InferCollective<kAllReduceName>);
const OpDef kDistBroadcast = OpSpec(kBroadcastName, InferCollective<kBroadcastName>);

StatusOr<std::shared_ptr<ProcessGroupGloo>> GroupOf(const kernels::KernelContext& ctx) {
  auto pg = ProcessGroupGloo::FindById(ctx.attrs().Int("group"));
  if (pg == nullptr)
    return absl::FailedPreconditionError(absl::StrFormat(
        "[%s] the process group this graph was traced with has been destroyed", ctx.op()));
  return pg;
}

// out = in (the compiler may give the custom-call a fresh result buffer), then the collective
// in place on out.
void CopyInput(const kernels::KernelContext& ctx) {
  const auto& in = ctx.input(0);
  const auto& out = ctx.output(0);
  if (in.data != out.data) std::memmove(out.data, in.data, in.numel() * DTypeSize(in.dtype));
}

Status DistAllReduceCpu(kernels::KernelContext& ctx) {
  ASSIGN_OR_RETURN(auto pg, GroupOf(ctx));
  CopyInput(ctx);
  const auto& out = ctx.output(0);
  return pg->AllReduceNow(out.data, out.dtype, out.numel(),
                          static_cast<ReduceOp>(ctx.attrs().Int("reduce_op")),
                          Describe(out.dtype, out.shape));
}

Status DistBroadcastCpu(kernels::KernelContext& ctx) {
  ASSIGN_OR_RETURN(auto pg, GroupOf(ctx));
  CopyInput(ctx);
  const auto& out = ctx.output(0);
  return pg->BroadcastNow(out.data, out.numel() * DTypeSize(out.dtype),
                          static_cast<int>(ctx.attrs().Int("root")),
                          Describe(out.dtype, out.shape));
}

// ---- The asynchronous all-reduce of compiled graphs ---------------------------------------------
// dist_all_reduce lowers to a pair of kernel custom-calls (compiler/library/external_calls.h):
// "..._async_start" copies the operand into its result buffer and queues the all-reduce on it
// (ProcessGroupGloo::AllReduceAsync); "..._async_done" (operand: that buffer) waits for it and
// copies the reduced values out. The scheduler spreads the pair apart, so a DDP bucket's
// all-reduce runs while the graph computes the gradients of the layers before it.

// The all-reduces this thread started and no done has collected, by the buffer they write (one
// graph run at a time per thread; a run's live buffers are distinct).
struct PendingAllReduce {
  std::shared_future<Status> result;
  std::chrono::milliseconds timeout;
  std::string what;
};
thread_local absl::flat_hash_map<const void*, PendingAllReduce> t_pending;

// Gloo bounds the all-reduce itself by the group's timeout; this wait adds a margin on top.
Status WaitPending(const PendingAllReduce& p) {
  if (p.result.wait_for(p.timeout + std::chrono::seconds(10)) != std::future_status::ready)
    return absl::DeadlineExceededError(absl::StrFormat(
        "[all_reduce] %s: a compiled graph's all-reduce did not finish within %d ms", p.what,
        static_cast<int64_t>(p.timeout.count()) + 10000));
  return p.result.get();
}

Status DistAllReduceAsyncStartCpu(kernels::KernelContext& ctx) {
  ASSIGN_OR_RETURN(auto pg, GroupOf(ctx));
  CopyInput(ctx);
  const auto& out = ctx.output(0);
  std::string what = Describe(out.dtype, out.shape);
  auto result = pg->AllReduceAsync(out.data, out.dtype, out.numel(),
                                   static_cast<ReduceOp>(ctx.attrs().Int("reduce_op")), what);
  t_pending[out.data] = PendingAllReduce{std::move(result), pg->options().timeout, std::move(what)};
  return Status();
}

Status DistAllReduceAsyncDoneCpu(kernels::KernelContext& ctx) {
  const auto& in = ctx.input(0);
  auto it = t_pending.find(in.data);
  if (it == t_pending.end())
    return absl::InternalError(
        absl::StrFormat("[%s] no all-reduce was started on this buffer (%s) by this thread",
                        ctx.op(), Describe(in.dtype, in.shape)));
  // Waited for before it is forgotten: on a timeout the entry stays, and the drain after the run
  // waits again before the graph's buffers are reused.
  RETURN_IF_ERROR(WaitPending(it->second));
  t_pending.erase(it);
  CopyInput(ctx);
  return Status();
}

// After every compiled run (hlo::DrainExternalCalls): a run that failed between a start and its
// done leaves the all-reduce writing into the graph's buffers; wait for it before the next run.
const bool kDrainRegistered = [] {
  hlo::RegisterExternalCallDrain([] {
    for (auto& [buffer, p] : t_pending) WaitPending(p).IgnoreError();
    t_pending.clear();
  });
  return true;
}();

Status LowerDistAllReduce(lazy::LowerCtx& ctx, const lazy::TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  const hlo::HloShape shape(m.dtype, m.shape.dims());
  const std::string config = lazy::EncodeAttrs(op.attrs);
  ASSIGN_OR_RETURN(auto* start, ctx.b().CustomCall("ofl.kernel.dist_all_reduce_async_start",
                                                   {ctx.in(op, 0)}, shape, config));
  ASSIGN_OR_RETURN(auto* done, ctx.b().CustomCall("ofl.kernel.dist_all_reduce_async_done", {start},
                                                  shape, config));
  ctx.set(op, 0, done);
  return Status();
}

Status CheckContiguous(const char* op, const Tensor& t) {
  if (!t.is_contiguous())
    return InvalidArgument("[%s] needs a contiguous tensor: got %s with strides [%s]", op,
                           Describe(t.dtype(), t.shape()), absl::StrJoin(t.strides(), ", "));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(dist_all_reduce, kCPU, DistAllReduceCpu);
OFL_REGISTER_KERNEL(dist_broadcast, kCPU, DistBroadcastCpu);
OFL_REGISTER_KERNEL(dist_all_reduce_async_start, kCPU, DistAllReduceAsyncStartCpu);
OFL_REGISTER_KERNEL(dist_all_reduce_async_done, kCPU, DistAllReduceAsyncDoneCpu);
OFL_REGISTER_LOWERING(dist_all_reduce, LowerDistAllReduce);

void ProcessGroupGloo::Register(const std::shared_ptr<ProcessGroupGloo>& pg) {
  std::lock_guard<std::mutex> lock(registry_mu);
  pg->id_ = next_id++;
  Registry()[pg->id_] = pg;
}

std::shared_ptr<ProcessGroupGloo> ProcessGroupGloo::FindById(int64_t id) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto it = Registry().find(id);
  if (it == Registry().end()) return nullptr;
  auto pg = it->second.lock();
  if (pg == nullptr || pg->shut_down_) return nullptr;
  return pg;
}

Status ProcessGroupGloo::AllReduceNow(void* data, DType dtype, int64_t n, ReduceOp op,
                                      const std::string& what) {
  return AllReduceTagged(data, dtype, n, op, what, NextGraphTag());
}

Status ProcessGroupGloo::AllReduceTagged(void* data, DType dtype, int64_t n, ReduceOp op,
                                         const std::string& what, uint32_t tag) {
  ASSIGN_OR_RETURN(ReduceFn fn, MakeReduceFn(dtype, op, "all_reduce"));
  if (n == 0 || size() == 1) return Status();
  RETURN_IF_ERROR(GlooAllReduce("all_reduce", what, data, n, DTypeSize(dtype), fn, tag));
  if (op == ReduceOp::kAvg) DivideInPlace(data, dtype, n, size());
  return Status();
}

std::shared_future<Status> ProcessGroupGloo::AllReduceAsync(void* data, DType dtype, int64_t n,
                                                            ReduceOp op, std::string what) {
  const uint32_t tag = NextGraphTag();  // here, in the graph's order, on every rank
  std::lock_guard<std::mutex> lock(graph_mu_);
  if (graph_stop_) {  // shut down (its connections may be gone): fail, never touch Gloo
    std::promise<Status> failed;
    failed.set_value(absl::FailedPreconditionError(
        absl::StrFormat("[all_reduce] %s: the process group was destroyed", what)));
    return failed.get_future().share();
  }
  std::packaged_task<Status()> task([this, data, dtype, n, op, what = std::move(what), tag] {
    return AllReduceTagged(data, dtype, n, op, what, tag);
  });
  std::shared_future<Status> result = task.get_future().share();
  if (!graph_worker_.joinable()) graph_worker_ = std::thread([this] { GraphWorkerLoop(); });
  graph_queue_.push_back(std::move(task));
  graph_cv_.notify_one();
  return result;
}

void ProcessGroupGloo::GraphWorkerLoop() {
  std::unique_lock<std::mutex> lock(graph_mu_);
  for (;;) {
    graph_cv_.wait(lock, [this] { return graph_stop_ || !graph_queue_.empty(); });
    if (graph_queue_.empty()) return;  // stopping, nothing left
    std::packaged_task<Status()> task = std::move(graph_queue_.front());
    graph_queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

void ProcessGroupGloo::StopGraphWorker() {
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    graph_stop_ = true;
  }
  graph_cv_.notify_all();
  if (!graph_worker_.joinable()) return;
  if (graph_worker_.get_id() != std::this_thread::get_id())
    graph_worker_.join();
  else
    graph_worker_.detach();  // the last owner let go on the worker itself: it returns next
}

Status ProcessGroupGloo::BroadcastNow(void* data, int64_t bytes, int root,
                                      const std::string& what) {
  if (root < 0 || root >= size())
    return InvalidArgument("[broadcast] src rank %d is out of range for world_size %d", root,
                           size());
  if (bytes == 0 || size() == 1) return Status();
  return GlooBroadcast(what, data, bytes, root, NextGraphTag());
}

Status AllReduceOp(const Tensor& t, const ProcessGroupGloo& pg, ReduceOp op) {
  RETURN_IF_ERROR(CheckContiguous("all_reduce", t));
  RETURN_IF_ERROR(MakeReduceFn(t.dtype(), op, "all_reduce").status());
  AttrMap attrs;
  attrs.Set("group", pg.id()).Set("reduce_op", static_cast<int64_t>(op));
  return DispatchInplace(kDistAllReduce, {t}, attrs, t);
}

Status BroadcastOp(const Tensor& t, const ProcessGroupGloo& pg, int root) {
  RETURN_IF_ERROR(CheckContiguous("broadcast", t));
  if (root < 0 || root >= pg.size())
    return InvalidArgument("[broadcast] src rank %d is out of range for world_size %d", root,
                           pg.size());
  AttrMap attrs;
  attrs.Set("group", pg.id()).Set("root", static_cast<int64_t>(root));
  return DispatchInplace(kDistBroadcast, {t}, attrs, t);
}

}  // namespace distributed
}  // namespace oneflow_like
