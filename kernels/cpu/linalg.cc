// CPU kernels of the linear-algebra family (ops/linalg.cc) on LAPACK (the LAPACK inside Debian's
// OpenBLAS): Cholesky (potrf), inverse (getrf + getri), sign and log|det| (getrf), solve
// (getrf + getrs), and their _ex forms that report LAPACK's info instead of failing; LU with
// partial pivoting (getrf) and the permutation matrix of its pivots; triangular solves (trsm);
// Householder products (orgqr), QR's raw factors (geqrf) and products with their Q (ormqr);
// Bunch-Kaufman LDL^T (sytrf) and its solve (sytrs). Inputs are contiguous row-major batches of
// square matrices [..., n, n]; every matrix is factorised in a scratch copy. A row-major buffer
// read as column-major is the transpose, which the kernels use instead of copying where the result
// allows it (inv(A^T) = inv(A)^T, det(A^T) = det(A)). A singular or indefinite matrix is an error
// naming the batch element and the order, as PyTorch words it. Attributes: the structs of
// oneflow_like/opdefs/linalg.def.
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/linalg.h"

extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork,
             int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const float* alpha, const float* a, const int* lda, float* b,
            const int* ldb);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb);
void sormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const float* a, const int* lda, const float* tau, float* c, const int* ldc,
             float* work, const int* lwork, int* info);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const double* a, const int* lda, const double* tau, double* c, const int* ldc,
             double* work, const int* lwork, int* info);
void ssytrf_(const char* uplo, const int* n, float* a, const int* lda, int* ipiv, float* work,
             const int* lwork, int* info);
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work,
             const int* lwork, int* info);
void ssytrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
// The complex routines (complex64 / complex128 inputs of cholesky, inv, slogdet, solve, eigh, qr
// and svd): std::complex<T> is layout-compatible with Fortran's COMPLEX / COMPLEX*16.
using c64_t = std::complex<float>;
using c128_t = std::complex<double>;
void cpotrf_(const char* uplo, const int* n, c64_t* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, c128_t* a, const int* lda, int* info);
void cgetrf_(const int* m, const int* n, c64_t* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, c128_t* a, const int* lda, int* ipiv, int* info);
void cgetri_(const int* n, c64_t* a, const int* lda, const int* ipiv, c64_t* work, const int* lwork,
             int* info);
void zgetri_(const int* n, c128_t* a, const int* lda, const int* ipiv, c128_t* work,
             const int* lwork, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const c64_t* a, const int* lda,
             const int* ipiv, c64_t* b, const int* ldb, int* info);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const c128_t* a, const int* lda,
             const int* ipiv, c128_t* b, const int* ldb, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, c64_t* a, const int* lda, float* w,
             c64_t* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info);
void zheevd_(const char* jobz, const char* uplo, const int* n, c128_t* a, const int* lda, double* w,
             c128_t* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info);
void cgeqrf_(const int* m, const int* n, c64_t* a, const int* lda, c64_t* tau, c64_t* work,
             const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, c128_t* a, const int* lda, c128_t* tau, c128_t* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, c64_t* a, const int* lda, const c64_t* tau,
             c64_t* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, c128_t* a, const int* lda, const c128_t* tau,
             c128_t* work, const int* lwork, int* info);
void cgesdd_(const char* jobz, const int* m, const int* n, c64_t* a, const int* lda, float* s,
             c64_t* u, const int* ldu, c64_t* vt, const int* ldvt, c64_t* work, const int* lwork,
             float* rwork, int* iwork, int* info);
void zgesdd_(const char* jobz, const int* m, const int* n, c128_t* a, const int* lda, double* s,
             c128_t* u, const int* ldu, c128_t* vt, const int* ldvt, c128_t* work, const int* lwork,
             double* rwork, int* iwork, int* info);
}

