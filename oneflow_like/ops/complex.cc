// Complex tensors and the Fourier transforms: the OpDefs of oneflow_like/opdefs/complex.def and
// the complex arithmetic, composed from real ops over view_as_real (see ops/complex.h).
#include "oneflow_like/ops/complex.h"

#include <cmath>
#include <cstring>
#include <string>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/linalg.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/scan.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/ternary.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace ops {
namespace {
namespace F = functional;

// ---- schemas ----
Status InferViewAsReal(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  if (!IsComplex(x.dtype()))
    return TypeError("[view_as_real] expected a complex tensor, got %s", x.meta_string());
  Shape s = x.shape();
  s.mutable_dims().push_back(2);
  out->push_back({s, ToRealDType(x.dtype()), x.device()});
  return Status();
}
Status ViewAsRealView(const Tensor& x, const AttrMap&, Shape* shape, DimVector* strides,
                      int64_t* offset) {
  *shape = x.shape();
  shape->mutable_dims().push_back(2);
  *strides = x.strides();
  for (auto& s : *strides) s *= 2;
  strides->push_back(1);
  *offset = x.offset() * 2;
  return Status();
}
Status InferViewAsComplex(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kF64)
    return TypeError("[view_as_complex] expected a float32 or float64 tensor, got %s",
                     x.meta_string());
  if (x.ndim() == 0 || x.dim(x.ndim() - 1) != 2)
    return InvalidArgument("[view_as_complex] the last dimension must have size 2, got %s",
                           x.meta_string());
  if (!x.is_lazy()) {
    bool ok = x.strides()[x.ndim() - 1] == 1 && x.offset() % 2 == 0;
    for (int64_t d = 0; d + 1 < x.ndim(); ++d) ok = ok && x.strides()[d] % 2 == 0;
    if (!ok)
      return InvalidArgument(
          "[view_as_complex] the last dimension must have stride 1 and every other stride and "
          "the storage offset must be divisible by 2 (input %s)",
          x.meta_string());
  }
  Shape s = x.shape();
  s.mutable_dims().pop_back();
  out->push_back({s, ToComplexDType(x.dtype()), x.device()});
  return Status();
}
Status ViewAsComplexView(const Tensor& x, const AttrMap&, Shape* shape, DimVector* strides,
                         int64_t* offset) {
  *shape = x.shape();
  shape->mutable_dims().pop_back();
  *strides = x.strides();
  strides->pop_back();
  for (auto& s : *strides) s /= 2;
  *offset = x.offset() / 2;
  return Status();
}
StatusOr<TensorList> GradViewAsReal(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor c, F::Contiguous(g));
  ASSIGN_OR_RETURN(Tensor r, F::ViewAsComplex(c));
  return TensorList{r};
}
StatusOr<TensorList> GradViewAsComplex(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor r, F::ViewAsReal(g));
  return TensorList{r};
}

Status InferComplex(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor &re = in[0], &im = in[1];
  if (!(re.dtype() == DType::kF32 || re.dtype() == DType::kF64) || re.dtype() != im.dtype() ||
      re.shape() != im.shape())
    return TypeError(
        "[complex] expected real and imag of one shape and one dtype, float32 or float64, got %s "
        "and %s",
        re.meta_string(), im.meta_string());
  out->push_back({re.shape(), ToComplexDType(re.dtype()), re.device()});
  return Status();
}
StatusOr<TensorList> GradComplex(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor(), Tensor()};
  ASSIGN_OR_RETURN(Tensor r, F::ViewAsReal(g));
  ASSIGN_OR_RETURN(Tensor re, F::Select(r, -1, 0));
  ASSIGN_OR_RETURN(Tensor im, F::Select(r, -1, 1));
  return TensorList{re, im};
}

Status InferLinalgEig(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& a = in[0];
  if (!IsComplex(a.dtype()) || a.ndim() < 2 || a.dim(a.ndim() - 1) != a.dim(a.ndim() - 2))
    return InvalidArgument(
        "[linalg.eig] expected a batch of square complex matrices [..., n, n], got %s",
        a.meta_string());
  Shape l = a.shape();
  l.mutable_dims().pop_back();
  out->push_back({l, a.dtype(), a.device()});
  out->push_back({a.shape(), a.dtype(), a.device()});
  return Status();
}
StatusOr<TensorList> GradLinalgEig(const GradContext& ctx) {
  const Tensor &gl = ctx.grad_outputs[0], &gv = ctx.grad_outputs[1];
  const Tensor &l = ctx.outputs[0], &v = ctx.outputs[1];
  if (!gl.defined() && !gv.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor gl0, gl.defined() ? gl : F::ZerosLike(l));
  ASSIGN_OR_RETURN(Tensor gv0, gv.defined() ? gv : F::ZerosLike(v));
  if (gv.defined()) {  // torch's phase check, before the kernel (which checks it too, loosely)
    ASSIGN_OR_RETURN(Tensor vt, F::Transpose(v, -2, -1));
    ASSIGN_OR_RETURN(vt, F::Conj(vt));
    ASSIGN_OR_RETURN(Tensor vhgv, F::Matmul(vt, gv));
    RETURN_IF_ERROR(F::CheckPhaseInvariant("linalg_eig_backward", vhgv));
  }
  ASSIGN_OR_RETURN(Tensor g, F::LinalgEigBackward(gl0, gv0, l, v, gl.defined()));
  return TensorList{g};
}
Status InferLinalgEigBackward(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back({in[3].shape(), in[3].dtype(), in[3].device()});
  return Status();
}
StatusOr<TensorList> GradLinalgEigBackward(const GradContext&) {
  return DoubleBackwardUnsupported("linalg_eig_backward");
}

// complex_bmm: op(a) [B, m, k] op(b) [B, k, n] -> [B, m, n], op 0 / 1 / 2: as is, transposed,
// conjugate transposed.
Status InferComplexBmm(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  const Tensor &a = in[0], &b = in[1];
  const int64_t op_a = attrs.Int("op_a", 0), op_b = attrs.Int("op_b", 0);
  if (!IsComplex(a.dtype()) || a.dtype() != b.dtype() || a.ndim() != 3 || b.ndim() != 3 ||
      a.dim(0) != b.dim(0) || op_a < 0 || op_a > 2 || op_b < 0 || op_b > 2)
    return InvalidArgument(
        "[complex_bmm] expected 3-D complex operands of one dtype and batch (op 0, 1 or 2), got "
        "%s and %s",
        a.meta_string(), b.meta_string());
  const int64_t m = a.dim(op_a ? 2 : 1), k = a.dim(op_a ? 1 : 2);
  const int64_t kb = b.dim(op_b ? 2 : 1), n = b.dim(op_b ? 1 : 2);
  if (k != kb)
    return InvalidArgument("[matmul] size mismatch (%d vs %d): got %s and %s", k, kb,
                           a.meta_string(), b.meta_string());
  out->push_back({Shape{a.dim(0), m, n}, a.dtype(), a.device()});
  return Status();
}
// C = op_a(A) op_b(B): the gradient of op_a(A) is G op_b(B)^H, that of op_b(B) op_a(A)^H G, each
// one GEMM (op_b(B)^H of a transposed B is conj(B), materialized), then undone to A's (B's)
// layout.
StatusOr<Tensor> UndoOp(const Tensor& g, int64_t op) {
  if (op == 0) return g;
  ASSIGN_OR_RETURN(Tensor t, F::Transpose(g, -2, -1));
  return op == 1 ? t : F::Conj(t);
}
StatusOr<TensorList> GradComplexBmm(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor(), Tensor()};
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const int64_t op_a = ctx.attrs.Int("op_a", 0), op_b = ctx.attrs.Int("op_b", 0);
  Tensor ga, gb;
  if (ctx.needs_input_grad[0]) {
    Tensor p;
    if (op_b == 1) {
      ASSIGN_OR_RETURN(Tensor cb, F::Conj(b));
      ASSIGN_OR_RETURN(p, F::ComplexBmm(g, cb, 0, 0));
    } else {
      ASSIGN_OR_RETURN(p, F::ComplexBmm(g, b, 0, op_b == 0 ? 2 : 0));
    }
    ASSIGN_OR_RETURN(ga, UndoOp(p, op_a));
  }
  if (ctx.needs_input_grad[1]) {
    Tensor q;
    if (op_a == 1) {
      ASSIGN_OR_RETURN(Tensor ca, F::Conj(a));
      ASSIGN_OR_RETURN(q, F::ComplexBmm(ca, g, 0, 0));
    } else {
      ASSIGN_OR_RETURN(q, F::ComplexBmm(a, g, op_a == 0 ? 2 : 0, 0));
    }
    ASSIGN_OR_RETURN(gb, UndoOp(q, op_b));
  }
  return TensorList{ga, gb};
}

