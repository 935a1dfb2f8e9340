// The interface between host-side CUDA kernels (*.cc: attributes, checks, Status, registration)
// and device code (*.cu: kernels and their launchers). Plain C++ only, no abseil: nvcc compiles
// the .cu files with nothing but this header and the CUDA headers, which keeps device builds
// fast. Launchers enqueue on `stream` and return cudaGetLastError() of the launch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "oneflow_like/opdefs/ternary.h"

namespace oneflow_like {
namespace cuda {

constexpr int kMaxDims = 8;

// Mirrors oneflow_like::DType value for value (checked in kernel_util.cc).
enum class ScalarType : int8_t {
  kBool = 0,
  kU8,
  kI8,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kI16,
  kU16,
  kU32,
  kU64,
  kF8E4M3FN,
  kF8E5M2,
  kF8E4M3FNUZ,
  kF8E5M2FNUZ
};

// An iteration space (after collapsing dims) and one operand's strides in elements over it.
struct LoopShape {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t numel = 0;
};
struct Operand {
  void* data = nullptr;
  int64_t strides[kMaxDims] = {};
  bool contiguous = false;  // strides are row-major over the loop (then only `data` is used)
};

// ---- elementwise (unary.cu, binary.cu, ternary.cu) ----
// The unary, binary and ternary families' ops come from their tables (oneflow_like/opdefs/*.def,
// below); the lists hold the rest: X(op, dtype set). Sets mirror kernels/cpu: N = u8 i8 i32 i64 f32
// f64, F = f32 f64, IB = bool u8 i8 i32 i64, NB = N + bool, B = bool. Parameters p0/p1 come from
// the op's attrs (unary.cc / binary.cc say which).
// clang-format off
#define OFL_CUDA_UNARY_OPS(X) X(logical_not, NB)
#define OFL_CUDA_UNARY_BOOL_OPS(X) X(logical_not, NB)
#define OFL_CUDA_BINARY_OPS(X) X(reduce_eq_mask, F)
// clang-format on

#define OFL_CUDA_ENUM_ENTRY(op, set) op,
enum class UnaryOp : int { OFL_CUDA_UNARY_OPS(OFL_CUDA_ENUM_ENTRY) };
enum class UnaryBoolOp : int { OFL_CUDA_UNARY_BOOL_OPS(OFL_CUDA_ENUM_ENTRY) };
enum class BinaryOp : int { OFL_CUDA_BINARY_OPS(OFL_CUDA_ENUM_ENTRY) };

struct OpParams {
  double p0 = 0, p1 = 0;
};

// out = f(in); out and in of dtype `t` (UnaryOp) or out bool and in `t` (UnaryBoolOp).
bool UnarySupported(UnaryOp op, ScalarType t);
cudaError_t LaunchUnary(UnaryOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                        const Operand& out, const Operand& in, cudaStream_t stream);
bool UnaryBoolSupported(UnaryBoolOp op, ScalarType t);
cudaError_t LaunchUnaryBool(UnaryBoolOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                            const Operand& out, const Operand& in, cudaStream_t stream);

// The unary table (oneflow_like/opdefs/unary.def): out = f(in) for forward ops, out = f(dy, s)
// for backward ops, all operands of dtype `t`; `a` carries the op's typed attributes.
bool UnaryTableSupported(opdefs::UnaryId op, ScalarType t);
cudaError_t LaunchUnaryTable(opdefs::UnaryId op, ScalarType t, const opdefs::UnaryAttrsAll& a,
                             const LoopShape& loop, const Operand& out, const Operand& in,
                             cudaStream_t stream);
cudaError_t LaunchUnaryGradTable(opdefs::UnaryId op, ScalarType t, const opdefs::UnaryAttrsAll& a,
                                 const LoopShape& loop, const Operand& out, const Operand& dy,
                                 const Operand& s, cudaStream_t stream);

// The binary table (oneflow_like/opdefs/binary.def): out = f(x, y), x and y of dtype `t` already
// broadcast to the loop (stride 0 on broadcast dims), out of dtype `t` or bool (the op's `out`
// column). `zero_flag` (device int, may be null) is set to 1 by integer division by zero.
bool BinaryTableSupported(opdefs::BinaryId op, ScalarType t);
cudaError_t LaunchBinaryTable(opdefs::BinaryId op, ScalarType t, const opdefs::BinaryAttrsAll& a,
                              int* zero_flag, const LoopShape& loop, const Operand& out,
                              const Operand& x, const Operand& y, cudaStream_t stream);
// The table's scalar variants: out = f(x, scalar) with the scalar converted to `t`.
cudaError_t LaunchBinaryScalarTable(opdefs::BinaryId op, ScalarType t, double scalar,
                                    const LoopShape& loop, const Operand& out, const Operand& x,
                                    cudaStream_t stream);
// The remaining binary ops (OFL_CUDA_BINARY_OPS), same operand rules, out of dtype `t`.
bool BinarySupported(BinaryOp op, ScalarType t);
cudaError_t LaunchBinary(BinaryOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                         const Operand& out, const Operand& a, const Operand& b,
                         cudaStream_t stream);

// The ternary table (oneflow_like/opdefs/ternary.def): out = f(x, y, z) over operands already
// broadcast to the loop, all of dtype `t` but x, which is bool for the table's `cond` ops; ops of
// types All run on elements moved by size. Scalar variants: out = f(x, y, s) (z is not read;
// pass y again) with `scalar_bits` the scalar already converted to `t` on the host
// (little-endian, low DTypeSize(t) bytes).
bool TernaryTableSupported(opdefs::TernaryId op, ScalarType t);
cudaError_t LaunchTernaryTable(opdefs::TernaryId op, ScalarType t, const opdefs::TernaryAttrsAll& a,
                               uint64_t scalar_bits, const LoopShape& loop, const Operand& out,
                               const Operand& x, const Operand& y, const Operand& z,
                               cudaStream_t stream);

// ---- index checks (index.cu) ----
// *flag = the smallest position i with idx[i] outside [lo, hi), or stays kNoBadIndex. `flag`
// must be set to kNoBadIndex first (cudaMemsetAsync 0xff).
constexpr unsigned long long kNoBadIndex = ~0ull;
cudaError_t LaunchCheckIndices(const int64_t* idx, int64_t n, int64_t lo, int64_t hi,
                               unsigned long long* flag, cudaStream_t stream);
// *value = values[*flag] when *flag is not kNoBadIndex (one thread): the bad value itself, for
// an error message read later (deferred checks, device/cuda CudaStream::DeferCheck).
cudaError_t LaunchFetchFlagged(const int64_t* values, const unsigned long long* flag,
                               long long* value, cudaStream_t stream);

// ---- copy.cu / creation.cu ----
// out (dtype `to`) = convert(in (dtype `from`)); any dtype pair; same conversion rules as the CPU.
cudaError_t LaunchCast(ScalarType to, ScalarType from, const LoopShape& loop, const Operand& out,
                       const Operand& in, cudaStream_t stream);
// out = value converted to `t` (as the CPU does: through float for f16/bf16, != 0 for bool).
cudaError_t LaunchFill(ScalarType t, double value, const LoopShape& loop, const Operand& out,
                       cudaStream_t stream);

// ---- reduce.cu ----
// Input dims split into kept ones (in output order; the output is contiguous) and reduced ones.
struct ReduceShape {
  int keep_ndim = 0, red_ndim = 0;
  int64_t keep_sizes[kMaxDims] = {}, keep_strides[kMaxDims] = {};
  int64_t red_sizes[kMaxDims] = {}, red_strides[kMaxDims] = {};
  int64_t out_numel = 1, red_numel = 1;
};
// Deterministic sum: floats accumulate in double, integers and bool in int64 (output i64).
// `scratch` holds ReduceScratchBytes(...) bytes of device memory (may be null when that is 0).
bool SumSupported(ScalarType in);
size_t SumScratchBytes(const ReduceShape& r, int device);
cudaError_t LaunchSum(ScalarType in, const ReduceShape& r, const void* x, void* out, void* scratch,
                      int device, cudaStream_t stream);

// The other reductions (reduce.cu), same reducers as kernels/cpu/reduce.cc. `values` has dtype
// `t` (i64 for integer prod), `indices` i64; argmax/argmin pass null values, amax null indices.
// `param`: correction (var/std) or p (norm).
enum class ReduceOp : int { kProd, kAmax, kAmin, kArgmax, kArgmin, kVar, kStd, kNorm, kLogSumExp };
bool ReduceSupported(ReduceOp op, ScalarType t);
cudaError_t LaunchReduce(ReduceOp op, ScalarType t, const ReduceShape& r, double param,
                         const void* x, void* values, int64_t* indices, cudaStream_t stream);
// reduce_index_scatter (out = zeros; out[a, idx, b] = src[a, b]) / reduce_index_gather
// (out[a, b] = src[a, clamp(idx), b]) on contiguous f32/f64 around a dim of `size`.
cudaError_t LaunchReduceIndex(bool scatter, ScalarType t, const void* src, const int64_t* idx,
                              void* out, int64_t outer, int64_t size, int64_t inner,
                              cudaStream_t stream);
// norm_backward: coef[i] = nrm[i] == 0 ? 0 : g[i] / nrm[i]^(p-1) (n elements, into `coef`), then
// out = f(x, coef broadcast) over `loop` (c's data is `coef`).
cudaError_t LaunchNormBackward(ScalarType t, double p, const void* nrm, const void* g, int64_t n,
                               void* coef, const LoopShape& loop, const Operand& out,
                               const Operand& x, const Operand& c, cudaStream_t stream);

// ---- shape and index ops (index.cu) ----
// Indices are contiguous int64; `flags` (nflags slots, see LaunchCheckIndices) gate every write:
// a kernel does nothing once any slot is set, so a failed op leaves its output untouched.
struct IndexFlags {
  const unsigned long long* flags = nullptr;
  int n = 0;
};
// out[off] = AddValues(out[off], in[off]) over `loop` (as_strided_scatter); `serial` runs one
// thread in row-major order (overlapping destinations accumulate as on the CPU).
cudaError_t LaunchAccumulate(ScalarType t, bool serial, const LoopShape& loop, const Operand& out,
                             const Operand& in, cudaStream_t stream);
// tril/triu on contiguous (mats, rows, cols); elements moved by size.
cudaError_t LaunchTril(int elem_bytes, int64_t mats, int64_t rows, int64_t cols, int64_t diagonal,
                       bool upper, const void* x, void* out, cudaStream_t stream);
// index_select: out[o, j, i] = x[o, idx[j], i] (x contiguous (outer, n, inner)).
cudaError_t LaunchIndexSelect(int elem_bytes, int64_t outer, int64_t n, int64_t inner,
                              const int64_t* idx, int64_t m, const void* x, void* out, IndexFlags f,
                              cudaStream_t stream);
// index_add (out already = x, contiguous): out[o, idx[j], i] += src[o, j, i], j in order.
cudaError_t LaunchIndexAdd(ScalarType t, int64_t outer, int64_t n, int64_t inner,
                           const int64_t* idx, int64_t m, const void* src, void* out, IndexFlags f,
                           cudaStream_t stream);
struct Dims {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
};
// gather: out[c] = x[c with c[dim] = idx[c]] (x contiguous with strides xs; out/index contiguous).
cudaError_t LaunchGather(int elem_bytes, const Dims& index_shape, const int64_t* xs, int dim,
                         const int64_t* idx, const void* x, void* out, IndexFlags f,
                         cudaStream_t stream);
// scatter: out[c with c[dim] = idx[c]] (out strides os) = src[c] (contiguous src strides ss; or
// `value` when src is null), added when `add`; serial along `dim` (the CPU's order).
cudaError_t LaunchScatter(ScalarType t, const Dims& index_shape, const int64_t* os,
                          const int64_t* ss, int dim, const int64_t* idx, const void* src,
                          double value, bool add, void* out, IndexFlags f, cudaStream_t stream);
// one_hot: out (n x classes, i64) = 0, out[i, idx[i]] = 1.
cudaError_t LaunchOneHot(const int64_t* idx, int64_t n, int64_t classes, int64_t* out, IndexFlags f,
                         cudaStream_t stream);
// index: x contiguous (outer, [dims d0..d0+k), inner); idx[j] has nb elements (negatives wrap).
struct MultiIndex {
  int k = 0;
  const int64_t* idx[kMaxDims] = {};
  int64_t sizes[kMaxDims] = {};  // x.shape[d0 + j]
  int64_t strides[kMaxDims] =
      {};  // (index) contiguous strides of x at d0 + j; (index_put) out strides
};
cudaError_t LaunchIndex(int elem_bytes, int64_t outer, int64_t span, int64_t inner, int64_t nb,
                        const MultiIndex& mi, const void* x, void* out, IndexFlags f,
                        cudaStream_t stream);
// index_put over R = out[:d0] + B + out[d0+k:]: pre (d0 dims) and post dims of out with their
// strides, B's shape (contiguous), values' strides over R. Serial over B (the CPU's order).
struct PutGeom {
  Dims pre, post, b;
  int64_t pre_strides[kMaxDims] = {}, post_strides[kMaxDims] = {};
  int64_t value_strides[3 * kMaxDims] = {};  // over R's dims
};
cudaError_t LaunchIndexPut(ScalarType t, const PutGeom& g, const MultiIndex& mi, const void* values,
                           bool accumulate, void* out, IndexFlags f, cudaStream_t stream);

// ---- creation and random (random.cu) ----
// out[i] (row-major element i of a possibly strided output) = convert(f(i)) (the CPU's FromDouble).
enum class GenOp : int {
  kArange,
  kLinspace,
  kEye,
  kUniform,
  kNormal,
  kRandint,
  kBernoulli,
  kFromI64
};
struct GenParams {
  double a = 0, b = 0;  // arange: start, step; linspace: start, end; eye: -, cols; uniform: low,
                        // high; normal: mean, std
  int64_t n = 0;        // linspace: count; randint: low
  uint64_t seed = 0, span = 1;  // randint: high - low
  const void* src =
      nullptr;  // bernoulli: contiguous probabilities (f32/f64 `src_type`); kFromI64: int64 values
  ScalarType src_type = ScalarType::kF32;
  const unsigned long long* flag = nullptr;  // bernoulli: set when a probability is outside [0, 1]
};
cudaError_t LaunchGenerate(GenOp op, ScalarType t, const GenParams& p, const LoopShape& loop,
                           const Operand& out, cudaStream_t stream);
// *flag = smallest i with !(0 <= p[i] <= 1) (bernoulli's check).
cudaError_t LaunchCheckProbabilities(ScalarType t, const void* p, int64_t n,
                                     unsigned long long* flag, cudaStream_t stream);

// ---- softmax.cu ----
// x viewed as (outer, d, inner) around the softmax dim; contiguous f32/f64.
bool SoftmaxSupported(ScalarType t);
cudaError_t LaunchSoftmax(ScalarType t, bool log, int64_t outer, int64_t d, int64_t inner,
                          const void* x, void* y, cudaStream_t stream);
// softmax: dx = y * (dy - sum(dy * y));  log_softmax: dx = dy - exp(y) * sum(dy).
cudaError_t LaunchSoftmaxGrad(ScalarType t, bool log, int64_t outer, int64_t d, int64_t inner,
                              const void* dy, const void* y, void* dx, cudaStream_t stream);

// ---- matmul.cu ----
// Integer GEMM (cuBLAS has none): c[b][m, n] = alpha * sum_k a[m, k] b[k, n] (+ c when
// `accumulate`), strided operands; batch offsets (elements) per output batch in a_off/b_off.
struct GemmOperand {
  const void* data;
  int64_t rs, cs;  // element strides of rows and columns
};
bool IntGemmSupported(ScalarType t);
cudaError_t LaunchIntGemm(ScalarType t, int64_t m, int64_t n, int64_t k, double alpha,
                          bool accumulate, const GemmOperand& a, const GemmOperand& b, void* c,
                          cudaStream_t stream);

// ---- nn family: pooling (pool.cu), norms (norm.cu), losses (loss.cu), embedding/dropout/
// attn_bias (nn_misc.cu). f32/f64 only (the CPU's sets); contiguous NCHW / row-major operands.
// Each kernel follows the CPU's loop order wherever the CPU accumulates in T, so gradients that
// gather contributions add them in the CPU's order (no atomics anywhere).
bool NnFloatSupported(ScalarType t);  // f32 or f64
// Depth d (output od; window kd, stride sd, padding pd, dilation dd) stays 1 for the 2-d ops.
struct PoolGeom {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0,
          dh = 1, dw = 1;
  int64_t d = 1, od = 1, kd = 1, sd = 1, pd = 0, dd = 1;
};
// max_pool2d/3d: y and idx (i64, (id * h + ih) * w + iw within the plane; first max, NaN wins, -1
// if the window misses the input). max_pool2d_grad: dx = sum of dy over outputs whose idx is the
// element.
cudaError_t LaunchMaxPool(ScalarType t, const PoolGeom& g, const void* x, void* y, int64_t* idx,
                          cudaStream_t stream);
cudaError_t LaunchMaxPoolGrad(ScalarType t, const PoolGeom& g, const void* dy, const int64_t* idx,
                              void* dx, cudaStream_t stream);
// avg_pool2d (+grad): PyTorch's window and divisor rules (count_include_pad, divisor_override > 0).
cudaError_t LaunchAvgPool(ScalarType t, bool grad, const PoolGeom& g, bool include_pad,
                          int64_t divisor_override, const void* in, void* out, cudaStream_t stream);
// adaptive_avg_pool2d (+grad); only planes/h/w/oh/ow of `g` are read.
cudaError_t LaunchAdaptiveAvgPool(ScalarType t, bool grad, const PoolGeom& g, const void* in,
                                  void* out, cudaStream_t stream);

// layer_norm / group_norm: rows of len = cpg * inner; affine index of (row r, j) is
// (r % groups) * cpg + j / inner. w, b may be null. mean/rstd: one per row (dtype t).
struct RowNormGeom {
  int64_t rows = 0, len = 0, groups = 1, cpg = 0, inner = 1;
};
cudaError_t LaunchRowNorm(ScalarType t, const RowNormGeom& g, double eps, const void* x,
                          const void* w, const void* b, void* y, void* mean, void* rstd,
                          cudaStream_t stream);
// dx per row; dw/db (either may be null) per affine index over the rows of its group.
cudaError_t LaunchRowNormGrad(ScalarType t, const RowNormGeom& g, const void* dy, const void* x,
                              const void* mean, const void* rstd, const void* w, void* dx, void* dw,
                              void* db, cudaStream_t stream);
// rms_norm: rows of `len`; w may be null; rstd one per row. Grad: dx per row, dw (null without
// a weight) per column.
cudaError_t LaunchRmsNorm(ScalarType t, int64_t rows, int64_t len, double eps, const void* x,
                          const void* w, void* y, void* rstd, cudaStream_t stream);
cudaError_t LaunchRmsNormGrad(ScalarType t, int64_t rows, int64_t len, const void* dy,
                              const void* x, const void* rstd, const void* w, void* dx, void* dw,
                              cudaStream_t stream);
// Fused recurrent cells on [B, H] states (kernels/cpu/rnn.cc's formulas); `in` / `out` are the
// op's inputs / outputs in order: lstm (gates, c) -> (h', c'), its grad (dh', dc', gates, c, c')
// -> (dgates, dc); gru (xw, gh, h) -> h', its grad (dh', xw, gh, h) -> (dxw, dgh, dh).
cudaError_t LaunchLstmCell(ScalarType t, bool grad, int64_t B, int64_t H,
                           const std::vector<const void*>& in, const std::vector<void*>& out,
                           cudaStream_t stream);
cudaError_t LaunchGruCell(ScalarType t, bool grad, int64_t B, int64_t H,
                          const std::vector<const void*>& in, const std::vector<void*>& out,
                          cudaStream_t stream);
// batch_norm on x viewed as (n, c, s): per channel mean, invstd, unbiased var (training) or the
// running stats (eval); y = x * sc + sh. Grad: dx, dw, db.
cudaError_t LaunchBatchNorm(ScalarType t, int64_t n, int64_t c, int64_t s, bool training,
                            double eps, const void* x, const void* w, const void* b, const void* rm,
                            const void* rv, void* y, void* mean, void* invstd, void* uvar,
                            cudaStream_t stream);
cudaError_t LaunchBatchNormGrad(ScalarType t, int64_t n, int64_t c, int64_t s, bool training,
                                const void* dy, const void* x, const void* w, const void* mean,
                                const void* invstd, void* dx, void* dw, void* db,
                                cudaStream_t stream);

// nll_loss on logp viewed as (n, c, r), target (n, r). `flag` (set to kNoBadIndex first) gets the
// smallest position of a target outside [0, c) that is not ignore_index; `den` (one double) the
// sum of w[target] over kept targets. Nothing else is written once the flag is set.
// `scratch` holds NllScratchBytes(n * r) bytes.
struct NllGeom {
  int64_t n = 1, c = 1, r = 1, reduction = 0, ignore = -100;  // reduction: 0 none, 1 mean, 2 sum
  double eps = 0;                                             // label smoothing
};
size_t NllScratchBytes(int64_t count);
cudaError_t LaunchNllCheck(ScalarType t, const NllGeom& g, const int64_t* target, const void* w,
                           unsigned long long* flag, double* den, cudaStream_t stream);
cudaError_t LaunchNllLoss(ScalarType t, const NllGeom& g, const void* logp, const int64_t* target,
                          const void* w, const unsigned long long* flag, const double* den,
                          void* scratch, void* out, cudaStream_t stream);
cudaError_t LaunchNllLossGrad(ScalarType t, const NllGeom& g, const void* dy, const int64_t* target,
                              const void* w, const unsigned long long* flag, const double* den,
                              void* dx, cudaStream_t stream);
// binary_cross_entropy_with_logits (pw may be null) and its gradient (dpw null without pw).
cudaError_t LaunchBce(ScalarType t, int64_t n, const void* x, const void* y, const void* pw,
                      void* out, cudaStream_t stream);
cudaError_t LaunchBceGrad(ScalarType t, int64_t n, const void* g, const void* x, const void* y,
                          const void* pw, void* dx, void* dt, void* dpw, cudaStream_t stream);

// embedding: out[i, :] = w[idx[i], :] unless `flag` is set (LaunchCheckIndices first).
cudaError_t LaunchEmbedding(ScalarType t, int64_t n, int64_t dim, const int64_t* idx, const void* w,
                            void* out, const unsigned long long* flag, cudaStream_t stream);
// embedding_grad: dw = 0; dw[idx[i]] += dy[i] in ascending i (rows == padding_idx skipped): a
// stable radix sort of (idx, i) groups each row's positions, then one block per row adds them in
// order. Indices must be in [0, rows) (checked first; nothing is written once `flag` is set).
size_t EmbeddingGradScratchBytes(int64_t n, int64_t rows);
cudaError_t LaunchEmbeddingGrad(ScalarType t, int64_t n, int64_t rows, int64_t dim,
                                int64_t padding_idx, const int64_t* idx, const void* dy, void* dw,
                                const unsigned long long* flag, void* scratch, size_t scratch_bytes,
                                cudaStream_t stream);
// dropout: out[i] = RngUniform(seed, i) >= p ? x[i] * scale : 0 (scale = (T)(1 / (1 - p)), 0 for p
// >= 1).
cudaError_t LaunchDropout(ScalarType t, int64_t n, double p, uint64_t seed, const void* x,
                          void* out, cudaStream_t stream);
// attn_bias: out (contiguous, trailing dims [L, S]) = causal && col > row ? -inf : 0, then a
// bool mask (false -> -inf) or a float mask (added), broadcast over `loop` (ops[0] out, ops[1]
// mask).
cudaError_t LaunchAttnBias(ScalarType t, int64_t rows_l, int64_t cols_s, bool causal,
                           bool mask_is_bool, const LoopShape& loop, const Operand& out,
                           const Operand* mask, cudaStream_t stream);

}  // namespace cuda
}  // namespace oneflow_like
