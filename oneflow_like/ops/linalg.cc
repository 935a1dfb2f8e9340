// Linear-algebra family: the OpDefs of oneflow_like/opdefs/linalg.def (generated below from the
// table's out, grad and save columns, with their Run<Name> entries), the gradient formulas and the
// functional entries (kernels in kernels/cpu/linalg.cc). Gradients (PyTorch's):
//   inv:       dA = -Y^T dY Y^T                                  (Y = A^-1)
//   cholesky:  S = L^-T Phi(L^T dL) L^-1, dA = (S + S^T) / 2      (Phi: lower triangle, diagonal
//              halved)
//   slogdet:   dA = d(logabsdet) A^-T                            (sign has no gradient)
//   solve:     dB = solve(A^T, dX), dA = -dB X^T
//   eigh:      G = V (diag(dL) + F o (V^T dV)) V^T, dA = (G + G^T) / 2, F_ij = 1 / (L_j - L_i)
//              off the diagonal, 0 on it
//   svd:       dA = U (J S + S K + diag(dS)) Vh + (I - U U^T) dU S^-1 Vh + U S^-1 dV^T (I - V V^T),
//              J = skew(U^T dU) / E, K = skew(V^T dV) / E, E_ij = S_j^2 - S_i^2 (1 on the
//              diagonal), skew(X) = X - X^T
//   qr (m >= n): M = R dR^T - dQ^T Q, dA = (dQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M) +
//              tril(M, -1)^T
//   lu_factor: square A: dA = P L^-T (tril(L^T dL, -1) + triu(dU U^T)) U^-T, dL = tril(dLU, -1),
//              dU = triu(dLU); wide and tall A: PyTorch's formulas at LuFactorGrad
//   solve_triangular (A X = B): dB = solve_triangular(A^T, dX), dA = -dB X^T restricted to A's
//              triangle (strictly, if unitriangular)
//   householder_product: Q = H_1 ... H_k E, H_i = I - tau_i v_i v_i^T: the chain rule through
//              the product, suffixes S_i = H_i ... H_k E recomputed, G_i = H_{i-1}^T ... H_1^T dQ:
//              dtau_i = -(G_i^T v_i)^T (S_{i+1}^T v_i), dv_i = -tau_i (G_i S_{i+1}^T v_i +
//              S_{i+1} G_i^T v_i), below v_i's unit entry
//   geqrf, ormqr, ldl_factor, ldl_solve: none (backward raises, as PyTorch's)
#include "oneflow_like/ops/linalg.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/linalg.h"

namespace oneflow_like {
namespace {
namespace F = functional;

using opdefs::LinalgAttrs;
using opdefs::LinalgQrAttrs;
using opdefs::LinalgSvdAttrs;

StatusOr<Tensor> T(const Tensor& x) {
  return F::Transpose(x, -2, -1);
}
// The conjugate transpose (x^H), the transpose of a real x: the gradient formulas below are
// PyTorch's complex ones, which are its real ones with ^T read as ^H.
StatusOr<Tensor> H(const Tensor& x) {
  ASSIGN_OR_RETURN(Tensor t, T(x));
  return IsComplex(x.dtype()) ? F::Conj(t) : t;
}
// An n x m identity in x's real dtype (complex operands promote it).
StatusOr<Tensor> EyeFor(const Tensor& x, int64_t n, int64_t m) {
  return F::Eye(n, m, IsComplex(x.dtype()) ? ToRealDType(x.dtype()) : x.dtype(), x.device());
}
// x's dtype, real for complex x: eigenvalues, singular values and log|det|.
TensorMeta RealLike(const Tensor& x, Shape shape) {
  return TensorMeta{std::move(shape), IsComplex(x.dtype()) ? ToRealDType(x.dtype()) : x.dtype(),
                    x.device()};
}

// ---- the table's out column: every output in x's dtype, on x's device -------------------------

TensorMeta Like(const Tensor& x, Shape shape) {
  return TensorMeta{std::move(shape), x.dtype(), x.device()};
}
Shape ShapeOf(const std::vector<int64_t>& v) {
  return Shape(absl::MakeConstSpan(v));
}

Status Infer_square(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[0], in[0].shape()));
  return Status();
}

Status Infer_slogdet(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Shape& s = in[0].shape();
  Shape batch(absl::MakeConstSpan(s.dims().data(), s.ndim() - 2));
  out->push_back(Like(in[0], batch));
  out->push_back(RealLike(in[0], batch));
  return Status();
}

Status Infer_solve(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[1], in[1].shape()));
  return Status();
}

Status Infer_eigh(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Shape& s = in[0].shape();
  Shape values(absl::MakeConstSpan(s.dims().data(), s.ndim() - 1));
  out->push_back(RealLike(in[0], values));
  out->push_back(Like(in[0], s));
  return Status();
}

Status Infer_qr(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  const Shape& s = in[0].shape();
  const int64_t nd = s.ndim(), m = s[nd - 2], n = s[nd - 1], k = std::min(m, n);
  const bool complete = opdefs::ReadAttrs<LinalgQrAttrs>(attrs).complete;
  std::vector<int64_t> q(s.dims().begin(), s.dims().end()), r(q);
  q[nd - 1] = complete ? m : k;
  r[nd - 2] = complete ? m : k;
  out->push_back(Like(in[0], ShapeOf(q)));
  out->push_back(Like(in[0], ShapeOf(r)));
  return Status();
}

TensorMeta Info(const Tensor& x) {  // int32 [batch]
  const Shape& s = x.shape();
  return TensorMeta{Shape(absl::MakeConstSpan(s.dims().data(), s.ndim() - 2)), DType::kI32,
                    x.device()};
}
// x's shape with its last two dims replaced by `last` (one or two dims).
Shape BatchPlus(const Tensor& x, std::initializer_list<int64_t> last) {
  std::vector<int64_t> d(x.shape().dims().begin(), x.shape().dims().end() - 2);
  d.insert(d.end(), last);
  return ShapeOf(d);
}
int64_t Rows(const Tensor& x) {
  return x.shape()[x.ndim() - 2];
}
int64_t Cols(const Tensor& x) {
  return x.shape()[x.ndim() - 1];
}

Status Infer_square_info(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[0], in[0].shape()));
  out->push_back(Info(in[0]));
  return Status();
}

Status Infer_solve_info(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[1], in[1].shape()));
  out->push_back(Info(in[0]));
  return Status();
}

Status Infer_lu(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const int64_t k = std::min(Rows(in[0]), Cols(in[0]));
  Shape piv = BatchPlus(in[0], {k});
  out->push_back(Like(in[0], in[0].shape()));
  out->push_back(TensorMeta{piv, DType::kI32, in[0].device()});
  out->push_back(Info(in[0]));
  return Status();
}

Status Infer_perm(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const int64_t m = Rows(in[0]);
  out->push_back(Like(in[0], BatchPlus(in[0], {m, m})));
  return Status();
}

Status Infer_geqrf(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const int64_t k = std::min(Rows(in[0]), Cols(in[0]));
  out->push_back(Like(in[0], in[0].shape()));
  out->push_back(Like(in[0], BatchPlus(in[0], {k})));
  return Status();
}

Status Infer_third(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[2], in[2].shape()));
  return Status();
}

Status Infer_ldl(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[0], in[0].shape()));
  out->push_back(TensorMeta{BatchPlus(in[0], {Rows(in[0])}), DType::kI32, in[0].device()});
  out->push_back(Info(in[0]));
  return Status();
}

