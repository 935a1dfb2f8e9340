// cuDNN kernels of the whole-sequence recurrent ops (oneflow_like/opdefs/rnn.def: rnn_seq and
// rnn_seq_grad; the CPU's are kernels/cpu/rnn.cc, same inputs and outputs), on cuDNN 9's v8
// RNN API: cudnnRNNForward, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8.
//
// - Layout: x / y are time-major and always described as CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED
//   (a padded [T, B, I] input is the packed layout with every sequence T long), which is the
//   PackedSequence layout as it is; h / c are [L * D, B, Hr / H] as nn.LSTM's.
// - Weights: cuDNN reads one weight space; each call copies nn.LSTM's parameters into it, at the
//   addresses cudnnGetRNNWeightParams gives, as ONE cudaMemcpyBatchAsync of every matrix and bias
//   (the parameters are separate tensors, so the copy cannot be a single memcpy) (gate order i, f,
//   g, o and r, z, n is the same as PyTorch's; the projection is linLayerID 8), and checks each
//   matrix's element count against the parameter's so that a layout disagreement fails instead of
//   computing garbage. The backward copies the weight-gradient space back the same way.
// - Sequence lengths: cuDNN wants them on the device; they go up in a cudaMemcpyBatchAsync with
//   cudaMemcpySrcAccessOrderDuringApiCall (the driver reads the host vector before returning, so
//   no pageable-copy stream sync and no pinned buffer whose lifetime outlives the call).
// - rnn_seq_grad reruns the training forward to rebuild the reserve space (the op system has no
//   opaque outputs of a size only cuDNN knows), then BackwardData and BackwardWeights: one extra
//   forward per training step compared with PyTorch's cuDNN path.
// - Dropout between layers: a cuDNN dropout descriptor whose states are seeded with the op's seed
//   attribute, so the backward's rerun draws the same masks.
// - Math: f16 with tensor cores (f32 accumulation); f32 exact (CUDNN_FMA_MATH) unless TF32 is
//   allowed (flow.backends.cudnn.allow_tf32); f64 in f64. bf16 is not offered by cuDNN's RNNs:
//   nn.LSTM keeps its step loop there (nn/modules/rnn.py).
#include <vector>

#include "kernels/cuda/kernel_util.h"
#include "kernels/rnn_seq_net.h"
#include "oneflow_like/base/dtype.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/rnn.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;

using Net = kernels::RnnSeqNet;

cudnnRNNMode_t CellOf(const Net& n) {
  switch (n.mode) {
    case kernels::RnnMode::kLstm: return CUDNN_LSTM;
    case kernels::RnnMode::kGru: return CUDNN_GRU;
    case kernels::RnnMode::kRelu: return CUDNN_RNN_RELU;
    default: return CUDNN_RNN_TANH;
  }
}

// Every descriptor one call uses, destroyed with it.
struct Descs {
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr, c = nullptr, m = nullptr, b = nullptr;
  cudnnDropoutDescriptor_t drop = nullptr;
  ~Descs() {
    if (rnn) cudnnDestroyRNNDescriptor(rnn);
    if (x) cudnnDestroyRNNDataDescriptor(x);
    if (y) cudnnDestroyRNNDataDescriptor(y);
    if (h) cudnnDestroyTensorDescriptor(h);
    if (c) cudnnDestroyTensorDescriptor(c);
    if (m) cudnnDestroyTensorDescriptor(m);
    if (b) cudnnDestroyTensorDescriptor(b);
    if (drop) cudnnDestroyDropoutDescriptor(drop);
  }
};

StatusOr<cudnnDataType_t> DataTypeOf(const char* op, DType t) {
  switch (t) {
    case DType::kF32: return CUDNN_DATA_FLOAT;
    case DType::kF64: return CUDNN_DATA_DOUBLE;
    case DType::kF16: return CUDNN_DATA_HALF;
    default: return TypeError("[%s] not supported for %s on cuda (cuDNN RNN)", op, DTypeName(t));
  }
}