namespace oneflow_like {
namespace kernels {
namespace {

// The real type of T (T itself, or a complex type's parts): eigenvalues, singular values and
// log|det| are real for complex inputs too.
template <typename T>
struct RealOf {
  using type = T;
};
template <typename T>
struct RealOf<std::complex<T>> {
  using type = T;
};
template <typename T>
using Real = typename RealOf<T>::type;
template <typename T>
constexpr bool kIsComplex = !std::is_same_v<T, Real<T>>;

// Overloads so each kernel is written once for float, double and their complex types.
void Potrf(int n, float* a, int* info) {
  spotrf_("U", &n, a, &n, info);
}
void Potrf(int n, double* a, int* info) {
  dpotrf_("U", &n, a, &n, info);
}
void Potrf(int n, c64_t* a, int* info) {
  cpotrf_("U", &n, a, &n, info);
}
void Potrf(int n, c128_t* a, int* info) {
  zpotrf_("U", &n, a, &n, info);
}
void Getrf(int m, int n, c64_t* a, int* ipiv, int* info) {
  cgetrf_(&m, &n, a, &m, ipiv, info);
}
void Getrf(int m, int n, c128_t* a, int* ipiv, int* info) {
  zgetrf_(&m, &n, a, &m, ipiv, info);
}
void Getri(int n, c64_t* a, const int* ipiv, c64_t* work, int lwork, int* info) {
  cgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
void Getri(int n, c128_t* a, const int* ipiv, c128_t* work, int lwork, int* info) {
  zgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
void Getrs(int n, int nrhs, const c64_t* a, const int* ipiv, c64_t* b, int* info) {
  cgetrs_("N", &n, &nrhs, a, &n, ipiv, b, &n, info);
}
void Getrs(int n, int nrhs, const c128_t* a, const int* ipiv, c128_t* b, int* info) {
  zgetrs_("N", &n, &nrhs, a, &n, ipiv, b, &n, info);
}
void Getrf(int m, int n, float* a, int* ipiv, int* info) {
  sgetrf_(&m, &n, a, &m, ipiv, info);
}
void Getrf(int m, int n, double* a, int* ipiv, int* info) {
  dgetrf_(&m, &n, a, &m, ipiv, info);
}
template <typename T>
void Getrf(int n, T* a, int* ipiv, int* info) {
  Getrf(n, n, a, ipiv, info);
}
void Getri(int n, float* a, const int* ipiv, float* work, int lwork, int* info) {
  sgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
void Getri(int n, double* a, const int* ipiv, double* work, int lwork, int* info) {
  dgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
void Getrs(int n, int nrhs, const float* a, const int* ipiv, float* b, int* info) {
  sgetrs_("N", &n, &nrhs, a, &n, ipiv, b, &n, info);
}
void Getrs(int n, int nrhs, const double* a, const int* ipiv, double* b, int* info) {
  dgetrs_("N", &n, &nrhs, a, &n, ipiv, b, &n, info);
}

// Row-major [rows, cols] <-> column-major copies (LAPACK's layout).
template <typename T>
void ToColMajor(const T* src, int rows, int cols, T* dst) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[static_cast<size_t>(c) * rows + r] = src[r * cols + c];
}
template <typename T>
void FromColMajor(const T* src, int rows, int cols, T* dst) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[r * cols + c] = src[static_cast<size_t>(c) * rows + r];
}

// Work sizes by a query call (lwork = liwork = -1), then the decomposition (heevd for complex
// T, whose real workspace is sized by the same query).
template <typename T>
void Syevd(int n, T* a, Real<T>* w, std::vector<T>* work, std::vector<int>* iwork, int* info) {
  int lwork = -1, liwork = -1, lrwork = -1, iq = 0;
  T wq = 0;
  Real<T> rq = 0;
  std::vector<Real<T>> rwork;
  auto call = [&](T* wk, int* iwk, Real<T>* rwk) {
    if constexpr (std::is_same_v<T, float>) {
      ssyevd_("V", "U", &n, a, &n, w, wk, &lwork, iwk, &liwork, info);
    } else if constexpr (std::is_same_v<T, double>) {
      dsyevd_("V", "U", &n, a, &n, w, wk, &lwork, iwk, &liwork, info);
    } else if constexpr (std::is_same_v<T, c64_t>) {
      cheevd_("V", "U", &n, a, &n, w, wk, &lwork, rwk, &lrwork, iwk, &liwork, info);
    } else {
      zheevd_("V", "U", &n, a, &n, w, wk, &lwork, rwk, &lrwork, iwk, &liwork, info);
    }
  };
  call(&wq, &iq, &rq);
  if (*info != 0) return;
  lwork = static_cast<int>(std::real(wq)) + 1;
  liwork = iq + 1;
  lrwork = static_cast<int>(rq) + 1;
  work->resize(lwork);
  iwork->resize(liwork);
  rwork.resize(lrwork);
  call(work->data(), iwork->data(), rwork.data());
}

// Householder QR of the column-major m x n matrix in `a` (leading dimension m): R in its upper
// triangle, the reflectors below it and in `tau`. `work` is sized for the Orgqr that forms the
// first `qcols` columns of Q afterwards (a must then hold m x max(n, qcols)).
template <typename T>
void Geqrf(int m, int n, int qcols, T* a, std::vector<T>* tau, std::vector<T>* work, int* info) {
  const int k = std::min(m, n);
  tau->resize(std::max(k, 1));
  int lwork = std::max(1, std::max(n, qcols) * 64);
  work->resize(lwork);
  if constexpr (std::is_same_v<T, float>) {
    sgeqrf_(&m, &n, a, &m, tau->data(), work->data(), &lwork, info);
  } else if constexpr (std::is_same_v<T, double>) {
    dgeqrf_(&m, &n, a, &m, tau->data(), work->data(), &lwork, info);
  } else if constexpr (std::is_same_v<T, c64_t>) {
    cgeqrf_(&m, &n, a, &m, tau->data(), work->data(), &lwork, info);
  } else {
    zgeqrf_(&m, &n, a, &m, tau->data(), work->data(), &lwork, info);
  }
}
template <typename T>
void Orgqr(int m, int qcols, int k, T* a, const std::vector<T>& tau, std::vector<T>* work,
           int* info) {
  int lwork = static_cast<int>(work->size());
  if constexpr (std::is_same_v<T, float>) {
    sorgqr_(&m, &qcols, &k, a, &m, tau.data(), work->data(), &lwork, info);
  } else if constexpr (std::is_same_v<T, double>) {
    dorgqr_(&m, &qcols, &k, a, &m, tau.data(), work->data(), &lwork, info);
  } else if constexpr (std::is_same_v<T, c64_t>) {
    cungqr_(&m, &qcols, &k, a, &m, tau.data(), work->data(), &lwork, info);
  } else {
    zungqr_(&m, &qcols, &k, a, &m, tau.data(), work->data(), &lwork, info);
  }
}

// gesdd; complex T also takes a real workspace of LAPACK's documented size for jobz 'A' / 'S'.
template <typename T>
void Gesdd(const char* jobz, int m, int n, T* a, Real<T>* s, T* u, int ldu, T* vt, int ldvt,
           std::vector<T>* work, std::vector<int>* iwork, int* info) {
  const int64_t mn = std::min(m, n), mx = std::max(m, n);
  iwork->resize(std::max<int64_t>(1, 8 * mn));
  std::vector<Real<T>> rwork;
  if constexpr (kIsComplex<T>)
    rwork.resize(
        std::max<int64_t>(1, std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn)));
  int lwork = -1;
  T wq = 0;
  auto call = [&](T* w) {
    if constexpr (std::is_same_v<T, float>) {
      sgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lwork, iwork->data(), info);
    } else if constexpr (std::is_same_v<T, double>) {
      dgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lwork, iwork->data(), info);
    } else if constexpr (std::is_same_v<T, c64_t>) {
      cgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lwork, rwork.data(), iwork->data(),
              info);
    } else {
      zgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lwork, rwork.data(), iwork->data(),
              info);
    }
  };
  call(&wq);
  if (*info != 0) return;
  lwork = static_cast<int>(std::real(wq)) + 1;
  work->resize(lwork);
  call(work->data());
}

