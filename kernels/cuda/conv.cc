// CUDA kernels of the convolution family (same op names, attrs, inputs and dtypes as
// kernels/cpu/conv.cc: NCHW / NCDHW, weights [K, C/g, (T,) R, S], f32/f64, and f16/bf16, which
// the CPU computes in f32: conv.def's `lowp` column) on cuDNN's legacy convolution API with Nd
// descriptors (one code path for conv2d and conv3d).
//   conv2d(x, w [, bias]) -> y;  conv2d_grad_input(dy, w) -> dx;  conv2d_grad_weight(dy, x) -> dw.
// Algorithms: cuDNN's heuristics (cudnnGet*Algorithm_v7, no benchmarking, so nothing is run or
// allocated to choose), preferring deterministic algorithms (one that is not fails under
// flow.use_deterministic_algorithms, see CheckDeterministic); the choice is cached per
// (direction, dtype, TF32, device, shapes, stride/padding/dilation/groups) in a small map.
// Math: CUDNN_FMA_MATH (exact fp32, like the CPU) unless SetAllowTF32(true), then the math type
// the heuristics recommend. f16/bf16 accumulate in f32 (the descriptor's compute type) and may use
// tensor cores (CUDNN_TENSOR_OP_MATH), as PyTorch's cuDNN convolutions do. Workspace:
// ctx.AllocateTemp (the device's caching allocator).
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/base/determinism.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/conv.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// Sizes as cuDNN's Nd API takes them: x, w, y dims (4 for conv2d, 5 for conv3d) and per spatial
// dim stride, padding, dilation.
struct ConvGeom {
  std::vector<int64_t> x, w, y, st, pd, dl;
  int64_t g;
};

ConvGeom GeomOf(const AttrMap& attrs, const Shape& x, const Shape& w, const Shape& y) {
  auto v = [](const Shape& s) { return std::vector<int64_t>(s.dims().begin(), s.dims().end()); };
  auto a = opdefs::ReadAttrs<opdefs::ConvAttrs>(attrs);
  return ConvGeom{v(x), v(w), v(y), a.stride, a.padding, a.dilation, a.groups};
}

std::vector<int> Packed(const std::vector<int>& dims) {  // row-major strides
  std::vector<int> st(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * dims[i + 1];
  return st;
}

Status SetTensor(cudnnTensorDescriptor_t* d, cudnnDataType_t dt, const std::vector<int>& dims) {
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(d));
  CUDNN_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(*d, dt, static_cast<int>(dims.size()),
                                                   dims.data(), Packed(dims).data()));
  return Status();
}

enum class Dir : int { kForward, kBackwardData, kBackwardFilter };

// Owns the descriptors of one call.
struct Descs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Descs() = default;
  Descs(const Descs&) = delete;
  Descs& operator=(const Descs&) = delete;
  ~Descs() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

std::vector<int> Ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

// y's and the bias' descriptors (the bias as [1, K, 1, ...]).
Status MakeOutputDescs(const ConvGeom& q, cudnnDataType_t dt, bool bias, Descs* d) {
  RETURN_IF_ERROR(SetTensor(&d->y, dt, Ints(q.y)));
  if (!bias) return Status();
  std::vector<int> b(q.y.size(), 1);
  b[1] = static_cast<int>(q.y[1]);
  return SetTensor(&d->bias, dt, b);
}