Status CheckFftDims(const char* op, const Tensor& x, const std::vector<int64_t>& dims) {
  if (dims.empty())
    return InvalidArgument("[%s] no dimension to transform (%s)", op, x.meta_string());
  std::vector<bool> seen(x.ndim(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= x.ndim() || seen[d])
      return InvalidArgument("[%s] invalid or repeated dim %d for %s", op, d, x.meta_string());
    seen[d] = true;
  }
  return Status();
}
Status InferFftC2C(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  if (!IsComplex(x.dtype()))
    return TypeError("[fft_c2c] expected a complex tensor, got %s", x.meta_string());
  RETURN_IF_ERROR(CheckFftDims("fft_c2c", x, a.Ints("dim")));
  out->push_back({x.shape(), x.dtype(), x.device()});
  return Status();
}
Status InferFftR2C(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kF64)
    return TypeError("[fft_r2c] expected a float32 or float64 tensor, got %s", x.meta_string());
  const auto& dims = a.Ints("dim");
  RETURN_IF_ERROR(CheckFftDims("fft_r2c", x, dims));
  Shape s = x.shape();
  s[dims.back()] = s[dims.back()] / 2 + 1;
  out->push_back({s, ToComplexDType(x.dtype()), x.device()});
  return Status();
}
Status InferFftC2R(TensorSpan in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  if (!IsComplex(x.dtype()))
    return TypeError("[fft_c2r] expected a complex tensor, got %s", x.meta_string());
  const auto& dims = a.Ints("dim");
  RETURN_IF_ERROR(CheckFftDims("fft_c2r", x, dims));
  const int64_t n = a.Int("last_dim_size");
  if (n < 1 || x.dim(dims.back()) != n / 2 + 1)
    return InvalidArgument("[fft_c2r] %s: dim %d must have size %d for an output of size %d",
                           x.meta_string(), dims.back(), n / 2 + 1, n);
  Shape s = x.shape();
  s[dims.back()] = n;
  out->push_back({s, ToRealDType(x.dtype()), x.device()});
  return Status();
}

// The adjoints: c2c's is c2c the other way; r2c's is c2c backward of the zero-padded full
// spectrum, real part; c2r's is r2c with the entries that stand for two conjugate bins doubled
// (torch's weighting of the Hermitian half).
StatusOr<TensorList> GradFftC2C(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  ASSIGN_OR_RETURN(Tensor r, F::FftC2C(g, ctx.attrs.Ints("dim"), !ctx.attrs.Bool("forward"),
                                       ctx.attrs.Float("scale", 1.0)));
  return TensorList{r};
}
StatusOr<TensorList> GradFftR2C(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  const auto& dims = ctx.attrs.Ints("dim");
  const int64_t d = dims.back(), n = ctx.inputs[0].dim(d), half = g.dim(d);
  ASSIGN_OR_RETURN(Tensor gr, F::ViewAsReal(g));
  Tensor full = gr;
  if (n > half) {
    Shape zs = gr.shape();
    zs[d] = n - half;
    ASSIGN_OR_RETURN(Tensor z, F::Zeros(zs, gr.dtype(), gr.device()));
    ASSIGN_OR_RETURN(full, F::Cat({gr, z}, d));
  }
  ASSIGN_OR_RETURN(Tensor fc, F::ViewAsComplex(full));
  ASSIGN_OR_RETURN(Tensor x, F::FftC2C(fc, dims, false, ctx.attrs.Float("scale", 1.0)));
  ASSIGN_OR_RETURN(Tensor re, F::RealPart(x));
  ASSIGN_OR_RETURN(Tensor out, F::Contiguous(re));
  return TensorList{out};
}
StatusOr<TensorList> GradFftC2R(const GradContext& ctx) {
  const Tensor& g = ctx.grad_outputs[0];
  if (!g.defined()) return TensorList{Tensor()};
  const auto& dims = ctx.attrs.Ints("dim");
  const int64_t d = dims.back(), n = ctx.attrs.Int("last_dim_size"), half = n / 2 + 1;
  ASSIGN_OR_RETURN(Tensor gi, F::FftR2C(g, dims, ctx.attrs.Float("scale", 1.0)));
  // weights along d: 1, then 2 for the n - half bins whose conjugates c2r also sums, then 1 for
  // the Nyquist bin of an even n
  const DType rt = ToRealDType(gi.dtype());
  TensorList parts;
  ASSIGN_OR_RETURN(Tensor dc, F::Full(Shape({1}), 1.0, rt, g.device()));
  parts.push_back(dc);
  if (n - half > 0) {
    ASSIGN_OR_RETURN(Tensor two, F::Full(Shape({n - half}), 2.0, rt, g.device()));
    parts.push_back(two);
  }
  if (2 * half - 1 - n > 0) {
    ASSIGN_OR_RETURN(Tensor nyq, F::Full(Shape({2 * half - 1 - n}), 1.0, rt, g.device()));
    parts.push_back(nyq);
  }
  ASSIGN_OR_RETURN(Tensor wt, F::Cat(parts, 0));
  Shape ws(DimVector(g.ndim() + 1, 1));
  ws[d] = half;
  ASSIGN_OR_RETURN(wt, F::Reshape(wt, ws));
  ASSIGN_OR_RETURN(Tensor gr, F::ViewAsReal(gi));
  ASSIGN_OR_RETURN(Tensor prod, F::Mul(gr, wt));
  ASSIGN_OR_RETURN(Tensor out, F::ViewAsComplex(prod));
  return TensorList{out};
}

}  // namespace

// clang-format off
#define OFL_COMPLEX_VIEW(name, Name) \
  const OpDef k##Name = OpSpec(#name, Infer##Name).View(Name##View).Grad(Grad##Name) \
      .SaveInputs(false).SaveOutputs(false);
#define OFL_COMPLEX_SAVE_IN_none false
#define OFL_COMPLEX_SAVE_IN_inputs true
#define OFL_COMPLEX_SAVE_IN_outputs false
#define OFL_COMPLEX_SAVE_OUT_none false
#define OFL_COMPLEX_SAVE_OUT_inputs false
#define OFL_COMPLEX_SAVE_OUT_outputs true
#define OFL_COMPLEX_KERNEL(name, Name, save, strided) \
  const OpDef k##Name = OpSpec(#name, Infer##Name).Grad(Grad##Name) \
      .SaveInputs(OFL_COMPLEX_SAVE_IN_##save).SaveOutputs(OFL_COMPLEX_SAVE_OUT_##save) \
      .StridedInputs(strided);
#include "oneflow_like/opdefs/complex.def"
#undef OFL_COMPLEX_VIEW
#undef OFL_COMPLEX_KERNEL
// clang-format on

}  // namespace ops

