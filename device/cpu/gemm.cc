#include "device/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "oneflow_like/base/blas_threads.h"
#include "oneflow_like/base/determinism.h"
#include "oneflow_like/base/thread_pool.h"
#include "device/cpu/omp_threads.h"

namespace oneflow_like {
namespace cpu {
namespace {

// Which implementation runs a product (GFLOP/s measured in-process on the 2-core dev machine,
// OpenBLAS split over the intra-op pool vs oneDNN 2.6 brgemm; see kernels/README.md):
//  - oneDNN for batches of small products (32 x 128x128x64: ~190 vs ~145 including the
//    per-product BLAS call cost) and for single products whose dims are all >= 64 and that do at
//    least 2^20 multiply-adds (1024x256x2048: ~285 vs ~245; 128x1024x1024: ~260 vs ~230);
//  - OpenBLAS for the rest: row vectors (sgemv), thin products (a dim < 64, e.g. a 10-class
//    output layer: ~40 us vs ~100 us, oneDNN's per-call set-up dominates) and small ones.
constexpr int64_t kDnnlMaxBatchedProductWork = int64_t{1} << 22;
constexpr int64_t kDnnlMinBatch = 2;
constexpr int64_t kDnnlMinDim = 64;
constexpr int64_t kDnnlMinWork = int64_t{1} << 20;
// Below this many multiply-adds a GEMM runs on the calling thread alone.
constexpr int64_t kParallelGemmWork = int64_t{1} << 20;
// Products smaller than this are not worth timing (AutotuneGemm returns the heuristic's choice).
constexpr int64_t kAutotuneMinWork = int64_t{1} << 18;

std::atomic<int64_t> g_calls{0}, g_nanos{0}, g_autotuned{0};

// Products whose outputs do not overlap (oneDNN, and running products in parallel, need it).
bool DisjointOutputs(const GemmShape& s) {
  return s.batch_size() == 1 || s.c_batch_stride >= s.m * s.ldc;
}

// Everything that identifies a shape (the key of the oneDNN primitive and autotuning caches).
std::vector<int64_t> ShapeKey(const GemmShape& s) {
  std::vector<int64_t> key{s.ta, s.tb, s.m, s.n, s.k, s.lda, s.ldb, s.ldc, s.c_batch_stride};
  key.insert(key.end(), s.batch.begin(), s.batch.end());
  key.insert(key.end(), s.a_strides.begin(), s.a_strides.end());
  key.insert(key.end(), s.b_strides.begin(), s.b_strides.end());
  return key;
}

using Offsets = absl::InlinedVector<int64_t, 8>;

// Element offsets of every product's a and b (row-major batch order).
void BatchOffsets(const GemmShape& s, Offsets* ao, Offsets* bo) {
  const int64_t nb = s.batch_size(), nd = s.batch.size();
  ao->assign(nb, 0), bo->assign(nb, 0);
  DimVector idx(nd, 0);
  for (int64_t i = 0; i < nb; ++i) {
    for (int64_t d = 0; d < nd; ++d)
      (*ao)[i] += idx[d] * s.a_strides[d], (*bo)[i] += idx[d] * s.b_strides[d];
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < s.batch[d]) break;
      idx[d] = 0;
    }
  }
}

// c = beta * c (0 when beta is 0, whatever c held).
void ScaleOutput(const GemmShape& s, float beta, float* c) {
  for (int64_t i = 0, nb = s.batch_size(); i < nb; ++i)
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t j = 0; j < s.n; ++j) {
        float& v = c[i * s.c_batch_stride + r * s.ldc + j];
        v = beta == 0.0f ? 0.0f : beta * v;
      }
}

// ---- oneDNN ----------------------------------------------------------------------------------

// A cached primitive runs on whichever thread executes the instruction (a VM worker, or the
// issuing thread inline), so it owns no scratchpad: oneDNN's library-managed one is thread-local
// and sized on the creating thread. Each run takes the executing thread's own buffer instead.
struct DnnlMatmul {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c, scratchpad;
};

