// ProcessGroupNccl in a build without --config=cuda: nothing can be created, so the collectives
// are never reached (they fail the same way, for completeness).
#include "distributed/process_group_nccl.h"

namespace oneflow_like {
namespace distributed {

namespace {
constexpr const char* kWhy =
    "this build of oneflow_like has no CUDA backend (build it with bazel --config=cuda; `make "
    "build` does when /usr/local/cuda/bin/nvcc exists), so backend='nccl' is unavailable: use "
    "backend='gloo' with CPU tensors";

Status NotBuilt(const char* op) {
  return absl::UnavailableError(absl::StrFormat("[%s] %s", op, kWhy));
}
}  // namespace

ProcessGroupNccl::~ProcessGroupNccl() = default;

std::string ProcessGroupNccl::Unavailable() {
  return kWhy;
}

StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::Create(const ProcessGroupOptions&,
                                                                     int) {
  return NotBuilt("init_process_group");
}

StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::CreateWithStore(
    const ProcessGroupOptions&, int, std::shared_ptr<TcpStore>, const std::string&) {
  return NotBuilt("init_process_group");
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::AllReduce(const Tensor&, ReduceOp) {
  return NotBuilt("all_reduce");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Broadcast(const Tensor&, int) {
  return NotBuilt("broadcast");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::AllGather(const TensorList&, const Tensor&) {
  return NotBuilt("all_gather");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::ReduceScatter(const Tensor&, const TensorList&,
                                                                ReduceOp) {
  return NotBuilt("reduce_scatter");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Reduce(const Tensor&, int, ReduceOp) {
  return NotBuilt("reduce");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Gather(const TensorList&, const Tensor&, int) {
  return NotBuilt("gather");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Scatter(const Tensor&, const TensorList&, int) {
  return NotBuilt("scatter");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Send(const Tensor&, int) {
  return NotBuilt("send");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Recv(const Tensor&, int) {
  return NotBuilt("recv");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::BatchSendRecv(const std::vector<P2POp>&) {
  return NotBuilt("batch_isend_irecv");
}
StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Barrier() {
  return NotBuilt("barrier");
}
StatusOr<std::shared_ptr<ProcessGroupNccl>> ProcessGroupNccl::NewGroup(const std::vector<int>&,
                                                                       int64_t,
                                                                       std::chrono::milliseconds) {
  return NotBuilt("new_group");
}
Status ProcessGroupNccl::Shutdown() {
  return Status();
}

}  // namespace distributed
}  // namespace oneflow_like
