// Linear algebra on LAPACK (kernels/cpu/linalg.cc), the torch.linalg names: Cholesky, inverse,
// sign and log|det| (and det, logdet from them), solve. Inputs are float32/float64 batches of
// square matrices [..., n, n]; gradients follow PyTorch's formulas (symmetrised for Cholesky).
#pragma once
#include <string>
#include <tuple>
#include <utility>

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

}  // namespace functional
}  // namespace oneflow_like