// This thread's scratchpad of at least `bytes` (64-byte aligned; grows, never shrinks).
void* ThreadScratchpad(size_t bytes) {
  thread_local std::unique_ptr<char, decltype(&std::free)> buf(nullptr, &std::free);
  thread_local size_t size = 0;
  if (bytes > size) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    buf.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
    size = buf ? rounded : 0;
  }
  return buf.get();
}

struct DnnlState {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<DnnlMatmul>>
      cache;  // one primitive per shape (JIT-compiled once)
};
DnnlState& State() {
  static DnnlState* s = new DnnlState();  // never destroyed: primitives may run at exit
  return *s;
}

// The memory desc of a [batch..., rows, cols] operand; a transposed one is stored [cols, rows]
// with row stride ld. A broadcast batch dim (stride 0) has extent 1.
dnnl::memory::desc OperandDesc(const GemmShape& s, const DimVector& strides, int64_t rows,
                               int64_t cols, bool trans, int64_t ld,
                               dnnl::memory::data_type dt = dnnl::memory::data_type::f32) {
  dnnl::memory::dims dims, st;
  for (size_t d = 0; d < s.batch.size(); ++d) {
    dims.push_back(strides[d] == 0 ? 1 : s.batch[d]);
    st.push_back(strides[d]);
  }
  dims.push_back(rows), dims.push_back(cols);
  st.push_back(trans ? 1 : ld), st.push_back(trans ? ld : 1);
  return dnnl::memory::desc(dims, dt, st);
}

std::shared_ptr<DnnlMatmul> GetMatmul(const GemmShape& s, bool scaled, bool accumulate,
                                      dnnl::memory::data_type dt = dnnl::memory::data_type::f32) {
  std::vector<int64_t> key = ShapeKey(s);
  key.push_back(scaled), key.push_back(accumulate), key.push_back(static_cast<int64_t>(dt));
  DnnlState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.cache.find(key);
  if (it != st.cache.end()) return it->second;
  dnnl::memory::desc a = OperandDesc(s, s.a_strides, s.m, s.k, s.ta, s.lda, dt);
  dnnl::memory::desc b = OperandDesc(s, s.b_strides, s.k, s.n, s.tb, s.ldb, dt);
  DimVector c_strides(s.batch.size(), s.c_batch_stride);
  for (int64_t d = static_cast<int64_t>(s.batch.size()) - 2; d >= 0; --d)
    c_strides[d] = c_strides[d + 1] * s.batch[d + 1];
  dnnl::memory::desc c = OperandDesc(s, c_strides, s.m, s.n, false, s.ldc, dt);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (scaled) attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
  if (accumulate) {
    dnnl::post_ops po;
    po.append_sum(1.0f);
    attr.set_post_ops(po);
  }
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, st.engine);
  auto mm =
      std::make_shared<DnnlMatmul>(DnnlMatmul{dnnl::matmul(pd), a, b, c, pd.scratchpad_desc()});
  st.cache.emplace(std::move(key), mm);
  return mm;
}