// Matrices of a [..., rows, cols] view: how many and their sizes.
struct Batch {
  int64_t count = 1, rows = 0, cols = 0;
};
Batch BatchOf(const TensorView& v) {
  Batch b;
  const int64_t nd = v.shape.ndim();
  b.rows = v.shape[nd - 2];
  b.cols = v.shape[nd - 1];
  for (int64_t i = 0; i < nd - 2; ++i) b.count *= v.shape[i];
  return b;
}

std::string Element(const Batch& b, int64_t i) {
  return b.count > 1 ? absl::StrCat("(Batch element ", i, "): ") : std::string();
}

Status Unsupported(const KernelContext& ctx, DType dt) {
  return InvalidArgument("[%s] expects float32 or float64 matrices, got %s", ctx.op(),
                         DTypeName(dt));
}

// linalg_cholesky(A) -> L, lower, from A's lower triangle. The buffer read as column-major is
// A^T, whose upper triangle is A's lower one: potrf('U') factors it as U^T U with U in the
// column-major upper triangle, which read row-major is L = U^T (A = L L^T). kEx
// (linalg_cholesky_ex): output 1 takes each matrix's info instead of failing.
template <typename T, bool kEx>
Status Cholesky(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  T* out = ctx.output(0).ptr<T>();
  std::memcpy(out, a.ptr<const T>(), sizeof(T) * b.count * n * n);
  for (int64_t i = 0; i < b.count; ++i) {
    T* m = out + i * n * n;
    int info = 0;
    if (n > 0) Potrf(n, m, &info);
    if (info < 0) return Internal("[%s] potrf argument %d is invalid", ctx.op(), -info);
    if (kEx) ctx.output(1).ptr<int32_t>()[i] = info;
    if (info > 0 && !kEx)
      return InvalidArgument(
          "linalg.cholesky: %sThe factorization could not be completed because the input is not "
          "positive-definite (the leading minor of order %d is not positive-definite).",
          Element(b, i), info);
    for (int r = 0; r < n; ++r)
      for (int c = r + 1; c < n; ++c) m[r * n + c] = T(0);
  }
  return Status();
}

// linalg_inv(A) -> A^-1. The buffer read as column-major is A^T; getrf + getri invert it in place
// to (A^T)^-1 = (A^-1)^T column-major, which read row-major is A^-1. kEx (linalg_inv_ex): output
// 1 takes getrf's info instead of failing.
template <typename T, bool kEx>
Status Inverse(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  T* out = ctx.output(0).ptr<T>();
  std::memcpy(out, a.ptr<const T>(), sizeof(T) * b.count * n * n);
  std::vector<int> ipiv(std::max(n, 1));
  int lwork = std::max(1, n * 64);
  std::vector<T> work(lwork);
  if (kEx && n == 0)
    std::fill(ctx.output(1).ptr<int32_t>(), ctx.output(1).ptr<int32_t>() + b.count, 0);
  for (int64_t i = 0; i < b.count && n > 0; ++i) {
    T* m = out + i * n * n;
    int info = 0;
    Getrf(n, m, ipiv.data(), &info);
    if (info == 0) Getri(n, m, ipiv.data(), work.data(), lwork, &info);
    if (info < 0) return Internal("[%s] getrf/getri argument %d is invalid", ctx.op(), -info);
    if (kEx) ctx.output(1).ptr<int32_t>()[i] = info;
    if (info > 0 && !kEx)
      return InvalidArgument(
          "linalg.inv: %sThe diagonal element %d is zero, the inversion could not be completed "
          "because the input matrix is singular.",
          Element(b, i), info);
  }
  return Status();
}