Status MakeDescs(const char* op, const ConvGeom& q, cudnnDataType_t dt, bool bias, Descs* d) {
  for (const auto* v : {&q.x, &q.w, &q.y, &q.st, &q.pd, &q.dl})
    for (int64_t e : *v)
      if (e > INT_MAX)
        return Unimplemented("[%s] cuDNN takes 32-bit sizes; got a dimension of %d", op, e);
  RETURN_IF_ERROR(SetTensor(&d->x, dt, Ints(q.x)));
  RETURN_IF_ERROR(MakeOutputDescs(q, dt, bias, d));
  std::vector<int> w = Ints(q.w);
  CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&d->w));
  CUDNN_RETURN_IF_ERROR(cudnnSetFilterNdDescriptor(d->w, dt, CUDNN_TENSOR_NCHW,
                                                   static_cast<int>(w.size()), w.data()));
  std::vector<int> pd = Ints(q.pd), st = Ints(q.st), dl = Ints(q.dl);
  CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&d->conv));
  // f16/bf16 data accumulate in f32.
  cudnnDataType_t compute = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(d->conv, static_cast<int>(pd.size()),
                                                        pd.data(), st.data(), dl.data(),
                                                        CUDNN_CROSS_CORRELATION, compute));
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(d->conv, static_cast<int>(q.g)));
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(d->conv, CUDNN_FMA_MATH));
  return Status();
}

// ---- algorithm cache ----------------------------------------------------------------------

struct Choice {
  int algo;
  cudnnMathType_t math;
  bool deterministic = true;  // cuDNN reports the same result bits on every run
};

struct AlgoCache {
  std::mutex mu;
  std::map<std::vector<int64_t>, Choice> entries;
};
AlgoCache& GetAlgoCache() {
  static AlgoCache* c = new AlgoCache();  // leaked: kernels may run during static teardown
  return *c;
}

// Picks from heuristic results (best first): the first usable deterministic one, else the first
// usable one (flagged if cuDNN does not call it deterministic), else `fallback` (deterministic).
// Usable: status success and, on f32 without TF32, no tensor-op math. `any_math`: f32 with TF32
// allowed, or f16/bf16 (tensor cores welcome): the heuristics' math type is used as is.
template <typename Perf>
Choice Pick(const std::vector<Perf>& perf, int count, bool any_math, bool f64, int fallback) {
  auto usable = [&](const Perf& p) {
    if (p.status != CUDNN_STATUS_SUCCESS) return false;
    if (any_math || f64) return true;
    return p.mathType == CUDNN_FMA_MATH || p.mathType == CUDNN_DEFAULT_MATH;
  };
  for (int i = 0; i < count; ++i)
    if (usable(perf[i]) && perf[i].determinism == CUDNN_DETERMINISTIC)
      return Choice{static_cast<int>(perf[i].algo), any_math ? perf[i].mathType : CUDNN_FMA_MATH};
  for (int i = 0; i < count; ++i)
    if (usable(perf[i]))
      return Choice{static_cast<int>(perf[i].algo), any_math ? perf[i].mathType : CUDNN_FMA_MATH,
                    perf[i].determinism == CUDNN_DETERMINISTIC};
  return Choice{fallback, any_math ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH};
}

StatusOr<Choice> ChooseAlgo(cudnnHandle_t h, Dir dir, const ConvGeom& q, cudnnDataType_t dt,
                            int device, const Descs& d) {
  bool tf32 = AllowTF32() && dt == CUDNN_DATA_FLOAT, f64 = dt == CUDNN_DATA_DOUBLE;
  bool low = dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16;
  std::vector<int64_t> key{static_cast<int64_t>(dir), static_cast<int64_t>(dt), tf32, device, q.g};
  for (const auto* v : {&q.x, &q.w, &q.y, &q.st, &q.pd, &q.dl}) {
    key.push_back(static_cast<int64_t>(v->size()));
    key.insert(key.end(), v->begin(), v->end());
  }
  AlgoCache& cache = GetAlgoCache();
  {
    std::lock_guard<std::mutex> l(cache.mu);
    auto it = cache.entries.find(key);
    if (it != cache.entries.end()) return it->second;
  }
  // The heuristics see the math type the call may use.
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(d.conv, low    ? CUDNN_TENSOR_OP_MATH
                                                            : tf32 ? CUDNN_DEFAULT_MATH
                                                                   : CUDNN_FMA_MATH));
  int max = 0, got = 0;
  Choice c{0, CUDNN_FMA_MATH};
  switch (dir) {
    case Dir::kForward: {
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max, 1));
      CUDNN_RETURN_IF_ERROR(
          cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, max, &got, perf.data()));
      c = Pick(perf, got, tf32 || low, f64, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
      break;
    }
    case Dir::kBackwardData: {
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(max, 1));
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x,
                                                                        max, &got, perf.data()));
      c = Pick(perf, got, tf32 || low, f64, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
      break;
    }
    case Dir::kBackwardFilter: {
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(max, 1));
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w,
                                                                          max, &got, perf.data()));
      c = Pick(perf, got, tf32 || low, f64, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
      break;
    }
  }
  std::lock_guard<std::mutex> l(cache.mu);
  if (cache.entries.size() >= 256) cache.entries.clear();  // shapes change rarely; keep it small
  cache.entries[key] = c;
  return c;
}

