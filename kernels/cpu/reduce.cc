// CPU kernels of the reduction family. One engine runs every reduction; a reducer says how to
// fold one element, merge two partial results (the right one covers later indices), reduce a
// contiguous run fast, and write its result. The engine picks a path from the layout:
//   rows:    reduced dims trailing (contiguous)  -> vectorised row reductions, parallel over rows;
//            few long rows are cut into fixed chunks merged in order (deterministic: the chunking
//            does not depend on the thread count);
//   columns: reduced dims a block with kept dims after it -> rows accumulated into the output;
//   generic: anything else (strided input, interleaved dims) -> one strided walk per output.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "kernels/cpu/bf16_loops.h"
#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/reduce.h"

namespace oneflow_like {
namespace kernels {
namespace {

constexpr int64_t kChunk = 1 << 16;  // elements per partial result of a split row

// ---- the engine -------------------------------------------------------------------------

struct Layout {
  enum Kind { kRows, kColumns, kGeneric } kind = kGeneric;
  int64_t outer = 1, reduced = 1, inner = 1;
};

Layout Classify(const TensorView& x, const std::vector<int64_t>& dims) {
  Layout l;
  if (!x.contiguous() || x.numel() == 0) return l;
  // Groups of adjacent kept / reduced dims (size-1 dims dropped): sizes and kinds.
  DimVector sizes;
  std::vector<bool> red;
  for (int64_t i = 0; i < x.shape.ndim(); ++i) {
    if (x.shape[i] == 1) continue;
    bool r = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!red.empty() && red.back() == r)
      sizes.back() *= x.shape[i];
    else
      sizes.push_back(x.shape[i]), red.push_back(r);
  }
  size_t n = sizes.size();
  if (n == 0) {
    l.kind = Layout::kRows;
    return l;
  }
  if (!red.back()) {  // kept dims last: [K] (nothing reduced), [R K], [K R K]
    if (n == 1) {
      l.kind = Layout::kRows;
      l.outer = sizes[0];
      return l;
    }
    if (n == 2) {
      l.kind = Layout::kColumns;
      l.reduced = sizes[0];
      l.inner = sizes[1];
      return l;
    }
    if (n == 3) {
      l.kind = Layout::kColumns;
      l.outer = sizes[0];
      l.reduced = sizes[1];
      l.inner = sizes[2];
      return l;
    }
    return l;
  }
  if (n == 1) {
    l.kind = Layout::kRows;
    l.reduced = sizes[0];
    return l;
  }
  if (n == 2) {
    l.kind = Layout::kRows;
    l.outer = sizes[0];
    l.reduced = sizes[1];
    return l;
  }
  return l;
}

template <typename T, typename R>
void RowsPath(const T* x, const Layout& l, const R& r) {
  using Acc = typename R::Acc;
  int64_t rows = l.outer, len = l.reduced;
  if (rows >= 4 || len < 2 * kChunk) {
    ParallelFor(
        rows,
        [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) r.Write(o, r.Row(x + o * len, len, 0));
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)));
    return;
  }
  int64_t chunks = (len + kChunk - 1) / kChunk;
  std::vector<Acc> part(rows * chunks);
  IntraOpPool()->ParallelFor(rows * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / chunks, c = t % chunks, start = c * kChunk;
      part[t] = r.Row(x + o * len + start, std::min(kChunk, len - start), start);
    }
  });
  for (int64_t o = 0; o < rows; ++o) {
    Acc acc = part[o * chunks];
    for (int64_t c = 1; c < chunks; ++c) r.Merge(acc, part[o * chunks + c]);
    r.Write(o, acc);
  }
}

// Reducers may accumulate a whole row of the column layout at once (vectorised).
template <typename R, typename = void>
struct HasColumnFold : std::false_type {};
template <typename R>
struct HasColumnFold<R, std::void_t<decltype(&R::ColumnFold)>> : std::true_type {};

