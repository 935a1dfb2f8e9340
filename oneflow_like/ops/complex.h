// Complex tensors (complex64 / complex128) and the discrete Fourier transforms: the ops declared
// in oneflow_like/opdefs/complex.def (view_as_real / view_as_complex views; fft_c2c, fft_r2c,
// fft_c2r on FFTW, kernels/cpu/fft.cc) and the complex arithmetic composed from real ops over
// view_as_real, so gradients follow torch's convention (for a real loss L, z.grad = dL/d(re z) +
// i dL/d(im z)) without complex instances of the real kernels. The real families' functional
// entries (add, mul, exp, sum, matmul, ...) route complex operands here; everything else raises
// "[op] not supported for complex64".
#pragma once
#include <string>
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> ViewAsReal(const Tensor& x);     // complex [...] -> real [..., 2], a view
StatusOr<Tensor> ViewAsComplex(const Tensor& x);  // real [..., 2] -> complex [...], a view
StatusOr<Tensor> ComplexFromParts(const Tensor& real, const Tensor& imag);  // torch.complex
StatusOr<Tensor> Polar(const Tensor& abs, const Tensor& angle);
StatusOr<Tensor> RealPart(const Tensor& x);  // a view of complex x; x itself when real
StatusOr<Tensor> ImagPart(const Tensor& x);  // a view; real x is an error, as torch
StatusOr<Tensor> Conj(const Tensor& x);      // materialized; real x is returned as is

// The transforms (unnormalized, then multiplied by `scale`). dims: the transformed dims; r2c /
// c2r halve the last of them (its complex length n / 2 + 1). r2c has sign -1, c2r sign +1.
StatusOr<Tensor> FftC2C(const Tensor& x, const std::vector<int64_t>& dims, bool forward,
                        double scale);
StatusOr<Tensor> FftR2C(const Tensor& x, const std::vector<int64_t>& dims, double scale);
StatusOr<Tensor> FftC2R(const Tensor& x, const std::vector<int64_t>& dims, int64_t last_dim_size,
                        double scale);

// Entry points the real families call when an operand is complex (name: the op's name).
StatusOr<Tensor> ComplexUnary(const char* name, const Tensor& x);
StatusOr<Tensor> ComplexBinary(const char* name, const Tensor& a, const Tensor& b,
                               double alpha = 1.0);
StatusOr<Tensor> ComplexScalar(const char* name, const Tensor& a, double re, double im,
                               bool reverse = false);  // reverse: scalar (op) a
StatusOr<Tensor> ComplexPowScalar(const Tensor& x, double re, double im);
StatusOr<Tensor> ComplexSum(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
                            bool mean = false);
StatusOr<Tensor> ComplexMatmul(const Tensor& a, const Tensor& b);
// A complex scalar as a 0-d tensor of `dtype` on `device`.
StatusOr<Tensor> ComplexScalarTensor(double re, double im, DType dtype, Device device);

}  // namespace functional
}  // namespace oneflow_like
