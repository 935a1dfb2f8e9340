// Complex tensors (complex64 / complex128) and the discrete Fourier transforms: the ops declared
// in oneflow_like/opdefs/complex.def (view_as_real / view_as_complex views; fft_c2c, fft_r2c,
// fft_c2r on FFTW, kernels/cpu/fft.cc) and the complex arithmetic composed from real ops over
// view_as_real, so gradients follow torch's convention (for a real loss L, z.grad = dL/d(re z) +
// i dL/d(im z)) without complex instances of the real kernels. The real families' functional
// entries (add, mul, exp, sum, matmul, ...) route complex operands here; everything else raises
// "[op] not supported for complex64".
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> ViewAsReal(const Tensor& x);     // complex [...] -> real [..., 2], a view
StatusOr<Tensor> ViewAsComplex(const Tensor& x);  // real [..., 2] -> complex [...], a view
StatusOr<Tensor> ComplexFromParts(const Tensor& real, const Tensor& imag);  // torch.complex
StatusOr<Tensor> ComplexFromPairs(const Tensor& pairs);  // real [..., 2] -> a new complex [...]
StatusOr<Tensor> Polar(const Tensor& abs, const Tensor& angle);
StatusOr<Tensor> RealPart(const Tensor& x);  // a view of complex x; x itself when real
StatusOr<Tensor> ImagPart(const Tensor& x);  // a view; real x is an error, as torch
StatusOr<Tensor> Conj(const Tensor& x);      // materialized; real x is returned as is

// torch.linalg.eig: (eigenvalues [..., n], eigenvectors [..., n, n]), complex; real inputs are
// cast to complex first (their gradient is the real part, as torch's).
StatusOr<TensorList> LinalgEig(const Tensor& a);
// Its gradient (torch's formula; has_gl false: no eigenvalue gradient, gl is zeros).
StatusOr<Tensor> LinalgEigBackward(const Tensor& gl, const Tensor& gv, const Tensor& l,
                                   const Tensor& v, bool has_gl);

// The transforms (unnormalized, then multiplied by `scale`). dims: the transformed dims; r2c /
// c2r halve the last of them (its complex length n / 2 + 1). r2c has sign -1, c2r sign +1.
StatusOr<Tensor> FftC2C(const Tensor& x, const std::vector<int64_t>& dims, bool forward,
                        double scale);
StatusOr<Tensor> FftR2C(const Tensor& x, const std::vector<int64_t>& dims, double scale);
StatusOr<Tensor> FftC2R(const Tensor& x, const std::vector<int64_t>& dims, int64_t last_dim_size,
                        double scale);

// Entry points the real families call when an operand is complex (name: the op's name).
StatusOr<Tensor> ComplexUnary(const char* name, const Tensor& x);
StatusOr<Tensor> ComplexProd(const Tensor& x, std::vector<int64_t> dims, bool keepdim);
StatusOr<Tensor> ComplexCumsum(const Tensor& x, int64_t dim);   // dim wrapped
StatusOr<Tensor> ComplexCumprod(const Tensor& x, int64_t dim);  // dim wrapped
StatusOr<Tensor> ComplexBinary(const char* name, const Tensor& a, const Tensor& b,
                               double alpha = 1.0);
StatusOr<Tensor> ComplexScalar(const char* name, const Tensor& a, double re, double im,
                               bool reverse = false);  // reverse: scalar (op) a
StatusOr<Tensor> ComplexPowScalar(const Tensor& x, double re, double im);
StatusOr<Tensor> ComplexSum(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
                            bool mean = false);
StatusOr<Tensor> ComplexMatmul(const Tensor& a, const Tensor& b);
StatusOr<Tensor> ComplexLinear(const Tensor& x, const Tensor& weight, const Tensor& bias);
StatusOr<Tensor> ComplexAddmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta,
                              double alpha);
// One complex GEMM per batch element (BLAS c/zgemm, CPU): op(a) [B, m, k] op(b) [B, k, n], op 0
// as is, 1 transposed, 2 conjugate transposed.
StatusOr<Tensor> ComplexBmm(const Tensor& a, const Tensor& b, int64_t op_a, int64_t op_b);
// A complex scalar as a 0-d tensor of `dtype` on `device`.
StatusOr<Tensor> ComplexScalarTensor(double re, double im, DType dtype, Device device);

// In place on complex tensors: the op runs out of place and `result` is copied into `target`
// (copy_ is recorded by autograd, with the version counter's checks); a complex result into a
// real target is torch's "result type ... can't be cast" error.
Status ComplexAssign(const char* op, const Tensor& target, const Tensor& result);
// target = f(source) in place: source is target, or when autograd records f (target or
// `other` requires grad) a clone of it, so the tensors f saves for backward are not the ones
// the copy overwrites (they would fail the version check).
Status ComplexInplace(const char* op, const Tensor& target,
                      const std::function<StatusOr<Tensor>(const Tensor&)>& f,
                      const Tensor& other = Tensor());

// Data movement on complex tensors: the real op on view_as_real (dims of the complex tensor;
// index tensors get a trailing size-2 dim), viewed back as complex, so gradients flow through
// the real ops' formulas. The real families' entries route complex operands here.
// as_strided_scatter (the gradient of views): of the real views, strides and offset doubled.
StatusOr<Tensor> ComplexAsStridedScatter(const Tensor& src, const Shape& shape,
                                         const DimVector& strides, int64_t offset);
StatusOr<Tensor> ComplexCat(const TensorList& xs, int64_t dim);
StatusOr<Tensor> ComplexFlip(const Tensor& x, const std::vector<int64_t>& dims);
StatusOr<Tensor> ComplexIndexSelect(const Tensor& x, int64_t dim, const Tensor& index);
StatusOr<Tensor> ComplexGather(const Tensor& x, int64_t dim, const Tensor& index);
// scatter / scatter_add of src (cast to x's dtype; null: the real `value`), out of place or into
// x (then returns x).
StatusOr<Tensor> ComplexScatter(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                                const Tensor* src, double value, bool add, bool inplace);
StatusOr<Tensor> ComplexIndex(const Tensor& x, const TensorList& indices);
StatusOr<Tensor> ComplexIndexPut(const Tensor& x, const TensorList& indices, const Tensor& values,
                                 bool accumulate, bool inplace);
StatusOr<Tensor> ComplexWhere(const Tensor& cond, const Tensor& x, const Tensor& y);
StatusOr<Tensor> ComplexMaskedFill(const Tensor& x, const Tensor& mask, double re, double im);
Status ComplexMaskedFill_(const Tensor& x, const Tensor& mask, double re, double im);

// Fills and random numbers (torch: randn's parts are each N(0, 1/2), rand's U[0, 1); normal_ /
// uniform_ fill the real view, normal_ with std / sqrt(2)).
Status ComplexFill_(const Tensor& x, double re, double im);
StatusOr<Tensor> ComplexFull(const Shape& shape, double re, double im, DType dtype, Device device);
StatusOr<Tensor> ComplexNormal(double mean, double std, const Shape& shape, DType dtype,
                               Device device);
StatusOr<Tensor> ComplexRand(const Shape& shape, DType dtype, Device device);
Status ComplexNormal_(const Tensor& x, double mean, double std);
Status ComplexUniform_(const Tensor& x, double low, double high);

}  // namespace functional
}  // namespace oneflow_like