template <typename T, typename R>
void ColumnsPath(const T* x, const Layout& l, const R& r) {
  using Acc = typename R::Acc;
  // Output columns accumulated together: long contiguous row segments (the prefetcher needs
  // them; short segments at a large stride crawl), yet enough blocks for every thread.
  int64_t threads = IntraOpPool()->num_threads();
  int64_t block = std::clamp<int64_t>((l.inner + threads - 1) / threads, 256, 4096);
  if (l.outer >= threads) block = std::min<int64_t>(l.inner, 4096);
  int64_t blocks = (l.inner + block - 1) / block, tasks = l.outer * blocks;
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.reduced * block, 1));
  ParallelFor(
      tasks,
      [&](int64_t b, int64_t e) {
        std::unique_ptr<Acc[]> accv(new Acc[std::min(block, l.inner)]);
        Acc* acc = accv.get();
        for (int64_t t = b; t < e; ++t) {
          int64_t o = t / blocks, j0 = (t % blocks) * block, n = std::min(block, l.inner - j0);
          for (int64_t j = 0; j < n; ++j) acc[j] = r.Init();
          const T* base = x + o * l.reduced * l.inner + j0;
          for (int64_t i = 0; i < l.reduced; ++i) {
            const T* row = base + i * l.inner;
            if constexpr (HasColumnFold<R>::value)
              r.ColumnFold(acc, row, n);
            else
              for (int64_t j = 0; j < n; ++j) r.Fold(acc[j], row[j], i);
          }
          for (int64_t j = 0; j < n; ++j) r.Write(o * l.inner + j0 + j, acc[j]);
        }
      },
      grain);
}

