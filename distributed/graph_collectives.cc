#include "distributed/graph_collectives.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "kernels/kernel.h"
#include "oneflow_like/framework/op.h"

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

Status CheckContiguous(const char* op, const Tensor& t) {
  if (!t.is_contiguous())
    return InvalidArgument("[%s] needs a contiguous tensor: got %s with strides [%s]", op,
                           Describe(t.dtype(), t.shape()), absl::StrJoin(t.strides(), ", "));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(dist_all_reduce, kCPU, DistAllReduceCpu);
OFL_REGISTER_KERNEL(dist_broadcast, kCPU, DistBroadcastCpu);

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
  ASSIGN_OR_RETURN(ReduceFn fn, MakeReduceFn(dtype, op, "all_reduce"));
  if (n == 0 || size() == 1) return Status();
  RETURN_IF_ERROR(GlooAllReduce("all_reduce", what, data, n, DTypeSize(dtype), fn, NextGraphTag()));
  if (op == ReduceOp::kAvg) DivideInPlace(data, dtype, n, size());
  return Status();
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