Status Infer_svd(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  const Shape& s = in[0].shape();
  const int64_t nd = s.ndim(), m = s[nd - 2], n = s[nd - 1], k = std::min(m, n);
  const bool full = opdefs::ReadAttrs<LinalgSvdAttrs>(attrs).full_matrices;
  std::vector<int64_t> u(s.dims().begin(), s.dims().end()), v(u), sv(u.begin(), u.end() - 1);
  u[nd - 1] = full ? m : k;
  v[nd - 2] = full ? n : k;
  sv[nd - 2] = k;
  out->push_back(Like(in[0], ShapeOf(u)));
  out->push_back(RealLike(in[0], ShapeOf(sv)));
  out->push_back(Like(in[0], ShapeOf(v)));
  return Status();
}

// ---- gradient formulas (the table's grad column; PyTorch's) ----------------------------------

StatusOr<Tensor> SolveRaw(const Tensor& a, const Tensor& b);
StatusOr<Tensor> SolveTriangularRaw(const Tensor& a, const Tensor& b, bool upper,
                                    bool unitriangular);
StatusOr<Tensor> Permutation(const Tensor& lu, const Tensor& pivots);

// The gradient of an op PyTorch has no derivative for either: an error naming the op.
template <const OpDef& Self>
StatusOr<TensorList> Unsupported(const GradContext&) {
  return Unimplemented("[%s] backward is not supported", Self.name);
}

// dA = -Y^H dY Y^H (Y = A^-1).
StatusOr<TensorList> InvGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor yt, H(c.outputs[0]));
  ASSIGN_OR_RETURN(Tensor m, F::Matmul(yt, g));
  ASSIGN_OR_RETURN(m, F::Matmul(m, yt));
  ASSIGN_OR_RETURN(m, F::Neg(m));
  return TensorList{m};
}

// S = L^-H Phi(L^H dL) L^-1, dA = (S + S^H) / 2.
StatusOr<TensorList> CholeskyGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  const Tensor& l = c.outputs[0];
  const int64_t n = l.shape()[l.ndim() - 1];
  ASSIGN_OR_RETURN(Tensor gl, F::Tril(g));
  ASSIGN_OR_RETURN(Tensor lt, H(l));
  ASSIGN_OR_RETURN(Tensor p, F::Matmul(lt, gl));
  ASSIGN_OR_RETURN(Tensor eye, EyeFor(l, n, n));
  ASSIGN_OR_RETURN(Tensor half_diag, F::Mul(p, eye));
  ASSIGN_OR_RETURN(half_diag, F::MulScalar(half_diag, 0.5));
  ASSIGN_OR_RETURN(Tensor phi, F::Tril(p));
  ASSIGN_OR_RETURN(phi, F::Sub(phi, half_diag));
  ASSIGN_OR_RETURN(Tensor linv, F::LinalgInv(l));
  ASSIGN_OR_RETURN(Tensor linv_t, H(linv));
  ASSIGN_OR_RETURN(Tensor s, F::Matmul(linv_t, phi));
  ASSIGN_OR_RETURN(s, F::Matmul(s, linv));
  ASSIGN_OR_RETURN(Tensor st, H(s));
  ASSIGN_OR_RETURN(Tensor ga, F::Add(s, st));
  ASSIGN_OR_RETURN(ga, F::MulScalar(ga, 0.5));
  return TensorList{ga};
}

// dA = c A^-H with c = d(logabsdet) (a real sign has no gradient); complex A (sign = e^{i Im
// log det A}): c = d(logabsdet) - i Im(conj(d(sign)) sign), sign recomputed from A.
StatusOr<TensorList> SlogdetGrad(const GradContext& c) {
  const Tensor& a = c.inputs[0];
  Tensor g = c.grad_outputs[1];
  const Tensor& gsign = c.grad_outputs[0];
  const bool sign_grad = IsComplex(a.dtype()) && gsign.defined();
  if (!g.defined() && !sign_grad) return TensorList{Tensor()};
  if (!g.defined()) {
    ASSIGN_OR_RETURN(g, F::Zeros(gsign.shape(), ToRealDType(a.dtype()), a.device()));
  }
  if (sign_grad) {
    ASSIGN_OR_RETURN(auto sl, F::LinalgSlogdet(a));
    ASSIGN_OR_RETURN(Tensor p, F::Conj(gsign));
    ASSIGN_OR_RETURN(p, F::Mul(p, sl.first));
    ASSIGN_OR_RETURN(Tensor im, F::ImagPart(p));
    ASSIGN_OR_RETURN(Tensor zero, F::ZerosLike(im));
    ASSIGN_OR_RETURN(im, F::Neg(im));
    ASSIGN_OR_RETURN(Tensor ic, F::ComplexFromParts(zero, im));
    ASSIGN_OR_RETURN(g, F::Add(ic, g));
  }
  ASSIGN_OR_RETURN(Tensor inv, F::LinalgInv(a));
  ASSIGN_OR_RETURN(Tensor inv_t, H(inv));
  ASSIGN_OR_RETURN(Tensor gg, F::Unsqueeze(g, -1));
  ASSIGN_OR_RETURN(gg, F::Unsqueeze(gg, -1));
  ASSIGN_OR_RETURN(Tensor ga, F::Mul(gg, inv_t));
  return TensorList{ga};
}

// dB = solve(A^H, dX), dA = -dB X^H.
StatusOr<TensorList> SolveGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor(), Tensor()};
  ASSIGN_OR_RETURN(Tensor at, H(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor gb, SolveRaw(at, g));
  Tensor ga;
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor xt, H(c.outputs[0]));
    ASSIGN_OR_RETURN(ga, F::Matmul(gb, xt));
    ASSIGN_OR_RETURN(ga, F::Neg(ga));
  }
  return TensorList{ga, gb};
}

}  // namespace

namespace {
thread_local std::vector<std::pair<std::string, Tensor>> t_phase_checks;
}  // namespace

std::vector<std::pair<std::string, Tensor>> functional::TakeRecordedPhaseChecks() {
  return std::exchange(t_phase_checks, {});
}

Status functional::CheckPhaseInvariant(const char* op, const Tensor& m) {
  if (!IsComplex(m.dtype()) || m.numel() == 0) return Status();
  NoGradGuard no_grad;
  const int64_t n = m.shape()[m.ndim() - 1];
  ASSIGN_OR_RETURN(Tensor eye, EyeFor(m, n, n));
  ASSIGN_OR_RETURN(Tensor im, F::ImagPart(m.detach()));
  ASSIGN_OR_RETURN(Tensor diag, F::Mul(im, eye));
  ASSIGN_OR_RETURN(diag, F::Abs(diag));
  ASSIGN_OR_RETURN(Tensor worst, F::Amax(diag));
  const bool svd = std::string(op) == "svd_backward";
  std::string msg = absl::StrFormat(
      "%s: The %s in the complex case are specified up to multiplication by e^{i phi}. The "
      "specified loss function depends on this %s",
      op, svd ? "singular vectors" : "eigenvectors",
      svd ? "phase term, making it ill-defined." : "quantity, so it is ill-defined.");
  if (worst.is_lazy()) {  // vmap's recording: checked per sample after the replay
    t_phase_checks.emplace_back(std::move(msg), worst);
    return Status();
  }
  ASSIGN_OR_RETURN(worst, F::Cast(worst, DType::kF64));
  double host = 0;
  RETURN_IF_ERROR(F::CopyToHost(worst, &host));
  if (host <= 1e-2) return Status();  // (NaN fails, as torch's allclose)
  return absl::AbortedError(msg);     // RuntimeError, as torch
}

