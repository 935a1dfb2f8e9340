// Bindings of the complex-dtype and Fourier-transform ops (oneflow_like/opdefs/complex.def,
// oneflow_like/ops/complex.h): private flow._C._* entries that python/oneflow_like/_complex.py
// and python/oneflow_like/fft wrap with torch's signatures, and flow._C._complex_table() for the
// op-table tests.
#include <string>
#include <vector>

#include "oneflow_like/ops/complex.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

void BindComplex(py::module_& m, TensorClass&) {
  m.def("_view_as_real", [](const Tensor& x) { return Unwrap(F::ViewAsReal(x)); });
  m.def("_view_as_complex", [](const Tensor& x) { return Unwrap(F::ViewAsComplex(x)); });
  m.def("_complex",
        [](const Tensor& re, const Tensor& im) { return Unwrap(F::ComplexFromParts(re, im)); });
  m.def("_polar", [](const Tensor& a, const Tensor& t) { return Unwrap(F::Polar(a, t)); });
  m.def("_real", [](const Tensor& x) { return Unwrap(F::RealPart(x)); });
  m.def("_imag", [](const Tensor& x) { return Unwrap(F::ImagPart(x)); });
  m.def("_conj", [](const Tensor& x) { return Unwrap(F::Conj(x)); });
  m.def("_linalg_eig", [](const Tensor& a) {
    TensorList r = Unwrap(F::LinalgEig(a));
    return py::make_tuple(r[0], r[1]);
  });
  m.def("_complex_unary", [](const std::string& name, const Tensor& x) {
    return Unwrap(F::ComplexUnary(name.c_str(), x));
  });
  m.def("_complex_binary", [](const std::string& name, const Tensor& a, const Tensor& b) {
    return Unwrap(F::ComplexBinary(name.c_str(), a, b));
  });
  m.def("_fft_c2c", [](const Tensor& x, const std::vector<int64_t>& dim, bool forward,
                       double scale) { return Unwrap(F::FftC2C(x, dim, forward, scale)); });
  m.def("_fft_r2c", [](const Tensor& x, const std::vector<int64_t>& dim, double scale) {
    return Unwrap(F::FftR2C(x, dim, scale));
  });
  m.def("_fft_c2r", [](const Tensor& x, const std::vector<int64_t>& dim, int64_t last_dim_size,
                       double scale) { return Unwrap(F::FftC2R(x, dim, last_dim_size, scale)); });
  // The table's rows: name and kind (view / kernel), for the op-table tests.
  m.def("_complex_table", []() {
    py::list rows;
    auto add = [&](const char* name, const char* kind) {
      py::dict d;
      d["name"] = name;
      d["kind"] = kind;
      rows.append(d);
    };
    (void)add;
#define OFL_COMPLEX_VIEW(name, Name) add(#name, "view");
#define OFL_COMPLEX_KERNEL(name, Name, save, strided) add(#name, "kernel");
#include "oneflow_like/opdefs/complex.def"
#undef OFL_COMPLEX_VIEW
#undef OFL_COMPLEX_KERNEL
    return rows;
  });
}

}  // namespace
OFL_PY_BINDING(BindComplex);

}  // namespace python
}  // namespace oneflow_like