// flow.use_deterministic_algorithms(True): a convolution whose only usable cuDNN algorithm is
// not deterministic fails naming the op (warn_only: one warning on stderr per op, then it runs).
Status CheckDeterministic(const char* op, const Choice& c) {
  if (c.deterministic || !DeterministicAlgorithms()) return Status();
  if (DeterministicAlgorithmsWarnOnly()) {
    static std::mutex mu;
    static auto* warned = new std::set<std::string>();
    std::lock_guard<std::mutex> l(mu);
    if (warned->insert(op).second)
      std::fprintf(stderr,
                   "UserWarning: %s_cuda does not have a deterministic implementation (cuDNN "
                   "offers no deterministic algorithm for this geometry), but you set "
                   "'torch.use_deterministic_algorithms(True, warn_only=True)'.\n",
                   op);
    return Status();
  }
  return Internal(
      "%s_cuda does not have a deterministic implementation (cuDNN offers no deterministic "
      "algorithm for this geometry), but you set 'torch.use_deterministic_algorithms(True)'. You "
      "can turn off determinism just for this operation, or you can use the 'warn_only=True' "
      "option, if that's acceptable for your application.",
      op);
}

// ---- kernels --------------------------------------------------------------------------------

// alpha = 1, beta = 0 (or 1) in the data's scaling type (double for f64, float otherwise).
struct Scale {
  float f;
  double d;
  const void* of(cudnnDataType_t dt) const {
    return dt == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d) : &f;
  }
};
constexpr Scale kOne{1.0f, 1.0}, kZero{0.0f, 0.0};

Status Fill0(const char* op, const TensorView& v, cudaStream_t s) {
  size_t bytes = static_cast<size_t>(v.numel()) * DTypeSize(v.dtype);
  if (bytes == 0) return Status();
  cudaError_t e = cudaMemsetAsync(v.data, 0, bytes, s);
  return e == cudaSuccess ? Status() : LaunchStatus(op, e);
}