namespace functional {
namespace {

// The comparisons and maximum / minimum order values: torch's RuntimeError for complex ones.
Status OrderingError(const char* name, const Tensor& x) {
  for (const char* cmp : {"lt", "le", "gt", "ge"})
    if (std::strcmp(name, cmp) == 0)
      return Unimplemented("\"%s_cpu\" not implemented for '%s'", name, DTypeTorchName(x.dtype()));
  if (std::strcmp(name, "maximum") == 0 || std::strcmp(name, "minimum") == 0)
    return Unimplemented("%s not implemented for complex tensors.", name);
  return Status();
}
Status NotSupported(const char* name, const Tensor& x) {
  RETURN_IF_ERROR(OrderingError(name, x));
  return TypeError("[%s] not supported for %s tensors (%s)", name, DTypeLongName(x.dtype()),
                   x.meta_string());
}
// Both operands as the promoted complex dtype.
StatusOr<std::pair<Tensor, Tensor>> PromoteComplex(const Tensor& a, const Tensor& b) {
  DType t = ToComplexDType(PromoteTypes(a.dtype(), b.dtype()));
  ASSIGN_OR_RETURN(Tensor x, Cast(a, t));
  ASSIGN_OR_RETURN(Tensor y, Cast(b, t));
  return std::make_pair(x, y);
}
struct Parts {
  Tensor re, im;
};
StatusOr<Parts> Split(const Tensor& z) {
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(z));
  ASSIGN_OR_RETURN(Tensor re, Select(r, -1, 0));
  ASSIGN_OR_RETURN(Tensor im, Select(r, -1, 1));
  return Parts{re, im};
}
StatusOr<Tensor> SquaredNorm(const Tensor& re, const Tensor& im) {
  ASSIGN_OR_RETURN(Tensor a, Mul(re, re));
  ASSIGN_OR_RETURN(Tensor b, Mul(im, im));
  return Add(a, b);
}
// |z| of real parts (re, im) as hypot: m sqrt(1 + (n / m)^2) with m = max(|re|, |im|), n the
// other, so tiny and huge parts neither underflow nor overflow. At z = 0 the quotient reads
// n / 1. `mask_zero`: the result is masked to 0 there too, which gives torch's gradient 0 for
// abs / sgn / angle; without it (log, sqrt) the gradient at 0 is NaN, as torch's.
StatusOr<Tensor> Hypot(const Tensor& re, const Tensor& im, bool mask_zero = true,
                       Tensor* zero_mask = nullptr) {
  ASSIGN_OR_RETURN(Tensor ar, Abs(re));
  ASSIGN_OR_RETURN(Tensor ai, Abs(im));
  ASSIGN_OR_RETURN(Tensor ge, Compare(CompareOp::kGe, ar, ai));  // one condition for both picks
  ASSIGN_OR_RETURN(Tensor m, Where(ge, ar, ai));
  ASSIGN_OR_RETURN(Tensor n, Where(ge, ai, ar));
  ASSIGN_OR_RETURN(Tensor z, CompareScalar(CompareOp::kEq, m, 0.0));
  ASSIGN_OR_RETURN(Tensor ones, OnesLike(m));
  ASSIGN_OR_RETURN(Tensor msafe, Where(z, ones, m));
  ASSIGN_OR_RETURN(Tensor q, Div(n, msafe));
  ASSIGN_OR_RETURN(Tensor q2, Mul(q, q));
  ASSIGN_OR_RETURN(Tensor q21, AddScalar(q2, 1.0));
  ASSIGN_OR_RETURN(Tensor root, Sqrt(q21));
  ASSIGN_OR_RETURN(Tensor r, Mul(m, root));
  if (zero_mask != nullptr) *zero_mask = z;
  if (!mask_zero) return r;
  ASSIGN_OR_RETURN(Tensor zeros, ZerosLike(m));
  return Where(z, zeros, r);
}
StatusOr<Tensor> Atan2(const Tensor& y0, const Tensor& x0) {
  // atan(y / x), shifted by +-pi where x < 0 (+pi for y >= 0), 0 where x == y == 0 (torch's
  // angle, with gradient 0 there). The quotient is taken of the smaller magnitude over the larger
  // one (pi/2 - atan(x / y) where |y| > |x|), so no operand of a gradient is infinite on the axes.
  ASSIGN_OR_RETURN(Tensor x0z, CompareScalar(CompareOp::kEq, x0, 0.0));
  ASSIGN_OR_RETURN(Tensor y0z, CompareScalar(CompareOp::kEq, y0, 0.0));
  ASSIGN_OR_RETURN(Tensor both, LogicalAnd(x0z, y0z));
  ASSIGN_OR_RETURN(Tensor ones, OnesLike(x0));
  ASSIGN_OR_RETURN(Tensor zero, ZerosLike(y0));
  ASSIGN_OR_RETURN(Tensor x, Where(both, ones, x0));  // atan2(0, 1) = 0 with finite gradients
  ASSIGN_OR_RETURN(Tensor y, Where(both, zero, y0));
  ASSIGN_OR_RETURN(Tensor ax, Abs(x));
  ASSIGN_OR_RETURN(Tensor ay, Abs(y));
  ASSIGN_OR_RETURN(Tensor steep, Compare(CompareOp::kGt, ay, ax));
  ASSIGN_OR_RETURN(Tensor num, Where(steep, x, y));
  ASSIGN_OR_RETURN(Tensor den, Where(steep, y, x));
  ASSIGN_OR_RETURN(Tensor q, Div(num, den));
  ASSIGN_OR_RETURN(Tensor at, Atan(q));
  // steep: atan2(y, x) = sign(y) pi/2 - atan(x / y)
  ASSIGN_OR_RETURN(Tensor ypos, CompareScalar(CompareOp::kGe, y, 0.0));
  ASSIGN_OR_RETURN(Tensor mhalf, FullLike(y, -M_PI / 2));
  ASSIGN_OR_RETURN(Tensor half, WhereScalarInput(ypos, M_PI / 2, mhalf));
  ASSIGN_OR_RETURN(Tensor steep_v, Sub(half, at));
  // flat: atan(y / x), shifted by +-pi where x < 0
  ASSIGN_OR_RETURN(Tensor xneg, CompareScalar(CompareOp::kLt, x, 0.0));
  ASSIGN_OR_RETURN(Tensor mpi, FullLike(y, -M_PI));
  ASSIGN_OR_RETURN(Tensor shift, WhereScalarInput(ypos, M_PI, mpi));
  ASSIGN_OR_RETURN(Tensor sh, Where(xneg, shift, zero));
  ASSIGN_OR_RETURN(Tensor flat_v, Add(at, sh));
  ASSIGN_OR_RETURN(Tensor r, Where(steep, steep_v, flat_v));
  return Where(both, zero, r);
}
StatusOr<Tensor> Mul3(const Parts& a, const Parts& b, Tensor* im_out) {
  ASSIGN_OR_RETURN(Tensor rr, Mul(a.re, b.re));
  ASSIGN_OR_RETURN(Tensor ii, Mul(a.im, b.im));
  ASSIGN_OR_RETURN(Tensor ri, Mul(a.re, b.im));
  ASSIGN_OR_RETURN(Tensor ir, Mul(a.im, b.re));
  ASSIGN_OR_RETURN(*im_out, Add(ri, ir));
  return Sub(rr, ii);
}
StatusOr<Tensor> CMul(const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Parts p, Split(a));
  ASSIGN_OR_RETURN(Parts q, Split(b));
  Tensor im;
  ASSIGN_OR_RETURN(Tensor re, Mul3(p, q, &im));
  return ComplexFromParts(re, im);
}
StatusOr<Tensor> CDiv(const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Parts p, Split(a));
  ASSIGN_OR_RETURN(Parts q, Split(b));
  ASSIGN_OR_RETURN(Tensor den, SquaredNorm(q.re, q.im));
  ASSIGN_OR_RETURN(Tensor nbi, Neg(q.im));
  Tensor im;
  ASSIGN_OR_RETURN(Tensor re, Mul3(p, Parts{q.re, nbi}, &im));  // a * conj(b)
  ASSIGN_OR_RETURN(Tensor r, Div(re, den));
  ASSIGN_OR_RETURN(Tensor i, Div(im, den));
  return ComplexFromParts(r, i);
}
// f(view_as_real(z)) as a complex tensor (f keeps the trailing size-2 dim last).
template <typename Fn>
StatusOr<Tensor> OnRealView(const Tensor& z, Fn&& f) {
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(z));
  ASSIGN_OR_RETURN(Tensor y, f(r));
  return ComplexFromPairs(y);
}
StatusOr<Tensor> CExp(const Tensor& z) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  ASSIGN_OR_RETURN(Tensor m, Exp(p.re));
  ASSIGN_OR_RETURN(Tensor c, Cos(p.im));
  ASSIGN_OR_RETURN(Tensor s, Sin(p.im));
  ASSIGN_OR_RETURN(Tensor re, Mul(m, c));
  ASSIGN_OR_RETURN(Tensor im, Mul(m, s));
  return ComplexFromParts(re, im);
}
StatusOr<Tensor> CLog(const Tensor& z) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  ASSIGN_OR_RETURN(Tensor a, Hypot(p.re, p.im, /*mask_zero=*/false));
  ASSIGN_OR_RETURN(Tensor re, Log(a));
  ASSIGN_OR_RETURN(Tensor im, Atan2(p.im, p.re));
  return ComplexFromParts(re, im);
}

}  // namespace