template <typename T, typename R>
void GenericPath(const TensorView& x, const std::vector<int64_t>& dims, int64_t out_numel,
                 const R& r) {
  DimVector ks, kst, rs, rst;
  int64_t red_numel = 1;
  for (int64_t i = 0; i < x.shape.ndim(); ++i) {
    bool red = std::find(dims.begin(), dims.end(), i) != dims.end();
    (red ? rs : ks).push_back(x.shape[i]);
    (red ? rst : kst).push_back(x.strides[i]);
    if (red) red_numel *= x.shape[i];
  }
  const T* in = x.ptr<const T>();
  int64_t nk = ks.size(), nr = rs.size();
  ParallelFor(
      out_numel,
      [&](int64_t b, int64_t e) {
        DimVector idx(nr);
        for (int64_t o = b; o < e; ++o) {
          int64_t base = 0, rem = o;
          for (int64_t d = nk - 1; d >= 0; --d) base += (rem % ks[d]) * kst[d], rem /= ks[d];
          auto acc = r.Init();
          std::fill(idx.begin(), idx.end(), 0);
          for (int64_t i = 0; i < red_numel; ++i) {
            int64_t off = base;
            for (int64_t d = 0; d < nr; ++d) off += idx[d] * rst[d];
            r.Fold(acc, in[off], i);
            for (int64_t d = nr - 1; d >= 0; --d) {
              if (++idx[d] < rs[d]) break;
              idx[d] = 0;
            }
          }
          r.Write(o, acc);
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(red_numel, 1)));
}

template <typename T, typename R>
void Reduce(const TensorView& x, const std::vector<int64_t>& dims, int64_t out_numel, const R& r) {
  Layout l = Classify(x, dims);
  if (l.kind == Layout::kRows)
    RowsPath(x.ptr<const T>(), l, r);
  else if (l.kind == Layout::kColumns)
    ColumnsPath(x.ptr<const T>(), l, r);
  else
    GenericPath<T>(x, dims, out_numel, r);
}

// ---- vectorised row helpers --------------------------------------------------------------
// Explicit 32-byte vectors (GCC/Clang vector extensions): -O2's cheap vectoriser cost model
// leaves reduction loops scalar, so the hot loops say what they mean.

template <typename T>
struct VecOf {
  typedef T type __attribute__((vector_size(32)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int kLanes = 32 / sizeof(T);
template <typename T>
Vec<T> Load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
Vec<T> Splat(T x) {
  Vec<T> v;
  for (int j = 0; j < kLanes<T>; ++j) v[j] = x;
  return v;
}
template <typename T>
bool IsNan(T v) {
  return v != v;
}

// Sum of f(p[i]) (f also applies to vectors) in two vector accumulators, added per block of 2048
// into a double so long rows keep their precision.
template <typename T, typename F>
double LaneSum(const T* p, int64_t n, F f) {
  constexpr int W = kLanes<T>;
  double total = 0;
  for (int64_t b = 0; b < n; b += 2048) {
    int64_t m = std::min<int64_t>(2048, n - b), i = 0;
    const T* q = p + b;
    Vec<T> a0 = Splat<T>(0), a1 = Splat<T>(0);
    for (; i + 2 * W <= m; i += 2 * W) a0 += f(Load(q + i)), a1 += f(Load(q + i + W));
    a0 += a1;
    T s = 0;
    for (; i < m; ++i) s += f(q[i]);
    for (int j = 0; j < W; ++j) s += a0[j];
    total += s;
  }
  return total;
}

// max (or min) with NaN propagating.
template <bool kMax, typename T>
T LaneExtreme(const T* p, int64_t n) {
  T init;
  if constexpr (std::numeric_limits<T>::has_infinity)
    init = kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  else
    init = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  T r = init;
  bool nan = false;
  int64_t i = 0;
  if constexpr (!std::is_same_v<T, bool>) {
    constexpr int W = kLanes<T>;
    Vec<T> acc = Splat<T>(init);
    auto bad = acc != acc;
    for (; i + W <= n; i += W) {
      Vec<T> v = Load(p + i);
      bad |= v != v;
      acc = kMax ? (v > acc ? v : acc) : (v < acc ? v : acc);
    }
    for (int j = 0; j < W; ++j) {
      nan |= bad[j] != 0;
      r = kMax ? (acc[j] > r ? acc[j] : r) : (acc[j] < r ? acc[j] : r);
    }
  }
  for (; i < n; ++i) {
    nan |= IsNan(p[i]);
    r = kMax ? (p[i] > r ? p[i] : r) : (p[i] < r ? p[i] : r);
  }
  if constexpr (std::is_floating_point_v<T>)
    if (nan) return std::numeric_limits<T>::quiet_NaN();
  return r;
}

// ---- reducers ---------------------------------------------------------------------------

// sum: floats accumulate in double, integers in int64.
template <typename T, typename O>
struct SumR {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  O* out;
  Acc Init() const { return 0; }
  void Fold(Acc& a, T v, int64_t) const { a += static_cast<Acc>(v); }
  void Merge(Acc& a, const Acc& b) const { a += b; }
  Acc Row(const T* p, int64_t n, int64_t) const {
    if constexpr (std::is_floating_point_v<T>) {
      return LaneSum(p, n, [](auto v) { return v; });
    } else {
      Acc a = 0;
      for (int64_t i = 0; i < n; ++i) a += static_cast<Acc>(p[i]);
      return a;
    }
  }
  void ColumnFold(Acc* acc, const T* row, int64_t n) const {
    int64_t j = 0;
    if constexpr (std::is_floating_point_v<T>) {
      for (; j + 4 <= n; j += 4) {
        Vec<double> a = Load(acc + j);
        if constexpr (std::is_same_v<T, float>) {
          typedef float F4 __attribute__((vector_size(16)));
          F4 x;
          std::memcpy(&x, row + j, sizeof x);
          a += __builtin_convertvector(x, Vec<double>);
        } else {
          a += Load(row + j);
        }
        std::memcpy(acc + j, &a, sizeof a);
      }
    }
    for (; j < n; ++j) acc[j] += static_cast<Acc>(row[j]);
  }
  void Write(int64_t o, Acc a) const { out[o] = static_cast<O>(a); }
};

template <typename T, typename O>
struct ProdR {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  O* out;
  Acc Init() const { return 1; }
  void Fold(Acc& a, T v, int64_t) const { a *= static_cast<Acc>(v); }
  void Merge(Acc& a, const Acc& b) const { a *= b; }
  Acc Row(const T* p, int64_t n, int64_t) const {
    Acc a = 1;
    for (int64_t i = 0; i < n; ++i) a *= static_cast<Acc>(p[i]);
    return a;
  }
  void Write(int64_t o, Acc a) const { out[o] = static_cast<O>(a); }
};

// amax / amin: the extreme value, NaN propagating.
template <bool kMax, typename T>
struct ExtremeR {
  using Acc = T;
  T* out;
  T Init() const {
    if constexpr (std::numeric_limits<T>::has_infinity)
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  void Fold(T& a, T v, int64_t) const {
    if (kMax ? (v > a || IsNan(v)) : (v < a || IsNan(v))) a = IsNan(a) ? a : v;
  }
  void Merge(T& a, const T& b) const { Fold(a, b, 0); }
  void ColumnFold(T* acc, const T* row, int64_t n) const {
    int64_t j = 0;
    if constexpr (!std::is_same_v<T, bool>) {
      for (; j + kLanes<T> <= n; j += kLanes<T>) {
        Vec<T> a = Load(acc + j), v = Load(row + j);
        a = kMax ? ((v > a) | (v != v) ? v : a) : ((v < a) | (v != v) ? v : a);
        std::memcpy(acc + j, &a, sizeof a);
      }
    }
    for (; j < n; ++j) Fold(acc[j], row[j], 0);
  }
  T Row(const T* p, int64_t n, int64_t) const { return LaneExtreme<kMax>(p, n); }
  void Write(int64_t o, T a) const { out[o] = a; }
};

// max/min with indices, argmax/argmin: the first index of the extreme (of the first NaN).
template <bool kMax, typename T>
struct ArgR {
  struct Acc {
    T v;
    int64_t i;
  };
  T* values;  // may be null
  int64_t* indices;
  static bool Better(T v, T best) {
    if (IsNan(best)) return false;
    return IsNan(v) || (kMax ? v > best : v < best);
  }
  Acc Init() const { return {ExtremeR<kMax, T>{nullptr}.Init(), 0}; }
  void Fold(Acc& a, T v, int64_t i) const {
    if (Better(v, a.v)) a = {v, i};
  }
  void Merge(Acc& a, const Acc& b) const {
    if (Better(b.v, a.v)) a = b;
  }
  Acc Row(const T* p, int64_t n, int64_t i0) const {
    T m = LaneExtreme<kMax>(p, n);
    int64_t i = 0;
    if (IsNan(m)) {
      while (i < n && !IsNan(p[i])) ++i;
    } else {
      while (i < n && p[i] != m) ++i;
    }
    return {m, i0 + (i < n ? i : 0)};
  }
  void Write(int64_t o, const Acc& a) const {
    if (values) values[o] = a.v;
    indices[o] = a.i;
  }
};

// var / std: Welford per element, exact two passes per contiguous run, Chan's merge.
template <typename T>
struct VarR {
  struct Acc {
    double n, mean, m2;
  };
  T* out;
  double correction;
  bool take_sqrt;
  Acc Init() const { return {0, 0, 0}; }
  void Fold(Acc& a, T v, int64_t) const {
    a.n += 1;
    double d = v - a.mean;
    a.mean += d / a.n;
    a.m2 += d * (v - a.mean);
  }
  void Merge(Acc& a, const Acc& b) const {
    if (b.n == 0) return;
    if (a.n == 0) {
      a = b;
      return;
    }
    double n = a.n + b.n, d = b.mean - a.mean;
    a.m2 += b.m2 + d * d * a.n * b.n / n;
    a.mean += d * b.n / n;
    a.n = n;
  }
  Acc Row(const T* p, int64_t n, int64_t) const {
    if (n == 0) return Init();
    double mean = LaneSum(p, n, [](auto v) { return v; }) / n;
    const T mt = static_cast<T>(mean);
    // Deviations from the rounded mean, corrected for its rounding.
    double dev = LaneSum(p, n, [mt](auto v) { return v - mt; });
    double m2 = LaneSum(p, n, [mt](auto v) { return (v - mt) * (v - mt); });
    m2 -= dev * dev / n;
    return {double(n), mean, m2};
  }
  void Write(int64_t o, const Acc& a) const {
    double denom = a.n - correction;
    double v = denom > 0 ? std::max(a.m2, 0.0) / denom : std::numeric_limits<double>::quiet_NaN();
    out[o] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
  }
};

// Vector norms: p = 2, 1, inf, -inf, 0, or any other p (sum |x|^p)^(1/p).
template <typename T>
struct NormR {
  using Acc = double;
  T* out;
  double p;
  bool is_max() const { return std::isinf(p); }
  Acc Init() const { return p == -INFINITY ? INFINITY : 0.0; }
  void Fold(Acc& a, T v, int64_t) const {
    double x = std::abs(static_cast<double>(v));
    if (p == 2)
      a += x * x;
    else if (p == 1)
      a += x;
    else if (p == INFINITY)
      a = (x > a || IsNan(x)) && !IsNan(a) ? x : a;
    else if (p == -INFINITY)
      a = (x < a || IsNan(x)) && !IsNan(a) ? x : a;
    else if (p == 0)
      a += x != 0;
    else
      a += std::pow(x, p);
  }
  void Merge(Acc& a, const Acc& b) const {
    if (p == INFINITY)
      a = (b > a || IsNan(b)) && !IsNan(a) ? b : a;
    else if (p == -INFINITY)
      a = (b < a || IsNan(b)) && !IsNan(a) ? b : a;
    else
      a += b;
  }
  Acc Row(const T* q, int64_t n, int64_t) const {
    if (p == 2) return LaneSum(q, n, [](auto v) { return v * v; });
    if (p == 1) return LaneSum(q, n, [](auto v) { return v < 0 ? -v : v; });
    Acc a = Init();
    for (int64_t i = 0; i < n; ++i) Fold(a, q[i], i);
    return a;
  }
  void Write(int64_t o, Acc a) const {
    double r = a;
    if (p == 2)
      r = std::sqrt(a);
    else if (p != 1 && p != 0 && !std::isinf(p))
      r = std::pow(a, 1.0 / p);
    out[o] = static_cast<T>(r);
  }
};

// logsumexp: running (max, sum of exp(x - max)).
template <typename T>
struct LseR {
  struct Acc {
    double m, s;
  };
  T* out;
  Acc Init() const { return {-INFINITY, 0}; }
  void Add(Acc& a, double m, double s) const {  // merge (m, s) into a
    if (IsNan(m) || IsNan(a.m)) {
      a.m = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    if (m == -INFINITY) return;
    if (m == a.m) {
      a.s += s;
      return;
    }
    if (m > a.m) {
      a.s = a.s * std::exp(a.m - m) + s;
      a.m = m;
    } else
      a.s += s * std::exp(m - a.m);
  }
  void Fold(Acc& a, T v, int64_t) const { Add(a, v, 1.0); }
  void Merge(Acc& a, const Acc& b) const { Add(a, b.m, b.s); }
  Acc Row(const T* p, int64_t n, int64_t) const {
    double m = LaneExtreme<true>(p, n);
    if (n == 0 || std::isinf(m) || IsNan(m)) {
      Acc a = Init();
      for (int64_t i = 0; i < n; ++i) Fold(a, p[i], i);
      return a;
    }
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(p[i]) - m);
    return {m, s};
  }
  void Write(int64_t o, const Acc& a) const {
    double r = IsNan(a.m) ? a.m : (a.m == -INFINITY || std::isinf(a.m)) ? a.m : a.m + std::log(a.s);
    out[o] = static_cast<T>(r);
  }
};

// ---- kernels ----------------------------------------------------------------------------

// The op's dims (normalised by the functional entry), from the table's typed attributes.
std::vector<int64_t> Dims(KernelContext& ctx) {
  return opdefs::ReadAttrs<opdefs::ReduceAttrs>(ctx.attrs()).dims;
}

// sum of bfloat16 (an autocast step's linear bias gradients), accumulated in f32 as torch's, the
// result written as bf16 or as the requested dtype (f32, f64). The column layout ([rows,
// features] summed over rows) widens row segments into f32 column accumulators: one pass over
// the bf16 input. Other layouts widen x to f32 once and run the f32 engine.
Status SumBf16(KernelContext& ctx, const TensorView& x, const TensorView& out) {
  const std::vector<int64_t> dims = Dims(ctx);
  std::vector<float> res(out.numel());
  const Layout l = Classify(x, dims);
  if (l.kind == Layout::kColumns) {
    constexpr int64_t kBlock = 1024;
    const bfloat16* p = x.ptr<const bfloat16>();
    const int64_t block = std::min(l.inner, kBlock), blocks = (l.inner + block - 1) / block;
    ParallelFor(
        l.outer * blocks,
        [&](int64_t b, int64_t e) {
          float buf[kBlock], acc[kBlock];
          for (int64_t t = b; t < e; ++t) {
            const int64_t o = t / blocks, j0 = (t % blocks) * block;
            const int64_t n = std::min(block, l.inner - j0);
            std::fill(acc, acc + n, 0.f);
            const bfloat16* base = p + o * l.reduced * l.inner + j0;
            for (int64_t i = 0; i < l.reduced; ++i) {
              WidenBf16(base + i * l.inner, buf, n);
              for (int64_t j = 0; j < n; ++j) acc[j] += buf[j];
            }
            std::copy(acc, acc + n, res.data() + o * l.inner + j0);
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.reduced * block, 1)));
  } else {
    std::vector<float> xf(x.numel());
    TensorView xv{xf.data(), DType::kF32, x.shape, ContiguousStrides(x.shape)};
    std::array<const DimVector*, 2> st{&xv.strides, &x.strides};
    ForEachRow<2>(x.shape, st, {static_cast<char*>(xv.data), static_cast<char*>(x.data)}, {4, 2},
                  [](const std::array<char*, 2>& q, const std::array<int64_t, 2>& s, int64_t n) {
                    float* o = reinterpret_cast<float*>(q[0]);
                    const bfloat16* i = reinterpret_cast<const bfloat16*>(q[1]);
                    if (s[0] == 1) return LoadBf16(i, s[1], o, n);
                    for (int64_t k = 0; k < n; ++k) o[k * s[0]] = float(i[k * s[1]]);
                  });
    if (x.numel() > 0) Reduce<float>(xv, dims, out.numel(), SumR<float, float>{res.data()});
  }
  switch (out.dtype) {
    case DType::kBF16: NarrowToBf16(res.data(), out.ptr<bfloat16>(), out.numel()); break;
    case DType::kF32: std::copy(res.begin(), res.end(), out.ptr<float>()); break;
    case DType::kF64: std::copy(res.begin(), res.end(), out.ptr<double>()); break;
    default:
      return TypeError("[%s] a bfloat16 sum into %s is not supported on cpu", ctx.op(),
                       DTypeName(out.dtype));
  }
  return Status();
}

Status SumKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  if (x.dtype == DType::kBF16) return SumBf16(ctx, x, out);
  bool done = false;
  OFL_SWITCH_NUMERIC(x.dtype, {
    if constexpr (std::is_floating_point_v<scalar_t>) {
      Reduce<scalar_t>(x, Dims(ctx), out.numel(), SumR<scalar_t, scalar_t>{out.ptr<scalar_t>()});
    } else {
      Reduce<scalar_t>(x, Dims(ctx), out.numel(), SumR<scalar_t, int64_t>{out.ptr<int64_t>()});
    }
    done = true;
  });
  if (x.dtype == DType::kBool) {
    Reduce<bool>(x, Dims(ctx), out.numel(), SumR<bool, int64_t>{out.ptr<int64_t>()});
    done = true;
  }
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(x.dtype));
  return Status();
}

Status ProdKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  bool done = false;
  OFL_SWITCH_NUMERIC(x.dtype, {
    if constexpr (std::is_floating_point_v<scalar_t>) {
      Reduce<scalar_t>(x, Dims(ctx), out.numel(), ProdR<scalar_t, scalar_t>{out.ptr<scalar_t>()});
    } else {
      Reduce<scalar_t>(x, Dims(ctx), out.numel(), ProdR<scalar_t, int64_t>{out.ptr<int64_t>()});
    }
    done = true;
  });
  if (!done) return TypeError("[prod] not supported for %s on cpu", DTypeName(x.dtype));
  return Status();
}

template <bool kMax>
Status ExtremeKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  bool done = false;
  OFL_SWITCH_NUMERIC(x.dtype, {
    Reduce<scalar_t>(x, Dims(ctx), out.numel(), ExtremeR<kMax, scalar_t>{out.ptr<scalar_t>()});
    done = true;
  });
  if (x.dtype == DType::kBool) {
    Reduce<bool>(x, Dims(ctx), out.numel(), ExtremeR<kMax, bool>{out.ptr<bool>()});
    done = true;
  }
  OFL_SWITCH_UNSIGNED_WIDE(x.dtype, {  // amax/amin of u16/u32/u64 (torch's limited support)
    Reduce<scalar_t>(x, Dims(ctx), out.numel(), ExtremeR<kMax, scalar_t>{out.ptr<scalar_t>()});
    done = true;
  });
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(x.dtype));
  return Status();
}

