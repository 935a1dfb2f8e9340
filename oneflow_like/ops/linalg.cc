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
#include "oneflow_like/ops/linalg.h"

#include <algorithm>
#include <vector>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/matmul.h"
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
  out->push_back(Like(in[0], batch));
  return Status();
}

Status Infer_solve(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[1], in[1].shape()));
  return Status();
}

Status Infer_eigh(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Shape& s = in[0].shape();
  Shape values(absl::MakeConstSpan(s.dims().data(), s.ndim() - 1));
  out->push_back(Like(in[0], values));
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

Status Infer_svd(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  const Shape& s = in[0].shape();
  const int64_t nd = s.ndim(), m = s[nd - 2], n = s[nd - 1], k = std::min(m, n);
  const bool full = opdefs::ReadAttrs<LinalgSvdAttrs>(attrs).full_matrices;
  std::vector<int64_t> u(s.dims().begin(), s.dims().end()), v(u), sv(u.begin(), u.end() - 1);
  u[nd - 1] = full ? m : k;
  v[nd - 2] = full ? n : k;
  sv[nd - 2] = k;
  for (auto* d : {&u, &sv, &v}) out->push_back(Like(in[0], ShapeOf(*d)));
  return Status();
}

// ---- gradient formulas (the table's grad column; PyTorch's) ----------------------------------

StatusOr<Tensor> SolveRaw(const Tensor& a, const Tensor& b);

// dA = -Y^T dY Y^T (Y = A^-1).
StatusOr<TensorList> InvGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor yt, T(c.outputs[0]));
  ASSIGN_OR_RETURN(Tensor m, F::Matmul(yt, g));
  ASSIGN_OR_RETURN(m, F::Matmul(m, yt));
  ASSIGN_OR_RETURN(m, F::Neg(m));
  return TensorList{m};
}

// S = L^-T Phi(L^T dL) L^-1, dA = (S + S^T) / 2.
StatusOr<TensorList> CholeskyGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  const Tensor& l = c.outputs[0];
  const int64_t n = l.shape()[l.ndim() - 1];
  ASSIGN_OR_RETURN(Tensor gl, F::Tril(g));
  ASSIGN_OR_RETURN(Tensor lt, T(l));
  ASSIGN_OR_RETURN(Tensor p, F::Matmul(lt, gl));
  ASSIGN_OR_RETURN(Tensor eye, F::Eye(n, n, l.dtype(), l.device()));
  ASSIGN_OR_RETURN(Tensor half_diag, F::Mul(p, eye));
  ASSIGN_OR_RETURN(half_diag, F::MulScalar(half_diag, 0.5));
  ASSIGN_OR_RETURN(Tensor phi, F::Tril(p));
  ASSIGN_OR_RETURN(phi, F::Sub(phi, half_diag));
  ASSIGN_OR_RETURN(Tensor linv, F::LinalgInv(l));
  ASSIGN_OR_RETURN(Tensor linv_t, T(linv));
  ASSIGN_OR_RETURN(Tensor s, F::Matmul(linv_t, phi));
  ASSIGN_OR_RETURN(s, F::Matmul(s, linv));
  ASSIGN_OR_RETURN(Tensor st, T(s));
  ASSIGN_OR_RETURN(Tensor ga, F::Add(s, st));
  ASSIGN_OR_RETURN(ga, F::MulScalar(ga, 0.5));
  return TensorList{ga};
}

// dA = d(logabsdet) A^-T (sign has no gradient).
StatusOr<TensorList> SlogdetGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[1];
  if (!g.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor inv, F::LinalgInv(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor inv_t, T(inv));
  ASSIGN_OR_RETURN(Tensor gg, F::Unsqueeze(g, -1));
  ASSIGN_OR_RETURN(gg, F::Unsqueeze(gg, -1));
  ASSIGN_OR_RETURN(Tensor ga, F::Mul(gg, inv_t));
  return TensorList{ga};
}

// dB = solve(A^T, dX), dA = -dB X^T.
StatusOr<TensorList> SolveGrad(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor(), Tensor()};
  ASSIGN_OR_RETURN(Tensor at, T(c.inputs[0]));
  ASSIGN_OR_RETURN(Tensor gb, SolveRaw(at, g));
  Tensor ga;
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor xt, T(c.outputs[0]));
    ASSIGN_OR_RETURN(ga, F::Matmul(gb, xt));
    ASSIGN_OR_RETURN(ga, F::Neg(ga));
  }
  return TensorList{ga, gb};
}