StatusOr<Tensor> ViewAsReal(const Tensor& x) {
  return Dispatch1(ops::kViewAsReal, {x});
}
StatusOr<Tensor> ViewAsComplex(const Tensor& x) {
  return Dispatch1(ops::kViewAsComplex, {x});
}
StatusOr<Tensor> ComplexFromParts(const Tensor& real, const Tensor& imag) {
  if (IsComplex(real.dtype()) || IsComplex(imag.dtype()) ||
      !(real.dtype() == DType::kF32 || real.dtype() == DType::kF64) || real.dtype() != imag.dtype())
    return TypeError(
        "[complex] expected both inputs to be float32 or float64 of one dtype, got %s and %s",
        real.meta_string(), imag.meta_string());
  if (!real.device().is_cpu()) {  // no CUDA complex kernel: a view of the stacked parts
    ASSIGN_OR_RETURN(Tensor s, Stack({real, imag}, -1));
    return ViewAsComplex(s);
  }
  if (real.shape() == imag.shape()) return Dispatch1(ops::kComplex, {real, imag});
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes("complex", real.shape(), imag.shape()));
  ASSIGN_OR_RETURN(Tensor re, Expand(real, b));
  ASSIGN_OR_RETURN(Tensor im, Expand(imag, b));
  return Dispatch1(ops::kComplex, {re, im});
}
StatusOr<Tensor> ComplexFromPairs(const Tensor& r) {
  ASSIGN_OR_RETURN(Tensor re, Select(r, -1, 0));
  ASSIGN_OR_RETURN(Tensor im, Select(r, -1, 1));
  return ComplexFromParts(re, im);
}
StatusOr<Tensor> Polar(const Tensor& abs, const Tensor& angle) {
  if (!(abs.dtype() == DType::kF32 || abs.dtype() == DType::kF64) || abs.dtype() != angle.dtype())
    return TypeError(
        "[polar] expected abs and angle to be float32 or float64 of one dtype, got %s and %s",
        abs.meta_string(), angle.meta_string());
  ASSIGN_OR_RETURN(Tensor c, Cos(angle));
  ASSIGN_OR_RETURN(Tensor s, Sin(angle));
  ASSIGN_OR_RETURN(Tensor re, Mul(abs, c));
  ASSIGN_OR_RETURN(Tensor im, Mul(abs, s));
  return ComplexFromParts(re, im);
}
StatusOr<Tensor> RealPart(const Tensor& x) {
  if (!IsComplex(x.dtype())) return x;
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
  return Select(r, -1, 0);
}
StatusOr<Tensor> ImagPart(const Tensor& x) {
  if (!IsComplex(x.dtype()))
    return TypeError("[imag] imag is not implemented for tensors with non-complex dtypes (%s)",
                     x.meta_string());
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
  return Select(r, -1, 1);
}
StatusOr<Tensor> Conj(const Tensor& x) {
  if (!IsComplex(x.dtype())) return x;
  ASSIGN_OR_RETURN(Parts p, Split(x));
  ASSIGN_OR_RETURN(Tensor ni, Neg(p.im));
  return ComplexFromParts(p.re, ni);
}

StatusOr<TensorList> LinalgEig(const Tensor& a) {
  if (!(a.dtype() == DType::kF32 || a.dtype() == DType::kF64 || IsComplex(a.dtype())))
    return TypeError("[linalg.eig] expected a float or complex tensor, got %s", a.meta_string());
  ASSIGN_OR_RETURN(Tensor c, Cast(a, ToComplexDType(a.dtype())));
  return Dispatch(ops::kLinalgEig, {c});
}

StatusOr<Tensor> LinalgEigBackward(const Tensor& gl, const Tensor& gv, const Tensor& l,
                                   const Tensor& v, bool has_gl) {
  return Dispatch1(ops::kLinalgEigBackward, {gl, gv, l, v}, {{"has_gL", has_gl}});
}

StatusOr<Tensor> FftC2C(const Tensor& x, const std::vector<int64_t>& dims, bool forward,
                        double scale) {
  return Dispatch1(ops::kFftC2C, {x}, {{"dim", dims}, {"forward", forward}, {"scale", scale}});
}
StatusOr<Tensor> FftR2C(const Tensor& x, const std::vector<int64_t>& dims, double scale) {
  return Dispatch1(ops::kFftR2C, {x}, {{"dim", dims}, {"scale", scale}});
}
StatusOr<Tensor> FftC2R(const Tensor& x, const std::vector<int64_t>& dims, int64_t last_dim_size,
                        double scale) {
  return Dispatch1(ops::kFftC2R, {x},
                   {{"dim", dims}, {"last_dim_size", last_dim_size}, {"scale", scale}});
}

StatusOr<Tensor> ComplexScalarTensor(double re, double im, DType dtype, Device device) {
  const DType real = ToRealDType(ToComplexDType(dtype));
  ASSIGN_OR_RETURN(Tensor r, Full(Shape({}), re, real, device));
  ASSIGN_OR_RETURN(Tensor i, Full(Shape({}), im, real, device));
  return ComplexFromParts(r, i);
}

namespace {
// z * s for a real s (both parts scaled).
StatusOr<Tensor> CScale(const Tensor& z, double s) {
  return OnRealView(z, [s](const Tensor& r) { return MulScalar(r, s); });
}
// sign * i * z: i (a + ib) = -b + ia.
StatusOr<Tensor> CTimesI(const Tensor& z, double sign) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  ASSIGN_OR_RETURN(Tensor re, MulScalar(p.im, -sign));
  ASSIGN_OR_RETURN(Tensor im, MulScalar(p.re, sign));
  return ComplexFromParts(re, im);
}
StatusOr<Tensor> CAddReal(const Tensor& z, double s) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  ASSIGN_OR_RETURN(Tensor re, AddScalar(p.re, s));
  return ComplexFromParts(re, p.im);
}
StatusOr<Tensor> CSqrt(const Tensor& z) {
  return ComplexPowScalar(z, 0.5, 0.0);
}
// sin / cos / sinh / cosh of a + ib from the real functions of a and b:
//   sin = sin a cosh b + i cos a sinh b      cos  = cos a cosh b - i sin a sinh b
//   sinh = sinh a cos b + i cosh a sin b     cosh = cosh a cos b + i sinh a sin b
StatusOr<Tensor> CTrig(const Tensor& z, const std::string& n) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  const bool hyper = n == "sinh" || n == "cosh";
  const Tensor& u = hyper ? p.im : p.re;  // the argument of the circular functions
  const Tensor& v = hyper ? p.re : p.im;  // ... and of the hyperbolic ones
  ASSIGN_OR_RETURN(Tensor su, Sin(u));
  ASSIGN_OR_RETURN(Tensor cu, Cos(u));
  ASSIGN_OR_RETURN(Tensor sv, Sinh(v));
  ASSIGN_OR_RETURN(Tensor cv, Cosh(v));
  Tensor re, im;
  if (n == "sin") {
    ASSIGN_OR_RETURN(re, Mul(su, cv));
    ASSIGN_OR_RETURN(im, Mul(cu, sv));
  } else if (n == "cos") {
    ASSIGN_OR_RETURN(re, Mul(cu, cv));
    ASSIGN_OR_RETURN(Tensor t, Mul(su, sv));
    ASSIGN_OR_RETURN(im, Neg(t));
  } else if (n == "sinh") {
    ASSIGN_OR_RETURN(re, Mul(sv, cu));
    ASSIGN_OR_RETURN(im, Mul(cv, su));
  } else {  // cosh
    ASSIGN_OR_RETURN(re, Mul(cv, cu));
    ASSIGN_OR_RETURN(im, Mul(sv, su));
  }
  return ComplexFromParts(re, im);
}
// tan(x + iy) = sin 2x / (cos 2x + cosh 2y) + i tanh 2y / (1 + cos 2x / cosh 2y): the second
// form of the imaginary part stays finite (-> +-1) where cosh 2y overflows.
StatusOr<Parts> TanParts(const Tensor& x, const Tensor& y) {
  ASSIGN_OR_RETURN(Tensor x2, MulScalar(x, 2.0));
  ASSIGN_OR_RETURN(Tensor y2, MulScalar(y, 2.0));
  ASSIGN_OR_RETURN(Tensor s, Sin(x2));
  ASSIGN_OR_RETURN(Tensor c, Cos(x2));
  ASSIGN_OR_RETURN(Tensor ch, Cosh(y2));
  ASSIGN_OR_RETURN(Tensor th, Tanh(y2));
  ASSIGN_OR_RETURN(Tensor den, Add(c, ch));
  ASSIGN_OR_RETURN(Tensor re, Div(s, den));
  ASSIGN_OR_RETURN(Tensor q, Div(c, ch));
  ASSIGN_OR_RETURN(Tensor q1, AddScalar(q, 1.0));
  ASSIGN_OR_RETURN(Tensor im, Div(th, q1));
  return Parts{re, im};
}
// asinh z = log(z + sqrt(z^2 + 1)), evaluated on the right half plane (asinh is odd) so that
// z + sqrt(...) does not cancel for Re z << 0.
StatusOr<Tensor> CAsinh(const Tensor& z) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  ASSIGN_OR_RETURN(Tensor neg, CompareScalar(CompareOp::kLt, p.re, 0.0));
  ASSIGN_OR_RETURN(Tensor ones, OnesLike(p.re));
  ASSIGN_OR_RETURN(Tensor sign, WhereScalarInput(neg, -1.0, ones));
  ASSIGN_OR_RETURN(Tensor wr, Mul(p.re, sign));
  ASSIGN_OR_RETURN(Tensor wi, Mul(p.im, sign));
  ASSIGN_OR_RETURN(Tensor w, ComplexFromParts(wr, wi));
  ASSIGN_OR_RETURN(Tensor w2, CMul(w, w));
  ASSIGN_OR_RETURN(Tensor w21, CAddReal(w2, 1.0));
  ASSIGN_OR_RETURN(Tensor root, CSqrt(w21));
  ASSIGN_OR_RETURN(Tensor sum, ComplexBinary("add", w, root, 1.0));
  ASSIGN_OR_RETURN(Tensor l, CLog(sum));
  ASSIGN_OR_RETURN(Parts q, Split(l));
  ASSIGN_OR_RETURN(Tensor re, Mul(q.re, sign));
  ASSIGN_OR_RETURN(Tensor im, Mul(q.im, sign));
  return ComplexFromParts(re, im);
}
// log1p(a + ib) = log|1 + z| + i arg(1 + z), with log|1 + z| = log1p(a (2 + a) + b^2) / 2
// exact for small z.
StatusOr<Tensor> CLog1p(const Tensor& z) {
  ASSIGN_OR_RETURN(Parts p, Split(z));
  ASSIGN_OR_RETURN(Tensor a2, AddScalar(p.re, 2.0));
  ASSIGN_OR_RETURN(Tensor t, Mul(p.re, a2));
  ASSIGN_OR_RETURN(Tensor b2, Mul(p.im, p.im));
  ASSIGN_OR_RETURN(Tensor u, Add(t, b2));
  ASSIGN_OR_RETURN(Tensor l, Log1p(u));
  ASSIGN_OR_RETURN(Tensor re, MulScalar(l, 0.5));
  ASSIGN_OR_RETURN(Tensor a1, AddScalar(p.re, 1.0));
  ASSIGN_OR_RETURN(Tensor im, Atan2(p.im, a1));
  return ComplexFromParts(re, im);
}
// atanh z = (log1p(z) - log1p(-z)) / 2.
StatusOr<Tensor> CAtanh(const Tensor& z) {
  ASSIGN_OR_RETURN(Tensor a, CLog1p(z));
  ASSIGN_OR_RETURN(Tensor mz, CScale(z, -1.0));
  ASSIGN_OR_RETURN(Tensor b, CLog1p(mz));
  ASSIGN_OR_RETURN(Tensor d, ComplexBinary("sub", a, b, 1.0));
  return CScale(d, 0.5);
}
}  // namespace