// c = alpha * op(a) @ op(b) + beta * c with beta 0 or 1, operands and c of type `dt`.
Status DnnlGemm(const GemmShape& s, dnnl::memory::data_type dt, float alpha, const void* a,
                const void* b, float beta, void* c) {
  std::shared_ptr<DnnlMatmul> mm;
  try {
    mm = GetMatmul(s, alpha != 1.0f, beta == 1.0f, dt);
  } catch (const dnnl::error& e) {
    // oneDNN has no primitive for this layout (e.g. a batch dim broadcast in both operands):
    // Unimplemented tells Sgemm to use OpenBLAS instead.
    return Unimplemented(
        "[matmul] oneDNN has no matmul for %d products of [%d x %d] x [%d x %d]%s%s: %s",
        s.batch_size(), s.m, s.k, s.k, s.n, s.ta ? " (lhs transposed)" : "",
        s.tb ? " (rhs transposed)" : "", e.what());
  }
  try {
    DnnlState& st = State();
    dnnl::stream strm(st.engine);
    dnnl::memory am(mm->a, st.engine, const_cast<void*>(a)),
        bm(mm->b, st.engine, const_cast<void*>(b)), cm(mm->c, st.engine, c);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    if (alpha != 1.0f) {
      dnnl::memory sm({{1}, dnnl::memory::data_type::f32, {1}}, st.engine, &alpha);
      args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES, sm);
    }
    if (const size_t bytes = mm->scratchpad.get_size(); bytes > 0) {
      void* pad = ThreadScratchpad(bytes);
      if (pad == nullptr)
        return OutOfMemory("[matmul] oneDNN scratchpad of %d bytes for [%d x %d] x [%d x %d]",
                           bytes, s.m, s.k, s.k, s.n);
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(mm->scratchpad, st.engine, pad));
    }
    UseIntraOpThreadsForOpenMP();
    mm->prim.execute(strm, args);
    strm.wait();
  } catch (const dnnl::error& e) {
    return Internal("[matmul] oneDNN error %d for %d products of [%d x %d] x [%d x %d]%s%s: %s",
                    static_cast<int>(e.status), s.batch_size(), s.m, s.k, s.k, s.n,
                    s.ta ? " (lhs transposed)" : "", s.tb ? " (rhs transposed)" : "", e.what());
  }
  return Status();
}

Status DnnlSgemm(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                 float* c) {
  if (beta != 0.0f && beta != 1.0f) {  // the sum post-op adds c once; other betas scale first
    ScaleOutput(s, beta, c);
    beta = 1.0f;
  }
  return DnnlGemm(s, dnnl::memory::data_type::f32, alpha, a, b, beta, c);
}

// ---- OpenBLAS --------------------------------------------------------------------------------

// Rows [r0, r1) x columns [c0, c1) of product i.
void BlasBlock(const GemmShape& s, const float* a, const float* b, float* c, int64_t r0, int64_t r1,
               int64_t c0, int64_t c1, float alpha, float beta) {
  if (s.m == 1) {  // a row vector times a matrix (a bias gradient ones x dY): sgemv streams b once
    const int64_t inc = s.ta ? s.lda : 1;
    if (s.tb)  // b stored [n, k]: c = b[c0:c1, :] a
      cblas_sgemv(CblasRowMajor, CblasNoTrans, c1 - c0, s.k, alpha, b + c0 * s.ldb, s.ldb, a, inc,
                  beta, c + c0, 1);
    else  // b stored [k, n]: c = b[:, c0:c1]^T a
      cblas_sgemv(CblasRowMajor, CblasTrans, s.k, c1 - c0, alpha, b + c0, s.ldb, a, inc, beta,
                  c + c0, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
              r1 - r0, c1 - c0, s.k, alpha, a + (s.ta ? r0 : r0 * s.lda), s.lda,
              b + (s.tb ? c0 * s.ldb : c0), s.ldb, beta, c + r0 * s.ldc + c0, s.ldc);
}

void BlasSgemm(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
               float* c) {
  InitBlasThreads();
  Offsets ao, bo;
  BatchOffsets(s, &ao, &bo);
  const int64_t nb = s.batch_size();
  ThreadPool* pool = IntraOpPool();
  const int64_t threads = pool->num_threads();
  auto whole = [&](int64_t i) {
    BlasBlock(s, a + ao[i], b + bo[i], c + i * s.c_batch_stride, 0, s.m, 0, s.n, alpha, beta);
  };
  if (threads < 2 || s.m * s.n * s.k * nb < kParallelGemmWork ||
      !DisjointOutputs(s)) {  // overlapping outputs: in order
    for (int64_t i = 0; i < nb; ++i) whole(i);
    return;
  }
  if (nb >= threads) {  // whole products per thread
    pool->ParallelFor(nb, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) whole(i);
    });
    return;
  }
  // Each product cut into `threads` blocks of rows or of columns. A block packs the whole of the
  // other operand, so cut the dimension whose partner operand is the smaller one.
  const bool by_cols = s.m < s.n;
  const int64_t extent = by_cols ? s.n : s.m, align = by_cols ? 16 : 8;
  const int64_t block = ((extent + threads - 1) / threads + align - 1) / align * align;
  for (int64_t i = 0; i < nb; ++i)
    pool->ParallelFor((extent + block - 1) / block, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t lo = p * block, hi = std::min(extent, lo + block);
        float* ci = c + i * s.c_batch_stride;
        if (by_cols)
          BlasBlock(s, a + ao[i], b + bo[i], ci, 0, s.m, lo, hi, alpha, beta);
        else
          BlasBlock(s, a + ao[i], b + bo[i], ci, lo, hi, 0, s.n, alpha, beta);
      }
    });
}

}  // namespace

