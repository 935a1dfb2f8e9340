// Device code of the ternary elementwise family (kernels/cpu/ternary.cc, minmax_grad of
// binary.cc). where moves elements by size, so one instantiation serves dtypes of equal width.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
struct WhereF {
  __device__ T operator()(bool k, T a, T b) const { return k ? a : b; }
};
template <typename T>
struct WhereScalarF {
  T s;
  bool scalar_is_other;
  __device__ T operator()(bool k, T a, T) const {
    return scalar_is_other ? (k ? a : s) : (k ? s : a);
  }
};

template <typename T>
__device__ __forceinline__ T LerpValue(T s, T e, T w) {
  return w < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
}

template <typename T>
struct TernaryF {
  TernaryOp op;
  T v;
  bool is_max, side_a;
  __device__ T operator()(T a, T b, T c) const {
    switch (op) {
      case TernaryOp::kAddcmul: return static_cast<T>(a + v * b * c);
      case TernaryOp::kAddcdiv: return static_cast<T>(a + v * b / c);
      default: break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (op == TernaryOp::kLerp) return LerpValue(a, b, c);
      // minmax_grad(g = a, x = b, y = c)
      T mine = side_a ? b : c, other = side_a ? c : b;
      bool wins = is_max ? mine > other : mine < other;
      return wins ? a : (mine == other ? a * T(0.5) : T(0));
    }
    return a;
  }
};

}  // namespace

cudaError_t LaunchWhere(int elem_bytes, const LoopShape& loop, const Operand& out,
                        const Operand& cond, const Operand& x, const Operand& y,
                        cudaStream_t stream) {
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_SIZE(elem_bytes, e = (LaunchTernaryLoop<scalar_t, bool, scalar_t, scalar_t>(
                                     loop, out, cond, x, y, WhereF<scalar_t>{}, stream)));
  return e;
}

cudaError_t LaunchWhereScalar(int elem_bytes, bool scalar_is_other, uint64_t scalar_bits,
                              const LoopShape& loop, const Operand& out, const Operand& cond,
                              const Operand& x, cudaStream_t stream) {
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_SIZE(elem_bytes, {
    WhereScalarF<scalar_t> f{static_cast<scalar_t>(scalar_bits), scalar_is_other};
    e = LaunchTernaryLoop<scalar_t, bool, scalar_t, scalar_t>(loop, out, cond, x, x, f,
                                                              stream);  // x passed twice
  });
  return e;
}

bool TernarySupported(TernaryOp op, ScalarType t) {
  bool fl = t == ScalarType::kF32 || t == ScalarType::kF64;
  if (op == TernaryOp::kAddcmul)
    return fl || t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI32 ||
           t == ScalarType::kI64;
  return fl;
}

cudaError_t LaunchTernary(TernaryOp op, ScalarType t, const OpParams& p, const LoopShape& loop,
                          const Operand& out, const Operand& a, const Operand& b, const Operand& c,
                          cudaStream_t stream) {
  if (!TernarySupported(op, t)) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  OFL_CU_SWITCH_NUMERIC(t, {
    TernaryF<scalar_t> f{op, static_cast<scalar_t>(p.p0), p.p0 != 0, p.p1 == 0};
    e = (LaunchTernaryLoop<scalar_t, scalar_t, scalar_t, scalar_t>(loop, out, a, b, c, f, stream));
  });
  return e;
}

}  // namespace cuda
}  // namespace oneflow_like