StatusOr<Tensor> ComplexUnary(const char* name, const Tensor& x) {
  const std::string n = name;
  if (n == "neg") return OnRealView(x, [](const Tensor& r) { return Neg(r); });
  if (n == "exp") return CExp(x);
  if (n == "log") return CLog(x);
  if (n == "sqrt") return ComplexPowScalar(x, 0.5, 0.0);  // sqrt|z| e^(i arg(z) / 2)
  if (n == "reciprocal") {
    ASSIGN_OR_RETURN(Tensor one, ComplexScalarTensor(1.0, 0.0, x.dtype(), x.device()));
    return CDiv(one, x);
  }
  if (n == "abs") {
    ASSIGN_OR_RETURN(Parts p, Split(x));
    return Hypot(p.re, p.im);
  }
  if (n == "angle") {
    ASSIGN_OR_RETURN(Parts p, Split(x));
    return Atan2(p.im, p.re);
  }
  if (n == "sgn" || n == "sign") {
    if (n == "sign")
      return TypeError("[sign] not supported for complex tensors (%s): use sgn", x.meta_string());
    ASSIGN_OR_RETURN(Parts p, Split(x));
    Tensor zero;
    ASSIGN_OR_RETURN(Tensor a, Hypot(p.re, p.im, true, &zero));
    ASSIGN_OR_RETURN(Tensor ones, OnesLike(a));
    ASSIGN_OR_RETURN(Tensor safe, Where(zero, ones, a));
    ASSIGN_OR_RETURN(Tensor re, Div(p.re, safe));
    ASSIGN_OR_RETURN(Tensor im, Div(p.im, safe));
    ASSIGN_OR_RETURN(Tensor zeros, ZerosLike(a));  // sgn(0) = 0, with gradient 0 (torch)
    ASSIGN_OR_RETURN(re, Where(zero, zeros, re));
    ASSIGN_OR_RETURN(im, Where(zero, zeros, im));
    return ComplexFromParts(re, im);
  }
  if (n == "square") return CMul(x, x);
  if (n == "sin" || n == "cos" || n == "sinh" || n == "cosh") return CTrig(x, n);
  if (n == "tan" || n == "tanh") {
    ASSIGN_OR_RETURN(Parts p, Split(x));
    if (n == "tan") {
      ASSIGN_OR_RETURN(Parts t, TanParts(p.re, p.im));
      return ComplexFromParts(t.re, t.im);
    }
    ASSIGN_OR_RETURN(Parts t, TanParts(p.im, p.re));  // tanh z = -i tan(iz)
    return ComplexFromParts(t.im, t.re);
  }
  if (n == "sigmoid") {  // 1 / (1 + exp(-z))
    ASSIGN_OR_RETURN(Tensor mz, CScale(x, -1.0));
    ASSIGN_OR_RETURN(Tensor e, CExp(mz));
    ASSIGN_OR_RETURN(Tensor d, CAddReal(e, 1.0));
    ASSIGN_OR_RETURN(Tensor one, ComplexScalarTensor(1.0, 0.0, x.dtype(), x.device()));
    return CDiv(one, d);
  }
  if (n == "expm1") {  // expm1(a) cos b - 2 sin^2(b / 2) + i e^a sin b: exact for small z
    ASSIGN_OR_RETURN(Parts p, Split(x));
    ASSIGN_OR_RETURN(Tensor em, Expm1(p.re));
    ASSIGN_OR_RETURN(Tensor cb, Cos(p.im));
    ASSIGN_OR_RETURN(Tensor t, Mul(em, cb));
    ASSIGN_OR_RETURN(Tensor hb, MulScalar(p.im, 0.5));
    ASSIGN_OR_RETURN(Tensor sh, Sin(hb));
    ASSIGN_OR_RETURN(Tensor sh2, Mul(sh, sh));
    ASSIGN_OR_RETURN(Tensor re, Sub(t, sh2, 2.0));
    ASSIGN_OR_RETURN(Tensor ea, Exp(p.re));
    ASSIGN_OR_RETURN(Tensor sb, Sin(p.im));
    ASSIGN_OR_RETURN(Tensor im, Mul(ea, sb));
    return ComplexFromParts(re, im);
  }
  if (n == "log1p") return CLog1p(x);
  if (n == "log2" || n == "log10") {
    ASSIGN_OR_RETURN(Tensor l, CLog(x));
    return CScale(l, 1.0 / std::log(n == "log2" ? 2.0 : 10.0));
  }
  if (n == "exp2") {
    ASSIGN_OR_RETURN(Tensor t, CScale(x, std::log(2.0)));
    return CExp(t);
  }
  if (n == "rsqrt") {
    ASSIGN_OR_RETURN(Tensor r, CSqrt(x));
    ASSIGN_OR_RETURN(Tensor one, ComplexScalarTensor(1.0, 0.0, x.dtype(), x.device()));
    return CDiv(one, r);
  }
  if (n == "asinh") return CAsinh(x);
  if (n == "asin" || n == "acos") {  // asin z = -i asinh(iz); acos z = pi/2 - asin z
    ASSIGN_OR_RETURN(Tensor iz, CTimesI(x, 1.0));
    ASSIGN_OR_RETURN(Tensor h, CAsinh(iz));
    ASSIGN_OR_RETURN(Tensor as, CTimesI(h, -1.0));
    if (n == "asin") return as;
    ASSIGN_OR_RETURN(Tensor neg, CScale(as, -1.0));
    return CAddReal(neg, M_PI / 2);
  }
  if (n == "acosh") {  // log(z + sqrt(z + 1) sqrt(z - 1))
    ASSIGN_OR_RETURN(Tensor zp, CAddReal(x, 1.0));
    ASSIGN_OR_RETURN(Tensor zm, CAddReal(x, -1.0));
    ASSIGN_OR_RETURN(Tensor sp, CSqrt(zp));
    ASSIGN_OR_RETURN(Tensor sm, CSqrt(zm));
    ASSIGN_OR_RETURN(Tensor pr, CMul(sp, sm));
    ASSIGN_OR_RETURN(Tensor sum, ComplexBinary("add", x, pr, 1.0));
    return CLog(sum);
  }
  if (n == "atanh") return CAtanh(x);
  if (n == "atan") {  // atan z = -i atanh(iz)
    ASSIGN_OR_RETURN(Tensor iz, CTimesI(x, 1.0));
    ASSIGN_OR_RETURN(Tensor h, CAtanh(iz));
    return CTimesI(h, -1.0);
  }
  return NotSupported(name, x);
}

