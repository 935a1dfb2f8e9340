// CPU kernels of the linear-algebra family (ops/linalg.cc) on LAPACK (the LAPACK inside Debian's
// OpenBLAS): Cholesky (potrf), inverse (getrf + getri), sign and log|det| (getrf), solve
// (getrf + getrs). Inputs are contiguous row-major batches of square matrices [..., n, n]; every
// matrix is factorised in a scratch copy. A row-major buffer read as column-major is the
// transpose, which the kernels use instead of copying where the result allows it (inv(A^T) =
// inv(A)^T, det(A^T) = det(A)). A singular or indefinite matrix is an error naming the batch
// element and the order, as PyTorch words it. Attributes: the structs of
// oneflow_like/opdefs/linalg.def.
#include <cmath>
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
}

namespace oneflow_like {
namespace kernels {
namespace {

// Overloads so each kernel is written once for float and double.
void Potrf(int n, float* a, int* info) {
  spotrf_("U", &n, a, &n, info);
}
void Potrf(int n, double* a, int* info) {
  dpotrf_("U", &n, a, &n, info);
}
void Getrf(int n, float* a, int* ipiv, int* info) {
  sgetrf_(&n, &n, a, &n, ipiv, info);
}
void Getrf(int n, double* a, int* ipiv, int* info) {
  dgetrf_(&n, &n, a, &n, ipiv, info);
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

// Work sizes by a query call (lwork = liwork = -1), then the decomposition.
template <typename T>
void Syevd(int n, T* a, T* w, std::vector<T>* work, std::vector<int>* iwork, int* info) {
  int lwork = -1, liwork = -1, iq = 0;
  T wq = 0;
  auto call = [&](T* wk, int* iwk) {
    if constexpr (std::is_same_v<T, float>) {
      ssyevd_("V", "U", &n, a, &n, w, wk, &lwork, iwk, &liwork, info);
    } else {
      dsyevd_("V", "U", &n, a, &n, w, wk, &lwork, iwk, &liwork, info);
    }
  };
  call(&wq, &iq);
  if (*info != 0) return;
  lwork = static_cast<int>(wq) + 1;
  liwork = iq + 1;
  work->resize(lwork);
  iwork->resize(liwork);
  call(work->data(), iwork->data());
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
  } else {
    dgeqrf_(&m, &n, a, &m, tau->data(), work->data(), &lwork, info);
  }
}
template <typename T>
void Orgqr(int m, int qcols, int k, T* a, const std::vector<T>& tau, std::vector<T>* work,
           int* info) {
  int lwork = static_cast<int>(work->size());
  if constexpr (std::is_same_v<T, float>) {
    sorgqr_(&m, &qcols, &k, a, &m, tau.data(), work->data(), &lwork, info);
  } else {
    dorgqr_(&m, &qcols, &k, a, &m, tau.data(), work->data(), &lwork, info);
  }
}

template <typename T>
void Gesdd(const char* jobz, int m, int n, T* a, T* s, T* u, int ldu, T* vt, int ldvt,
           std::vector<T>* work, std::vector<int>* iwork, int* info) {
  iwork->resize(std::max(1, 8 * std::min(m, n)));
  int lwork = -1;
  T wq = 0;
  auto call = [&](T* w) {
    if constexpr (std::is_same_v<T, float>) {
      sgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lwork, iwork->data(), info);
    } else {
      dgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lwork, iwork->data(), info);
    }
  };
  call(&wq);
  if (*info != 0) return;
  lwork = static_cast<int>(wq) + 1;
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
// column-major upper triangle, which read row-major is L = U^T (A = L L^T).
template <typename T>
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
    if (info > 0)
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
// to (A^T)^-1 = (A^-1)^T column-major, which read row-major is A^-1.
template <typename T>
Status Inverse(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  T* out = ctx.output(0).ptr<T>();
  std::memcpy(out, a.ptr<const T>(), sizeof(T) * b.count * n * n);
  std::vector<int> ipiv(std::max(n, 1));
  int lwork = std::max(1, n * 64);
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < b.count && n > 0; ++i) {
    T* m = out + i * n * n;
    int info = 0;
    Getrf(n, m, ipiv.data(), &info);
    if (info == 0) Getri(n, m, ipiv.data(), work.data(), lwork, &info);
    if (info < 0) return Internal("[%s] getrf/getri argument %d is invalid", ctx.op(), -info);
    if (info > 0)
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
template <typename T>
Status Slogdet(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const Batch b = BatchOf(a);
  const int n = static_cast<int>(b.rows);
  T* sign = ctx.output(0).ptr<T>();
  T* logabs = ctx.output(1).ptr<T>();
  std::vector<T> lu(static_cast<size_t>(n) * n);
  std::vector<int> ipiv(std::max(n, 1));
  for (int64_t i = 0; i < b.count; ++i) {
    std::memcpy(lu.data(), a.ptr<const T>() + i * n * n, sizeof(T) * n * n);
    int info = 0;
    if (n > 0) Getrf(n, lu.data(), ipiv.data(), &info);
    if (info < 0) return Internal("[%s] getrf argument %d is invalid", ctx.op(), -info);
    T s = T(1), l = T(0);
    for (int k = 0; k < n; ++k) {
      const T d = lu[static_cast<size_t>(k) * n + k];
      if (ipiv[k] != k + 1) s = -s;
      if (d < 0) s = -s;
      l += std::log(std::abs(d));
    }
    if (info > 0) {
      s = T(0);
      l = -std::numeric_limits<T>::infinity();
    }
    sign[i] = s;
    logabs[i] = l;
  }
  return Status();
}

// linalg_solve(A, B) -> X with A X = B, B [..., n, k] (the same batch as A). Column-major copies
// of A and B go through getrf + getrs; X is copied back row-major.
template <typename T>
Status Solve(KernelContext& ctx) {
  const TensorView& a = ctx.input(0);
  const TensorView& rhs = ctx.input(1);
  const Batch ba = BatchOf(a), bb = BatchOf(rhs);
  const int n = static_cast<int>(ba.rows), k = static_cast<int>(bb.cols);
  T* out = ctx.output(0).ptr<T>();
  std::vector<T> lu(static_cast<size_t>(n) * n), x(static_cast<size_t>(n) * k);
  std::vector<int> ipiv(std::max(n, 1));
  for (int64_t i = 0; i < ba.count && n > 0; ++i) {
    const T* am = a.ptr<const T>() + i * n * n;
    const T* bm = rhs.ptr<const T>() + i * n * k;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) lu[static_cast<size_t>(c) * n + r] = am[r * n + c];
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < k; ++c) x[static_cast<size_t>(c) * n + r] = bm[r * k + c];
    int info = 0;
    Getrf(n, lu.data(), ipiv.data(), &info);
    if (info == 0 && k > 0) Getrs(n, k, lu.data(), ipiv.data(), x.data(), &info);
    if (info < 0) return Internal("[%s] getrf/getrs argument %d is invalid", ctx.op(), -info);
    if (info > 0)
      return InvalidArgument(
          "linalg.solve: %sThe solver failed because the input matrix is singular (U[%d, %d] is "
          "zero).",
          Element(ba, i), info, info);
    T* om = out + i * n * k;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < k; ++c) om[r * k + c] = x[static_cast<size_t>(c) * n + r];
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
  T* w = ctx.output(0).ptr<T>();
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
    T* vm = v + i * n * n;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) vm[r * n + c] = m[static_cast<size_t>(c) * n + r];
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
  T* sv = ctx.output(1).ptr<T>();
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

// One entry per op: the float or double instantiation by the input's dtype.
template <Status (*F32)(KernelContext&), Status (*F64)(KernelContext&)>
Status ByDtype(KernelContext& ctx) {
  switch (ctx.input(0).dtype) {
    case DType::kF32: return F32(ctx);
    case DType::kF64: return F64(ctx);
    default: return Unsupported(ctx, ctx.input(0).dtype);
  }
}

constexpr KernelFn kCholeskyKernel = ByDtype<Cholesky<float>, Cholesky<double>>;
constexpr KernelFn kInverseKernel = ByDtype<Inverse<float>, Inverse<double>>;
constexpr KernelFn kSlogdetKernel = ByDtype<Slogdet<float>, Slogdet<double>>;
constexpr KernelFn kSolveKernel = ByDtype<Solve<float>, Solve<double>>;
constexpr KernelFn kEighKernel = ByDtype<Eigh<float>, Eigh<double>>;
constexpr KernelFn kQrKernel = ByDtype<Qr<float>, Qr<double>>;
constexpr KernelFn kSvdKernel = ByDtype<Svd<float>, Svd<double>>;

}  // namespace

OFL_REGISTER_KERNEL(linalg_cholesky, kCPU, kCholeskyKernel);
OFL_REGISTER_KERNEL(linalg_inv, kCPU, kInverseKernel);
OFL_REGISTER_KERNEL(linalg_slogdet, kCPU, kSlogdetKernel);
OFL_REGISTER_KERNEL(linalg_solve, kCPU, kSolveKernel);
OFL_REGISTER_KERNEL(linalg_eigh, kCPU, kEighKernel);
OFL_REGISTER_KERNEL(linalg_qr, kCPU, kQrKernel);
OFL_REGISTER_KERNEL(linalg_svd, kCPU, kSvdKernel);

}  // namespace kernels
}  // namespace oneflow_like