Status SetState(cudnnTensorDescriptor_t* d, cudnnDataType_t dt, int64_t n, int64_t b, int64_t w) {
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(d));
  const int dims[3] = {static_cast<int>(n), static_cast<int>(b), static_cast<int>(w)};
  const int strides[3] = {static_cast<int>(b * w), static_cast<int>(w), 1};
  CUDNN_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(*d, dt, 3, dims, strides));
  return Status();
}

// One cudaMemcpyBatchAsync of `count` pointer-to-pointer copies on `stream`, every source read
// in `order` (cudaMemcpySrcAccessOrderStream: device sources written by earlier stream work;
// ...DuringApiCall: host sources read before the call returns).
Status BatchCopy(const char* op, void* const* dsts, const void* const* srcs, const size_t* sizes,
                 size_t count, cudaMemcpySrcAccessOrder order, cudaStream_t stream) {
  if (count == 0) return Status();
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = order;
  size_t first = 0;
  return Launched(op, cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &first, 1, stream));
}

// The descriptors, the device copy of the sequence lengths and the weight space size.
struct Setup {
  Descs d;
  cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  int32_t* dev_seq_len = nullptr;
  size_t wbytes = 0, elem = 4;
};

Status MakeSetup(KernelContext& ctx, const Net& n, cudnnHandle_t h, bool training, Setup* s) {
  const char* op = ctx.op();
  const DType dtype = ctx.input(0).dtype;
  ASSIGN_OR_RETURN(s->dt, DataTypeOf(op, dtype));
  s->elem = static_cast<size_t>(DTypeSize(dtype));
  Descs& d = s->d;
  CUDNN_RETURN_IF_ERROR(cudnnCreateDropoutDescriptor(&d.drop));
  const bool drops = training && n.dropout > 0 && n.L > 1;
  if (drops) {
    size_t states = 0;
    CUDNN_RETURN_IF_ERROR(cudnnDropoutGetStatesSize(h, &states));
    ASSIGN_OR_RETURN(void* st, ctx.AllocateTemp(states));
    CUDNN_RETURN_IF_ERROR(
        cudnnSetDropoutDescriptor(d.drop, h, static_cast<float>(n.dropout), st, states, n.seed));
  } else {
    CUDNN_RETURN_IF_ERROR(cudnnSetDropoutDescriptor(d.drop, h, 0.f, nullptr, 0, 0));
  }
  cudnnDataType_t prec = s->dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnMathType_t math = s->dt == CUDNN_DATA_HALF                   ? CUDNN_TENSOR_OP_MATH
                         : s->dt == CUDNN_DATA_FLOAT && AllowTF32() ? CUDNN_DEFAULT_MATH
                                                                    : CUDNN_FMA_MATH;
  CUDNN_RETURN_IF_ERROR(cudnnCreateRNNDescriptor(&d.rnn));
  CUDNN_RETURN_IF_ERROR(cudnnSetRNNDescriptor_v8(
      d.rnn, CUDNN_RNN_ALGO_STANDARD, CellOf(n), n.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
      n.D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, s->dt, prec, math,
      static_cast<int32_t>(n.I), static_cast<int32_t>(n.H), static_cast<int32_t>(n.Hr),
      static_cast<int32_t>(n.L), d.drop, CUDNN_RNN_PADDED_IO_DISABLED));
  CUDNN_RETURN_IF_ERROR(cudnnCreateRNNDataDescriptor(&d.x));
  CUDNN_RETURN_IF_ERROR(cudnnSetRNNDataDescriptor(
      d.x, s->dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, static_cast<int>(n.T),
      static_cast<int>(n.B), static_cast<int>(n.I), n.seq_len.data(), nullptr));
  CUDNN_RETURN_IF_ERROR(cudnnCreateRNNDataDescriptor(&d.y));
  CUDNN_RETURN_IF_ERROR(cudnnSetRNNDataDescriptor(
      d.y, s->dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, static_cast<int>(n.T),
      static_cast<int>(n.B), static_cast<int>(n.D * n.Hr), n.seq_len.data(), nullptr));
  RETURN_IF_ERROR(SetState(&d.h, s->dt, n.L * n.D, n.B, n.Hr));
  if (n.lstm()) RETURN_IF_ERROR(SetState(&d.c, s->dt, n.L * n.D, n.B, n.H));
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&d.m));
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&d.b));
  CUDNN_RETURN_IF_ERROR(cudnnGetRNNWeightSpaceSize(h, d.rnn, &s->wbytes));
  ASSIGN_OR_RETURN(void* sl, ctx.AllocateTemp(n.B * sizeof(int32_t)));
  s->dev_seq_len = static_cast<int32_t*>(sl);
  void* dst = s->dev_seq_len;
  const void* src = n.seq_len.data();
  const size_t bytes = n.B * sizeof(int32_t);
  return BatchCopy(op, &dst, &src, &bytes, 1, cudaMemcpySrcAccessOrderDuringApiCall, StreamOf(ctx));
}