// Outputs (values, indices) for max/min with a dim, (indices) for argmax/argmin.
template <bool kMax>
Status ArgKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  bool with_values = ctx.num_outputs() == 2;
  const TensorView& idx = ctx.output(with_values ? 1 : 0);
  bool done = false;
  OFL_SWITCH_NUMERIC(x.dtype, {
    ArgR<kMax, scalar_t> r{with_values ? ctx.output(0).ptr<scalar_t>() : nullptr,
                           idx.ptr<int64_t>()};
    Reduce<scalar_t>(x, Dims(ctx), idx.numel(), r);
    done = true;
  });
  if (x.dtype == DType::kBool) {
    ArgR<kMax, bool> r{with_values ? ctx.output(0).ptr<bool>() : nullptr, idx.ptr<int64_t>()};
    Reduce<bool>(x, Dims(ctx), idx.numel(), r);
    done = true;
  }
  OFL_SWITCH_UNSIGNED_WIDE(x.dtype, {  // max/min with a dim of u16/u32/u64
    ArgR<kMax, scalar_t> r{with_values ? ctx.output(0).ptr<scalar_t>() : nullptr,
                           idx.ptr<int64_t>()};
    Reduce<scalar_t>(x, Dims(ctx), idx.numel(), r);
    done = true;
  });
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(x.dtype));
  return Status();
}

