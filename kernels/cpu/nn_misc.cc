// CPU kernels of the NN miscellany: embedding (+ grad), dropout, attention mask bias.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/bf16_loops.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/rng_simd.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace kernels {
namespace {

Status EmbeddingKernel(KernelContext& ctx) {
  const TensorView &w = ctx.input(0), &iv = ctx.input(1), &out = ctx.output(0);
  int64_t rows = w.shape[0], dim = w.shape[1], n = iv.numel();
  const int64_t* idx = iv.ptr<const int64_t>();
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] >= rows)
      return OutOfRange("[embedding] index %d out of range for %d rows", idx[i], rows);
  bool done = false;
  OFL_SWITCH_FLOAT(w.dtype, {
    const scalar_t* src = w.ptr<const scalar_t>();
    scalar_t* dst = out.ptr<scalar_t>();
    ParallelFor(
        n,
        [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            std::copy(src + idx[i] * dim, src + (idx[i] + 1) * dim, dst + i * dim);
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(dim, 1)));
    done = true;
  });
  if (!done) return TypeError("[embedding] not supported for %s on cpu", DTypeName(w.dtype));
  return Status();
}

// dweight[idx[i]] += dy[i] (rows equal to padding_idx get nothing); parallel over columns.
Status EmbeddingGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &iv = ctx.input(1), &dw = ctx.output(0);
  int64_t rows = dw.shape[0], dim = dw.shape[1], n = iv.numel(),
          pad = opdefs::ReadAttrs<opdefs::EmbeddingGradAttrs>(ctx.attrs()).padding_idx;
  const int64_t* idx = iv.ptr<const int64_t>();
  bool done = false;
  OFL_SWITCH_FLOAT(dy.dtype, {
    const scalar_t* g = dy.ptr<const scalar_t>();
    scalar_t* o = dw.ptr<scalar_t>();
    ParallelFor(
        dim,
        [&](int64_t b, int64_t e) {
          for (int64_t r = 0; r < rows; ++r)
            std::fill(o + r * dim + b, o + r * dim + e, scalar_t(0));
          for (int64_t i = 0; i < n; ++i) {
            if (idx[i] == pad) continue;
            scalar_t* dst = o + idx[i] * dim;
            const scalar_t* src = g + i * dim;
            for (int64_t j = b; j < e; ++j) dst[j] += src[j];
          }
        },
        std::max<int64_t>(16, kParallelGrain / std::max<int64_t>(n + rows, 1)));
    done = true;
  });
  if (!done) return TypeError("[embedding_grad] not supported for %s on cpu", DTypeName(dy.dtype));
  return Status();
}

// o[j] = keep[j] ? x[j] * scale : 0 (keep[j] is 0 or ~0u). For float and double the select is a
// bitwise and, which GCC vectorises (a ?: select compiles to a branch per element).
template <typename T>
void ApplyKeepMask(const T* __restrict x, const uint32_t* __restrict keep, T scale, T* __restrict o,
                   int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using U = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    for (int64_t j = 0; j < n; ++j) {
      T v = x[j] * scale;
      U b;
      std::memcpy(&b, &v, sizeof(T));
      b &= static_cast<U>(static_cast<int32_t>(keep[j]));  // sign-extends ~0u to all ones
      std::memcpy(&o[j], &b, sizeof(T));
    }
  } else {
    for (int64_t j = 0; j < n; ++j) o[j] = keep[j] ? x[j] * scale : T(0);
  }
}

