// CPU kernels of the complex dtypes (complex64 / complex128): the copy family's element
// conversions whenever one side is complex (real -> complex sets the imaginary part to 0,
// complex -> real keeps the real part, as torch), called by kernels/cpu/copy.cc, and the
// `complex` op (real and imaginary parts, any strides, into a new complex tensor). Complex
// arithmetic is composed from real ops over view_as_real (oneflow_like/ops/complex.cc) and the
// transforms live in kernels/cpu/fft.cc, so no other kernel is instantiated for complex.
#include <complex>
#include <type_traits>

#include "kernels/kernel.h"

namespace oneflow_like {
namespace kernels {
namespace {

template <typename T>
struct IsStdComplex : std::false_type {};
template <typename T>
struct IsStdComplex<std::complex<T>> : std::true_type {};

template <typename TO, typename TI>
inline TO ConvertComplex(TI v) {
  if constexpr (IsStdComplex<TO>::value && IsStdComplex<TI>::value) {
    return TO(static_cast<typename TO::value_type>(v.real()),
              static_cast<typename TO::value_type>(v.imag()));
  } else if constexpr (IsStdComplex<TO>::value) {  // real -> complex: imaginary part 0
    return TO(static_cast<typename TO::value_type>(static_cast<double>(v)), 0);
  } else if constexpr (std::is_same_v<TO, bool>) {  // nonzero if either part is
    return v.real() != 0 || v.imag() != 0;
  } else if constexpr (std::is_same_v<TO, float16> || std::is_same_v<TO, bfloat16>) {
    return TO(static_cast<float>(v.real()));
  } else if constexpr (std::is_integral_v<TO> && sizeof(TO) < 8) {
    return static_cast<TO>(static_cast<int64_t>(v.real()));
  } else {
    return static_cast<TO>(v.real());
  }
}

// out[i] = f(in[i]) over out's shape, any strides (in already broadcast to out's shape).
template <typename TO, typename TI>
void StridedConvert(const TensorView& out, const TensorView& in) {
  const int64_t nd = out.shape.ndim(), n = out.numel();
  if (n == 0) return;
  TO* o = out.ptr<TO>();
  const TI* x = in.ptr<TI>();
  if (out.contiguous() && in.contiguous()) {
    for (int64_t i = 0; i < n; ++i) o[i] = ConvertComplex<TO, TI>(x[i]);
    return;
  }
  DimVector idx(nd, 0);
  int64_t oo = 0, io = 0;
  for (int64_t i = 0; i < n; ++i) {
    o[oo] = ConvertComplex<TO, TI>(x[io]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) {
        oo += out.strides[d];
        io += in.strides[d];
        break;
      }
      oo -= out.strides[d] * (out.shape[d] - 1);
      io -= in.strides[d] * (out.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

template <typename TO>
bool ConvertFrom(const TensorView& out, const TensorView& in) {
  bool done = false;
  if (IsComplex(in.dtype)) {
    OFL_SWITCH_COMPLEX(in.dtype, {
      StridedConvert<TO, scalar_t>(out, in);
      done = true;
    });
  } else {
    OFL_SWITCH_ALL(in.dtype, {
      StridedConvert<TO, scalar_t>(out, in);
      done = true;
    });
  }
  return done;
}

// out (contiguous)[i] = (re[i], im[i]); re and im have out's shape, any strides.
template <typename R>
void Interleave(const TensorView& out, const TensorView& re, const TensorView& im) {
  const int64_t nd = out.shape.ndim(), n = out.numel();
  std::complex<R>* o = out.ptr<std::complex<R>>();
  const R* a = re.ptr<R>();
  const R* b = im.ptr<R>();
  if (re.contiguous() && im.contiguous()) {
    for (int64_t i = 0; i < n; ++i) o[i] = std::complex<R>(a[i], b[i]);
    return;
  }
  DimVector idx(nd, 0);
  int64_t ao = 0, bo = 0;
  for (int64_t i = 0; i < n; ++i) {
    o[i] = std::complex<R>(a[ao], b[bo]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) {
        ao += re.strides[d];
        bo += im.strides[d];
        break;
      }
      ao -= re.strides[d] * (out.shape[d] - 1);
      bo -= im.strides[d] * (out.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

Status ComplexKernel(KernelContext& ctx) {
  const TensorView &re = ctx.input(0), &im = ctx.input(1), &out = ctx.output(0);
  if (out.numel() == 0) return Status();
  if (re.dtype == DType::kF64) {
    Interleave<double>(out, re, im);
  } else if (re.dtype == DType::kF32) {
    Interleave<float>(out, re, im);
  } else {
    return TypeError("[complex] not supported for %s on cpu", DTypeLongName(re.dtype));
  }
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(complex, kCPU, ComplexKernel);

// out (any strides) = cast(in) where out or in is complex; in has out's shape (broadcast).
Status ComplexCastInto(const TensorView& out, const TensorView& in) {
  bool done = false;
  if (IsComplex(out.dtype)) {
    OFL_SWITCH_COMPLEX(out.dtype, { done = ConvertFrom<scalar_t>(out, in); });
  } else {
    // complex -> real
    OFL_SWITCH_ALL(out.dtype, {
      using TO = scalar_t;
      OFL_SWITCH_COMPLEX(in.dtype, {
        StridedConvert<TO, scalar_t>(out, in);
        done = true;
      });
    });
  }
  if (!done)
    return TypeError("[cast] no conversion from %s to %s on cpu", DTypeLongName(in.dtype),
                     DTypeLongName(out.dtype));
  return Status();
}

}  // namespace kernels
}  // namespace oneflow_like