template <typename MakeR>
Status FloatReduce(KernelContext& ctx, MakeR make) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  bool done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    Reduce<scalar_t>(x, Dims(ctx), out.numel(), make(scalar_t(), out.ptr<scalar_t>()));
    done = true;
  });
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(x.dtype));
  return Status();
}

Status VarKernel(KernelContext& ctx) {
  double c = opdefs::ReadAttrs<opdefs::VarAttrs>(ctx.attrs()).correction;
  bool sq = std::string_view(ctx.op()) == "std";
  return FloatReduce(ctx, [&](auto t, auto* o) { return VarR<decltype(t)>{o, c, sq}; });
}
Status NormKernel(KernelContext& ctx) {
  double p = opdefs::ReadAttrs<opdefs::NormAttrs>(ctx.attrs()).p;
  return FloatReduce(ctx, [&](auto t, auto* o) { return NormR<decltype(t)>{o, p}; });
}
Status LogSumExpKernel(KernelContext& ctx) {
  return FloatReduce(ctx, [&](auto t, auto* o) { return LseR<decltype(t)>{o}; });
}

// Splits `shape` around `dim`: outer * size * inner.
void AroundDim(const Shape& s, int64_t dim, int64_t* outer, int64_t* size, int64_t* inner) {
  *outer = 1, *inner = 1, *size = s.ndim() ? s[dim] : 1;
  for (int64_t i = 0; i < dim; ++i) *outer *= s[i];
  for (int64_t i = dim + 1; i < s.ndim(); ++i) *inner *= s[i];
}

