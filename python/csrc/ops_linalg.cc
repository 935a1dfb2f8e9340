// Bindings of the LAPACK linear-algebra family (ops/linalg.h): torch's top-level det, logdet,
// slogdet, inverse, cholesky (functions and Tensor methods); flow.linalg (python/oneflow_like/
// linalg) adds cholesky, inv, det, slogdet and solve over the private _linalg_* entries.
#include "oneflow_like/ops/linalg.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// namedtuples, created once, never freed
py::object* g_slogdet = nullptr;  // (sign, logabsdet)
py::object* g_eigh = nullptr;     // (eigenvalues, eigenvectors)
py::object* g_qr = nullptr;       // (Q, R)
py::object* g_svd = nullptr;      // (U, S, Vh)

void BindLinalg(py::module_& m, TensorClass& cls) {
  g_slogdet =
      new py::object(py::module_::import("collections")
                         .attr("namedtuple")("slogdet", py::make_tuple("sign", "logabsdet")));
  g_eigh = new py::object(
      py::module_::import("collections")
          .attr("namedtuple")("eigh", py::make_tuple("eigenvalues", "eigenvectors")));
  g_qr = new py::object(
      py::module_::import("collections").attr("namedtuple")("qr", py::make_tuple("Q", "R")));
  auto qr = [](const Tensor& a, const std::string& mode) {
    auto r = Unwrap(F::LinalgQr(a, mode));
    return (*g_qr)(r.first, r.second);
  };
  m.def("_linalg_qr", qr, py::arg("A"), py::arg("mode") = "reduced");
  g_svd = new py::object(
      py::module_::import("collections").attr("namedtuple")("svd", py::make_tuple("U", "S", "Vh")));
  m.def(
      "_linalg_svd",
      [](const Tensor& a, bool full_matrices) {
        auto r = Unwrap(F::LinalgSvd(a, full_matrices));
        return (*g_svd)(std::get<0>(r), std::get<1>(r), std::get<2>(r));
      },
      py::arg("A"), py::arg("full_matrices") = true);
  // torch.qr(input, some=True): some=False is mode "complete".
  auto qr_some = [qr](const Tensor& a, bool some) { return qr(a, some ? "reduced" : "complete"); };
  m.def("qr", qr_some, py::arg("input"), py::arg("some") = true);
  cls.def("qr", qr_some, py::arg("some") = true);
  m.def(
      "_linalg_eigh",
      [](const Tensor& a, const std::string& uplo) {
        auto r = Unwrap(F::LinalgEigh(a, uplo));
        return (*g_eigh)(r.first, r.second);
      },
      py::arg("A"), py::arg("UPLO") = "L");
  auto slogdet = [](const Tensor& a) {
    auto r = Unwrap(F::LinalgSlogdet(a));
    return (*g_slogdet)(r.first, r.second);
  };
  auto det = [](const Tensor& a) { return Unwrap(F::LinalgDet(a)); };
  auto logdet = [](const Tensor& a) { return Unwrap(F::Logdet(a)); };
  auto inverse = [](const Tensor& a) { return Unwrap(F::LinalgInv(a)); };
  auto cholesky = [](const Tensor& a, bool upper) { return Unwrap(F::LinalgCholesky(a, upper)); };
  auto def_both = [&](const char* name, auto fn, auto... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  };
  def_both("slogdet", slogdet);
  def_both("det", det);
  def_both("logdet", logdet);
  def_both("inverse", inverse);
  def_both("cholesky", cholesky, py::arg("upper") = false);
  m.def("_linalg_cholesky", cholesky, py::arg("A"), py::arg("upper") = false);
  m.def("_linalg_inv", inverse, py::arg("A"));
  m.def("_linalg_det", det, py::arg("A"));
  m.def("_linalg_slogdet", slogdet, py::arg("A"));
  m.def(
      "_linalg_solve",
      [](const Tensor& a, const Tensor& b, bool left) {
        return Unwrap(F::LinalgSolve(a, b, left));
      },
      py::arg("A"), py::arg("B"), py::arg("left") = true);
}

}  // namespace
OFL_PY_BINDING(BindLinalg);
}  // namespace python
}  // namespace oneflow_like