namespace {

// G = V (diag(dL) + F o (V^H dV)) V^H, dA = (G + G^H) / 2.
StatusOr<TensorList> EighGrad(const GradContext& c) {
  const Tensor &gl = c.grad_outputs[0], &gv = c.grad_outputs[1];
  if (!gl.defined() && !gv.defined()) return TensorList{Tensor()};
  const Tensor &l = c.outputs[0], &v = c.outputs[1];
  const int64_t n = v.shape()[v.ndim() - 1];
  ASSIGN_OR_RETURN(Tensor eye, EyeFor(v, n, n));
  Tensor m;
  if (gv.defined()) {
    // F o (V^T dV) with F_ij = 1 / (L_j - L_i), 0 on the diagonal.
    ASSIGN_OR_RETURN(Tensor lj, F::Unsqueeze(l, -2));
    ASSIGN_OR_RETURN(Tensor li, F::Unsqueeze(l, -1));
    ASSIGN_OR_RETURN(Tensor e, F::Sub(lj, li));
    ASSIGN_OR_RETURN(e, F::Add(e, eye));
    ASSIGN_OR_RETURN(Tensor off, F::MulScalar(eye, -1.0));
    ASSIGN_OR_RETURN(off, F::AddScalar(off, 1.0));
    ASSIGN_OR_RETURN(Tensor f, F::Div(off, e));
    ASSIGN_OR_RETURN(Tensor vt, H(v));
    ASSIGN_OR_RETURN(Tensor vtg, F::Matmul(vt, gv));
    RETURN_IF_ERROR(F::CheckPhaseInvariant("linalg_eigh_backward", vtg));
    ASSIGN_OR_RETURN(m, F::Mul(f, vtg));
  }
  if (gl.defined()) {
    ASSIGN_OR_RETURN(Tensor row, F::Unsqueeze(gl, -2));
    ASSIGN_OR_RETURN(Tensor diag, F::Mul(row, eye));
    if (m.defined()) {
      ASSIGN_OR_RETURN(m, F::Add(m, diag));
    } else {
      m = diag;
    }
  }
  ASSIGN_OR_RETURN(Tensor vt, H(v));
  ASSIGN_OR_RETURN(Tensor g, F::Matmul(v, m));
  ASSIGN_OR_RETURN(g, F::Matmul(g, vt));
  ASSIGN_OR_RETURN(Tensor gt, H(g));
  ASSIGN_OR_RETURN(g, F::Add(g, gt));
  ASSIGN_OR_RETURN(g, F::MulScalar(g, 0.5));
  return TensorList{g};
}

// m >= n: M = R dR^H - dQ^H Q, dA = (dQ + Q copyltu(M)) R^-H, copyltu(M) = tril(M, -1) +
// tril(M, -1)^H + Re(diag(M)) (derived from Q^H dQ skew-Hermitian and R's real diagonal).
StatusOr<TensorList> QrGrad(const GradContext& c) {
  const Tensor &gq = c.grad_outputs[0], &gr = c.grad_outputs[1];
  if (!gq.defined() && !gr.defined()) return TensorList{Tensor()};
  const Tensor &q = c.outputs[0], &r = c.outputs[1];
  const int64_t m = q.shape()[q.ndim() - 2], n = r.shape()[r.ndim() - 1];
  if (m < n || q.shape()[q.ndim() - 1] != n)
    return InvalidArgument(
        "linalg.qr: the derivative is implemented for A of m >= n rows in reduced mode "
        "(or square A), got Q %s and R %s",
        q.shape().ToString(), r.shape().ToString());
  Tensor mm;  // R dR^T - dQ^T Q
  if (gr.defined()) {
    ASSIGN_OR_RETURN(Tensor grt, H(gr));
    ASSIGN_OR_RETURN(mm, F::Matmul(r, grt));
  }
  if (gq.defined()) {
    ASSIGN_OR_RETURN(Tensor gqt, H(gq));
    ASSIGN_OR_RETURN(Tensor p, F::Matmul(gqt, q));
    if (mm.defined()) {
      ASSIGN_OR_RETURN(mm, F::Sub(mm, p));
    } else {
      ASSIGN_OR_RETURN(mm, F::Neg(p));
    }
  }
  ASSIGN_OR_RETURN(Tensor eye, EyeFor(mm, n, n));
  ASSIGN_OR_RETURN(Tensor diag, F::RealPart(mm));
  ASSIGN_OR_RETURN(diag, F::Mul(diag, eye));
  ASSIGN_OR_RETURN(Tensor strict, F::Tril(mm, -1));
  ASSIGN_OR_RETURN(Tensor strict_t, H(strict));
  ASSIGN_OR_RETURN(Tensor sym, F::Add(strict, strict_t));
  ASSIGN_OR_RETURN(sym, F::Add(sym, diag));
  ASSIGN_OR_RETURN(Tensor b, F::Matmul(q, sym));
  if (gq.defined()) {
    ASSIGN_OR_RETURN(b, F::Add(b, gq));
  }
  // dA = b R^-H: solve R X^H = b^H for X^H (R is square: m >= n, k = n).
  ASSIGN_OR_RETURN(Tensor bt, H(b));
  ASSIGN_OR_RETURN(Tensor xt, F::LinalgSolve(r, bt));
  ASSIGN_OR_RETURN(Tensor ga, H(xt));
  return TensorList{ga};
}

// PyTorch's linalg_lu_backward for lu_factor's LU [m, n] (k = min(m, n); L [m, k] unit lower,
// U [k, n] upper, dL = dLU[:, :k], dU = dLU[:k, :], each read on its own triangle):
//   square: dA = P L^-T (tril(L^T dL, -1) + triu(dU U^T)) U^-T
//   wide (m < n, U = [U1 U2]): dA = P L^-T [dU1 + tril(L^T dL - triu(dU) U^T, -1) U1^-T, dU2]
//   tall (m > n, L = [L1; L2]): dA = P [dL1 + L1^-T triu(dU U^T - L^T tril(dL, -1)); dL2] U^-T,
//     dL1 taken strictly lower
StatusOr<TensorList> LuFactorGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  const Tensor &lu = c.outputs[0], &piv = c.outputs[1];
  const int64_t m = Rows(lu), n = Cols(lu), k = std::min(m, n);
  ASSIGN_OR_RETURN(Tensor eye, F::Eye(m, k, lu.dtype(), lu.device()));
  ASSIGN_OR_RETURN(Tensor l, F::Narrow(lu, -1, 0, k));
  ASSIGN_OR_RETURN(l, F::Tril(l, -1));
  ASSIGN_OR_RETURN(l, F::Add(l, eye));  // [m, k]
  ASSIGN_OR_RETURN(Tensor u, F::Narrow(lu, -2, 0, k));
  ASSIGN_OR_RETURN(u, F::Triu(u));  // [k, n]
  ASSIGN_OR_RETURN(Tensor gl, F::Narrow(g, -1, 0, k));
  ASSIGN_OR_RETURN(gl, F::Tril(gl, -1));
  ASSIGN_OR_RETURN(Tensor gu, F::Narrow(g, -2, 0, k));
  ASSIGN_OR_RETURN(gu, F::Triu(gu));
  ASSIGN_OR_RETURN(Tensor lt, T(l));
  ASSIGN_OR_RETURN(Tensor ut, T(u));
  ASSIGN_OR_RETURN(Tensor ltgl, F::Matmul(lt, gl));  // [k, k]
  ASSIGN_OR_RETURN(Tensor guut, F::Matmul(gu, ut));  // [k, k]
  // X U1^-T for X [r, k]: U1 X'^T = X^T.
  auto right_u1t = [&](const Tensor& x) -> StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor u1, F::Narrow(u, -1, 0, k));
    ASSIGN_OR_RETURN(Tensor xt, T(x));
    ASSIGN_OR_RETURN(Tensor yt, SolveTriangularRaw(u1, xt, true, false));
    return T(yt);
  };
  Tensor ga;
  if (m == n) {
    ASSIGN_OR_RETURN(Tensor lo, F::Tril(ltgl, -1));
    ASSIGN_OR_RETURN(Tensor up, F::Triu(guut));
    ASSIGN_OR_RETURN(Tensor x, F::Add(lo, up));
    ASSIGN_OR_RETURN(x, right_u1t(x));
    ASSIGN_OR_RETURN(ga, SolveTriangularRaw(lt, x, true, true));
  } else if (m < n) {
    ASSIGN_OR_RETURN(Tensor x, F::Sub(ltgl, guut));
    ASSIGN_OR_RETURN(x, F::Tril(x, -1));
    ASSIGN_OR_RETURN(x, right_u1t(x));
    ASSIGN_OR_RETURN(Tensor gu1, F::Narrow(gu, -1, 0, k));
    ASSIGN_OR_RETURN(Tensor gu2, F::Narrow(gu, -1, k, n - k));
    ASSIGN_OR_RETURN(x, F::Add(x, gu1));
    ASSIGN_OR_RETURN(x, F::Cat({x, gu2}, -1));
    ASSIGN_OR_RETURN(ga, SolveTriangularRaw(lt, x, true, true));
  } else {
    ASSIGN_OR_RETURN(Tensor x, F::Sub(guut, ltgl));
    ASSIGN_OR_RETURN(x, F::Triu(x));
    ASSIGN_OR_RETURN(Tensor l1t, F::Narrow(lt, -1, 0, k));  // L1^T, unit upper
    ASSIGN_OR_RETURN(x, SolveTriangularRaw(l1t, x, true, true));
    ASSIGN_OR_RETURN(Tensor gl1, F::Narrow(gl, -2, 0, k));
    ASSIGN_OR_RETURN(Tensor gl2, F::Narrow(gl, -2, k, m - k));
    ASSIGN_OR_RETURN(x, F::Add(x, gl1));
    ASSIGN_OR_RETURN(x, F::Cat({x, gl2}, -2));
    ASSIGN_OR_RETURN(ga, right_u1t(x));
  }
  ASSIGN_OR_RETURN(Tensor p, Permutation(lu, piv));
  ASSIGN_OR_RETURN(ga, F::Matmul(p, ga));
  return TensorList{ga};
}