// The index (into `v`'s rows) of the lower median of the non-NaN values `v` (element (n - 1) / 2
// of them sorted; ties: the lowest index); `at` lists each value's index. -1 for none.
int64_t LowerMedianAt(std::vector<long double>& v, std::vector<int64_t>& at) {
  if (v.empty()) return -1;
  std::vector<int64_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int64_t>(i);
  auto mid = order.begin() + (order.size() - 1) / 2;
  std::nth_element(order.begin(), mid, order.end(), [&](int64_t i, int64_t j) {
    return v[i] < v[j] || (v[i] == v[j] && at[i] < at[j]);
  });
  return at[*mid];
}

// nanmedian_dim(x; dims = {d}) over a contiguous x: (values, indices) of each row's lower median
// ignoring NaN; a row of NaNs gives NaN at its first index. Values compare as long double, exact
// for every dtype (int64 included), so one selection serves them all.
Status NanMedianKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  std::vector<int64_t> dims = Dims(ctx);
  int64_t outer, size, inner;
  AroundDim(x.shape, dims.empty() ? 0 : dims[0], &outer, &size, &inner);
  int64_t* ix = ctx.output(1).ptr<int64_t>();
  bool done = false;
  OFL_SWITCH_NUMERIC(x.dtype, {
    const scalar_t* xv = x.ptr<const scalar_t>();
    scalar_t* ov = ctx.output(0).ptr<scalar_t>();
    std::vector<long double> vals;
    std::vector<int64_t> at;
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        const scalar_t* row = xv + a * size * inner + b;
        vals.clear();
        at.clear();
        for (int64_t k = 0; k < size; ++k)
          if (!IsNan(row[k * inner])) {
            vals.push_back(static_cast<long double>(row[k * inner]));
            at.push_back(k);
          }
        int64_t o = a * inner + b, pick = std::max<int64_t>(LowerMedianAt(vals, at), 0);
        ov[o] = row[pick * inner];
        ix[o] = pick;
      }
    done = true;
  });
  if (!done) return TypeError("[nanmedian] not supported for %s on cpu", DTypeName(x.dtype));
  return Status();
}