int64_t GemmShape::batch_size() const {
  int64_t nb = 1;
  for (int64_t d : batch) nb *= d;
  return nb;
}

void GemmShape::SetBatch(int64_t b, int64_t a_stride, int64_t b_stride, int64_t c_stride) {
  batch = {b}, a_strides = {a_stride}, b_strides = {b_stride}, c_batch_stride = c_stride;
}

GemmImpl ChooseGemmImpl(const GemmShape& s) {
  if (!DisjointOutputs(s)) return GemmImpl::kBlas;
  const int64_t work = s.m * s.n * s.k;
  if (s.batch_size() >= kDnnlMinBatch && work <= kDnnlMaxBatchedProductWork && s.m > 1)
    return GemmImpl::kDnnl;
  if (std::min({s.m, s.n, s.k}) >= kDnnlMinDim && work >= kDnnlMinWork) return GemmImpl::kDnnl;
  return GemmImpl::kBlas;
}

GemmImpl AutotuneGemm(const GemmShape& s, const float* a, const float* b) {
  const GemmImpl guess = ChooseGemmImpl(s);
  // Deterministic algorithms: the choice must not depend on timings (the two implementations sum
  // in different orders), so the fixed rule decides.
  if (s.m * s.n * s.k * s.batch_size() < kAutotuneMinWork || s.m == 1 || !DisjointOutputs(s) ||
      s.k <= 0 || DeterministicAlgorithms())
    return guess;
  static std::mutex mu;
  static auto* tuned = new std::map<std::vector<int64_t>, GemmImpl>();
  std::vector<int64_t> key = ShapeKey(s);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = tuned->find(key); it != tuned->end()) return it->second;
  }
  // Three interleaved runs of each into scratch; the fastest run decides, and the guess keeps
  // ties (within 3%) so noise does not flip a choice the measurements above support.
  std::vector<float> scratch((s.batch_size() - 1) * s.c_batch_stride + (s.m - 1) * s.ldc + s.n,
                             0.0f);
  double best[2] = {1e30, 1e30};
  const GemmImpl impls[2] = {GemmImpl::kBlas, GemmImpl::kDnnl};
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 2; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      Status st = impls[i] == GemmImpl::kDnnl
                      ? DnnlSgemm(s, 1.0f, a, b, 0.0f, scratch.data())
                      : (BlasSgemm(s, 1.0f, a, b, 0.0f, scratch.data()), Status());
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best[i] = st.ok() ? std::min(best[i], t) : 1e30;
    }
  const int g = guess == GemmImpl::kDnnl ? 1 : 0;
  const GemmImpl pick = best[1 - g] < best[g] * 0.97 ? impls[1 - g] : guess;
  g_autotuned.fetch_add(1);
  std::lock_guard<std::mutex> lock(mu);
  return tuned->emplace(std::move(key), pick).first->second;
}