// A X = B: dB = solve_triangular(A^T, dX) (the other triangle), dA = -dB X^T on A's triangle.
StatusOr<TensorList> SolveTriangularGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor(), Tensor()};
  const auto attrs = opdefs::ReadAttrs<opdefs::LinalgTriangularAttrs>(c.attrs);
  ASSIGN_OR_RETURN(Tensor at, T(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor gb, SolveTriangularRaw(at, g, !attrs.upper, attrs.unitriangular));
  Tensor ga;
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor xt, T(c.outputs[0]));
    ASSIGN_OR_RETURN(ga, F::Matmul(gb, xt));
    ASSIGN_OR_RETURN(ga, F::Neg(ga));
    const int64_t diag = attrs.unitriangular ? 1 : 0;
    if (attrs.upper) {
      ASSIGN_OR_RETURN(ga, F::Triu(ga, diag));
    } else {
      ASSIGN_OR_RETURN(ga, F::Tril(ga, -diag));
    }
  }
  return TensorList{ga, gb};
}

// Q = H_1 ... H_k E (E: the identity's first n columns), H_i = I - tau_i v_i v_i^T: the chain
// rule through the product with differentiable ops (so double backward works).
StatusOr<TensorList> HouseholderProductGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor(), Tensor()};
  const Tensor &a = c.inputs[0], &tau = c.inputs[1];
  const int64_t m = Rows(a), n = Cols(a), k = tau.shape()[tau.ndim() - 1];
  if (k == 0) {
    ASSIGN_OR_RETURN(Tensor za, F::ZerosLike(a));
    ASSIGN_OR_RETURN(Tensor zt, F::ZerosLike(tau));
    return TensorList{za, zt};
  }
  // V = the reflectors as columns [..., m, k]; taus [..., 1, k].
  ASSIGN_OR_RETURN(Tensor v, F::Narrow(a, -1, 0, k));
  ASSIGN_OR_RETURN(v, F::Tril(v, -1));
  ASSIGN_OR_RETURN(Tensor eye_mk, F::Eye(m, k, a.dtype(), a.device()));
  ASSIGN_OR_RETURN(v, F::Add(v, eye_mk));
  ASSIGN_OR_RETURN(Tensor taus, F::Unsqueeze(tau, -2));
  std::vector<Tensor> vs(k), ts(k), s(k + 1);
  for (int64_t i = 0; i < k; ++i) {
    ASSIGN_OR_RETURN(vs[i], F::Narrow(v, -1, i, 1));     // [..., m, 1]
    ASSIGN_OR_RETURN(ts[i], F::Narrow(taus, -1, i, 1));  // [..., 1, 1]
  }
  // H x = x - tau v (v^T x).
  auto reflect = [&](int64_t i, const Tensor& x) -> StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor vt, T(vs[i]));
    ASSIGN_OR_RETURN(Tensor w, F::Matmul(vt, x));
    ASSIGN_OR_RETURN(w, F::Matmul(vs[i], w));
    ASSIGN_OR_RETURN(w, F::Mul(ts[i], w));
    return F::Sub(x, w);
  };
  ASSIGN_OR_RETURN(s[k], F::Eye(m, n, a.dtype(), a.device()));
  for (int64_t i = k - 1; i > 0; --i) {
    ASSIGN_OR_RETURN(s[i], reflect(i, s[i + 1]));
  }
  Tensor gi = g;
  TensorList dvs, dts;
  for (int64_t i = 0; i < k; ++i) {
    ASSIGN_OR_RETURN(Tensor git, T(gi));
    ASSIGN_OR_RETURN(Tensor st, T(s[i + 1]));
    ASSIGN_OR_RETURN(Tensor av, F::Matmul(git, vs[i]));  // G_i^T v [..., n, 1]
    ASSIGN_OR_RETURN(Tensor bv, F::Matmul(st, vs[i]));   // S^T v [..., n, 1]
    ASSIGN_OR_RETURN(Tensor avt, T(av));
    ASSIGN_OR_RETURN(Tensor dt, F::Matmul(avt, bv));
    ASSIGN_OR_RETURN(dt, F::Neg(dt));
    dts.push_back(dt);
    ASSIGN_OR_RETURN(Tensor d1, F::Matmul(gi, bv));
    ASSIGN_OR_RETURN(Tensor d2, F::Matmul(s[i + 1], av));
    ASSIGN_OR_RETURN(Tensor dv, F::Add(d1, d2));
    ASSIGN_OR_RETURN(dv, F::Mul(ts[i], dv));
    ASSIGN_OR_RETURN(dv, F::Neg(dv));
    dvs.push_back(dv);
    if (i + 1 < k) {
      ASSIGN_OR_RETURN(gi, reflect(i, gi));  // H_i is symmetric
    }
  }
  ASSIGN_OR_RETURN(Tensor dv, F::Cat(dvs, -1));
  ASSIGN_OR_RETURN(dv, F::Tril(dv, -1));
  if (n > k) {
    ASSIGN_OR_RETURN(Tensor rest, F::Zeros(BatchPlus(a, {m, n - k}), a.dtype(), a.device()));
    ASSIGN_OR_RETURN(dv, F::Cat({dv, rest}, -1));
  }
  ASSIGN_OR_RETURN(Tensor dtau, F::Cat(dts, -1));
  ASSIGN_OR_RETURN(dtau, F::Squeeze(dtau, {-2}));
  return TensorList{dv, dtau};
}