// ---- helpers of the gradient formulas ---------------------------------------------------

// reduce_eq_mask(x, m broadcast to x; signed): 1 where x == m (NaN matches NaN), else 0; with
// `signed`, sign(x) where |x| == m (the inf-norm's subgradient).
Status EqMaskKernel(KernelContext& ctx) {
  bool sgn = opdefs::ReadAttrs<opdefs::EqMaskAttrs>(ctx.attrs()).is_signed;
  bool done = false;
  OFL_SWITCH_FLOAT(ctx.output(0).dtype, {
    BinaryLoop<scalar_t, scalar_t>(
        ctx.output(0), ctx.input(0), ctx.input(1), [sgn](scalar_t v, scalar_t m) {
          if (!sgn) return scalar_t((v == m || (IsNan(v) && IsNan(m))) ? 1 : 0);
          scalar_t a = v < 0 ? -v : v;
          return scalar_t((a == m || (IsNan(a) && IsNan(m))) ? (v < 0 ? -1 : 1) : 0);
        });
    done = true;
  });
  if (!done)
    return TypeError("[reduce_eq_mask] not supported for %s", DTypeName(ctx.output(0).dtype));
  return Status();
}

// reduce_index_scatter(g, idx; dim): out = zeros, out[.., idx, ..] = g along dim (inputs keepdim).
Status IndexScatterKernel(KernelContext& ctx) {
  const TensorView &g = ctx.input(0), &idx = ctx.input(1), &out = ctx.output(0);
  int64_t outer, size, inner;
  int64_t dim = opdefs::ReadAttrs<opdefs::IndexScatterAttrs>(ctx.attrs()).dim;
  AroundDim(out.shape, dim, &outer, &size, &inner);
  const int64_t* ix = idx.ptr<const int64_t>();
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    const scalar_t* gv = g.ptr<const scalar_t>();
    std::memset(o, 0, out.numel() * sizeof(scalar_t));
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        int64_t k = ix[a * inner + b];
        if (k < 0 || k >= size) continue;
        o[(a * size + k) * inner + b] = gv[a * inner + b];
      }
    done = true;
  });
  if (!done) return TypeError("[reduce_index_scatter] not supported for %s", DTypeName(out.dtype));
  return Status();
}

