// Linear algebra family: the OpDef of oneflow_like/opdefs/matmul.def (generated below, with its
// Run<Name> entry), its gradient formula and the functional entries. Kernels:
// kernels/cpu/matmul.cc, kernels/cuda/matmul.*.
#include "oneflow_like/ops/matmul.h"

#include "oneflow_like/framework/autocast.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/matmul.h"

namespace oneflow_like {
namespace {

using opdefs::MatmulAttrs;

MatmulAttrs Scaled(double alpha, double beta) {
  MatmulAttrs a;
  a.alpha = alpha;
  a.beta = beta;
  return a;
}

Shape BatchOf(const Shape& s) {
  return Shape(absl::MakeConstSpan(s.dims().data(), s.ndim() - 2));
}
// `t` viewed as a matrix [prod(leading dims), last dim].
Shape AsMatrix(const Tensor& t) {
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < t.ndim(); ++i) rows *= t.dim(i);
  return Shape{rows, t.dim(t.ndim() - 1)};
}

// The table's output rule: matmul(a [..., M, K], b [..., K, N], bias? broadcastable to
// [..., M, N]; alpha, beta).
Status InferMatmul(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  if (in.size() != 2 && in.size() != 3) return Internal("[matmul] expected 2 or 3 inputs");
  const Tensor &a = in[0], &b = in[1];
  if (a.ndim() < 2 || b.ndim() < 2)
    return InvalidArgument("[matmul] expected operands of at least 2 dims, got %s and %s",
                           a.meta_string(), b.meta_string());
  if (a.dtype() != b.dtype())
    return TypeError("[matmul] expected operands of one dtype, got %s and %s", a.meta_string(),
                     b.meta_string());
  if (a.dtype() == DType::kBool) return TypeError("[matmul] not supported for %s", a.meta_string());
  int64_t k = a.dim(a.ndim() - 1);
  if (k != b.dim(b.ndim() - 2))
    return InvalidArgument("[matmul] size mismatch (%d vs %d): got %s and %s", k,
                           b.dim(b.ndim() - 2), a.meta_string(), b.meta_string());
  auto batch = BroadcastShapes("matmul", BatchOf(a.shape()), BatchOf(b.shape()));
  if (!batch.ok())
    return InvalidArgument("[matmul] batch dims do not broadcast: got %s and %s", a.meta_string(),
                           b.meta_string());
  DimVector dims = batch->dims();
  dims.push_back(a.dim(a.ndim() - 2));
  dims.push_back(b.dim(b.ndim() - 1));
  Shape s(dims);
  if (in.size() == 3) {
    const Tensor& bias = in[2];
    if (bias.dtype() != a.dtype())
      return TypeError("[matmul] expected a bias of dtype %s, got %s", DTypeName(a.dtype()),
                       bias.meta_string());
    auto bs = BroadcastShapes("matmul", bias.shape(), s);
    if (!bs.ok() || *bs != s)
      return InvalidArgument("[matmul] bias %s does not broadcast to the output %s",
                             bias.meta_string(), ShapeString(a.dtype(), s));
  }
  out->push_back(TensorMeta{s, a.dtype(), a.device()});
  return Status();
}

StatusOr<Tensor> MatmulCore(const Tensor& a, const Tensor& b, double alpha);

// ga = alpha * g @ b^T, gb = alpha * a^T @ g, gbias = beta * g (Dispatch reduces broadcast dims).
StatusOr<TensorList> MatmulGrad(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &g = c.grad_outputs[0];
  const MatmulAttrs attrs = opdefs::ReadAttrs<MatmulAttrs>(c.attrs);
  const double alpha = attrs.alpha, beta = attrs.beta;
  TensorList r(c.inputs.size());
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor bt, functional::Transpose(b, -1, -2));
    ASSIGN_OR_RETURN(r[0], MatmulCore(g, bt, alpha));
  }
  if (c.needs_input_grad[1]) {
    bool b_transposed = b.ndim() == 2 && !b.is_contiguous() && b.strides()[0] == 1 && b.dim(0) > 1;
    if (b_transposed && (a.ndim() == 2 || a.is_contiguous())) {
      // b is a transposed view (linear's weight.t()): compute grad_b^T = g^T @ a contiguously and
      // hand back its transpose, so the weight's gradient lands in the weight's own layout.
      Tensor a2 = a, g2 = g;
      if (a.ndim() > 2) {
        ASSIGN_OR_RETURN(a2, functional::Reshape(a, AsMatrix(a)));
        ASSIGN_OR_RETURN(g2, functional::Reshape(g, AsMatrix(g)));
      }
      ASSIGN_OR_RETURN(Tensor gt, functional::Transpose(g2, 0, 1));
      ASSIGN_OR_RETURN(Tensor gbt, MatmulCore(gt, a2, alpha));
      ASSIGN_OR_RETURN(r[1], functional::Transpose(gbt, 0, 1));
    } else if (b.ndim() == 2 && a.ndim() > 2 && a.is_contiguous()) {
      // b was shared by every batch: one GEMM over the folded batch, [K, B*M] @ [B*M, N].
      ASSIGN_OR_RETURN(Tensor a2, functional::Reshape(a, AsMatrix(a)));
      ASSIGN_OR_RETURN(Tensor g2, functional::Reshape(g, AsMatrix(g)));
      ASSIGN_OR_RETURN(Tensor a2t, functional::Transpose(a2, 0, 1));
      ASSIGN_OR_RETURN(r[1], MatmulCore(a2t, g2, alpha));
    } else {
      ASSIGN_OR_RETURN(Tensor at, functional::Transpose(a, -1, -2));
      ASSIGN_OR_RETURN(r[1], MatmulCore(at, g, alpha));
    }
  }
  if (c.inputs.size() == 3 && c.needs_input_grad[2]) {
    r[2] = g;
    if (beta != 1.0) {
      ASSIGN_OR_RETURN(r[2], functional::MulScalar(g, beta));
    }
  }
  return r;
}