// skew(X) / E off the diagonal for the SVD gradient, E_ij = s_j^2 - s_i^2 (1 on the diagonal),
// skew(X) = X - X^H; `off` is 1 off the diagonal, 0 on it.
StatusOr<Tensor> SkewOverGap(const Tensor& x, const Tensor& e, const Tensor& off) {
  ASSIGN_OR_RETURN(Tensor xt, H(x));
  ASSIGN_OR_RETURN(Tensor sk, F::Sub(x, xt));
  ASSIGN_OR_RETURN(sk, F::Mul(sk, off));
  return F::Div(sk, e);
}

// dA = U (J S + S K + diag(dS)) Vh + (I - U U^H) dU S^-1 Vh + U S^-1 dV^H (I - V V^H); complex
// A adds U diag(i Im(diag(U^H dU)) / S) Vh (the phase of U's and V's columns).
StatusOr<TensorList> SvdGrad(const GradContext& c) {
  const Tensor &gu = c.grad_outputs[0], &gs = c.grad_outputs[1], &gvh = c.grad_outputs[2];
  if (!gu.defined() && !gs.defined() && !gvh.defined()) return TensorList{Tensor()};
  const Tensor &u = c.outputs[0], &s = c.outputs[1], &vh = c.outputs[2];
  const int64_t m = u.shape()[u.ndim() - 2], n = vh.shape()[vh.ndim() - 1];
  const int64_t k = s.shape()[s.ndim() - 1];
  if ((gu.defined() || gvh.defined()) &&
      (u.shape()[u.ndim() - 1] != k || vh.shape()[vh.ndim() - 2] != k))
    return InvalidArgument(
        "linalg.svd: the derivative through U or Vh needs full_matrices=False (got U %s, "
        "Vh %s)",
        u.shape().ToString(), vh.shape().ToString());
  ASSIGN_OR_RETURN(Tensor eye, F::Eye(k, k, s.dtype(), s.device()));
  ASSIGN_OR_RETURN(Tensor off, F::MulScalar(eye, -1.0));
  ASSIGN_OR_RETURN(off, F::AddScalar(off, 1.0));
  ASSIGN_OR_RETURN(Tensor s_row, F::Unsqueeze(s, -2));  // scales columns
  ASSIGN_OR_RETURN(Tensor s_col, F::Unsqueeze(s, -1));  // scales rows
  ASSIGN_OR_RETURN(Tensor inv_s, F::Reciprocal(s));
  ASSIGN_OR_RETURN(Tensor s2, F::Mul(s, s));
  ASSIGN_OR_RETURN(Tensor s2j, F::Unsqueeze(s2, -2));
  ASSIGN_OR_RETURN(Tensor s2i, F::Unsqueeze(s2, -1));
  ASSIGN_OR_RETURN(Tensor e, F::Sub(s2j, s2i));
  ASSIGN_OR_RETURN(e, F::Add(e, eye));
  ASSIGN_OR_RETURN(Tensor v, H(vh));
  Tensor inner;
  auto add = [&](Tensor t) -> Status {
    if (inner.defined()) {
      ASSIGN_OR_RETURN(inner, F::Add(inner, t));
    } else {
      inner = t;
    }
    return Status();
  };
  Tensor gv, extra, phase;  // phase: U^H dU + V^H dV, whose diagonal must be real (torch's)
  if (gu.defined()) {
    ASSIGN_OR_RETURN(Tensor ut, H(u));
    ASSIGN_OR_RETURN(Tensor utgu, F::Matmul(ut, gu));
    phase = utgu;
    ASSIGN_OR_RETURN(Tensor j, SkewOverGap(utgu, e, off));
    ASSIGN_OR_RETURN(j, F::Mul(j, s_row));
    RETURN_IF_ERROR(add(j));
    if (IsComplex(u.dtype())) {  // i Im(diag(U^H dU)) / S on the diagonal
      ASSIGN_OR_RETURN(Tensor im, F::ImagPart(utgu));
      ASSIGN_OR_RETURN(im, F::Mul(im, eye));
      ASSIGN_OR_RETURN(Tensor inv_col, F::Unsqueeze(inv_s, -1));
      ASSIGN_OR_RETURN(im, F::Mul(im, inv_col));
      ASSIGN_OR_RETURN(Tensor zero, F::ZerosLike(im));
      ASSIGN_OR_RETURN(Tensor d, F::ComplexFromParts(zero, im));
      RETURN_IF_ERROR(add(d));
    }
    if (m > k) {  // (I - U U^T) dU S^-1 Vh
      ASSIGN_OR_RETURN(Tensor proj, F::Matmul(u, utgu));
      ASSIGN_OR_RETURN(proj, F::Sub(gu, proj));
      ASSIGN_OR_RETURN(Tensor inv_row, F::Unsqueeze(inv_s, -2));
      ASSIGN_OR_RETURN(proj, F::Mul(proj, inv_row));
      ASSIGN_OR_RETURN(extra, F::Matmul(proj, vh));
    }
  }
  if (gvh.defined()) {
    ASSIGN_OR_RETURN(gv, H(gvh));
    ASSIGN_OR_RETURN(Tensor vtgv, F::Matmul(vh, gv));
    if (phase.defined()) {
      ASSIGN_OR_RETURN(phase, F::Add(phase, vtgv));
    } else {
      phase = vtgv;
    }
    ASSIGN_OR_RETURN(Tensor kk, SkewOverGap(vtgv, e, off));
    ASSIGN_OR_RETURN(kk, F::Mul(s_col, kk));
    RETURN_IF_ERROR(add(kk));
    if (n > k) {  // U S^-1 dV^T (I - V V^T)
      // dV^T (I - V V^T) = dVh - (dVh V) Vh
      ASSIGN_OR_RETURN(Tensor gvh_v, F::Matmul(gvh, v));
      ASSIGN_OR_RETURN(Tensor proj, F::Matmul(gvh_v, vh));
      ASSIGN_OR_RETURN(proj, F::Sub(gvh, proj));
      ASSIGN_OR_RETURN(Tensor inv_col, F::Unsqueeze(inv_s, -1));
      ASSIGN_OR_RETURN(proj, F::Mul(inv_col, proj));
      ASSIGN_OR_RETURN(proj, F::Matmul(u, proj));
      if (extra.defined()) {
        ASSIGN_OR_RETURN(extra, F::Add(extra, proj));
      } else {
        extra = proj;
      }
    }
  }
  if (phase.defined()) RETURN_IF_ERROR(F::CheckPhaseInvariant("svd_backward", phase));
  if (gs.defined()) {
    ASSIGN_OR_RETURN(Tensor gs_row, F::Unsqueeze(gs, -2));
    ASSIGN_OR_RETURN(Tensor d, F::Mul(gs_row, eye));
    RETURN_IF_ERROR(add(d));
  }
  ASSIGN_OR_RETURN(Tensor ga, F::Matmul(u, inner));
  ASSIGN_OR_RETURN(ga, F::Matmul(ga, vh));
  if (extra.defined()) {
    ASSIGN_OR_RETURN(ga, F::Add(ga, extra));
  }
  return TensorList{ga};
}