// linalg_slogdet(A) -> (sign, log|det A|) per matrix, from the LU factors of A^T (same
// determinant): the product of U's diagonal and one sign flip per row interchange. A singular
// matrix gives sign 0 and -inf, as PyTorch.
// Complex A: sign is the product of d / |d| over U's diagonal (and the interchanges), log|det|
// real.
template <typename T>
Status Slogdet(KernelContext& ctx) {
  using R = Real<T>;
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  T* sign = ctx.output(0).ptr<T>();
  R* logabs = ctx.output(1).ptr<R>();
  std::vector<T> lu(static_cast<size_t>(n) * n);
  std::vector<int> ipiv(std::max(n, 1));
  for (int64_t i = 0; i < b.count; ++i) {
    std::memcpy(lu.data(), a.ptr<const T>() + i * n * n, sizeof(T) * n * n);
    int info = 0;
    if (n > 0) Getrf(n, lu.data(), ipiv.data(), &info);
    if (info < 0) return Internal("[%s] getrf argument %d is invalid", ctx.op(), -info);
    T s = T(1);
    R l = R(0);
    for (int k = 0; k < n; ++k) {
      const T d = lu[static_cast<size_t>(k) * n + k];
      if (ipiv[k] != k + 1) s = -s;
      if constexpr (kIsComplex<T>) {
        if (d != T(0)) s *= d / std::abs(d);
      } else if (d < 0) {
        s = -s;
      }
      l += std::log(std::abs(d));
    }
    if (info > 0) {
      s = T(0);
      l = -std::numeric_limits<R>::infinity();
    }
    sign[i] = s;
    logabs[i] = l;
  }
  return Status();
}

// linalg_solve(A, B) -> X with A X = B, B [..., n, k] (the same batch as A). Column-major copies
// of A and B go through getrf + getrs; X is copied back row-major. kEx (linalg_solve_ex): output
// 1 takes getrf's info instead of failing.
template <typename T, bool kEx>
Status Solve(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const TensorView& rhs = ctx.input(1);
  const Batch ba = BatchOf(a), bb = BatchOf(rhs);
  const int n = static_cast<int>(ba.rows), k = static_cast<int>(bb.cols);
  T* out = ctx.output(0).ptr<T>();
  std::vector<T> lu(static_cast<size_t>(n) * n), x(static_cast<size_t>(n) * k);
  std::vector<int> ipiv(std::max(n, 1));
  if (kEx && n == 0)
    std::fill(ctx.output(1).ptr<int32_t>(), ctx.output(1).ptr<int32_t>() + ba.count, 0);
  for (int64_t i = 0; i < ba.count && n > 0; ++i) {
    ToColMajor(a.ptr<const T>() + i * n * n, n, n, lu.data());
    ToColMajor(rhs.ptr<const T>() + i * n * k, n, k, x.data());
    int info = 0;
    Getrf(n, lu.data(), ipiv.data(), &info);
    if (info == 0 && k > 0) Getrs(n, k, lu.data(), ipiv.data(), x.data(), &info);
    if (info < 0) return Internal("[%s] getrf/getrs argument %d is invalid", ctx.op(), -info);
    if (kEx) ctx.output(1).ptr<int32_t>()[i] = info;
    if (info > 0 && !kEx)
      return InvalidArgument(
          "linalg.solve: %sThe solver failed because the input matrix is singular (U[%d, %d] is "
          "zero).",
          Element(ba, i), info, info);
    FromColMajor(x.data(), n, k, out + i * n * k);
  }
  return Status();
}

// linalg_eigh(A) -> (eigenvalues ascending [..., n], eigenvectors as columns [..., n, n]) from A's
// lower triangle: the buffer read as column-major is A^T, whose upper triangle (syevd 'U') is A's
// lower one; syevd leaves the eigenvectors as column-major columns, transposed on the way out.
template <typename T>
Status Eigh(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  Real<T>* w = ctx.output(0).ptr<Real<T>>();
  T* v = ctx.output(1).ptr<T>();
  std::vector<T> m(static_cast<size_t>(n) * n), work;
  std::vector<int> iwork;
  for (int64_t i = 0; i < b.count && n > 0; ++i) {
    std::memcpy(m.data(), a.ptr<const T>() + i * n * n, sizeof(T) * n * n);
    int info = 0;
    Syevd(n, m.data(), w + i * n, &work, &iwork, &info);
    if (info < 0) return Internal("[%s] syevd argument %d is invalid", ctx.op(), -info);
    if (info > 0)
      return InvalidArgument(
          "linalg.eigh: %sThe algorithm failed to converge because the input matrix is "
          "ill-conditioned or has too many repeated eigenvalues (error code: %d).",
          Element(b, i), info);
    // complex: heevd factored A^T = conj(A), whose eigenvectors are the conjugates of A's
    T* vm = v + i * n * n;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        const T e = m[static_cast<size_t>(c) * n + r];
        if constexpr (kIsComplex<T>) {
          vm[r * n + c] = std::conj(e);
        } else {
          vm[r * n + c] = e;
        }
      }
  }
  return Status();
}