// G = V (diag(dL) + F o (V^T dV)) V^T, dA = (G + G^T) / 2.
StatusOr<TensorList> EighGrad(const GradContext& c) {
  const Tensor &gl = c.grad_outputs[0], &gv = c.grad_outputs[1];
  if (!gl.defined() && !gv.defined()) return TensorList{Tensor()};
  const Tensor &l = c.outputs[0], &v = c.outputs[1];
  const int64_t n = v.shape()[v.ndim() - 1];
  ASSIGN_OR_RETURN(Tensor eye, F::Eye(n, n, v.dtype(), v.device()));
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
    ASSIGN_OR_RETURN(Tensor vt, T(v));
    ASSIGN_OR_RETURN(Tensor vtg, F::Matmul(vt, gv));
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
  ASSIGN_OR_RETURN(Tensor vt, T(v));
  ASSIGN_OR_RETURN(Tensor g, F::Matmul(v, m));
  ASSIGN_OR_RETURN(g, F::Matmul(g, vt));
  ASSIGN_OR_RETURN(Tensor gt, T(g));
  ASSIGN_OR_RETURN(g, F::Add(g, gt));
  ASSIGN_OR_RETURN(g, F::MulScalar(g, 0.5));
  return TensorList{g};
}

// m >= n: M = R dR^T - dQ^T Q, dA = (dQ + Q copyltu(M)) R^-T.
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
    ASSIGN_OR_RETURN(Tensor grt, T(gr));
    ASSIGN_OR_RETURN(mm, F::Matmul(r, grt));
  }
  if (gq.defined()) {
    ASSIGN_OR_RETURN(Tensor gqt, T(gq));
    ASSIGN_OR_RETURN(Tensor p, F::Matmul(gqt, q));
    if (mm.defined()) {
      ASSIGN_OR_RETURN(mm, F::Sub(mm, p));
    } else {
      ASSIGN_OR_RETURN(mm, F::Neg(p));
    }
  }
  ASSIGN_OR_RETURN(Tensor low, F::Tril(mm));
  ASSIGN_OR_RETURN(Tensor strict, F::Tril(mm, -1));
  ASSIGN_OR_RETURN(Tensor strict_t, T(strict));
  ASSIGN_OR_RETURN(Tensor sym, F::Add(low, strict_t));
  ASSIGN_OR_RETURN(Tensor b, F::Matmul(q, sym));
  if (gq.defined()) {
    ASSIGN_OR_RETURN(b, F::Add(b, gq));
  }
  // dA = b R^-T: solve R X^T = b^T for X^T (R is square: m >= n, k = n).
  ASSIGN_OR_RETURN(Tensor bt, T(b));
  ASSIGN_OR_RETURN(Tensor xt, F::LinalgSolve(r, bt));
  ASSIGN_OR_RETURN(Tensor ga, T(xt));
  return TensorList{ga};
}

// skew(X) / E for the SVD gradient, E_ij = s_j^2 - s_i^2 (1 on the diagonal).
StatusOr<Tensor> SkewOverGap(const Tensor& x, const Tensor& e) {
  ASSIGN_OR_RETURN(Tensor xt, T(x));
  ASSIGN_OR_RETURN(Tensor sk, F::Sub(x, xt));
  return F::Div(sk, e);
}

