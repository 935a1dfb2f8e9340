// Bindings of the LAPACK linear-algebra family (ops/linalg.h), generated from
// oneflow_like/opdefs/linalg.def: torch's top-level det, logdet, slogdet, inverse, cholesky, qr,
// geqrf, orgqr, ormqr
// (functions and Tensor methods, kind fn_method) and the private _linalg_* entries (kind private)
// that flow.linalg (python/oneflow_like/linalg) wraps, with the PyTorch signature of each line's
// sig column, returning a tensor or the oneflow_like.return_types tuple its name gives; plus
// flow._C._linalg_table() for the op-table tests.
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "oneflow_like/opdefs/linalg.h"
#include "oneflow_like/ops/linalg.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// The named tuple type binding `pyname` returns: oneflow_like.return_types.<pyname without a
// leading underscore> (_linalg_qr -> linalg_qr, as torch.linalg.qr; qr -> qr, as torch.qr), held
// once, never freed; null for an entry whose result is a tensor.
py::object** ReturnType(const py::module_& rt, const char* pyname) {
  const char* n = pyname[0] == '_' ? pyname + 1 : pyname;
  return new py::object*(py::hasattr(rt, n) ? new py::object(rt.attr(n)) : nullptr);
}
py::object& TupleType(py::object** tuple) {
  if (!*tuple)
    throw std::logic_error("[linalg] a tuple result has no oneflow_like.return_types type");
  return **tuple;
}

// What a call returns: the entry's tensor, or its tensors as the namedtuple `*tuple`.
Tensor Result(StatusOr<Tensor>&& r, py::object**) {
  return Unwrap(std::move(r));
}
py::object Result(StatusOr<std::pair<Tensor, Tensor>>&& r, py::object** tuple) {
  auto p = Unwrap(std::move(r));
  return TupleType(tuple)(p.first, p.second);
}
py::object Result(StatusOr<std::tuple<Tensor, Tensor, Tensor>>&& r, py::object** tuple) {
  auto t = Unwrap(std::move(r));
  return TupleType(tuple)(std::get<0>(t), std::get<1>(t), std::get<2>(t));
}