// prod of a complex tensor over `dims` (empty: all): pairwise products along each dim,
// halving it each round (log2 n complex multiplies; differentiable through the real ops).
StatusOr<Tensor> ComplexProd(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  const int64_t nd = x.shape().ndim();
  if (dims.empty())
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
  for (auto& d : dims) {
    if (d < -std::max<int64_t>(nd, 1) || d >= std::max<int64_t>(nd, 1))
      return OutOfRange("[prod] dim %d out of range for %s", int(d), x.meta_string());
    if (d < 0) d += std::max<int64_t>(nd, 1);
  }
  if (nd == 0) return Clone(x);
  Tensor r = x;
  for (int64_t d : dims) {
    int64_t n = r.shape()[d];
    if (n == 0) {
      Shape s = r.shape();
      s[d] = 1;
      ASSIGN_OR_RETURN(Tensor re, Full(s, 1.0, ToRealDType(x.dtype()), x.device()));
      ASSIGN_OR_RETURN(Tensor im, Full(s, 0.0, ToRealDType(x.dtype()), x.device()));
      ASSIGN_OR_RETURN(r, ComplexFromParts(re, im));
      continue;
    }
    while (n > 1) {
      const int64_t h = n / 2;
      ASSIGN_OR_RETURN(Tensor a, Narrow(r, d, 0, h));
      ASSIGN_OR_RETURN(Tensor b, Narrow(r, d, h, h));
      ASSIGN_OR_RETURN(Tensor y, CMul(a, b));
      if (n % 2) {
        ASSIGN_OR_RETURN(Tensor last, Narrow(r, d, 2 * h, 1));
        ASSIGN_OR_RETURN(y, Cat({y, last}, d));
      }
      r = y;
      n = h + n % 2;
    }
  }
  if (keepdim) return r;
  std::vector<int64_t> sq(dims.begin(), dims.end());
  return Squeeze(r, sq);
}

// cumsum of a complex tensor: the running sums of its real view (d is already wrapped).
StatusOr<Tensor> ComplexCumsum(const Tensor& x, int64_t d) {
  return OnRealView(x, [d](const Tensor& r) { return Cumsum(r, d); });
}
// cumprod of a complex tensor along d (wrapped): a Hillis-Steele scan, y_i *= y_(i-s) for
// s = 1, 2, 4, ... (log2 n complex multiplies; exact at zeros, unlike exp(cumsum(log))).
StatusOr<Tensor> ComplexCumprod(const Tensor& x, int64_t d) {
  if (x.shape().ndim() == 0) return Clone(x);
  const int64_t n = x.shape()[d];
  Tensor y = x;
  for (int64_t s = 1; s < n; s *= 2) {
    ASSIGN_OR_RETURN(Tensor head, Narrow(y, d, 0, s));
    ASSIGN_OR_RETURN(Tensor hi, Narrow(y, d, s, n - s));
    ASSIGN_OR_RETURN(Tensor lo, Narrow(y, d, 0, n - s));
    ASSIGN_OR_RETURN(Tensor p, CMul(hi, lo));
    ASSIGN_OR_RETURN(y, Cat({head, p}, d));
  }
  return n <= 1 ? Clone(x) : y;
}

StatusOr<Tensor> ComplexBinary(const char* name, const Tensor& a0, const Tensor& b0, double alpha) {
  const std::string n = name;
  ASSIGN_OR_RETURN(auto ab, PromoteComplex(a0, b0));
  const Tensor &a = ab.first, &b = ab.second;
  if (n == "add" || n == "sub") {
    ASSIGN_OR_RETURN(Tensor ra, ViewAsReal(a));
    ASSIGN_OR_RETURN(Tensor rb, ViewAsReal(b));
    ASSIGN_OR_RETURN(Tensor r, n == "add" ? Add(ra, rb, alpha) : Sub(ra, rb, alpha));
    return ComplexFromPairs(r);
  }
  if (n == "mul") return CMul(a, b);
  if (n == "div") return CDiv(a, b);
  if (n == "pow") {  // exp(b log a)
    ASSIGN_OR_RETURN(Tensor l, CLog(a));
    ASSIGN_OR_RETURN(Tensor m, CMul(b, l));
    return CExp(m);
  }
  if (n == "eq" || n == "ne") {
    ASSIGN_OR_RETURN(Parts p, Split(a));
    ASSIGN_OR_RETURN(Parts q, Split(b));
    ASSIGN_OR_RETURN(Tensor er, Compare(CompareOp::kEq, p.re, q.re));
    ASSIGN_OR_RETURN(Tensor ei, Compare(CompareOp::kEq, p.im, q.im));
    ASSIGN_OR_RETURN(Tensor e, LogicalAnd(er, ei));
    if (n == "eq") return e;
    return LogicalNot(e);
  }
  RETURN_IF_ERROR(OrderingError(name, IsComplex(a0.dtype()) ? a0 : b0));
  return TypeError("[%s] not supported for complex tensors (%s, %s)", name, a0.meta_string(),
                   b0.meta_string());
}

StatusOr<Tensor> ComplexScalar(const char* name, const Tensor& a, double re, double im,
                               bool reverse) {
  DType t = IsComplex(a.dtype()) ? a.dtype() : PromoteWithComplexScalar(a.dtype());
  ASSIGN_OR_RETURN(Tensor s, ComplexScalarTensor(re, im, t, a.device()));
  return reverse ? ComplexBinary(name, s, a) : ComplexBinary(name, a, s);
}

StatusOr<Tensor> ComplexPowScalar(const Tensor& x, double re, double im) {
  if (im == 0 && re == std::floor(re) && std::fabs(re) <= 64) {  // repeated squaring
    int64_t e = static_cast<int64_t>(std::fabs(re));
    DType t = IsComplex(x.dtype()) ? x.dtype() : PromoteWithComplexScalar(x.dtype());
    ASSIGN_OR_RETURN(Tensor base, Cast(x, t));
    ASSIGN_OR_RETURN(Tensor one, ComplexScalarTensor(1.0, 0.0, t, x.device()));
    ASSIGN_OR_RETURN(Tensor acc, Expand(one, x.shape()));
    bool first = true;
    while (e > 0) {
      if (e & 1) {
        if (first) {
          acc = base;
          first = false;
        } else {
          ASSIGN_OR_RETURN(acc, CMul(acc, base));
        }
      }
      e >>= 1;
      if (e > 0) {
        ASSIGN_OR_RETURN(base, CMul(base, base));
      }
    }
    if (first) {
      ASSIGN_OR_RETURN(acc, Contiguous(acc));
    }
    if (re < 0) return CDiv(one, acc);
    return acc;
  }
  if (im == 0) {  // |z|^p e^(i p arg z): 0^p = 0 for p > 0 (exp(p log 0) would be NaN)
    ASSIGN_OR_RETURN(Parts p, Split(x));
    ASSIGN_OR_RETURN(Tensor a, Hypot(p.re, p.im, /*mask_zero=*/false));
    ASSIGN_OR_RETURN(Tensor m, PowScalar(a, re));
    ASSIGN_OR_RETURN(Tensor t, Atan2(p.im, p.re));
    ASSIGN_OR_RETURN(Tensor h, MulScalar(t, re));
    return Polar(m, h);
  }
  return ComplexScalar("pow", x, re, im);
}

StatusOr<Tensor> ComplexSum(const Tensor& x, std::vector<int64_t> dims, bool keepdim, bool mean) {
  ASSIGN_OR_RETURN(auto nd, ops::NormalizeDims(mean ? "mean" : "sum", dims, x.ndim()));
  if (nd.empty())
    for (int64_t d = 0; d < x.ndim(); ++d) nd.push_back(d);
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
  ASSIGN_OR_RETURN(Tensor s, x.ndim() == 0 ? Contiguous(r)
                                           : (mean ? Mean(r, nd, keepdim) : Sum(r, nd, keepdim)));
  return ComplexFromPairs(s);
}