size_t Bytes(const kernels::TensorView& v) {
  return static_cast<size_t>(v.numel() * DTypeSize(v.dtype));
}

int64_t Numel(cudnnTensorDescriptor_t t) {
  cudnnDataType_t dt;
  int nd = 0, dims[8] = {0}, strides[8] = {0};
  if (cudnnGetTensorNdDescriptor(t, 8, &dt, &nd, dims, strides) != CUDNN_STATUS_SUCCESS) return -1;
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= dims[i];
  return n;
}

// Copies between the parameters (`params[k]`: the k-th weight input or gradient output) and the
// weight space `space`: to_space, nn.LSTM's tensors into cuDNN's; otherwise back.
Status CopyWeights(KernelContext& ctx, const Net& n, cudnnHandle_t h, const Setup& s, void* space,
                   const std::vector<void*>& params, bool to_space) {
  const char* op = ctx.op();
  cudaStream_t stream = StreamOf(ctx);
  const int nmat = static_cast<int>(2 * n.gates + (n.proj ? 1 : 0));
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<size_t> sizes;
  for (int64_t l = 0; l < n.L; ++l)
    for (int64_t dir = 0; dir < n.D; ++dir) {
      const int64_t p = l * n.D + dir, in = n.in_size(l);
      char* w_ih = static_cast<char*>(params[p * n.per]);
      char* w_hh = static_cast<char*>(params[p * n.per + 1]);
      char* b_ih = n.bias ? static_cast<char*>(params[p * n.per + 2]) : nullptr;
      char* b_hh = n.bias ? static_cast<char*>(params[p * n.per + 3]) : nullptr;
      char* w_hr = n.proj ? static_cast<char*>(params[p * n.per + n.per - 1]) : nullptr;
      for (int id = 0; id < nmat; ++id) {
        const bool input = id < n.gates, projection = id == 2 * n.gates;
        const int64_t g = input ? id : id - n.gates;
        const int lin = projection ? 8 : id;  // cuDNN numbers LSTM's projection 8
        void *maddr = nullptr, *baddr = nullptr;
        CUDNN_RETURN_IF_ERROR(cudnnGetRNNWeightParams(h, s.d.rnn, static_cast<int32_t>(p), s.wbytes,
                                                      space, lin, s.d.m, &maddr, s.d.b, &baddr));
        // The parameter's matrix and bias for this linLayerID, with their element counts.
        char* mat = projection ? w_hr
                    : input    ? w_ih + g * n.H * in * s.elem
                               : w_hh + g * n.H * n.Hr * s.elem;
        const int64_t mcount = projection ? n.Hr * n.H : n.H * (input ? in : n.Hr);
        char* bias = projection || !n.bias ? nullptr
                     : input               ? b_ih + g * n.H * s.elem
                                           : b_hh + g * n.H * s.elem;
        if (!maddr || Numel(s.d.m) != mcount || (bias && (!baddr || Numel(s.d.b) != n.H)))
          return Internal(
              "[%s] cuDNN's weight layout differs from nn.%s's: layer %lld, linLayerID %d has "
              "%lld matrix elements where %lld were expected",
              op, n.lstm() ? "LSTM" : "RNN", static_cast<long long>(p), lin,
              static_cast<long long>(maddr ? Numel(s.d.m) : 0), static_cast<long long>(mcount));
        auto copy = [&](void* space_addr, void* param, int64_t count) {
          dsts.push_back(to_space ? space_addr : param);
          srcs.push_back(to_space ? param : space_addr);
          sizes.push_back(static_cast<size_t>(count) * s.elem);
        };
        copy(maddr, mat, mcount);
        if (bias) copy(baddr, bias, n.H);
      }
    }
  return BatchCopy(op, dsts.data(), srcs.data(), sizes.data(), dsts.size(),
                   cudaMemcpySrcAccessOrderStream, stream);
}