// reduce_index_gather(x, idx; dim): out[a, 0, b] = x[a, idx[a, 0, b], b] (out has idx's shape).
Status IndexGatherKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &idx = ctx.input(1), &out = ctx.output(0);
  int64_t outer, size, inner;
  int64_t dim = opdefs::ReadAttrs<opdefs::IndexGatherAttrs>(ctx.attrs()).dim;
  AroundDim(x.shape, dim, &outer, &size, &inner);
  const int64_t* ix = idx.ptr<const int64_t>();
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    const scalar_t* xv = x.ptr<const scalar_t>();
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        int64_t k = std::clamp<int64_t>(ix[a * inner + b], 0, std::max<int64_t>(size - 1, 0));
        o[a * inner + b] = xv[(a * size + k) * inner + b];
      }
    done = true;
  });
  if (!done) return TypeError("[reduce_index_gather] not supported for %s", DTypeName(out.dtype));
  return Status();
}

// norm_backward(x, norm, g; p) for finite p: g * sign(x) |x|^(p-1) / norm^(p-1), 0 where norm == 0.
// norm and g have the keepdim shape (contiguous) and broadcast to x.
Status NormBackwardKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &nrm = ctx.input(1), &g = ctx.input(2), &out = ctx.output(0);
  double p = opdefs::ReadAttrs<opdefs::NormBackwardAttrs>(ctx.attrs()).p;
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(nrm.numel() * sizeof(scalar_t)));
    scalar_t* coef = static_cast<scalar_t*>(mem);
    const scalar_t *nv = nrm.ptr<const scalar_t>(), *gv = g.ptr<const scalar_t>();
    for (int64_t i = 0; i < nrm.numel(); ++i)
      coef[i] = nv[i] == 0
                    ? 0
                    : static_cast<scalar_t>(gv[i] / std::pow(static_cast<double>(nv[i]), p - 1));
    TensorView cv = nrm;
    cv.data = coef;
    BinaryLoop<scalar_t, scalar_t>(out, x, cv, [p](scalar_t v, scalar_t c) {
      if (p == 2) return c * v;
      scalar_t s = v > 0 ? 1 : (v < 0 ? -1 : 0);
      if (p == 1) return c * s;
      return static_cast<scalar_t>(c * s * std::pow(std::abs(static_cast<double>(v)), p - 1));
    });
    done = true;
  });
  if (!done) return TypeError("[norm_backward] not supported for %s", DTypeName(out.dtype));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(sum, kCPU, SumKernel);
OFL_REGISTER_KERNEL(prod, kCPU, ProdKernel);
OFL_REGISTER_KERNEL(amax, kCPU, ExtremeKernel<true>);
OFL_REGISTER_KERNEL(amin, kCPU, ExtremeKernel<false>);
OFL_REGISTER_KERNEL(max_dim, kCPU, ArgKernel<true>);
OFL_REGISTER_KERNEL(min_dim, kCPU, ArgKernel<false>);
OFL_REGISTER_KERNEL(argmax, kCPU, ArgKernel<true>);
OFL_REGISTER_KERNEL(argmin, kCPU, ArgKernel<false>);
OFL_REGISTER_KERNEL(var, kCPU, VarKernel);
OFL_REGISTER_KERNEL(std, kCPU, VarKernel);
OFL_REGISTER_KERNEL(norm, kCPU, NormKernel);
OFL_REGISTER_KERNEL(logsumexp, kCPU, LogSumExpKernel);
OFL_REGISTER_KERNEL(nanmedian_dim, kCPU, NanMedianKernel);
OFL_REGISTER_KERNEL(reduce_eq_mask, kCPU, EqMaskKernel);
OFL_REGISTER_KERNEL(reduce_index_scatter, kCPU, IndexScatterKernel);
OFL_REGISTER_KERNEL(reduce_index_gather, kCPU, IndexGatherKernel);
OFL_REGISTER_KERNEL(norm_backward, kCPU, NormBackwardKernel);

}  // namespace kernels
}  // namespace oneflow_like