StatusOr<Tensor> ComplexBmm(const Tensor& a, const Tensor& b, int64_t op_a, int64_t op_b) {
  ASSIGN_OR_RETURN(Tensor x, Contiguous(a));
  ASSIGN_OR_RETURN(Tensor y, Contiguous(b));
  return Dispatch1(ops::kComplexBmm, {x, y}, {{"op_a", op_a}, {"op_b", op_b}});
}

namespace {
// x broadcast to `shape` as a new tensor, expanded on its real view (whose gradient, a real sum,
// reduces the broadcast dims).
StatusOr<Tensor> ExpandComplex(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  DimVector d = shape.dims();
  d.push_back(2);
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
  ASSIGN_OR_RETURN(r, Expand(r, Shape(d)));
  return ComplexFromPairs(r);
}
// The four real GEMMs: complex matmul where complex_bmm has no kernel (cuda).
StatusOr<Tensor> MatmulByParts(const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Parts p, Split(a));
  ASSIGN_OR_RETURN(Parts q, Split(b));
  ASSIGN_OR_RETURN(Tensor rr, Matmul(p.re, q.re));
  ASSIGN_OR_RETURN(Tensor ii, Matmul(p.im, q.im));
  ASSIGN_OR_RETURN(Tensor ri, Matmul(p.re, q.im));
  ASSIGN_OR_RETURN(Tensor ir, Matmul(p.im, q.re));
  ASSIGN_OR_RETURN(Tensor re, Sub(rr, ii));
  ASSIGN_OR_RETURN(Tensor im, Add(ri, ir));
  return ComplexFromParts(re, im);
}
}  // namespace

// torch.matmul on complex operands (the other promoted): 1-D operands gain a dim and lose it
// after, batch dims broadcast; on the CPU one complex_bmm (a [..., m, k] times a 2-D b folds
// its batch into the rows), elsewhere four real matmuls. op_b 1: b is given transposed (linear's
// weight), read by the GEMM without a copy.
StatusOr<Tensor> ComplexMatmulOp(const Tensor& a0, const Tensor& b0, int64_t op_b) {
  if (a0.ndim() == 0 || b0.ndim() == 0)
    return InvalidArgument("[matmul] both arguments must be at least 1-D, got %s and %s",
                           a0.meta_string(), b0.meta_string());
  ASSIGN_OR_RETURN(auto ab, PromoteComplex(a0, b0));
  Tensor a = ab.first, b = ab.second;
  if (op_b == 1 && b.ndim() == 1) op_b = 0;
  const int64_t ka = a.dim(a.ndim() - 1);
  const int64_t kb = b.ndim() == 1 ? b.dim(0) : b.dim(b.ndim() - (op_b ? 1 : 2));
  if (ka != kb)
    return InvalidArgument("[matmul] size mismatch (%d vs %d): got %s and %s", ka, kb,
                           a0.meta_string(), b0.meta_string());
  if (!a.device().is_cpu()) {
    if (op_b == 1) {
      ASSIGN_OR_RETURN(b, Transpose(b, -2, -1));
    }
    return MatmulByParts(a, b);
  }
  const bool a_vec = a.ndim() == 1, b_vec = b.ndim() == 1;
  if (a_vec) {
    ASSIGN_OR_RETURN(a, Reshape(a, Shape{1, ka}));
  }
  if (b_vec) {
    ASSIGN_OR_RETURN(b, Reshape(b, Shape{kb, 1}));
  }
  const int64_t m = a.dim(a.ndim() - 2), n = b.dim(b.ndim() - (op_b ? 2 : 1));
  DimVector batch_a(a.shape().dims().begin(), a.shape().dims().end() - 2);
  DimVector batch_b(b.shape().dims().begin(), b.shape().dims().end() - 2);
  ASSIGN_OR_RETURN(Shape batch, BroadcastShapes("matmul", Shape(batch_a), Shape(batch_b)));
  const int64_t count = batch.numel();
  Tensor x, y;
  if (batch_b.empty()) {  // fold a's batch into its rows: one GEMM [count * m, k] x [k, n]
    ASSIGN_OR_RETURN(x, Contiguous(a));
    ASSIGN_OR_RETURN(x, Reshape(x, Shape{1, count * m, ka}));
    ASSIGN_OR_RETURN(y, Unsqueeze(b, 0));
  } else {
    DimVector da = batch.dims(), db = batch.dims();
    da.insert(da.end(), {m, ka});
    db.insert(db.end(), b.shape().dims().end() - 2, b.shape().dims().end());
    ASSIGN_OR_RETURN(x, ExpandComplex(a, Shape(da)));
    ASSIGN_OR_RETURN(y, ExpandComplex(b, Shape(db)));
    ASSIGN_OR_RETURN(x, Contiguous(x));
    ASSIGN_OR_RETURN(y, Contiguous(y));
    ASSIGN_OR_RETURN(x, Reshape(x, Shape{count, m, ka}));
    ASSIGN_OR_RETURN(y, Reshape(y, Shape{count, y.dim(y.ndim() - 2), y.dim(y.ndim() - 1)}));
  }
  ASSIGN_OR_RETURN(Tensor r, ComplexBmm(x, y, 0, op_b));
  DimVector dims = batch.dims();
  if (!a_vec) dims.push_back(m);
  if (!b_vec) dims.push_back(n);
  return Reshape(r, Shape(dims));
}

StatusOr<Tensor> ComplexMatmul(const Tensor& a, const Tensor& b) {
  return ComplexMatmulOp(a, b, 0);
}

// torch.nn.functional.linear: x weight^T (+ bias), weight read transposed by the GEMM.
StatusOr<Tensor> ComplexLinear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  ASSIGN_OR_RETURN(Tensor y, ComplexMatmulOp(x, weight, 1));
  if (!bias.defined()) return y;
  return Add(y, bias);
}

// torch.addmm: beta input + alpha m1 m2.
StatusOr<Tensor> ComplexAddmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta,
                              double alpha) {
  ASSIGN_OR_RETURN(Tensor y, ComplexMatmul(m1, m2));
  if (alpha != 1.0) {
    ASSIGN_OR_RETURN(y, MulScalar(y, alpha));
  }
  if (beta == 0.0) return y;
  ASSIGN_OR_RETURN(Tensor c, beta == 1.0 ? StatusOr<Tensor>(input) : MulScalar(input, beta));
  return Add(y, c);
}

// ---- in place, data movement, fills and random numbers ----------------------------------------

namespace {
// dim of a complex tensor, normalized: the same dim of its real view (whose extra size-2 dim is
// last, so only negative dims change).
StatusOr<int64_t> RealViewDim(const char* op, int64_t dim, const Tensor& x) {
  ASSIGN_OR_RETURN(auto d, ops::NormalizeDims(op, {dim}, std::max<int64_t>(x.ndim(), 1)));
  return d[0];
}
// An index tensor for the real view: a trailing dim of size 2 (both parts take the same index).
StatusOr<Tensor> PairIndex(const Tensor& index) {
  ASSIGN_OR_RETURN(Tensor u, Unsqueeze(index, -1));
  Shape s = u.shape();
  s[s.ndim() - 1] = 2;
  return Expand(u, s);
}
StatusOr<Tensor> AsDType(const char* op, const Tensor& v, DType t) {
  if (IsComplex(v.dtype()) && !IsComplex(t))
    return TypeError("[%s] can't write the %s values %s into a %s tensor", op,
                     DTypeLongName(v.dtype()), v.meta_string(), DTypeLongName(t));
  return Cast(v, t);
}
Shape PairShape(const Shape& s) {
  Shape r = s;
  r.mutable_dims().push_back(2);
  return r;
}
}  // namespace

Status ComplexAssign(const char* op, const Tensor& target, const Tensor& result) {
  if (result.dtype() != target.dtype() && !(IsComplex(target.dtype()) && IsComplex(result.dtype())))
    return TypeError("[%s] result type %s can't be cast to the desired output type %s (%s)", op,
                     DTypeLongName(result.dtype()), DTypeLongName(target.dtype()),
                     target.meta_string());
  if (result.shape() != target.shape())
    return InvalidArgument("[%s] output with shape %s doesn't match the broadcast shape %s", op,
                           target.shape().ToString(), result.shape().ToString());
  return CopyInto(target, result);
}

