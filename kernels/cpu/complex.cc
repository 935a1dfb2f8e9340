// CPU kernels of the complex dtypes (complex64 / complex128): the copy family's element
// conversions whenever one side is complex (real -> complex sets the imaginary part to 0,
// complex -> real keeps the real part, as torch), called by kernels/cpu/copy.cc, and the
// `complex` op (real and imaginary parts, any strides, into a new complex tensor). Complex
// arithmetic is composed from real ops over view_as_real (oneflow_like/ops/complex.cc) and the
// transforms live in kernels/cpu/fft.cc; the kernels here are complex_bmm (cblas_cgemm /
// zgemm: complex matmul in one GEMM) and linalg_eig (LAPACK zgeev); the LAPACK family's complex
// paths are kernels/cpu/linalg.cc.
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include <cblas.h>

#include "kernels/kernel.h"

extern "C" {
// LAPACK (Debian's OpenBLAS): the complex eigendecomposition and LU solve, in double complex.
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a,
            const int* lda, std::complex<double>* w, std::complex<double>* vl, const int* ldvl,
            std::complex<double>* vr, const int* ldvr, std::complex<double>* work, const int* lwork,
            double* rwork, int* info);
void zgesv_(const int* n, const int* nrhs, std::complex<double>* a, const int* lda, int* ipiv,
            std::complex<double>* b, const int* ldb, int* info);
}