// One binder per sig column: flow.name(input, ...) and Tensor.name(...) (`method`, kind
// fn_method), or flow._C.name(A, ...) (kind private).
struct LinalgBinder {
  py::module_& m;
  TensorClass& cls;
  template <typename Fn, typename... Extra>
  void Def(bool method, const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg(method ? "input" : "A"), extra...);
    if (method) cls.def(name, fn, extra...);
  }
  // (A)
  template <typename Fn>
  void a(bool method, const char* name, Fn f, py::object** tuple) {
    Def(method, name, [f, tuple](const Tensor& a) { return Result(f(a), tuple); });
  }
  // (A, upper=False)
  template <typename Fn>
  void upper(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, bool upper) { return Result(f(a, upper), tuple); },
        py::arg("upper") = false);
  }
  // (A, B, left=True)
  template <typename Fn>
  void solve(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, const Tensor& b, bool left) {
          return Result(f(a, b, left), tuple);
        },
        py::arg("B"), py::arg("left") = true);
  }
  // (A, mode='reduced'): the default is LinalgQrAttrs' complete.
  template <typename Fn>
  void mode(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, const std::string& mode) { return Result(f(a, mode), tuple); },
        py::arg("mode") = opdefs::LinalgQrAttrs{}.complete ? "complete" : "reduced");
  }
  // (input, some=True): torch.qr; some=False is mode "complete".
  template <typename Fn>
  void some(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, bool some) {
          return Result(f(a, some ? "reduced" : "complete"), tuple);
        },
        py::arg("some") = !opdefs::LinalgQrAttrs{}.complete);
  }
  // (A, full_matrices=True): LinalgSvdAttrs' default.
  template <typename Fn>
  void full(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, bool full_matrices) {
          return Result(f(a, full_matrices), tuple);
        },
        py::arg("full_matrices") = opdefs::LinalgSvdAttrs{}.full_matrices);
  }
  // (A, B, upper=False, left=True, unitriangular=False)
  template <typename Fn>
  void triangular(bool method, const char* name, Fn f, py::object** tuple) {
    const opdefs::LinalgTriangularAttrs d;
    Def(
        method, name,
        [f, tuple](const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
          return Result(f(a, b, upper, left, unitriangular), tuple);
        },
        py::arg("B"), py::arg("upper") = d.upper, py::arg("left") = true,
        py::arg("unitriangular") = d.unitriangular);
  }
  // (A, tau)
  template <typename Fn>
  void tau(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, const Tensor& tau) { return Result(f(a, tau), tuple); },
        py::arg("tau"));
  }
  // (input, tau, other, left=True, transpose=False): LinalgOrmqrAttrs' defaults.
  template <typename Fn>
  void ormqr(bool method, const char* name, Fn f, py::object** tuple) {
    const opdefs::LinalgOrmqrAttrs d;
    Def(
        method, name,
        [f, tuple](const Tensor& a, const Tensor& tau, const Tensor& other, bool left,
                   bool transpose) { return Result(f(a, tau, other, left, transpose), tuple); },
        py::arg("input2"), py::arg("input3"), py::arg("left") = d.left,
        py::arg("transpose") = d.transpose);
  }
  // (A, hermitian=False)
  template <typename Fn>
  void hermitian(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, bool hermitian) { return Result(f(a, hermitian), tuple); },
        py::arg("hermitian") = opdefs::LinalgLdlAttrs{}.hermitian);
  }
  // (LD, pivots, B, hermitian=False)
  template <typename Fn>
  void ldl_solve(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian) {
          return Result(f(ld, pivots, b, hermitian), tuple);
        },
        py::arg("pivots"), py::arg("B"), py::arg("hermitian") = opdefs::LinalgLdlAttrs{}.hermitian);
  }
  // (A, pivots)
  template <typename Fn>
  void pivots(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, const Tensor& pivots) { return Result(f(a, pivots), tuple); },
        py::arg("pivots"));
  }
  // (A, UPLO='L')
  template <typename Fn>
  void uplo(bool method, const char* name, Fn f, py::object** tuple) {
    Def(
        method, name,
        [f, tuple](const Tensor& a, const std::string& uplo) { return Result(f(a, uplo), tuple); },
        py::arg("UPLO") = "L");
  }
};

// One row per table entry, for flow._C._linalg_table().
constexpr char kOpCols[] = "name|out|grad|save";
constexpr char kApiCols[] = "name|kind|sig|result|entry";
#define OFL_LINALG_METHOD_fn_method true
#define OFL_LINALG_METHOD_private false
// clang-format off
#define OFL_ATTRS(...)
#define OFL_LINALG_API(...)
#define OFL_LINALG(name, Name, Attrs, out, grad, save) \
  {#name "|" #out "|" #grad "|" #save, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/linalg.def"
};
#undef OFL_LINALG
#undef OFL_LINALG_API
#define OFL_LINALG(...)
#define OFL_LINALG_API(pyname, kind, sig, result, entry) {#pyname "|" #kind "|" #sig "|" #result "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/linalg.def"
};
#undef OFL_LINALG_API
// clang-format on

void BindLinalg(py::module_& m, TensorClass& cls) {
  const py::module_ rt = py::module_::import("oneflow_like.return_types");
  // flow.func.vmap: the eigen / singular vector phase checks its recording deferred (message,
  // recorded max |Im diag|), checked after the batched replay.
  m.def("_take_phase_checks", [] { return functional::TakeRecordedPhaseChecks(); });
  LinalgBinder b{m, cls};
  // clang-format off
#define OFL_LINALG_API(pyname, kind, sig, result, entry) \
  b.sig(OFL_LINALG_METHOD_##kind, #pyname, F::entry, ReturnType(rt, #pyname));
#include "oneflow_like/opdefs/linalg.def"
#undef OFL_LINALG_API
#undef OFL_LINALG
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_linalg_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindLinalg);
}  // namespace python
}  // namespace oneflow_like