// linalg_qr(A; complete) -> (Q, R): reduced Q [m, k], R [k, n] (k = min(m, n)); complete Q
// [m, m], R [m, n]. A column-major copy goes through geqrf (R is its upper triangle) and orgqr.
template <typename T>
Status Qr(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols), k = std::min(m, n);
  const bool complete = opdefs::ReadAttrs<opdefs::LinalgQrAttrs>(ctx.attrs()).complete;
  const int qcols = complete ? m : k, rrows = complete ? m : k;
  T* q = ctx.output(0).ptr<T>();
  T* r = ctx.output(1).ptr<T>();
  std::vector<T> buf(static_cast<size_t>(m) * std::max(n, qcols)), tau, work;
  for (int64_t i = 0; i < b.count; ++i) {
    const T* am = a.ptr<const T>() + i * m * n;
    T* qm = q + i * m * qcols;
    T* rm = r + i * rrows * n;
    std::fill(rm, rm + static_cast<size_t>(rrows) * n, T(0));
    if (m == 0 || n == 0) {  // Q is the identity's first columns, R empty or zero
      std::fill(qm, qm + static_cast<size_t>(m) * qcols, T(0));
      for (int d = 0; d < std::min(m, qcols); ++d) qm[d * qcols + d] = T(1);
      continue;
    }
    for (int row = 0; row < m; ++row)
      for (int col = 0; col < n; ++col) buf[static_cast<size_t>(col) * m + row] = am[row * n + col];
    int info = 0;
    Geqrf(m, n, qcols, buf.data(), &tau, &work, &info);
    if (info != 0) return Internal("[%s] geqrf failed with info %d", ctx.op(), info);
    for (int row = 0; row < k; ++row)
      for (int col = row; col < n; ++col)
        rm[row * n + col] = buf[static_cast<size_t>(col) * m + row];
    Orgqr(m, qcols, k, buf.data(), tau, &work, &info);
    if (info != 0) return Internal("[%s] orgqr failed with info %d", ctx.op(), info);
    for (int row = 0; row < m; ++row)
      for (int col = 0; col < qcols; ++col)
        qm[row * qcols + col] = buf[static_cast<size_t>(col) * m + row];
  }
  return Status();
}

// linalg_svd(A; full_matrices) -> (U, S, Vh), S descending. The buffer read as column-major is
// A^T = V S U^T, so gesdd on it (n x m) returns V as its "U" and U^T as its "VT", which read
// row-major are exactly Vh and U: they are written straight into the outputs.
template <typename T>
Status Svd(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols), k = std::min(m, n);
  const bool full = opdefs::ReadAttrs<opdefs::LinalgSvdAttrs>(ctx.attrs()).full_matrices;
  const int ucols = full ? m : k, vrows = full ? n : k;
  T* u = ctx.output(0).ptr<T>();
  Real<T>* sv = ctx.output(1).ptr<Real<T>>();
  T* vh = ctx.output(2).ptr<T>();
  std::vector<T> buf(static_cast<size_t>(m) * n), work;
  std::vector<int> iwork;
  for (int64_t i = 0; i < b.count; ++i) {
    T* um = u + i * m * ucols;
    T* vm = vh + i * vrows * n;
    if (k == 0) {  // no singular values: identity (full) or empty factors
      std::fill(um, um + static_cast<size_t>(m) * ucols, T(0));
      std::fill(vm, vm + static_cast<size_t>(vrows) * n, T(0));
      for (int d = 0; d < std::min(m, ucols); ++d) um[d * ucols + d] = T(1);
      for (int d = 0; d < std::min(vrows, n); ++d) vm[d * n + d] = T(1);
      continue;
    }
    std::memcpy(buf.data(), a.ptr<const T>() + i * m * n, sizeof(T) * m * n);
    int info = 0;
    Gesdd(full ? "A" : "S", n, m, buf.data(), sv + i * k, vm, n, um, ucols, &work, &iwork, &info);
    if (info < 0) return Internal("[%s] gesdd argument %d is invalid", ctx.op(), -info);
    if (info > 0)
      return InvalidArgument(
          "linalg.svd: %sThe algorithm failed to converge because the input matrix is "
          "ill-conditioned or has too many repeated singular values (error code: %d).",
          Element(b, i), info);
  }
  return Status();
}

// linalg_lu_factor_ex(A) -> (LU, pivots, info): P A = L U with partial pivoting (getrf on a
// column-major copy), A [..., m, n]; LU holds L's strict lower part (unit diagonal) and U, pivots
// [..., k] LAPACK's 1-based row interchanges (int32), info [...] the first zero U[i, i] (1-based)
// or 0. A singular matrix is factorised all the same, as PyTorch's.
template <typename T>
Status LuFactor(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols), k = std::min(m, n);
  T* lu = ctx.output(0).ptr<T>();
  int32_t* piv = ctx.output(1).ptr<int32_t>();
  int32_t* info_out = ctx.output(2).ptr<int32_t>();
  std::vector<T> buf(static_cast<size_t>(m) * n);
  std::vector<int> ipiv(std::max(k, 1));
  for (int64_t i = 0; i < b.count; ++i) {
    int info = 0;
    if (k > 0) {
      ToColMajor(a.ptr<const T>() + i * m * n, m, n, buf.data());
      Getrf(m, n, buf.data(), ipiv.data(), &info);
      if (info < 0) return Internal("[%s] getrf argument %d is invalid", ctx.op(), -info);
      FromColMajor(buf.data(), m, n, lu + i * m * n);
    }
    for (int d = 0; d < k; ++d) piv[i * k + d] = ipiv[d];
    info_out[i] = info;
  }
  return Status();
}

// linalg_lu_permutation(LU [..., m, n], pivots [..., k]) -> P [..., m, m] with A = P L U: the
// row interchanges applied in order to the identity's row order give perm (row r of L U is row
// perm[r] of A), so P[perm[r], r] = 1. A pivot outside [1, m] is an error naming it.
template <typename T>
Status LuPermutation(KernelContext& ctx) {
  const Batch b = BatchOf(ctx.input(0));
  const TensorView& pv = ctx.input(1);
  const int m = static_cast<int>(b.rows);
  const int64_t k = pv.shape[pv.shape.ndim() - 1];
  const int32_t* piv = pv.ptr<const int32_t>();
  T* p = ctx.output(0).ptr<T>();
  std::vector<int> perm(m);
  for (int64_t i = 0; i < b.count; ++i) {
    for (int r = 0; r < m; ++r) perm[r] = r;
    for (int64_t d = 0; d < k; ++d) {
      const int32_t to = piv[i * k + d];
      if (to < 1 || to > m)
        return InvalidArgument("lu_unpack: %spivot %d is %d, outside [1, %d]", Element(b, i), d, to,
                               m);
      std::swap(perm[d], perm[to - 1]);
    }
    T* pm = p + i * m * m;
    std::fill(pm, pm + static_cast<size_t>(m) * m, T(0));
    for (int r = 0; r < m; ++r) pm[perm[r] * m + r] = T(1);
  }
  return Status();
}