namespace oneflow_like {
namespace kernels {
namespace {
using Z = std::complex<double>;

template <typename T>
struct IsStdComplex : std::false_type {};
template <typename T>
struct IsStdComplex<std::complex<T>> : std::true_type {};

template <typename TO, typename TI>
inline TO ConvertComplex(TI v) {
  if constexpr (IsStdComplex<TO>::value && IsStdComplex<TI>::value) {
    return TO(static_cast<typename TO::value_type>(v.real()),
              static_cast<typename TO::value_type>(v.imag()));
  } else if constexpr (IsStdComplex<TO>::value) {  // real -> complex: imaginary part 0
    return TO(static_cast<typename TO::value_type>(static_cast<double>(v)), 0);
  } else if constexpr (std::is_same_v<TO, bool>) {  // nonzero if either part is
    return v.real() != 0 || v.imag() != 0;
  } else if constexpr (std::is_same_v<TO, float16> || std::is_same_v<TO, bfloat16>) {
    return TO(static_cast<float>(v.real()));
  } else if constexpr (std::is_integral_v<TO> && sizeof(TO) < 8) {
    return static_cast<TO>(static_cast<int64_t>(v.real()));
  } else {
    return static_cast<TO>(v.real());
  }
}

// out[i] = f(in[i]) over out's shape, any strides (in already broadcast to out's shape).
template <typename TO, typename TI>
void StridedConvert(const TensorView& out, const TensorView& in) {
  const int64_t nd = out.shape.ndim(), n = out.numel();
  if (n == 0) return;
  TO* o = out.ptr<TO>();
  const TI* x = in.ptr<TI>();
  if (out.contiguous() && in.contiguous()) {
    for (int64_t i = 0; i < n; ++i) o[i] = ConvertComplex<TO, TI>(x[i]);
    return;
  }
  DimVector idx(nd, 0);
  int64_t oo = 0, io = 0;
  for (int64_t i = 0; i < n; ++i) {
    o[oo] = ConvertComplex<TO, TI>(x[io]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) {
        oo += out.strides[d];
        io += in.strides[d];
        break;
      }
      oo -= out.strides[d] * (out.shape[d] - 1);
      io -= in.strides[d] * (out.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

template <typename TO>
bool ConvertFrom(const TensorView& out, const TensorView& in) {
  bool done = false;
  if (IsComplex(in.dtype)) {
    OFL_SWITCH_COMPLEX(in.dtype, {
      StridedConvert<TO, scalar_t>(out, in);
      done = true;
    });
  } else {
    OFL_SWITCH_ALL(in.dtype, {
      StridedConvert<TO, scalar_t>(out, in);
      done = true;
    });
  }
  return done;
}

// out (contiguous)[i] = (re[i], im[i]); re and im have out's shape, any strides.
template <typename R>
void Interleave(const TensorView& out, const TensorView& re, const TensorView& im) {
  const int64_t nd = out.shape.ndim(), n = out.numel();
  std::complex<R>* o = out.ptr<std::complex<R>>();
  const R* a = re.ptr<R>();
  const R* b = im.ptr<R>();
  if (re.contiguous() && im.contiguous()) {
    for (int64_t i = 0; i < n; ++i) o[i] = std::complex<R>(a[i], b[i]);
    return;
  }
  DimVector idx(nd, 0);
  int64_t ao = 0, bo = 0;
  for (int64_t i = 0; i < n; ++i) {
    o[i] = std::complex<R>(a[ao], b[bo]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) {
        ao += re.strides[d];
        bo += im.strides[d];
        break;
      }
      ao -= re.strides[d] * (out.shape[d] - 1);
      bo -= im.strides[d] * (out.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

Status ComplexKernel(KernelContext& ctx) {
  const TensorView &re = ctx.input(0), &im = ctx.input(1), &out = ctx.output(0);
  if (out.numel() == 0) return Status();
  if (re.dtype == DType::kF64) {
    Interleave<double>(out, re, im);
  } else if (re.dtype == DType::kF32) {
    Interleave<float>(out, re, im);
  } else {
    return TypeError("[complex] not supported for %s on cpu", DTypeLongName(re.dtype));
  }
  return Status();
}

// complex_bmm: out [B, m, n] = op_a(a) op_b(b) per batch element (cblas_cgemm / zgemm, row-major),
// op 0 as is, 1 transposed, 2 conjugate transposed; a and b contiguous, of out's dtype.
CBLAS_TRANSPOSE BlasOp(int64_t op) {
  return op == 1 ? CblasTrans : op == 2 ? CblasConjTrans : CblasNoTrans;
}
Status ComplexBmmKernel(KernelContext& ctx) {
  const TensorView &a = ctx.input(0), &b = ctx.input(1), &out = ctx.output(0);
  const int64_t op_a = ctx.attrs().Int("op_a", 0), op_b = ctx.attrs().Int("op_b", 0);
  const int64_t batch = out.shape[0], m = out.shape[1], n = out.shape[2];
  const int64_t k = op_a == 0 ? a.shape[2] : a.shape[1];
  if (out.numel() == 0) return Status();
  const int64_t sa = a.shape[1] * a.shape[2], sb = b.shape[1] * b.shape[2], so = m * n;
  const int lda = static_cast<int>(a.shape[2]), ldb = static_cast<int>(b.shape[2]);
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  for (int64_t i = 0; i < batch; ++i) {
    if (out.dtype == DType::kC128) {
      const Z one(1), zero(0);
      Z* o = out.ptr<Z>() + i * so;
      if (k == 0) {
        std::fill(o, o + so, zero);
        continue;
      }
      cblas_zgemm(CblasRowMajor, BlasOp(op_a), BlasOp(op_b), mi, ni, ki, &one,
                  a.ptr<const Z>() + i * sa, lda, b.ptr<const Z>() + i * sb, ldb, &zero, o, ni);
    } else {
      using C = std::complex<float>;
      const C one(1), zero(0);
      C* o = out.ptr<C>() + i * so;
      if (k == 0) {
        std::fill(o, o + so, zero);
        continue;
      }
      cblas_cgemm(CblasRowMajor, BlasOp(op_a), BlasOp(op_b), mi, ni, ki, &one,
                  a.ptr<const C>() + i * sa, lda, b.ptr<const C>() + i * sb, ldb, &zero, o, ni);
    }
  }
  return Status();
}

// n x n complex matrices (row-major) of a complex64 / complex128 tensor, read / written as Z.
struct Mats {
  const TensorView& t;
  int64_t n;
  Z get(int64_t b, int64_t i, int64_t j) const {
    const int64_t k = b * n * n + i * n + j;
    if (t.dtype == DType::kC64) return Z(t.ptr<std::complex<float>>()[k]);
    return t.ptr<Z>()[k];
  }
  void set(int64_t b, int64_t i, int64_t j, Z v) const {
    const int64_t k = b * n * n + i * n + j;
    if (t.dtype == DType::kC64)
      t.ptr<std::complex<float>>()[k] = std::complex<float>(v);
    else
      t.ptr<Z>()[k] = v;
  }
};

// linalg_eig: A [..., n, n] -> L [..., n], V [..., n, n] (zgeev; columns of V of norm 1 with the
// largest component real, as LAPACK and torch). Computed in double complex.
Status EigKernel(KernelContext& ctx) {
  const TensorView &a = ctx.input(0), &lo = ctx.output(0), &vo = ctx.output(1);
  const int64_t n = a.shape[a.shape.ndim() - 1];
  const int64_t batch = n == 0 ? 0 : a.numel() / (n * n);
  const int ni = static_cast<int>(n);
  std::vector<Z> m(n * n), w(n), vr(n * n), work(1);
  std::vector<double> rwork(2 * n);
  const Mats A{a, n}, Lm{lo, 1}, Vm{vo, n};
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) m[i + j * n] = A.get(b, i, j);  // column-major
    int lwork = -1, info = 0, one = 1;
    Z query;
    zgeev_("N", "V", &ni, m.data(), &ni, w.data(), nullptr, &one, vr.data(), &ni, &query, &lwork,
           rwork.data(), &info);
    lwork = static_cast<int>(query.real());
    work.resize(std::max(lwork, 1));
    zgeev_("N", "V", &ni, m.data(), &ni, w.data(), nullptr, &one, vr.data(), &ni, work.data(),
           &lwork, rwork.data(), &info);
    if (info != 0)
      return Internal("[linalg.eig] the QR algorithm failed to converge (LAPACK zgeev info=%d)",
                      info);
    for (int64_t i = 0; i < n; ++i) {
      Lm.set(0, b * n + i, 0, w[i]);  // Lm: n == 1 rows of one element, flat index b * n + i
      for (int64_t j = 0; j < n; ++j) Vm.set(b, i, j, vr[i + j * n]);
    }
  }
  return Status();
}

// linalg_eig_backward (torch's formula): gA = V^-H (G / conj(E) with diag gL) V^H, where
// G = V^H gV - V^H V diag(re(diag(V^H gV))) and E_ij = L_j - L_i. Inputs gL, gV, L, V;
// attr has_gL (else G's diagonal stays), output gA. Fails, as torch, when the loss depends on
// the eigenvectors' phases (im diag(V^H gV) != 0).
Status EigBackwardKernel(KernelContext& ctx) {
  const TensorView &gl = ctx.input(0), &gv = ctx.input(1), &l = ctx.input(2), &v = ctx.input(3);
  const TensorView& ga = ctx.output(0);
  const int64_t n = v.shape[v.shape.ndim() - 1];
  const int64_t batch = n == 0 ? 0 : v.numel() / (n * n);
  const bool has_gl = ctx.attrs().Bool("has_gL", true);
  const int ni = static_cast<int>(n);
  const Mats GL{gl, 1}, GV{gv, n}, L{l, 1}, V{v, n}, GA{ga, n};
  std::vector<Z> g(n * n), vh(n * n), rhs(n * n);
  std::vector<double> d(n);
  std::vector<int> ipiv(n);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Z vhgv = 0, vhv = 0;
        for (int64_t k = 0; k < n; ++k) {
          vhgv += std::conj(V.get(b, k, i)) * GV.get(b, k, j);
          vhv += std::conj(V.get(b, k, i)) * V.get(b, k, j);
        }
        g[i * n + j] = vhgv;
        vh[i * n + j] = vhv;  // V^H V for now
      }
    for (int64_t i = 0; i < n; ++i) {
      if (std::abs(g[i * n + i].imag()) > 1e-2 * (1 + std::abs(g[i * n + i])))
        return InvalidArgument(
            "[linalg_eig_backward] The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
            "so it is ill-defined.");
      d[i] = g[i * n + i].real();
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Z r = g[i * n + j] - vh[i * n + j] * d[j];
        if (i != j) {
          r /= std::conj(L.get(0, b * n + j, 0) - L.get(0, b * n + i, 0));
        } else if (has_gl) {
          r = GL.get(0, b * n + i, 0);
        }
        g[i * n + j] = r;
      }
    // rhs = G V^H (column-major), vh = V^H (column-major); solve V^H X = rhs
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Z s = 0;
        for (int64_t k = 0; k < n; ++k) s += g[i * n + k] * std::conj(V.get(b, j, k));
        rhs[i + j * n] = s;
        vh[i + j * n] = std::conj(V.get(b, j, i));
      }
    int info = 0;
    zgesv_(&ni, &ni, vh.data(), &ni, ipiv.data(), rhs.data(), &ni, &info);
    if (info != 0)
      return InvalidArgument(
          "[linalg_eig_backward] the eigenvector matrix is singular (LAPACK zgesv info=%d): the "
          "gradient of eig is not defined for a defective input",
          info);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) GA.set(b, i, j, rhs[i + j * n]);
  }
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(complex, kCPU, ComplexKernel);
OFL_REGISTER_KERNEL(linalg_eig, kCPU, EigKernel);
OFL_REGISTER_KERNEL(linalg_eig_backward, kCPU, EigBackwardKernel);
OFL_REGISTER_KERNEL(complex_bmm, kCPU, ComplexBmmKernel);

// out (any strides) = cast(in) where out or in is complex; in has out's shape (broadcast).
Status ComplexCastInto(const TensorView& out, const TensorView& in) {
  bool done = false;
  if (IsComplex(out.dtype)) {
    OFL_SWITCH_COMPLEX(out.dtype, { done = ConvertFrom<scalar_t>(out, in); });
  } else {
    // complex -> real
    OFL_SWITCH_ALL(out.dtype, {
      using TO = scalar_t;
      OFL_SWITCH_COMPLEX(in.dtype, {
        StridedConvert<TO, scalar_t>(out, in);
        done = true;
      });
    });
  }
  if (!done)
    return TypeError("[cast] no conversion from %s to %s on cpu", DTypeLongName(in.dtype),
                     DTypeLongName(out.dtype));
  return Status();
}

}  // namespace kernels
}  // namespace oneflow_like
