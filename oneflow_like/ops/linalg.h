// Linear algebra on LAPACK (kernels/cpu/linalg.cc), the torch.linalg names: Cholesky, inverse,
// sign and log|det| (and det, logdet from them), solve. Inputs are float32/float64 batches of
// square matrices [..., n, n]; gradients follow PyTorch's formulas (symmetrised for Cholesky).
#pragma once
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// L with A = L L^T from A's lower triangle (upper: U with A = U^T U from the upper triangle).
StatusOr<Tensor> LinalgCholesky(const Tensor& a, bool upper = false);
StatusOr<Tensor> LinalgInv(const Tensor& a);
// (sign, log|det A|); a singular matrix gives (0, -inf).
StatusOr<std::pair<Tensor, Tensor>> LinalgSlogdet(const Tensor& a);
StatusOr<Tensor> LinalgDet(const Tensor& a);
StatusOr<Tensor> Logdet(const Tensor& a);  // log(det A): NaN for a negative determinant
// X with A X = B (left) or X A = B; B is [..., n, k] or a vector [..., n]; batches broadcast.
StatusOr<Tensor> LinalgSolve(const Tensor& a, const Tensor& b, bool left = true);
// (eigenvalues ascending, eigenvectors as columns) of a symmetric matrix, from its lower
// triangle (uplo "L") or upper one ("U").
// (Q, R) with A = Q R: mode "reduced" (Q [m, k], R [k, n], k = min(m, n)), "complete" (Q [m, m]),
// or "r" (R only; Q is an empty tensor). Differentiable for m >= n in reduced mode (and complete
// mode when m == n), as PyTorch.
StatusOr<std::pair<Tensor, Tensor>> LinalgQr(const Tensor& a, const std::string& mode = "reduced");
// (U, S, Vh) with A = U diag(S) Vh, S descending; full_matrices: U [m, m], Vh [n, n], else
// [m, k], [k, n]. Differentiable in the reduced form (and for square A), as PyTorch's formula.
StatusOr<std::tuple<Tensor, Tensor, Tensor>> LinalgSvd(const Tensor& a, bool full_matrices = true);
StatusOr<std::pair<Tensor, Tensor>> LinalgEigh(const Tensor& a, const std::string& uplo = "L");
// torch's check in eigh's, eig's and svd's backward (op: "linalg_eigh_backward",
// "linalg_eig_backward", "svd_backward"): complex eigen / singular vectors are unique up to a
// phase (V -> V e^{i phi}), so a loss depending on it is ill-defined: RuntimeError unless
// Im(diag(m)) is 0 to torch's 1e-2, m = V^H gV (svd: U^H gU + V^H gV). Reads the value (a
// synchronization). A recorded (lazy) m, in flow.func.vmap's recording, records max |Im diag m|
// instead and keeps it (TakeRecordedPhaseChecks): vmap checks it after its batched replay.
Status CheckPhaseInvariant(const char* op, const Tensor& m);
// The checks recorded on this thread since the last call: (message, lazy max |Im diag m|).
std::vector<std::pair<std::string, Tensor>> TakeRecordedPhaseChecks();

// The _ex forms: (result, info int32 [batch]), info LAPACK's (0, or the order of the singular /
// non-positive-definite minor); they never fail on singular input (the Python functions raise
// linalg.LinAlgError from info when asked).
StatusOr<std::pair<Tensor, Tensor>> LinalgInvEx(const Tensor& a);
StatusOr<std::pair<Tensor, Tensor>> LinalgCholeskyEx(const Tensor& a, bool upper = false);
StatusOr<std::pair<Tensor, Tensor>> LinalgSolveEx(const Tensor& a, const Tensor& b,
                                                  bool left = true);
// (LU, pivots int32 [..., k], info) with P A = L U, partial pivoting (getrf), A [..., m, n].
// Differentiable for square A (PyTorch's formula).
StatusOr<std::tuple<Tensor, Tensor, Tensor>> LinalgLuFactorEx(const Tensor& a);
// P [..., m, m] with A = P L U, from lu_factor's LU [..., m, n] and pivots.
StatusOr<Tensor> LinalgLuPermutation(const Tensor& lu, const Tensor& pivots);
// X with A X = B (left) or X A = B, A triangular (upper or lower; unit diagonal if unitriangular),
// B [..., n, k]; batches broadcast. Differentiable in A and B.
StatusOr<Tensor> LinalgSolveTriangular(const Tensor& a, const Tensor& b, bool upper,
                                       bool left = true, bool unitriangular = false);
// The first n columns of H_1 ... H_k from Householder vectors A [..., m, n] (m >= n) and tau
// [..., k] (k <= n): torch.linalg.householder_product / torch.orgqr. Differentiable.
StatusOr<Tensor> LinalgHouseholderProduct(const Tensor& a, const Tensor& tau);
// torch.geqrf: (a, tau), LAPACK's raw QR factors. No gradient (backward raises, as PyTorch's).
StatusOr<std::pair<Tensor, Tensor>> Geqrf(const Tensor& a);
// torch.ormqr: op(Q) C (left) or C op(Q) with Q from geqrf-style (input, tau), op(Q) = Q^T if
// transpose. No gradient (backward raises).
StatusOr<Tensor> Ormqr(const Tensor& a, const Tensor& tau, const Tensor& other, bool left = true,
                       bool transpose = false);
// (LD, pivots int32 [..., n], info): Bunch-Kaufman A = L D L^T of A's lower triangle (sytrf),
// and the solve with those factors (sytrs); batches of B broadcast. No gradients (as PyTorch's).
StatusOr<std::tuple<Tensor, Tensor, Tensor>> LinalgLdlFactorEx(const Tensor& a,
                                                               bool hermitian = false);
StatusOr<Tensor> LinalgLdlSolve(const Tensor& ld, const Tensor& pivots, const Tensor& b,
                                bool hermitian = false);

}  // namespace functional
}  // namespace oneflow_like