// dA = U (J S + S K + diag(dS)) Vh + (I - U U^T) dU S^-1 Vh + U S^-1 dV^T (I - V V^T).
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
  ASSIGN_OR_RETURN(Tensor s_row, F::Unsqueeze(s, -2));  // scales columns
  ASSIGN_OR_RETURN(Tensor s_col, F::Unsqueeze(s, -1));  // scales rows
  ASSIGN_OR_RETURN(Tensor inv_s, F::Reciprocal(s));
  ASSIGN_OR_RETURN(Tensor s2, F::Mul(s, s));
  ASSIGN_OR_RETURN(Tensor s2j, F::Unsqueeze(s2, -2));
  ASSIGN_OR_RETURN(Tensor s2i, F::Unsqueeze(s2, -1));
  ASSIGN_OR_RETURN(Tensor e, F::Sub(s2j, s2i));
  ASSIGN_OR_RETURN(e, F::Add(e, eye));
  ASSIGN_OR_RETURN(Tensor v, T(vh));
  Tensor inner;
  auto add = [&](Tensor t) -> Status {
    if (inner.defined()) {
      ASSIGN_OR_RETURN(inner, F::Add(inner, t));
    } else {
      inner = t;
    }
    return Status();
  };
  Tensor gv, extra;
  if (gu.defined()) {
    ASSIGN_OR_RETURN(Tensor ut, T(u));
    ASSIGN_OR_RETURN(Tensor utgu, F::Matmul(ut, gu));
    ASSIGN_OR_RETURN(Tensor j, SkewOverGap(utgu, e));
    ASSIGN_OR_RETURN(j, F::Mul(j, s_row));
    RETURN_IF_ERROR(add(j));
    if (m > k) {  // (I - U U^T) dU S^-1 Vh
      ASSIGN_OR_RETURN(Tensor proj, F::Matmul(u, utgu));
      ASSIGN_OR_RETURN(proj, F::Sub(gu, proj));
      ASSIGN_OR_RETURN(Tensor inv_row, F::Unsqueeze(inv_s, -2));
      ASSIGN_OR_RETURN(proj, F::Mul(proj, inv_row));
      ASSIGN_OR_RETURN(extra, F::Matmul(proj, vh));
    }
  }
  if (gvh.defined()) {
    ASSIGN_OR_RETURN(gv, T(gvh));
    ASSIGN_OR_RETURN(Tensor vtgv, F::Matmul(vh, gv));
    ASSIGN_OR_RETURN(Tensor kk, SkewOverGap(vtgv, e));
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
// What Run<Name> returns per out column: the one output, or every output.
#define OFL_LINALG_RUN1 OFL_DEFINE_RUN1
#define OFL_LINALG_RUN_ALL OFL_DEFINE_RUN_ALL
#define OFL_LINALG_RUN_square OFL_LINALG_RUN1
#define OFL_LINALG_RUN_solve OFL_LINALG_RUN1
#define OFL_LINALG_RUN_slogdet OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_eigh OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_qr OFL_LINALG_RUN_ALL
#define OFL_LINALG_RUN_svd OFL_LINALG_RUN_ALL
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

// A float32/float64 batch of square matrices, or an error naming `op` and the shape.
Status CheckSquare(const char* op, const Tensor& a) {
  if (a.ndim() < 2)
    return InvalidArgument("%s: The input tensor A must have at least 2 dimensions, got shape %s",
                           op, a.shape().ToString());
  if (a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    return InvalidArgument(
        "%s: A must be batches of square matrices, but they are %d by %d matrices", op,
        a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64)
    return TypeError("%s: Expected a floating point tensor (float32 or float64) as input. Got %s",
                     op, DTypeName(a.dtype()));
  return Status();
}

StatusOr<std::pair<Tensor, Tensor>> Pair(StatusOr<TensorList> r) {
  RETURN_IF_ERROR(r.status());
  return std::make_pair((*r)[0], (*r)[1]);
}

// `x` broadcast to `batch` + its own last `keep` dims.
StatusOr<Tensor> ExpandBatch(const Tensor& x, const std::vector<int64_t>& batch, int keep) {
  std::vector<int64_t> dims(batch);
  for (int i = keep; i > 0; --i) dims.push_back(x.shape()[x.ndim() - i]);
  Shape s(absl::MakeConstSpan(dims));
  if (s == x.shape()) return x;
  return F::Expand(x, s);
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
  RETURN_IF_ERROR(CheckSquare("linalg.solve", a));
  if (b.dtype() != a.dtype())
    return TypeError(
        "linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of "
        "type %s instead",
        DTypeName(a.dtype()), DTypeName(b.dtype()));
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    ASSIGN_OR_RETURN(Tensor at, T(a));
    if (b.ndim() < 2)
      return InvalidArgument("linalg.solve: with left=False, B must be a matrix, got shape %s",
                             b.shape().ToString());
    ASSIGN_OR_RETURN(Tensor bt, T(b));
    ASSIGN_OR_RETURN(Tensor xt, LinalgSolve(at, bt, true));
    return T(xt);
  }
  const int64_t n = a.shape()[a.ndim() - 1];
  // B is a vector (batch) when it is 1-D or has A's shape without its last dim (PyTorch's rule).
  const bool vector =
      b.ndim() == 1 ||
      (b.ndim() == a.ndim() - 1 && absl::MakeConstSpan(b.shape().dims()) ==
                                       absl::MakeConstSpan(a.shape().dims()).first(a.ndim() - 1));
  Tensor bm = b;
  if (vector) {
    ASSIGN_OR_RETURN(bm, Unsqueeze(b, -1));
  }
  if (bm.ndim() < 2 || bm.shape()[bm.ndim() - 2] != n)
    return InvalidArgument(
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (%s and %s)",
        a.shape().ToString(), b.shape().ToString());
  Shape ab(absl::MakeConstSpan(a.shape().dims()).first(a.ndim() - 2));
  Shape bb(absl::MakeConstSpan(bm.shape().dims()).first(bm.ndim() - 2));
  ASSIGN_OR_RETURN(Shape batch, BroadcastShapes("linalg.solve", ab, bb));
  std::vector<int64_t> bd(batch.dims().begin(), batch.dims().end());
  ASSIGN_OR_RETURN(Tensor ae, ExpandBatch(a, bd, 2));
  ASSIGN_OR_RETURN(Tensor be, ExpandBatch(bm, bd, 2));
  ASSIGN_OR_RETURN(Tensor x, SolveRaw(ae, be));
  if (vector) return Squeeze(x, {-1});
  return x;
}

StatusOr<std::pair<Tensor, Tensor>> LinalgQr(const Tensor& a, const std::string& mode) {
  if (a.ndim() < 2)
    return InvalidArgument(
        "linalg.qr: The input tensor A must have at least 2 dimensions, got shape %s",
        a.shape().ToString());
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64)
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
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64)
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
  ASSIGN_OR_RETURN(Tensor at, T(a));  // A's upper triangle is A^T's lower one
  return Pair(RunLinalgEigh({at}, LinalgAttrs{}));
}

}  // namespace functional
}  // namespace oneflow_like
