// The collectives of ProcessGroupNccl (process_group_nccl.h): each checks its tensors on the
// caller's thread and issues one instruction whose launch enqueues the NCCL calls on the compute
// stream of the group's device (comm_mu_ held; see RunOnStream).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "absl/strings/str_join.h"
#include "device/cuda/device.h"
#include "distributed/nccl_api.h"
#include "distributed/process_group_nccl.h"
#include "oneflow_like/base/allocator.h"

namespace oneflow_like {
namespace distributed {

namespace {

ncclDataType_t NcclType(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kU8: return ncclUint8;
    case DType::kI8: return ncclInt8;
    case DType::kI32: return ncclInt32;
    case DType::kI64: return ncclInt64;
    case DType::kF16: return ncclFloat16;
    case DType::kBF16: return ncclBfloat16;
    case DType::kF32: return ncclFloat32;
    case DType::kF64: return ncclFloat64;
    case DType::kU32: return ncclUint32;
    case DType::kU64: return ncclUint64;
    default: break;  // no NCCL type: ProcessGroupNccl::Bytes refuses these dtypes
  }
  return ncclUint8;
}

// Bool reduces as logical or (sum, max) / and (product, min), as with Gloo; AVG needs a floating
// dtype (ncclAvg).
StatusOr<ncclRedOp_t> NcclOp(const char* op_name, ReduceOp op, DType t, const std::string& where) {
  const int code = static_cast<int>(op);
  if (code < 0 || code > 4)
    return InvalidArgument("[%s] %s: unknown reduce op %d (use dist.ReduceOp)", op_name, where,
                           code);
  if (op == ReduceOp::kAvg && !IsFloating(t))
    return TypeError("[%s] %s: ReduceOp.AVG needs a floating tensor: got %s", op_name, where,
                     DTypeLongName(t));
  if (t == DType::kBool) return op == ReduceOp::kSum || op == ReduceOp::kMax ? ncclMax : ncclMin;
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kAvg: return ncclAvg;
    case ReduceOp::kProduct: return ncclProd;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kMax: return ncclMax;
  }
  return ncclSum;
}

// Whether `parts` are consecutive pieces of one blob (the chunks all_gather_into_tensor and
// reduce_scatter_tensor pass): NCCL then reads or writes them as one buffer.
bool Consecutive(const std::vector<TensorBytes>& parts) {
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i].blob != parts[0].blob ||
        parts[i].offset != parts[0].offset + static_cast<int64_t>(i) * parts[0].size)
      return false;
  return true;
}

// Device memory for one instruction from the device's caching allocator, given back when the
// instruction's launch returns: the kernels using it are on the compute stream, and the
// allocator's next user is a kernel enqueued later on that stream (Note [CUDA instruction
// completion] in device/cuda/stream_policy.cc).
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (ptr_ != nullptr) allocator_->Deallocate(ptr_, bytes_);
  }
  Status Allocate(int device, size_t bytes) {
    allocator_ = GetAllocator(Device(DeviceType::kCUDA, device));
    if (allocator_ == nullptr) return Internal("[nccl] no allocator for cuda:%d", device);
    ASSIGN_OR_RETURN(ptr_, allocator_->Allocate(bytes));
    bytes_ = bytes;
    return Status();
  }
  char* at(size_t offset) const { return static_cast<char*>(ptr_) + offset; }

 private:
  Allocator* allocator_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// The first real failure among the calls of one NCCL group (ncclInProgress is not one).