// ---- the OpDefs and Run<Name> (generated from linalg.def) --------------------------------------

#define OFL_LINALG_SAVE_IN_inputs true
#define OFL_LINALG_SAVE_OUT_inputs false
#define OFL_LINALG_SAVE_IN_outputs false
#define OFL_LINALG_SAVE_OUT_outputs true
#define OFL_LINALG_SAVE_IN_both true
#define OFL_LINALG_SAVE_OUT_both true
#define OFL_LINALG_SAVE_IN_none false
#define OFL_LINALG_SAVE_OUT_none false
// What Run<Name> returns per out column: the one output, or every output.
#define OFL_LINALG_RUN1 OFL_DEFINE_RUN1
#define OFL_LINALG_RUN_ALL OFL_DEFINE_RUN_ALL
#define OFL_LINALG_RUN_square OFL_LINALG_RUN1
#define OFL_LINALG_RUN_solve OFL_LINALG_RUN1
#define OFL_LINALG_RUN_slogdet OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_eigh OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_qr OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_svd OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_square_info OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_solve_info OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_lu OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_perm OFL_LINALG_RUN1
#define OFL_LINALG_RUN_geqrf OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_third OFL_LINALG_RUN1
#define OFL_LINALG_RUN_ldl OFL_LINALG_RUN_ALL
// clang-format off
#define OFL_ATTRS(...)
#define OFL_LINALG_API(...)
#define OFL_LINALG(name, Name, Attrs, out, grad, save)                                             \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                                                 \
                            .Grad(grad)                                                            \
                            .SaveInputs(OFL_LINALG_SAVE_IN_##save)                                 \
                            .SaveOutputs(OFL_LINALG_SAVE_OUT_##save);                              \
  OFL_LINALG_RUN_##out(Name, Attrs)
#include "oneflow_like/opdefs/linalg.def"
#undef OFL_LINALG
#undef OFL_LINALG_API
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> SolveRaw(const Tensor& a, const Tensor& b) {
  return RunLinalgSolve({a, b}, LinalgAttrs{});
}

StatusOr<Tensor> SolveTriangularRaw(const Tensor& a, const Tensor& b, bool upper,
                                    bool unitriangular) {
  opdefs::LinalgTriangularAttrs attrs;
  attrs.upper = upper;
  attrs.unitriangular = unitriangular;
  return RunLinalgSolveTriangular({a, b}, attrs);
}

StatusOr<Tensor> Permutation(const Tensor& lu, const Tensor& pivots) {
  return RunLinalgLuPermutation({lu, pivots}, LinalgAttrs{});
}

// A float32/float64 batch of square matrices, or an error naming `op` and the shape.
Status CheckSquare(const char* op, const Tensor& a) {
  if (a.ndim() < 2)
    return InvalidArgument("%s: The input tensor A must have at least 2 dimensions, got shape %s",
                           op, a.shape().ToString());
  if (a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    return InvalidArgument(
        "%s: A must be batches of square matrices, but they are %d by %d matrices", op,
        a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64 && !IsComplex(a.dtype()))
    return TypeError(
        "%s: Expected a floating point or complex tensor (float32, float64, complex64 or "
        "complex128) as input. Got %s",
        op, DTypeName(a.dtype()));
  return Status();
}
// The ops whose kernels have no complex path (LU factors, triangular solves, Householder
// products, LDL): complex input is an error naming the op.
Status CheckNotComplex(const char* op, const Tensor& a) {
  if (IsComplex(a.dtype()))
    return TypeError("%s: complex input (%s) is not supported yet", op, DTypeName(a.dtype()));
  return Status();
}

StatusOr<std::pair<Tensor, Tensor>> Pair(StatusOr<TensorList> r) {
  RETURN_IF_ERROR(r.status());
  return std::make_pair((*r)[0], (*r)[1]);
}
StatusOr<std::tuple<Tensor, Tensor, Tensor>> Triple(StatusOr<TensorList> r) {
  RETURN_IF_ERROR(r.status());
  return std::make_tuple((*r)[0], (*r)[1], (*r)[2]);
}

// A float32/float64 tensor of at least 2 dims, or an error naming `op`, `what` and the shape.
Status CheckMatrix(const char* op, const char* what, const Tensor& a) {
  if (a.ndim() < 2)
    return InvalidArgument("%s: The input tensor %s must have at least 2 dimensions, got shape %s",
                           op, what, a.shape().ToString());
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64)
    return TypeError("%s: Expected a floating point tensor (float32 or float64) as %s. Got %s", op,
                     what, DTypeName(a.dtype()));
  return Status();
}

Status CheckSameDtype(const char* op, const Tensor& a, const char* an, const Tensor& b,
                      const char* bn) {
  if (a.dtype() != b.dtype())
    return TypeError(
        "%s: Expected %s and %s to have the same dtype, but found %s of type %s and %s "
        "of type %s instead",
        op, an, bn, an, DTypeName(a.dtype()), bn, DTypeName(b.dtype()));
  return Status();
}

// Pivots of LU factors: int32 [batch of `a`, k].
Status CheckPivots(const char* op, const Tensor& a, const Tensor& pivots, int64_t k) {
  if (pivots.dtype() != DType::kI32)
    return TypeError("%s: Expected pivots to be int32 (as linalg.lu_factor returns them), got %s",
                     op, DTypeName(pivots.dtype()));
  if (pivots.shape() != BatchPlus(a, {k}))
    return InvalidArgument("%s: Expected pivots of shape %s for A of shape %s, got %s", op,
                           BatchPlus(a, {k}).ToString(), a.shape().ToString(),
                           pivots.shape().ToString());
  return Status();
}

// The batch dims of `a` and `b` ([..., r, c] each) broadcast, as a vector, naming `op`.
StatusOr<std::vector<int64_t>> BroadcastBatch(const char* op, const Tensor& a, const Tensor& b) {
  Shape ab(absl::MakeConstSpan(a.shape().dims()).first(a.ndim() - 2));
  Shape bb(absl::MakeConstSpan(b.shape().dims()).first(b.ndim() - 2));
  ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(op, ab, bb));
  return std::vector<int64_t>(batch.dims().begin(), batch.dims().end());
}

// `x` broadcast to `batch` + its own last `keep` dims.
StatusOr<Tensor> ExpandBatch(const Tensor& x, const std::vector<int64_t>& batch, int keep) {
  std::vector<int64_t> dims(batch);
  for (int i = keep; i > 0; --i) dims.push_back(x.shape()[x.ndim() - i]);
  Shape s(absl::MakeConstSpan(dims));
  if (s == x.shape()) return x;
  return F::Expand(x, s);
}

// linalg.solve and solve_ex: (X, info) (info undefined unless `ex`); B a matrix batch or a vector
// batch (PyTorch's rule), the batches broadcast.
StatusOr<std::pair<Tensor, Tensor>> SolveImpl(const char* op, const Tensor& a, const Tensor& b,
                                              bool left, bool ex) {
  RETURN_IF_ERROR(CheckSquare(op, a));
  RETURN_IF_ERROR(CheckSameDtype(op, a, "A", b, "B"));
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    ASSIGN_OR_RETURN(Tensor at, T(a));
    if (b.ndim() < 2)
      return InvalidArgument("%s: with left=False, B must be a matrix, got shape %s", op,
                             b.shape().ToString());
    ASSIGN_OR_RETURN(Tensor bt, T(b));
    ASSIGN_OR_RETURN(auto r, SolveImpl(op, at, bt, true, ex));
    ASSIGN_OR_RETURN(Tensor x, T(r.first));
    return std::make_pair(x, r.second);
  }
  const int64_t n = a.shape()[a.ndim() - 1];
  // B is a vector (batch) when it is 1-D or has A's shape without its last dim (PyTorch's rule).
  const bool vector =
      b.ndim() == 1 ||
      (b.ndim() == a.ndim() - 1 && absl::MakeConstSpan(b.shape().dims()) ==
                                       absl::MakeConstSpan(a.shape().dims()).first(a.ndim() - 1));
  Tensor bm = b;
  if (vector) {
    ASSIGN_OR_RETURN(bm, F::Unsqueeze(b, -1));
  }
  if (bm.ndim() < 2 || bm.shape()[bm.ndim() - 2] != n)
    return InvalidArgument("%s: Incompatible shapes of A and B for the equation AX = B (%s and %s)",
                           op, a.shape().ToString(), b.shape().ToString());
  ASSIGN_OR_RETURN(auto bd, BroadcastBatch(op, a, bm));
  ASSIGN_OR_RETURN(Tensor ae, ExpandBatch(a, bd, 2));
  ASSIGN_OR_RETURN(Tensor be, ExpandBatch(bm, bd, 2));
  Tensor x, info;
  if (ex) {
    ASSIGN_OR_RETURN(auto r, Pair(RunLinalgSolveEx({ae, be}, LinalgAttrs{})));
    x = r.first;
    info = r.second;
  } else {
    ASSIGN_OR_RETURN(x, SolveRaw(ae, be));
  }
  if (vector) {
    ASSIGN_OR_RETURN(x, F::Squeeze(x, {-1}));
  }
  return std::make_pair(x, info);
}

}  // namespace