// The weight inputs' (or gradient outputs') device pointers, in rnn.def's order.
std::vector<void*> WeightInputs(KernelContext& ctx, const Net& n) {
  std::vector<void*> v;
  for (int64_t k = 0; k < n.L * n.D * n.per; ++k)
    v.push_back(const_cast<void*>(ctx.input(1 + n.nstate() + k).data));
  return v;
}

struct Spaces {
  void *weights = nullptr, *work = nullptr, *reserve = nullptr;
  size_t work_bytes = 0, reserve_bytes = 0;
};

Status PrepareSpaces(KernelContext& ctx, const Net& n, cudnnHandle_t h, const Setup& s,
                     cudnnForwardMode_t mode, Spaces* sp) {
  ASSIGN_OR_RETURN(sp->weights, ctx.AllocateTemp(s.wbytes));
  RETURN_IF_ERROR(CopyWeights(ctx, n, h, s, sp->weights, WeightInputs(ctx, n), true));
  CUDNN_RETURN_IF_ERROR(
      cudnnGetRNNTempSpaceSizes(h, s.d.rnn, mode, s.d.x, &sp->work_bytes, &sp->reserve_bytes));
  if (sp->work_bytes) {
    ASSIGN_OR_RETURN(sp->work, ctx.AllocateTemp(sp->work_bytes));
  }
  if (sp->reserve_bytes) {
    ASSIGN_OR_RETURN(sp->reserve, ctx.AllocateTemp(sp->reserve_bytes));
  }
  return Status();
}

Status Zero(const char* op, void* p, size_t bytes, cudaStream_t s) {
  return bytes ? Launched(op, cudaMemsetAsync(p, 0, bytes, s)) : Status();
}

// rnn_seq(x, hx, [cx,] weights...) -> (y, hy, [cy]).
Status RnnSeq(KernelContext& ctx) {
  const Net n = kernels::RnnSeqNetOf(ctx);
  auto* stream = static_cast<CudaStream*>(ctx.stream());
  ASSIGN_OR_RETURN(cudnnHandle_t h, stream->cudnn());
  const auto &hx = ctx.input(1), &y = ctx.output(0), &hy = ctx.output(1);
  if (n.N == 0) {  // no steps: the state passes through
    ASSIGN_OR_RETURN(cudnnDataType_t dt, DataTypeOf(ctx.op(), hx.dtype));
    (void)dt;
    RETURN_IF_ERROR(Launched(ctx.op(), cudaMemcpyAsync(hy.data, hx.data, Bytes(hx),
                                                       cudaMemcpyDeviceToDevice, StreamOf(ctx))));
    if (n.lstm())
      RETURN_IF_ERROR(Launched(
          ctx.op(), cudaMemcpyAsync(ctx.output(2).data, ctx.input(2).data, Bytes(ctx.input(2)),
                                    cudaMemcpyDeviceToDevice, StreamOf(ctx))));
    return Status();
  }
  // Training mode only where dropout must apply; the backward op reruns its own forward.
  const bool drops = n.train && n.dropout > 0 && n.L > 1;
  const cudnnForwardMode_t mode = drops ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
  Setup s;
  RETURN_IF_ERROR(MakeSetup(ctx, n, h, drops, &s));
  Spaces sp;
  RETURN_IF_ERROR(PrepareSpaces(ctx, n, h, s, mode, &sp));
  CUDNN_RETURN_IF_ERROR(cudnnRNNForward(
      h, s.d.rnn, mode, s.dev_seq_len, s.d.x, ctx.input(0).data, s.d.y, y.data, s.d.h, hx.data,
      hy.data, n.lstm() ? s.d.c : nullptr, n.lstm() ? ctx.input(2).data : nullptr,
      n.lstm() ? ctx.output(2).data : nullptr, s.wbytes, sp.weights, sp.work_bytes, sp.work,
      sp.reserve_bytes, sp.reserve));
  return Status();
}