struct FirstFailure {
  ncclResult_t first = ncclSuccess;
  void operator()(ncclResult_t x) {
    if (first == ncclSuccess && x != ncclSuccess && x != ncclInProgress) first = x;
  }
};

}  // namespace

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::AllReduce(const Tensor& t, ReduceOp op) {
  ASSIGN_OR_RETURN(TensorBytes tb, Bytes("all_reduce", t));
  ASSIGN_OR_RETURN(ncclRedOp_t rop, NcclOp("all_reduce", op, t.dtype(), Where()));
  const ncclDataType_t type = NcclType(t.dtype());
  const size_t n = t.numel();
  return Issue(
      "all_reduce", Describe(t), {tb}, {tb},
      [this, type, n, rop](CUstream_st* s, auto&, const std::vector<TensorBytes>& w) {
        if (n == 0) return Status();
        return AwaitLocked(api_->AllReduce(w[0].data(), w[0].data(), n, type, rop, comm_, s));
      });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Broadcast(const Tensor& t, int root) {
  RETURN_IF_ERROR(CheckPeer("broadcast", root, "src"));
  ASSIGN_OR_RETURN(TensorBytes tb, Bytes("broadcast", t));
  const ncclDataType_t type = NcclType(t.dtype());
  const size_t n = t.numel();
  return Issue(
      "broadcast", Describe(t), {tb}, {tb},
      [this, type, n, root](CUstream_st* s, auto&, const std::vector<TensorBytes>& w) {
        if (n == 0) return Status();
        return AwaitLocked(api_->Broadcast(w[0].data(), w[0].data(), n, type, root, comm_, s));
      });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::AllGather(const TensorList& outputs,
                                                            const Tensor& input) {
  ASSIGN_OR_RETURN(TensorBytes in, Bytes("all_gather", input));
  ASSIGN_OR_RETURN(auto outs, ListBytes("all_gather", outputs, input, "output"));
  const ncclDataType_t type = NcclType(input.dtype());
  const size_t n = input.numel();
  return Issue(
      "all_gather", Describe(input), {in}, outs,
      [this, type, n](CUstream_st* s, const std::vector<TensorBytes>& r,
                      const std::vector<TensorBytes>& w) -> Status {
        if (n == 0) return Status();
        if (Consecutive(w))
          return AwaitLocked(api_->AllGather(r[0].data(), w[0].data(), n, type, comm_, s));
        // Separate output tensors: gather into one buffer, then copy the pieces out.
        const size_t bytes = r[0].size;
        Scratch all;
        RETURN_IF_ERROR(all.Allocate(device_, bytes * w.size()));
        RETURN_IF_ERROR(AwaitLocked(api_->AllGather(r[0].data(), all.at(0), n, type, comm_, s)));
        for (size_t i = 0; i < w.size(); ++i)
          CUDA_RETURN_IF_ERROR(
              cudaMemcpyAsync(w[i].data(), all.at(i * bytes), bytes, cudaMemcpyDeviceToDevice, s));
        return Status();
      });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::ReduceScatter(const Tensor& output,
                                                                const TensorList& inputs,
                                                                ReduceOp op) {
  ASSIGN_OR_RETURN(TensorBytes out, Bytes("reduce_scatter", output));
  ASSIGN_OR_RETURN(ncclRedOp_t rop, NcclOp("reduce_scatter", op, output.dtype(), Where()));
  ASSIGN_OR_RETURN(auto ins, ListBytes("reduce_scatter", inputs, output, "input"));
  const ncclDataType_t type = NcclType(output.dtype());
  const size_t n = output.numel();
  return Issue(
      "reduce_scatter", Describe(output), ins, {out},
      [this, type, n, rop](CUstream_st* s, const std::vector<TensorBytes>& r,
                           const std::vector<TensorBytes>& w) -> Status {
        if (n == 0) return Status();
        if (Consecutive(r))
          return AwaitLocked(api_->ReduceScatter(r[0].data(), w[0].data(), n, type, rop, comm_, s));
        // Separate input tensors: copy them into one buffer first.
        const size_t bytes = w[0].size;
        Scratch all;
        RETURN_IF_ERROR(all.Allocate(device_, bytes * r.size()));
        for (size_t i = 0; i < r.size(); ++i)
          CUDA_RETURN_IF_ERROR(
              cudaMemcpyAsync(all.at(i * bytes), r[i].data(), bytes, cudaMemcpyDeviceToDevice, s));
        return AwaitLocked(api_->ReduceScatter(all.at(0), w[0].data(), n, type, rop, comm_, s));
      });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Reduce(const Tensor& t, int root, ReduceOp op) {
  RETURN_IF_ERROR(CheckPeer("reduce", root, "dst"));
  ASSIGN_OR_RETURN(TensorBytes tb, Bytes("reduce", t));
  ASSIGN_OR_RETURN(ncclRedOp_t rop, NcclOp("reduce", op, t.dtype(), Where()));
  const ncclDataType_t type = NcclType(t.dtype());
  const size_t n = t.numel();
  return Issue("reduce", Describe(t), {tb}, {tb},
               [this, type, n, rop, root](CUstream_st* s, auto&,
                                          const std::vector<TensorBytes>& w) -> Status {
                 if (n == 0) return Status();
                 // Other ranks keep their tensor: their (unused) output is a scratch buffer.
                 Scratch unused;
                 void* out = w[0].data();
                 if (rank() != root) {
                   RETURN_IF_ERROR(unused.Allocate(device_, w[0].size));
                   out = unused.at(0);
                 }
                 return AwaitLocked(api_->Reduce(w[0].data(), out, n, type, rop, root, comm_, s));
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Gather(const TensorList& outputs,
                                                         const Tensor& input, int root) {
  RETURN_IF_ERROR(CheckPeer("gather", root, "dst"));
  ASSIGN_OR_RETURN(TensorBytes in, Bytes("gather", input));
  std::vector<TensorBytes> outs;
  if (rank() == root) {
    ASSIGN_OR_RETURN(outs, ListBytes("gather", outputs, input, "output"));
  } else if (!outputs.empty()) {
    return InvalidArgument("[gather] only rank %d (the root) passes a list of outputs", root);
  }
  const ncclDataType_t type = NcclType(input.dtype());
  const size_t n = input.numel();
  return Issue("gather", Describe(input), {in}, outs,
               [this, type, n, root](CUstream_st* s, const std::vector<TensorBytes>& r,
                                     const std::vector<TensorBytes>& w) -> Status {
                 if (n == 0) return Status();
                 return GroupLocked([&]() -> int {
                   FirstFailure keep;
                   for (size_t p = 0; p < w.size(); ++p)
                     keep(api_->Recv(w[p].data(), n, type, static_cast<int>(p), comm_, s));
                   keep(api_->Send(r[0].data(), n, type, root, comm_, s));
                   return keep.first;
                 });
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Scatter(const Tensor& output,
                                                          const TensorList& inputs, int root) {
  RETURN_IF_ERROR(CheckPeer("scatter", root, "src"));
  ASSIGN_OR_RETURN(TensorBytes out, Bytes("scatter", output));
  std::vector<TensorBytes> ins;
  if (rank() == root) {
    ASSIGN_OR_RETURN(ins, ListBytes("scatter", inputs, output, "input"));
  } else if (!inputs.empty()) {
    return InvalidArgument("[scatter] only rank %d (the root) passes a list of inputs", root);
  }
  const ncclDataType_t type = NcclType(output.dtype());
  const size_t n = output.numel();
  return Issue("scatter", Describe(output), ins, {out},
               [this, type, n, root](CUstream_st* s, const std::vector<TensorBytes>& r,
                                     const std::vector<TensorBytes>& w) -> Status {
                 if (n == 0) return Status();
                 return GroupLocked([&]() -> int {
                   FirstFailure keep;
                   for (size_t p = 0; p < r.size(); ++p)
                     keep(api_->Send(r[p].data(), n, type, static_cast<int>(p), comm_, s));
                   keep(api_->Recv(w[0].data(), n, type, root, comm_, s));
                   return keep.first;
                 });
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Send(const Tensor& t, int dst) {
  RETURN_IF_ERROR(CheckPeer("send", dst, "dst"));
  if (dst == rank())
    return InvalidArgument(
        "[send] rank %d cannot send to itself (batch_isend_irecv can pair a send and a receive "
        "of one rank)",
        rank());
  ASSIGN_OR_RETURN(TensorBytes tb, Bytes("send", t));
  const ncclDataType_t type = NcclType(t.dtype());
  const size_t n = t.numel();
  return Issue("send", absl::StrCat(Describe(t), " to rank ", dst), {tb}, {},
               [this, type, n, dst](CUstream_st* s, const std::vector<TensorBytes>& r, auto&) {
                 if (n == 0) return Status();
                 return AwaitLocked(api_->Send(r[0].data(), n, type, dst, comm_, s));
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Recv(const Tensor& t, int src) {
  RETURN_IF_ERROR(CheckPeer("recv", src, "src"));
  if (src == rank())
    return InvalidArgument(
        "[recv] rank %d cannot receive from itself (batch_isend_irecv can pair a send and a "
        "receive of one rank)",
        rank());
  ASSIGN_OR_RETURN(TensorBytes tb, Bytes("recv", t));
  const ncclDataType_t type = NcclType(t.dtype());
  const size_t n = t.numel();
  return Issue("recv", absl::StrCat(Describe(t), " from rank ", src), {}, {tb},
               [this, type, n, src](CUstream_st* s, auto&, const std::vector<TensorBytes>& w) {
                 if (n == 0) return Status();
                 return AwaitLocked(api_->Recv(w[0].data(), n, type, src, comm_, s));
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::BatchSendRecv(const std::vector<P2POp>& ops) {
  constexpr const char* kOp = "batch_isend_irecv";
  if (ops.empty()) return InvalidArgument("[%s] rank %d: got no operations", kOp, rank());
  std::vector<TensorBytes> sends, recvs;
  struct Call {
    bool is_send;
    size_t index;  // into sends or recvs
    size_t n;
    ncclDataType_t type;
    int peer;
  };
  std::vector<Call> calls;
  std::vector<std::string> parts;
  for (const P2POp& op : ops) {
    RETURN_IF_ERROR(CheckPeer(kOp, op.peer, op.is_send ? "dst" : "src"));
    ASSIGN_OR_RETURN(TensorBytes tb, Bytes(kOp, op.tensor));
    auto& list = op.is_send ? sends : recvs;
    calls.push_back({op.is_send, list.size(), static_cast<size_t>(op.tensor.numel()),
                     NcclType(op.tensor.dtype()), op.peer});
    list.push_back(tb);
    parts.push_back(absl::StrCat(op.is_send ? "send " : "recv ", Describe(op.tensor),
                                 op.is_send ? " to rank " : " from rank ", op.peer));
  }
  return Issue(kOp, absl::StrJoin(parts, ", "), sends, recvs,
               [this, calls](CUstream_st* s, const std::vector<TensorBytes>& r,
                             const std::vector<TensorBytes>& w) -> Status {
                 return GroupLocked([&]() -> int {
                   FirstFailure keep;
                   for (const Call& c : calls) {
                     if (c.n == 0) continue;
                     keep(c.is_send ? api_->Send(r[c.index].data(), c.n, c.type, c.peer, comm_, s)
                                    : api_->Recv(w[c.index].data(), c.n, c.type, c.peer, comm_, s));
                   }
                   return keep.first;
                 });
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupNccl::Barrier() {
  return Issue("barrier", "barrier", {}, {}, [this](CUstream_st* s, auto&, auto&) {
    return AwaitLocked(
        api_->AllReduce(barrier_buf_, barrier_buf_, 1, ncclInt32, ncclSum, comm_, s));
  });
}

}  // namespace distributed
}  // namespace oneflow_like