Status DropoutKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  const opdefs::DropoutAttrs a = opdefs::ReadAttrs<opdefs::DropoutAttrs>(ctx.attrs());
  double p = a.p;
  uint64_t seed = static_cast<uint64_t>(a.seed);
  if (x.dtype == DType::kBF16) {
    // Native bf16 (framework/autocast.cc kCpuBf16Ops): a block widened to float, masked and
    // scaled in float as the f32 kernel does, rounded back once: the f32 round trip's values
    // (and its gradient's: dropout of dy with the same seed) without its two casts.
    const bfloat16* xs = x.ptr<const bfloat16>();
    bfloat16* o = out.ptr<bfloat16>();
    const float scale = p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
    const uint64_t thr = UniformThreshold(p);
    ParallelFor(x.numel(), [&](int64_t b, int64_t e) {
      uint32_t keep[kBf16Chunk];
      float xf[kBf16Chunk], of[kBf16Chunk];
      for (int64_t c = b; c < e; c += kBf16Chunk) {
        int64_t n = std::min(kBf16Chunk, e - c);
        RngAtLeastMask(seed, static_cast<uint64_t>(c), n, thr, keep);
        WidenBf16(xs + c, xf, n);
        ApplyKeepMask(xf, keep, scale, of, n);
        NarrowToBf16(of, o + c, n);
      }
    });
    return Status();
  }
  bool done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    using T = scalar_t;
    const T* xs = x.ptr<const T>();
    T* o = out.ptr<T>();
    T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
    // keep(i) = RngUniform(seed, i) >= p, drawn as an integer compare (rng_simd.h) a block at a
    // time.
    const uint64_t thr = UniformThreshold(p);
    ParallelFor(x.numel(), [&](int64_t b, int64_t e) {
      constexpr int64_t kBlock = 512;
      uint32_t keep[kBlock];
      for (int64_t c = b; c < e; c += kBlock) {
        int64_t n = std::min(kBlock, e - c);
        RngAtLeastMask(seed, static_cast<uint64_t>(c), n, thr, keep);
        ApplyKeepMask(xs + c, keep, scale, o + c, n);
      }
    });
    done = true;
  });
  if (!done) return TypeError("[dropout] not supported for %s on cpu", DTypeName(x.dtype));
  return Status();
}

Status AttnBiasKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  bool causal = opdefs::ReadAttrs<opdefs::AttnBiasAttrs>(ctx.attrs()).is_causal;
  bool has_mask = ctx.num_inputs() > 1;
  bool done = false;
  OFL_SWITCH_FLOAT(out.dtype, {
    using T = scalar_t;
    T* o = out.ptr<T>();
    const T ninf = -std::numeric_limits<T>::infinity();
    int64_t n = out.numel(), nd = out.shape.ndim();  // out is contiguous, trailing dims [L, S]
    for (int64_t i = 0; i < n; ++i) {
      int64_t col = i % out.shape[nd - 1], row = (i / out.shape[nd - 1]) % out.shape[nd - 2];
      o[i] = causal && col > row ? ninf : T(0);  // causal: top-left aligned (tril)
    }
    if (has_mask) {
      TensorView m = BroadcastTo(ctx.input(1), out.shape);
      std::array<const DimVector*, 2> st{&out.strides, &m.strides};
      bool is_bool = m.dtype == DType::kBool;
      ForEachRow<2>(
          out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(m.data)},
          {sizeof(T), is_bool ? int64_t(sizeof(bool)) : int64_t(sizeof(T))},
          [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t cnt) {
            T* op = reinterpret_cast<T*>(p[0]);
            for (int64_t j = 0; j < cnt; ++j) {
              if (is_bool) {
                if (!reinterpret_cast<const bool*>(p[1])[j * s[1]]) op[j * s[0]] = ninf;
              } else
                op[j * s[0]] += reinterpret_cast<const T*>(p[1])[j * s[1]];
            }
          });
    }
    done = true;
  });
  if (!done) return TypeError("[attn_bias] not supported for %s on cpu", DTypeName(out.dtype));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(embedding, kCPU, EmbeddingKernel);
OFL_REGISTER_KERNEL(embedding_grad, kCPU, EmbeddingGradKernel);
OFL_REGISTER_KERNEL(dropout, kCPU, DropoutKernel);
OFL_REGISTER_KERNEL(attn_bias, kCPU, AttnBiasKernel);

}  // namespace kernels
}  // namespace oneflow_like