const char* GemmImplName(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::kBlas: return "openblas";
    case GemmImpl::kDnnl: return "onednn";
    default: return "auto";
  }
}

GemmStats GetGemmStats() {
  return {g_calls.load(), g_nanos.load() * 1e-9, g_autotuned.load()};
}
void ResetGemmStats() {
  g_calls = 0, g_nanos = 0, g_autotuned = 0;
}

Status Sgemm(const GemmShape& s, float alpha, const float* a, const float* b, float beta, float* c,
             GemmImpl impl) {
  if (s.batch_size() <= 0 || s.m <= 0 || s.n <= 0) return Status();
  if (s.a_strides.size() != s.batch.size() || s.b_strides.size() != s.batch.size())
    return InvalidArgument("[matmul] %d batch dims but %d / %d operand strides", s.batch.size(),
                           s.a_strides.size(), s.b_strides.size());
  struct Timer {
    const GemmShape& s;
    const GemmImpl& impl;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Timer() {
      int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now() - t0)
                       .count();
      g_nanos += ns;
      ++g_calls;
      static const bool log = std::getenv("ONEFLOW_LIKE_GEMM_LOG") != nullptr;
      if (log)
        std::fprintf(stderr, "[gemm] %9.1f us  batch=%lld m=%lld n=%lld k=%lld%s%s %s\n", ns * 1e-3,
                     static_cast<long long>(s.batch_size()), static_cast<long long>(s.m),
                     static_cast<long long>(s.n), static_cast<long long>(s.k), s.ta ? " lhsT" : "",
                     s.tb ? " rhsT" : "", GemmImplName(impl));
    }
  } timer{s, impl};
  if (s.k <= 0) {  // an empty sum: c = beta * c
    ScaleOutput(s, beta, c);
    return Status();
  }
  // ONEFLOW_LIKE_GEMM_IMPL=openblas|onednn overrides the fixed rule (for comparisons).
  static const char* forced = std::getenv("ONEFLOW_LIKE_GEMM_IMPL");
  if (impl == GemmImpl::kAuto && forced != nullptr && s.m > 1)
    impl = std::string(forced) == "onednn"     ? GemmImpl::kDnnl
           : std::string(forced) == "openblas" ? GemmImpl::kBlas
                                               : impl;
  if (impl == GemmImpl::kAuto) impl = ChooseGemmImpl(s);
  if (impl == GemmImpl::kDnnl && !DisjointOutputs(s)) impl = GemmImpl::kBlas;
  if (impl == GemmImpl::kDnnl) {
    Status st = DnnlSgemm(s, alpha, a, b, beta, c);
    // No oneDNN primitive for this layout; nothing was written (a beta other than 0/1 already
    // scaled c, so BLAS continues with beta 1).
    if (st.code() != absl::StatusCode::kUnimplemented) return st;
    if (beta != 0.0f && beta != 1.0f) beta = 1.0f;
  }
  BlasSgemm(s, alpha, a, b, beta, c);
  return Status();
}

bool LowpGemmNative(DType t) {
  if (t != DType::kBF16) return false;
  static const bool native = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return native;
}

Status LowpGemm(const GemmShape& s, DType t, float alpha, const void* a, const void* b, float beta,
                void* c) {
  if (t != DType::kBF16 && t != DType::kF16)
    return InvalidArgument("[matmul] LowpGemm takes f16/bf16 operands, got %s", DTypeName(t));
  if (beta != 0.0f && beta != 1.0f)
    return InvalidArgument("[matmul] LowpGemm takes beta 0 or 1, got %f", beta);
  if (!DisjointOutputs(s))
    return InvalidArgument("[matmul] LowpGemm needs disjoint products (c batch stride %d)",
                           s.c_batch_stride);
  return DnnlGemm(s,
                  t == DType::kBF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f16,
                  alpha, a, b, beta, c);
}

}  // namespace cpu
}  // namespace oneflow_like