Status ComplexInplace(const char* op, const Tensor& target,
                      const std::function<StatusOr<Tensor>(const Tensor&)>& f,
                      const Tensor& other) {
  Tensor source = target;
  if (GradModeEnabled() && (target.requires_grad() || (other.defined() && other.requires_grad()))) {
    ASSIGN_OR_RETURN(source, Clone(target));
  }
  ASSIGN_OR_RETURN(Tensor r, f(source));
  return ComplexAssign(op, target, r);
}

StatusOr<Tensor> ComplexAsStridedScatter(const Tensor& src, const Shape& shape,
                                         const DimVector& strides, int64_t offset) {
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(src));
  DimVector st = strides;
  for (auto& s : st) s *= 2;
  st.push_back(1);
  ASSIGN_OR_RETURN(Tensor out, AsStridedScatter(r, PairShape(shape), st, offset * 2));
  return ViewAsComplex(out);
}

StatusOr<Tensor> ComplexCat(const TensorList& xs, int64_t dim) {
  DType t = xs[0].dtype();
  for (const Tensor& x : xs) t = PromoteTypes(t, x.dtype());
  TensorList parts;
  int64_t nd = -1;
  for (const Tensor& x : xs) {
    if (x.ndim() == 1 && x.dim(0) == 0 && xs.size() > 1) continue;  // as the real cat
    if (x.ndim() == 0)
      return InvalidArgument("[cat] zero-dimensional tensor %s cannot be concatenated",
                             x.meta_string());
    nd = x.ndim();
    ASSIGN_OR_RETURN(Tensor c, Cast(x, t));
    ASSIGN_OR_RETURN(Tensor r, ViewAsReal(c));
    parts.push_back(r);
  }
  if (parts.empty()) return Cast(xs[0], t);
  ASSIGN_OR_RETURN(auto d, ops::NormalizeDims("cat", {dim}, nd));
  ASSIGN_OR_RETURN(Tensor r, Cat(parts, d[0]));
  return ComplexFromPairs(r);
}

StatusOr<Tensor> ComplexFlip(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> d;  // flip() of every dim: the complex dims, not the real view's last
  if (dims.empty()) {
    for (int64_t i = 0; i < x.ndim(); ++i) d.push_back(i);
  } else {
    ASSIGN_OR_RETURN(d, ops::NormalizeDims("flip", dims, x.ndim()));
  }
  return OnRealView(x, [&](const Tensor& r) { return Flip(r, d); });
}

StatusOr<Tensor> ComplexIndexSelect(const Tensor& x, int64_t dim, const Tensor& index) {
  ASSIGN_OR_RETURN(int64_t d, RealViewDim("index_select", dim, x));
  return OnRealView(x, [&](const Tensor& r) { return IndexSelect(r, d, index); });
}

StatusOr<Tensor> ComplexGather(const Tensor& x, int64_t dim, const Tensor& index) {
  ASSIGN_OR_RETURN(int64_t d, RealViewDim("gather", dim, x));
  ASSIGN_OR_RETURN(Tensor i, PairIndex(index));
  return OnRealView(x, [&](const Tensor& r) { return Gather(r, d, i); });
}

StatusOr<Tensor> ComplexScatter(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                                const Tensor* src, double value, bool add, bool inplace) {
  ASSIGN_OR_RETURN(int64_t d, RealViewDim(op, dim, x));
  ASSIGN_OR_RETURN(Tensor i, PairIndex(index));
  Tensor s;
  if (src != nullptr) {
    ASSIGN_OR_RETURN(s, AsDType(op, *src, x.dtype()));
  } else {
    ASSIGN_OR_RETURN(Tensor v, ComplexScalarTensor(value, 0.0, x.dtype(), x.device()));
    ASSIGN_OR_RETURN(s, Expand(v, index.shape()));
  }
  ASSIGN_OR_RETURN(Tensor rs, ViewAsReal(s));
  if (inplace) {
    ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
    RETURN_IF_ERROR(add ? ScatterAdd_(r, d, i, rs) : Scatter_(r, d, i, rs));
    return x;
  }
  return OnRealView(
      x, [&](const Tensor& r) { return add ? ScatterAdd(r, d, i, rs) : Scatter(r, d, i, rs); });
}

StatusOr<Tensor> ComplexIndex(const Tensor& x, const TensorList& indices) {
  return OnRealView(x, [&](const Tensor& r) { return Index(r, indices); });
}

StatusOr<Tensor> ComplexIndexPut(const Tensor& x, const TensorList& indices, const Tensor& values,
                                 bool accumulate, bool inplace) {
  ASSIGN_OR_RETURN(Tensor v, AsDType(inplace ? "index_put_" : "index_put", values, x.dtype()));
  ASSIGN_OR_RETURN(Tensor rv, ViewAsReal(v));
  if (inplace) {
    ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
    RETURN_IF_ERROR(IndexPut_(r, indices, rv, accumulate));
    return x;
  }
  return OnRealView(x, [&](const Tensor& r) { return IndexPut(r, indices, rv, accumulate); });
}

StatusOr<Tensor> ComplexWhere(const Tensor& cond, const Tensor& x, const Tensor& y) {
  ASSIGN_OR_RETURN(auto xy, PromoteComplex(x, y));
  ASSIGN_OR_RETURN(Tensor rx, ViewAsReal(xy.first));
  ASSIGN_OR_RETURN(Tensor ry, ViewAsReal(xy.second));
  ASSIGN_OR_RETURN(Tensor c, Unsqueeze(cond, -1));
  ASSIGN_OR_RETURN(Tensor r, Where(c, rx, ry));
  return ComplexFromPairs(r);
}

StatusOr<Tensor> ComplexMaskedFill(const Tensor& x, const Tensor& mask, double re, double im) {
  if (!IsComplex(x.dtype()))
    return TypeError("[masked_fill] can't fill the %s tensor %s with the complex value (%g%+gj)",
                     DTypeLongName(x.dtype()), x.meta_string(), re, im);
  ASSIGN_OR_RETURN(Tensor v, ComplexScalarTensor(re, im, x.dtype(), x.device()));
  ASSIGN_OR_RETURN(Tensor m, Cast(mask.detach(), DType::kBool));
  return ComplexWhere(m, v, x);
}
Status ComplexMaskedFill_(const Tensor& x, const Tensor& mask, double re, double im) {
  return ComplexInplace("masked_fill_", x,
                        [&](const Tensor& s) { return ComplexMaskedFill(s, mask, re, im); });
}

Status ComplexFill_(const Tensor& x, double re, double im) {
  if (!IsComplex(x.dtype()))
    return TypeError("[fill_] can't fill the %s tensor %s with the complex value (%g%+gj)",
                     DTypeLongName(x.dtype()), x.meta_string(), re, im);
  ASSIGN_OR_RETURN(Tensor v, ComplexScalarTensor(re, im, x.dtype(), x.device()));
  return CopyInto(x, v);
}

StatusOr<Tensor> ComplexFull(const Shape& shape, double re, double im, DType dtype, Device device) {
  if (!IsComplex(dtype))
    return TypeError("[full] can't fill a %s tensor with the complex value (%g%+gj)",
                     DTypeLongName(dtype), re, im);
  ASSIGN_OR_RETURN(Tensor v, ComplexScalarTensor(re, im, dtype, device));
  ASSIGN_OR_RETURN(Tensor e, Expand(v, shape));
  return Contiguous(e);
}

// torch: randn's real and imaginary parts are each N(0, 1/2) (E|z|^2 = 1); rand's are U[0, 1).
StatusOr<Tensor> ComplexNormal(double mean, double std, const Shape& shape, DType dtype,
                               Device device) {
  const Shape s = PairShape(shape);
  ASSIGN_OR_RETURN(Tensor r, Normal(mean, std / std::sqrt(2.0), s, ToRealDType(dtype), device));
  return ComplexFromPairs(r);
}
StatusOr<Tensor> ComplexRand(const Shape& shape, DType dtype, Device device) {
  const Shape s = PairShape(shape);
  ASSIGN_OR_RETURN(Tensor r, Rand(s, ToRealDType(dtype), device));
  return ComplexFromPairs(r);
}
Status ComplexNormal_(const Tensor& x, double mean, double std) {
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
  return Normal_(r, mean, std / std::sqrt(2.0));
}
Status ComplexUniform_(const Tensor& x, double low, double high) {
  ASSIGN_OR_RETURN(Tensor r, ViewAsReal(x));
  return Uniform_(r, low, high);
}

}  // namespace functional
}  // namespace oneflow_like