namespace functional {

StatusOr<Tensor> LinalgCholesky(const Tensor& a, bool upper) {
  RETURN_IF_ERROR(CheckSquare("linalg.cholesky", a));
  if (!upper) return RunLinalgCholesky({a}, LinalgAttrs{});
  // U from A's upper triangle: the lower factor of A^T, transposed.
  ASSIGN_OR_RETURN(Tensor at, T(a));
  ASSIGN_OR_RETURN(Tensor l, RunLinalgCholesky({at}, LinalgAttrs{}));
  return T(l);
}

StatusOr<Tensor> LinalgInv(const Tensor& a) {
  RETURN_IF_ERROR(CheckSquare("linalg.inv", a));
  return RunLinalgInv({a}, LinalgAttrs{});
}

StatusOr<std::pair<Tensor, Tensor>> LinalgSlogdet(const Tensor& a) {
  RETURN_IF_ERROR(CheckSquare("linalg.slogdet", a));
  return Pair(RunLinalgSlogdet({a}, LinalgAttrs{}));
}

StatusOr<Tensor> LinalgDet(const Tensor& a) {
  RETURN_IF_ERROR(CheckSquare("linalg.det", a));
  ASSIGN_OR_RETURN(auto sl, LinalgSlogdet(a));
  ASSIGN_OR_RETURN(Tensor e, Exp(sl.second));
  return Mul(sl.first, e);
}

StatusOr<Tensor> Logdet(const Tensor& a) {
  RETURN_IF_ERROR(CheckSquare("logdet", a));
  ASSIGN_OR_RETURN(auto sl, LinalgSlogdet(a));
  ASSIGN_OR_RETURN(Tensor ls, Log(sl.first));  // log(-1) = NaN, log(0) = -inf
  return Add(sl.second, ls);
}

StatusOr<Tensor> LinalgSolve(const Tensor& a, const Tensor& b, bool left) {
  ASSIGN_OR_RETURN(auto r, SolveImpl("linalg.solve", a, b, left, false));
  return r.first;
}

StatusOr<std::pair<Tensor, Tensor>> LinalgSolveEx(const Tensor& a, const Tensor& b, bool left) {
  return SolveImpl("linalg.solve_ex", a, b, left, true);
}

StatusOr<std::pair<Tensor, Tensor>> LinalgInvEx(const Tensor& a) {
  RETURN_IF_ERROR(CheckSquare("linalg.inv_ex", a));
  return Pair(RunLinalgInvEx({a}, LinalgAttrs{}));
}

StatusOr<std::pair<Tensor, Tensor>> LinalgCholeskyEx(const Tensor& a, bool upper) {
  RETURN_IF_ERROR(CheckSquare("linalg.cholesky_ex", a));
  if (!upper) return Pair(RunLinalgCholeskyEx({a}, LinalgAttrs{}));
  ASSIGN_OR_RETURN(Tensor at, T(a));
  ASSIGN_OR_RETURN(auto r, Pair(RunLinalgCholeskyEx({at}, LinalgAttrs{})));
  ASSIGN_OR_RETURN(Tensor u, T(r.first));
  return std::make_pair(u, r.second);
}

StatusOr<std::tuple<Tensor, Tensor, Tensor>> LinalgLuFactorEx(const Tensor& a) {
  RETURN_IF_ERROR(CheckMatrix("linalg.lu_factor", "A", a));
  return Triple(RunLinalgLuFactorEx({a}, LinalgAttrs{}));
}

StatusOr<Tensor> LinalgLuPermutation(const Tensor& lu, const Tensor& pivots) {
  RETURN_IF_ERROR(CheckMatrix("lu_unpack", "LU_data", lu));
  RETURN_IF_ERROR(CheckPivots("lu_unpack", lu, pivots, std::min(Rows(lu), Cols(lu))));
  return Permutation(lu, pivots);
}

StatusOr<Tensor> LinalgSolveTriangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                                       bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  RETURN_IF_ERROR(CheckSquare(op, a));
  RETURN_IF_ERROR(CheckNotComplex(op, a));
  RETURN_IF_ERROR(CheckMatrix(op, "B", b));
  RETURN_IF_ERROR(CheckSameDtype(op, a, "A", b, "B"));
  if (!left) {  // X A = B  <=>  A^T X^T = B^T, A^T's triangle being the other one
    ASSIGN_OR_RETURN(Tensor at, T(a));
    ASSIGN_OR_RETURN(Tensor bt, T(b));
    ASSIGN_OR_RETURN(Tensor xt, LinalgSolveTriangular(at, bt, !upper, true, unitriangular));
    return T(xt);
  }
  if (Rows(b) != Rows(a))
    return InvalidArgument("%s: Incompatible shapes of A and B for the equation %s (%s and %s)", op,
                           left ? "AX = B" : "XA = B", a.shape().ToString(), b.shape().ToString());
  ASSIGN_OR_RETURN(auto bd, BroadcastBatch(op, a, b));
  ASSIGN_OR_RETURN(Tensor ae, ExpandBatch(a, bd, 2));
  ASSIGN_OR_RETURN(Tensor be, ExpandBatch(b, bd, 2));
  return SolveTriangularRaw(ae, be, upper, unitriangular);
}