// linalg_solve_triangular(A [..., n, n], B [..., n, k]; upper, unitriangular) -> X with A X = B
// (the same batch), reading A's upper or lower triangle. The row-major buffers read column-major
// are A^T and B^T: trsm solves X^T A^T = B^T (side R) in place in the output, A^T's triangle
// being the other one. A zero diagonal gives inf/nan, as PyTorch's (no error).
template <typename T>
Status SolveTriangular(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const TensorView& rhs = ctx.input(1);
  const Batch ba = BatchOf(a), bb = BatchOf(rhs);
  const int n = static_cast<int>(ba.rows), k = static_cast<int>(bb.cols);
  const auto attrs = opdefs::ReadAttrs<opdefs::LinalgTriangularAttrs>(ctx.attrs());
  T* out = ctx.output(0).ptr<T>();
  std::memcpy(out, rhs.ptr<const T>(), sizeof(T) * ba.count * n * k);
  const char* uplo = attrs.upper ? "L" : "U";
  const char* diag = attrs.unitriangular ? "U" : "N";
  const T one = T(1);
  const int ldb = std::max(k, 1), lda = std::max(n, 1);
  for (int64_t i = 0; i < ba.count && n > 0 && k > 0; ++i) {
    const T* am = a.ptr<const T>() + i * n * n;
    T* xm = out + i * n * k;
    if constexpr (std::is_same_v<T, float>) {
      strsm_("R", uplo, "N", diag, &k, &n, &one, am, &lda, xm, &ldb);
    } else {
      dtrsm_("R", uplo, "N", diag, &k, &n, &one, am, &lda, xm, &ldb);
    }
  }
  return Status();
}

// Orgqr's work size (a generous block size; orgqr needs at least n).
template <typename T>
std::vector<T> OrgqrWork(int n) {
  return std::vector<T>(std::max(1, n * 64));
}

// linalg_householder_product(A [..., m, n], tau [..., k]) -> the first n columns of
// H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i = (0 .. 0, 1, A[i+1:, i]) (orgqr on a column-major
// copy). The functional entry checks m >= n >= k.
template <typename T>
Status HouseholderProduct(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const TensorView& tv = ctx.input(1);
  const Batch b = BatchOf(a);
  const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols);
  const int k = static_cast<int>(tv.shape[tv.shape.ndim() - 1]);
  T* out = ctx.output(0).ptr<T>();
  std::vector<T> buf(static_cast<size_t>(m) * n), tau(std::max(k, 1));
  std::vector<T> work = OrgqrWork<T>(n);
  for (int64_t i = 0; i < b.count && m > 0 && n > 0; ++i) {
    ToColMajor(a.ptr<const T>() + i * m * n, m, n, buf.data());
    std::copy(tv.ptr<const T>() + i * k, tv.ptr<const T>() + (i + 1) * k, tau.begin());
    int info = 0;
    Orgqr(m, n, k, buf.data(), tau, &work, &info);
    if (info != 0) return Internal("[%s] orgqr failed with info %d", ctx.op(), info);
    FromColMajor(buf.data(), m, n, out + i * m * n);
  }
  return Status();
}

// linalg_geqrf(A [..., m, n]) -> (a, tau): LAPACK's geqrf result, R in a's upper triangle, the
// Householder vectors below it, tau [..., min(m, n)] (torch.geqrf).
template <typename T>
Status GeqrfRaw(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols), k = std::min(m, n);
  T* out = ctx.output(0).ptr<T>();
  T* tau_out = ctx.output(1).ptr<T>();
  std::vector<T> buf(static_cast<size_t>(m) * n), tau, work;
  for (int64_t i = 0; i < b.count && k > 0; ++i) {
    ToColMajor(a.ptr<const T>() + i * m * n, m, n, buf.data());
    int info = 0;
    Geqrf(m, n, n, buf.data(), &tau, &work, &info);
    if (info != 0) return Internal("[%s] geqrf failed with info %d", ctx.op(), info);
    FromColMajor(buf.data(), m, n, out + i * m * n);
    std::copy(tau.begin(), tau.begin() + k, tau_out + i * k);
  }
  return Status();
}