// rnn_seq_grad(x, hx, [cx,] weights..., dy, dhy, [dcy]) -> (dx, dhx, [dcx], dweights...).
Status RnnSeqGrad(KernelContext& ctx) {
  const Net n = kernels::RnnSeqNetOf(ctx);
  const char* op = ctx.op();
  auto* stream = static_cast<CudaStream*>(ctx.stream());
  cudaStream_t cs = StreamOf(ctx);
  ASSIGN_OR_RETURN(cudnnHandle_t h, stream->cudnn());
  const int nfwd = static_cast<int>(1 + n.nstate() + n.L * n.D * n.per);
  const auto &x = ctx.input(0), &hx = ctx.input(1), &dy = ctx.input(nfwd),
             &dhy = ctx.input(nfwd + 1);
  const void* cx = n.lstm() ? ctx.input(2).data : nullptr;
  const void* dcy = n.lstm() ? ctx.input(nfwd + 2).data : nullptr;
  if (n.N == 0) {  // no steps: dh0 = dhN, every other gradient is zero
    RETURN_IF_ERROR(Launched(op, cudaMemcpyAsync(ctx.output(1).data, dhy.data, Bytes(dhy),
                                                 cudaMemcpyDeviceToDevice, cs)));
    if (n.lstm())
      RETURN_IF_ERROR(
          Launched(op, cudaMemcpyAsync(ctx.output(2).data, dcy, Bytes(ctx.input(nfwd + 2)),
                                       cudaMemcpyDeviceToDevice, cs)));
    for (int k = 1 + n.nstate(); k < ctx.num_outputs(); ++k)
      RETURN_IF_ERROR(Zero(op, ctx.output(k).data, Bytes(ctx.output(k)), cs));
    return Status();
  }
  Setup s;
  RETURN_IF_ERROR(MakeSetup(ctx, n, h, /*training=*/true, &s));
  Spaces sp;
  RETURN_IF_ERROR(PrepareSpaces(ctx, n, h, s, CUDNN_FWD_MODE_TRAINING, &sp));
  ASSIGN_OR_RETURN(void* y, ctx.AllocateTemp(Bytes(dy)));
  CUDNN_RETURN_IF_ERROR(
      cudnnRNNForward(h, s.d.rnn, CUDNN_FWD_MODE_TRAINING, s.dev_seq_len, s.d.x, x.data, s.d.y, y,
                      s.d.h, hx.data, nullptr, n.lstm() ? s.d.c : nullptr, cx, nullptr, s.wbytes,
                      sp.weights, sp.work_bytes, sp.work, sp.reserve_bytes, sp.reserve));
  CUDNN_RETURN_IF_ERROR(cudnnRNNBackwardData_v8(
      h, s.d.rnn, s.dev_seq_len, s.d.y, y, dy.data, s.d.x, ctx.output(0).data, s.d.h, hx.data,
      dhy.data, ctx.output(1).data, n.lstm() ? s.d.c : nullptr, cx, dcy,
      n.lstm() ? ctx.output(2).data : nullptr, s.wbytes, sp.weights, sp.work_bytes, sp.work,
      sp.reserve_bytes, sp.reserve));
  ASSIGN_OR_RETURN(void* dw, ctx.AllocateTemp(s.wbytes));
  RETURN_IF_ERROR(Zero(op, dw, s.wbytes, cs));
  CUDNN_RETURN_IF_ERROR(cudnnRNNBackwardWeights_v8(
      h, s.d.rnn, CUDNN_WGRAD_MODE_ADD, s.dev_seq_len, s.d.x, x.data, s.d.h, hx.data, s.d.y, y,
      s.wbytes, dw, sp.work_bytes, sp.work, sp.reserve_bytes, sp.reserve));
  std::vector<void*> grads;
  for (int k = 1 + n.nstate(); k < ctx.num_outputs(); ++k) grads.push_back(ctx.output(k).data);
  return CopyWeights(ctx, n, h, s, dw, grads, /*to_space=*/false);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(rnn_seq, RnnSeq);
OFL_REGISTER_CUDA_KERNEL(rnn_seq_grad, RnnSeqGrad);

}  // namespace cuda
}  // namespace oneflow_like