StatusOr<Tensor> LinalgHouseholderProduct(const Tensor& a, const Tensor& tau) {
  const char* op = "linalg.householder_product";
  RETURN_IF_ERROR(CheckMatrix(op, "A", a));
  RETURN_IF_ERROR(CheckSameDtype(op, a, "A", tau, "tau"));
  if (Rows(a) < Cols(a))
    return InvalidArgument(
        "%s: input.shape[-2] must be greater than or equal to input.shape[-1], "
        "got A of shape %s",
        op, a.shape().ToString());
  if (tau.ndim() != a.ndim() - 1 || tau.shape()[tau.ndim() - 1] > Cols(a) ||
      BatchPlus(a, {tau.shape()[tau.ndim() - 1]}) != tau.shape())
    return InvalidArgument(
        "%s: Expected tau of shape A.shape[:-2] + [k] with k <= A.shape[-1], got A %s and tau %s",
        op, a.shape().ToString(), tau.shape().ToString());
  return RunLinalgHouseholderProduct({a, tau}, LinalgAttrs{});
}

StatusOr<std::pair<Tensor, Tensor>> Geqrf(const Tensor& a) {
  RETURN_IF_ERROR(CheckMatrix("geqrf", "input", a));
  return Pair(RunLinalgGeqrf({a}, LinalgAttrs{}));
}

StatusOr<Tensor> Ormqr(const Tensor& a, const Tensor& tau, const Tensor& other, bool left,
                       bool transpose) {
  const char* op = "ormqr";
  RETURN_IF_ERROR(CheckMatrix(op, "input", a));
  RETURN_IF_ERROR(CheckMatrix(op, "other", other));
  RETURN_IF_ERROR(CheckSameDtype(op, a, "input", tau, "tau"));
  RETURN_IF_ERROR(CheckSameDtype(op, a, "input", other, "other"));
  const int64_t side = left ? Rows(other) : Cols(other);
  const int64_t t = tau.ndim() > 0 ? tau.shape()[tau.ndim() - 1] : -1;
  if (a.ndim() != other.ndim() || BatchPlus(a, {Rows(other), Cols(other)}) != other.shape())
    return InvalidArgument(
        "%s: Expected input and other to have the same batch dimensions, got "
        "input %s and other %s",
        op, a.shape().ToString(), other.shape().ToString());
  if (tau.ndim() != a.ndim() - 1 || BatchPlus(a, {t}) != tau.shape() || t > Cols(a) || t > side)
    return InvalidArgument(
        "%s: Expected tau of shape input.shape[:-2] + [k] with k <= "
        "input.shape[-1] and k <= %d, got input %s and tau %s",
        op, side, a.shape().ToString(), tau.shape().ToString());
  if (Rows(a) != side)
    return InvalidArgument(
        "%s: input.shape[-2] must equal other.shape[%d] (%s), got input %s and "
        "other %s",
        op, left ? -2 : -1, left ? "left=True" : "left=False", a.shape().ToString(),
        other.shape().ToString());
  opdefs::LinalgOrmqrAttrs attrs;
  attrs.left = left;
  attrs.transpose = transpose;
  return RunLinalgOrmqr({a, tau, other}, attrs);
}

StatusOr<std::tuple<Tensor, Tensor, Tensor>> LinalgLdlFactorEx(const Tensor& a, bool hermitian) {
  RETURN_IF_ERROR(CheckSquare("linalg.ldl_factor", a));
  RETURN_IF_ERROR(CheckNotComplex("linalg.ldl_factor", a));
  opdefs::LinalgLdlAttrs attrs;
  attrs.hermitian = hermitian;  // real matrices: Hermitian is symmetric
  return Triple(RunLinalgLdlFactorEx({a}, attrs));
}

StatusOr<Tensor> LinalgLdlSolve(const Tensor& ld, const Tensor& pivots, const Tensor& b,
                                bool hermitian) {
  const char* op = "linalg.ldl_solve";
  RETURN_IF_ERROR(CheckSquare(op, ld));
  RETURN_IF_ERROR(CheckNotComplex(op, ld));
  RETURN_IF_ERROR(CheckMatrix(op, "B", b));
  RETURN_IF_ERROR(CheckSameDtype(op, ld, "LD", b, "B"));
  RETURN_IF_ERROR(CheckPivots(op, ld, pivots, Rows(ld)));
  if (Rows(b) != Rows(ld))
    return InvalidArgument(
        "%s: Incompatible shapes of LD and B for the equation AX = B (%s and %s)", op,
        ld.shape().ToString(), b.shape().ToString());
  ASSIGN_OR_RETURN(auto bd, BroadcastBatch(op, ld, b));
  ASSIGN_OR_RETURN(Tensor le, ExpandBatch(ld, bd, 2));
  ASSIGN_OR_RETURN(Tensor pe, ExpandBatch(pivots, bd, 1));
  ASSIGN_OR_RETURN(Tensor be, ExpandBatch(b, bd, 2));
  opdefs::LinalgLdlAttrs attrs;
  attrs.hermitian = hermitian;
  return RunLinalgLdlSolve({le, pe, be}, attrs);
}

StatusOr<std::pair<Tensor, Tensor>> LinalgQr(const Tensor& a, const std::string& mode) {
  if (a.ndim() < 2)
    return InvalidArgument(
        "linalg.qr: The input tensor A must have at least 2 dimensions, got shape %s",
        a.shape().ToString());
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64 && !IsComplex(a.dtype()))
    return TypeError(
        "linalg.qr: Expected a floating point tensor (float32 or float64) as input. Got %s",
        DTypeName(a.dtype()));
  if (mode != "reduced" && mode != "complete" && mode != "r")
    return InvalidArgument("linalg.qr: mode must be 'reduced', 'complete' or 'r', got '%s'", mode);
  LinalgQrAttrs attrs;
  attrs.complete = mode == "complete";
  ASSIGN_OR_RETURN(auto qr, Pair(RunLinalgQr({a}, attrs)));
  if (mode == "r") {
    ASSIGN_OR_RETURN(Tensor empty, F::Zeros(Shape({0}), a.dtype(), a.device()));
    return std::make_pair(empty, qr.second);
  }
  return qr;
}

StatusOr<std::tuple<Tensor, Tensor, Tensor>> LinalgSvd(const Tensor& a, bool full_matrices) {
  if (a.ndim() < 2)
    return InvalidArgument(
        "linalg.svd: The input tensor A must have at least 2 dimensions, got shape %s",
        a.shape().ToString());
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64 && !IsComplex(a.dtype()))
    return TypeError(
        "linalg.svd: Expected a floating point tensor (float32 or float64) as input. Got %s",
        DTypeName(a.dtype()));
  LinalgSvdAttrs attrs;
  attrs.full_matrices = full_matrices;
  ASSIGN_OR_RETURN(TensorList r, RunLinalgSvd({a}, attrs));
  return std::make_tuple(r[0], r[1], r[2]);
}

StatusOr<std::pair<Tensor, Tensor>> LinalgEigh(const Tensor& a, const std::string& uplo) {
  RETURN_IF_ERROR(CheckSquare("linalg.eigh", a));
  if (uplo != "L" && uplo != "U")
    return InvalidArgument("linalg.eigh: UPLO must be 'L' or 'U', got '%s'", uplo);
  if (uplo == "L") return Pair(RunLinalgEigh({a}, LinalgAttrs{}));
  ASSIGN_OR_RETURN(Tensor at, H(a));  // A's upper triangle is A^H's lower one
  return Pair(RunLinalgEigh({at}, LinalgAttrs{}));
}

}  // namespace functional
}  // namespace oneflow_like