// linalg_ormqr(input [..., r, c], tau [..., t], C [..., m, n]; left, transpose) -> op(Q) C (left)
// or C op(Q), Q = H_1 ... H_t from input's Householder vectors (r = m if left, else n), op(Q) =
// Q^T if transpose (ormqr on column-major copies).
template <typename T>
Status Ormqr(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const TensorView& tv = ctx.input(1);
  const TensorView& c = ctx.input(2);
  const Batch ba = BatchOf(a), bc = BatchOf(c);
  const int r = static_cast<int>(ba.rows), cols = static_cast<int>(ba.cols);
  const int m = static_cast<int>(bc.rows), n = static_cast<int>(bc.cols);
  const int t = static_cast<int>(tv.shape[tv.shape.ndim() - 1]);
  const auto attrs = opdefs::ReadAttrs<opdefs::LinalgOrmqrAttrs>(ctx.attrs());
  const char* side = attrs.left ? "L" : "R";
  const char* trans = attrs.transpose ? "T" : "N";
  T* out = ctx.output(0).ptr<T>();
  std::vector<T> abuf(static_cast<size_t>(r) * cols), cbuf(static_cast<size_t>(m) * n);
  const int lda = std::max(r, 1), ldc = std::max(m, 1);
  for (int64_t i = 0; i < bc.count; ++i) {
    const T* cm = c.ptr<const T>() + i * m * n;
    T* om = out + i * m * n;
    if (t == 0 || m == 0 || n == 0) {
      std::copy(cm, cm + static_cast<size_t>(m) * n, om);
      continue;
    }
    ToColMajor(a.ptr<const T>() + i * r * cols, r, cols, abuf.data());
    ToColMajor(cm, m, n, cbuf.data());
    const T* tau = tv.ptr<const T>() + i * t;
    int info = 0, lwork = -1;
    T wq = 0;
    std::vector<T> work;
    auto call = [&](T* w) {
      if constexpr (std::is_same_v<T, float>) {
        sormqr_(side, trans, &m, &n, &t, abuf.data(), &lda, tau, cbuf.data(), &ldc, w, &lwork,
                &info);
      } else {
        dormqr_(side, trans, &m, &n, &t, abuf.data(), &lda, tau, cbuf.data(), &ldc, w, &lwork,
                &info);
      }
    };
    call(&wq);
    lwork = std::max(1, static_cast<int>(wq));
    work.resize(lwork);
    if (info == 0) call(work.data());
    if (info != 0) return Internal("[%s] ormqr failed with info %d", ctx.op(), info);
    FromColMajor(cbuf.data(), m, n, om);
  }
  return Status();
}

// linalg_ldl_factor_ex(A [..., n, n]) -> (LD, pivots, info): Bunch-Kaufman A = L D L^T from A's
// lower triangle (sytrf 'L' on a column-major copy), LD's lower triangle and pivots as LAPACK
// leaves them and its strict upper triangle zero (as PyTorch's: negative pivots mark 2x2 blocks),
// info > 0 where D is singular.
template <typename T>
Status LdlFactor(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  T* ld = ctx.output(0).ptr<T>();
  int32_t* piv = ctx.output(1).ptr<int32_t>();
  int32_t* info_out = ctx.output(2).ptr<int32_t>();
  std::vector<T> buf(static_cast<size_t>(n) * n), work;
  std::vector<int> ipiv(std::max(n, 1));
  for (int64_t i = 0; i < b.count; ++i) {
    int info = 0;
    if (n > 0) {
      ToColMajor(a.ptr<const T>() + i * n * n, n, n, buf.data());
      int lwork = -1;
      T wq = 0;
      auto call = [&](T* w) {
        if constexpr (std::is_same_v<T, float>) {
          ssytrf_("L", &n, buf.data(), &n, ipiv.data(), w, &lwork, &info);
        } else {
          dsytrf_("L", &n, buf.data(), &n, ipiv.data(), w, &lwork, &info);
        }
      };
      call(&wq);
      lwork = std::max(1, static_cast<int>(wq));
      work.resize(lwork);
      if (info == 0) call(work.data());
      if (info < 0) return Internal("[%s] sytrf argument %d is invalid", ctx.op(), -info);
      T* lm = ld + i * n * n;
      FromColMajor(buf.data(), n, n, lm);
      for (int r = 0; r < n; ++r)  // sytrf leaves the upper triangle as it was; torch zeroes it
        for (int c = r + 1; c < n; ++c) lm[r * n + c] = T(0);
      for (int d = 0; d < n; ++d) piv[i * n + d] = ipiv[d];
    }
    info_out[i] = info;
  }
  return Status();
}

// linalg_ldl_solve(LD [..., n, n], pivots [..., n], B [..., n, k]) -> X with A X = B for the
// A = L D L^T that ldl_factor left in LD (sytrs 'L' on column-major copies).
template <typename T>
Status LdlSolve(KernelContext& ctx) {
  const TensorView& ldv = ctx.input(0);
  const TensorView& pv = ctx.input(1);
  const TensorView& rhs = ctx.input(2);
  const Batch b = BatchOf(ldv), bb = BatchOf(rhs);
  const int n = static_cast<int>(b.rows), k = static_cast<int>(bb.cols);
  T* out = ctx.output(0).ptr<T>();
  std::vector<T> lbuf(static_cast<size_t>(n) * n), x(static_cast<size_t>(n) * k);
  std::vector<int> ipiv(std::max(n, 1));
  for (int64_t i = 0; i < b.count && n > 0 && k > 0; ++i) {
    ToColMajor(ldv.ptr<const T>() + i * n * n, n, n, lbuf.data());
    ToColMajor(rhs.ptr<const T>() + i * n * k, n, k, x.data());
    const int32_t* pm = pv.ptr<const int32_t>() + i * n;
    for (int d = 0; d < n; ++d) {
      if (pm[d] == 0 || pm[d] > n || pm[d] < -n)
        return InvalidArgument("linalg.ldl_solve: %spivot %d is %d, outside [-%d, %d] or zero",
                               Element(b, i), d, pm[d], n, n);
      ipiv[d] = pm[d];
    }
    int info = 0;
    if constexpr (std::is_same_v<T, float>) {
      ssytrs_("L", &n, &k, lbuf.data(), &n, ipiv.data(), x.data(), &n, &info);
    } else {
      dsytrs_("L", &n, &k, lbuf.data(), &n, ipiv.data(), x.data(), &n, &info);
    }
    if (info != 0) return Internal("[%s] sytrs failed with info %d", ctx.op(), info);
    FromColMajor(x.data(), n, k, out + i * n * k);
  }
  return Status();
}