// ---- the OpDef and Run<Name> (generated from matmul.def) --------------------------------------

#define OFL_MATMUL_SAVE_IN_inputs true
#define OFL_MATMUL_SAVE_OUT_inputs false
#define OFL_MATMUL_READS_inputs 0
#define OFL_MATMUL_SAVE_IN_cross true
#define OFL_MATMUL_SAVE_OUT_cross false
#define OFL_MATMUL_READS_cross ReadBy({0b010, 0b011, 0})
#define OFL_MATMUL_STRIDED_strided true
#define OFL_MATMUL_STRIDED_contiguous false
#define OFL_MATMUL_LOWP_cpu kLowPrecisionCPU  // bf16/f16 through oneDNN (kernels/cpu/matmul.cc)
// ... and through cuBLAS on CUDA (kernels/cuda/matmul.cc: f32 accumulation, tensor cores)
#define OFL_MATMUL_LOWP_all kLowPrecisionAll
#define OFL_MATMUL_LOWP_none 0
// clang-format off
#define OFL_ATTRS(...)
#define OFL_MATMUL_API(...)
#define OFL_MATMUL(name, Name, Attrs, grad, save, layout, lowp)                                    \
  const OpDef k##Name = OpSpec(#name, Infer##Name)                                                 \
                            .Grad(grad)                                                            \
                            .StridedInputs(OFL_MATMUL_STRIDED_##layout)                            \
                            .SaveInputs(OFL_MATMUL_SAVE_IN_##save)                                 \
                            .SaveOutputs(OFL_MATMUL_SAVE_OUT_##save)                               \
                            .InputReaders(OFL_MATMUL_READS_##save)                                 \
                            .LowPrecision(OFL_MATMUL_LOWP_##lowp);                                 \
  OFL_DEFINE_RUN1(Name, Attrs)
#include "oneflow_like/opdefs/matmul.def"
#undef OFL_MATMUL
#undef OFL_MATMUL_API
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> MatmulCore(const Tensor& a, const Tensor& b, double alpha) {
  return RunMatmul({a, b}, Scaled(alpha, 0.0));
}

// Folds the batch dims of `a` into M when `b` is one matrix: one GEMM instead of a batch.
StatusOr<Tensor> FoldedMatmul(const Tensor& a, const Tensor& b, const Tensor& bias, double beta,
                              double alpha) {
  TensorList ins{a, b};
  if (bias.defined()) ins.push_back(bias);
  const MatmulAttrs attrs = Scaled(alpha, bias.defined() ? beta : 0.0);
  bool fold =
      b.ndim() == 2 && a.ndim() > 2 && a.is_contiguous() && (!bias.defined() || bias.ndim() <= 1);
  if (!fold) return RunMatmul(ins, attrs);
  ASSIGN_OR_RETURN(ins[0], functional::Reshape(a, AsMatrix(a)));
  ASSIGN_OR_RETURN(Tensor y, RunMatmul(ins, attrs));
  DimVector dims = a.shape().dims();
  dims.back() = b.dim(1);
  return functional::Reshape(y, Shape(dims));
}

}  // namespace

namespace functional {

StatusOr<Tensor> Matmul(const Tensor& a, const Tensor& b) {
  if (IsComplex(a.dtype()) || IsComplex(b.dtype())) return ComplexMatmul(a, b);
  if (a.ndim() == 0 || b.ndim() == 0)
    return InvalidArgument("[matmul] both arguments must be at least 1-D, got %s and %s",
                           a.meta_string(), b.meta_string());
  if (a.dtype() != b.dtype())
    return TypeError("[matmul] expected operands of one dtype, got %s and %s", a.meta_string(),
                     b.meta_string());
  int64_t ka = a.dim(a.ndim() - 1), kb = b.ndim() == 1 ? b.dim(0) : b.dim(b.ndim() - 2);
  if (ka != kb)
    return InvalidArgument("[matmul] size mismatch (%d vs %d): got %s and %s", ka, kb,
                           a.meta_string(), b.meta_string());
  Tensor x = a, y = b;
  if (a.ndim() == 1) {
    ASSIGN_OR_RETURN(x, Reshape(a, Shape{1, ka}));
  }
  if (b.ndim() == 1) {
    ASSIGN_OR_RETURN(y, Reshape(b, Shape{kb, 1}));
  }
  ASSIGN_OR_RETURN(Tensor r, FoldedMatmul(x, y, Tensor(), 0.0, 1.0));
  if (a.ndim() > 1 && b.ndim() > 1) return r;
  // Drop the dims that the 1-D operands gained.
  DimVector dims = r.shape().dims();
  if (b.ndim() == 1) dims.pop_back();
  if (a.ndim() == 1) dims.erase(dims.end() - (b.ndim() == 1 ? 1 : 2));
  return Reshape(r, Shape(dims));
}

StatusOr<Tensor> Mm(const Tensor& a, const Tensor& b) {
  if (a.ndim() != 2 || b.ndim() != 2)
    return InvalidArgument("[mm] expected 2-D tensors, got %s and %s", a.meta_string(),
                           b.meta_string());
  return Matmul(a, b);
}

StatusOr<Tensor> Bmm(const Tensor& a, const Tensor& b) {
  if (a.ndim() != 3 || b.ndim() != 3 || a.dim(0) != b.dim(0))
    return InvalidArgument("[bmm] expected 3-D tensors with one batch size, got %s and %s",
                           a.meta_string(), b.meta_string());
  return Matmul(a, b);
}

StatusOr<Tensor> Addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta,
                       double alpha) {
  if (m1.ndim() != 2 || m2.ndim() != 2)
    return InvalidArgument("[addmm] expected 2-D matrices, got %s and %s", m1.meta_string(),
                           m2.meta_string());
  if (IsComplex(m1.dtype()) || IsComplex(m2.dtype()) || IsComplex(input.dtype()))
    return ComplexAddmm(input, m1, m2, beta, alpha);
  if (beta == 0.0) return RunMatmul({m1, m2}, Scaled(alpha, 0.0));
  return RunMatmul({m1, m2, input}, Scaled(alpha, beta));
}

StatusOr<Tensor> Linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (weight.ndim() != 2)
    return InvalidArgument("[linear] expected a 2-D weight, got %s (input %s)",
                           weight.meta_string(), x.meta_string());
  if (x.ndim() == 0 || x.dim(x.ndim() - 1) != weight.dim(1))
    return InvalidArgument("[linear] input %s does not match weight %s", x.meta_string(),
                           weight.meta_string());
  if (bias.defined() && (bias.ndim() > 1 || (bias.ndim() == 1 && bias.dim(0) != weight.dim(0))))
    return InvalidArgument("[linear] bias %s does not match weight %s", bias.meta_string(),
                           weight.meta_string());
  if (IsComplex(x.dtype()) || IsComplex(weight.dtype()) ||
      (bias.defined() && IsComplex(bias.dtype())))
    return ComplexLinear(x, weight, bias);
  // Autocast casts linear's operands here, as PyTorch's list names linear: the weight itself (a
  // leaf: cast once per region through the weight cache, contiguously) rather than the
  // transposed view matmul would see, so its gradient comes back in the weight's layout.
  Tensor xc = x, w = weight, b = bias;
  if (AutocastMaybeActive()) {
    ASSIGN_OR_RETURN(TensorList a, AutocastArgs("linear", TensorList{x, weight, bias}));
    xc = a[0], w = a[1], b = a[2];
  }
  ASSIGN_OR_RETURN(Tensor wt, Transpose(w, 0, 1));  // a view: the kernel sets the transpose flag
  Tensor x2 = xc;
  if (x.ndim() == 1) {
    ASSIGN_OR_RETURN(x2, Reshape(xc, Shape{1, x.dim(0)}));
  }
  ASSIGN_OR_RETURN(Tensor y, FoldedMatmul(x2, wt, b, 1.0, 1.0));
  if (x.ndim() == 1) return Reshape(y, Shape{weight.dim(0)});
  return y;
}

}  // namespace functional
}  // namespace oneflow_like