template <Dir kDir>
Status Conv(KernelContext& ctx) {
  const char* op = ctx.op();
  DType dtype = ctx.input(0).dtype;
  cudnnDataType_t dt;
  switch (dtype) {
    case DType::kF32: dt = CUDNN_DATA_FLOAT; break;
    case DType::kF64: dt = CUDNN_DATA_DOUBLE; break;
    case DType::kF16: dt = CUDNN_DATA_HALF; break;
    case DType::kBF16: dt = CUDNN_DATA_BFLOAT16; break;
    default: return TypeError("[%s] not supported for %s on cuda", op, DTypeName(dtype));
  }
  const TensorView &in0 = ctx.input(0), &in1 = ctx.input(1), &out = ctx.output(0);
  // (x, w, y) shapes per direction, as the CPU reads them.
  const Shape& xs = kDir == Dir::kForward        ? in0.shape
                    : kDir == Dir::kBackwardData ? out.shape
                                                 : in1.shape;
  const Shape& ws = kDir == Dir::kForward        ? in1.shape
                    : kDir == Dir::kBackwardData ? in1.shape
                                                 : out.shape;
  const Shape& ys = kDir == Dir::kForward ? out.shape : in0.shape;
  ConvGeom q = GeomOf(ctx.attrs(), xs, ws, ys);
  bool bias = kDir == Dir::kForward && ctx.num_inputs() > 2;
  auto* s = static_cast<CudaStream*>(ctx.stream());
  if (out.numel() == 0) return Status();
  ASSIGN_OR_RETURN(cudnnHandle_t h, s->cudnn());
  Descs d;
  // A reduction over nothing (no samples for dw; no input channels or no output channels / pixels
  // for y / dx): zeros (plus the bias), as the CPU's GEMMs give.
  if (xs.numel() == 0 || ws.numel() == 0 || ys.numel() == 0) {
    RETURN_IF_ERROR(Fill0(op, out, s->get()));
    if (bias) {  // y is not empty here (checked above); only y's and the bias' descriptors are
                 // valid
      RETURN_IF_ERROR(MakeOutputDescs(q, dt, true, &d));
      CUDNN_RETURN_IF_ERROR(
          cudnnAddTensor(h, kOne.of(dt), d.bias, ctx.input(2).data, kOne.of(dt), d.y, out.data));
    }
    return Status();
  }
  RETURN_IF_ERROR(MakeDescs(op, q, dt, bias, &d));
  ASSIGN_OR_RETURN(Choice c, ChooseAlgo(h, kDir, q, dt, s->device().index(), d));
  RETURN_IF_ERROR(CheckDeterministic(op, c));
  CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(d.conv, c.math));
  size_t bytes = 0;
  switch (kDir) {
    case Dir::kForward:
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(
          h, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), &bytes));
      break;
    case Dir::kBackwardData:
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(
          h, d.w, d.y, d.conv, d.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), &bytes));
      break;
    case Dir::kBackwardFilter:
      CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), &bytes));
      break;
  }
  void* ws_ptr = nullptr;
  if (bytes > 0) {
    ASSIGN_OR_RETURN(ws_ptr, ctx.AllocateTemp(bytes));
  }
  switch (kDir) {
    case Dir::kForward:
      CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(h, kOne.of(dt), d.x, in0.data, d.w, in1.data,
                                                    d.conv,
                                                    static_cast<cudnnConvolutionFwdAlgo_t>(c.algo),
                                                    ws_ptr, bytes, kZero.of(dt), d.y, out.data));
      if (bias)
        CUDNN_RETURN_IF_ERROR(
            cudnnAddTensor(h, kOne.of(dt), d.bias, ctx.input(2).data, kOne.of(dt), d.y, out.data));
      break;
    case Dir::kBackwardData:  // (dy, w) -> dx
      CUDNN_RETURN_IF_ERROR(
          cudnnConvolutionBackwardData(h, kOne.of(dt), d.w, in1.data, d.y, in0.data, d.conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), ws_ptr,
                                       bytes, kZero.of(dt), d.x, out.data));
      break;
    case Dir::kBackwardFilter:  // (dy, x) -> dw
      CUDNN_RETURN_IF_ERROR(
          cudnnConvolutionBackwardFilter(h, kOne.of(dt), d.x, in1.data, d.y, in0.data, d.conv,
                                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo),
                                         ws_ptr, bytes, kZero.of(dt), d.w, out.data));
      break;
  }
  return Status();
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(conv2d, Conv<Dir::kForward>);
OFL_REGISTER_CUDA_KERNEL(conv2d_grad_input, Conv<Dir::kBackwardData>);
OFL_REGISTER_CUDA_KERNEL(conv2d_grad_weight, Conv<Dir::kBackwardFilter>);
OFL_REGISTER_CUDA_KERNEL(conv3d, Conv<Dir::kForward>);
OFL_REGISTER_CUDA_KERNEL(conv3d_grad_input, Conv<Dir::kBackwardData>);
OFL_REGISTER_CUDA_KERNEL(conv3d_grad_weight, Conv<Dir::kBackwardFilter>);

}  // namespace cuda
}  // namespace oneflow_like