// One entry per op: the float or double instantiation by the input's dtype.
template <Status (*F32)(KernelContext&), Status (*F64)(KernelContext&)>
Status ByDtype(KernelContext& ctx) {
  switch (ctx.input(0).dtype) {
    case DType::kF32: return F32(ctx);
    case DType::kF64: return F64(ctx);
    default: return Unsupported(ctx, ctx.input(0).dtype);
  }
}
// The ops that also take complex64 / complex128 (the c* / z* LAPACK routines).
template <KernelFn F32, KernelFn F64, KernelFn C64, KernelFn C128>
Status ByDtypeC(KernelContext& ctx) {
  switch (ctx.input(0).dtype) {
    case DType::kC64: return C64(ctx);
    case DType::kC128: return C128(ctx);
    default: return ByDtype<F32, F64>(ctx);
  }
}
#define OFL_LINALG_C(K, ...)                                                           \
  ByDtypeC<K<float, ##__VA_ARGS__>, K<double, ##__VA_ARGS__>, K<c64_t, ##__VA_ARGS__>, \
           K<c128_t, ##__VA_ARGS__>>

constexpr KernelFn kCholeskyKernel = OFL_LINALG_C(Cholesky, false);
constexpr KernelFn kCholeskyExKernel = OFL_LINALG_C(Cholesky, true);
constexpr KernelFn kInverseKernel = OFL_LINALG_C(Inverse, false);
constexpr KernelFn kInverseExKernel = OFL_LINALG_C(Inverse, true);
constexpr KernelFn kSlogdetKernel = OFL_LINALG_C(Slogdet);
constexpr KernelFn kSolveKernel = OFL_LINALG_C(Solve, false);
constexpr KernelFn kSolveExKernel = OFL_LINALG_C(Solve, true);
constexpr KernelFn kLuFactorKernel = ByDtype<LuFactor<float>, LuFactor<double>>;
constexpr KernelFn kLuPermutationKernel = ByDtype<LuPermutation<float>, LuPermutation<double>>;
constexpr KernelFn kSolveTriangularKernel =
    ByDtype<SolveTriangular<float>, SolveTriangular<double>>;
constexpr KernelFn kHouseholderKernel =
    ByDtype<HouseholderProduct<float>, HouseholderProduct<double>>;
constexpr KernelFn kGeqrfKernel = ByDtype<GeqrfRaw<float>, GeqrfRaw<double>>;
constexpr KernelFn kOrmqrKernel = ByDtype<Ormqr<float>, Ormqr<double>>;
constexpr KernelFn kLdlFactorKernel = ByDtype<LdlFactor<float>, LdlFactor<double>>;
constexpr KernelFn kLdlSolveKernel = ByDtype<LdlSolve<float>, LdlSolve<double>>;
constexpr KernelFn kEighKernel = OFL_LINALG_C(Eigh);
constexpr KernelFn kQrKernel = OFL_LINALG_C(Qr);
constexpr KernelFn kSvdKernel = OFL_LINALG_C(Svd);

}  // namespace

OFL_REGISTER_KERNEL(linalg_cholesky, kCPU, kCholeskyKernel);
OFL_REGISTER_KERNEL(linalg_inv, kCPU, kInverseKernel);
OFL_REGISTER_KERNEL(linalg_slogdet, kCPU, kSlogdetKernel);
OFL_REGISTER_KERNEL(linalg_solve, kCPU, kSolveKernel);
OFL_REGISTER_KERNEL(linalg_eigh, kCPU, kEighKernel);
OFL_REGISTER_KERNEL(linalg_qr, kCPU, kQrKernel);
OFL_REGISTER_KERNEL(linalg_svd, kCPU, kSvdKernel);
OFL_REGISTER_KERNEL(linalg_cholesky_ex, kCPU, kCholeskyExKernel);
OFL_REGISTER_KERNEL(linalg_inv_ex, kCPU, kInverseExKernel);
OFL_REGISTER_KERNEL(linalg_solve_ex, kCPU, kSolveExKernel);
OFL_REGISTER_KERNEL(linalg_lu_factor_ex, kCPU, kLuFactorKernel);
OFL_REGISTER_KERNEL(linalg_lu_permutation, kCPU, kLuPermutationKernel);
OFL_REGISTER_KERNEL(linalg_solve_triangular, kCPU, kSolveTriangularKernel);
OFL_REGISTER_KERNEL(linalg_householder_product, kCPU, kHouseholderKernel);
OFL_REGISTER_KERNEL(linalg_geqrf, kCPU, kGeqrfKernel);
OFL_REGISTER_KERNEL(linalg_ormqr, kCPU, kOrmqrKernel);
OFL_REGISTER_KERNEL(linalg_ldl_factor_ex, kCPU, kLdlFactorKernel);
OFL_REGISTER_KERNEL(linalg_ldl_solve, kCPU, kLdlSolveKernel);

}  // namespace kernels
}  // namespace oneflow_like
