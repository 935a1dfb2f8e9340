// Bindings of the index family (functions and Tensor methods), PyTorch signatures.
#include <string>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// A fill value given as a Python number or a one-element tensor.
double FillValue(py::handle v) {
  if (py::isinstance<Tensor>(v)) return py::cast<double>(v.attr("item")());
  return ScalarValue(v);
}

TensorList IndexList(py::handle indices) {
  TensorList r;
  for (auto item : py::reinterpret_borrow<py::iterable>(indices))
    r.push_back(item.is_none() ? Tensor() : ToTensor(item));
  return r;
}

void BindIndex(py::module_& m, TensorClass& cls) {
  auto index_select = [](const Tensor& x, int64_t dim, const Tensor& index) {
    return Unwrap(F::IndexSelect(x, dim, index));
  };
  m.def("index_select", index_select, py::arg("input"), py::arg("dim"), py::arg("index"));
  cls.def("index_select", index_select, py::arg("dim"), py::arg("index"));
  auto index_add = [](const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      double alpha) {
    Tensor s = alpha == 1.0 ? src : Unwrap(F::MulScalar(src, alpha));
    return Unwrap(F::IndexAdd(x, dim, index, s));
  };
  m.def("index_add", index_add, py::arg("input"), py::arg("dim"), py::arg("index"),
        py::arg("source"), py::kw_only(), py::arg("alpha") = 1.0);
  cls.def("index_add", index_add, py::arg("dim"), py::arg("index"), py::arg("source"),
          py::kw_only(), py::arg("alpha") = 1.0);

  auto gather = [](const Tensor& x, int64_t dim, const Tensor& index) {
    return Unwrap(F::Gather(x, dim, index));
  };
  m.def("gather", gather, py::arg("input"), py::arg("dim"), py::arg("index"));
  cls.def("gather", gather, py::arg("dim"), py::arg("index"));
  auto scatter = [](const Tensor& x, int64_t dim, const Tensor& index, py::object src,
                    py::object reduce) {
    bool add = !reduce.is_none() && py::cast<std::string>(reduce) == "add";
    if (!reduce.is_none() && !add)
      throw py::value_error("[scatter] only reduce='add' is supported");
    if (py::isinstance<Tensor>(src) && (py::cast<Tensor>(src).ndim() > 0 || add)) {
      Tensor s = py::cast<Tensor>(src);
      return Unwrap(add ? F::ScatterAdd(x, dim, index, s) : F::Scatter(x, dim, index, s));
    }
    if (add) throw py::value_error("[scatter] reduce='add' needs a source tensor");
    return Unwrap(F::ScatterValue(x, dim, index, FillValue(src)));
  };
  m.def("scatter", scatter, py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"),
        py::arg("reduce") = py::none());
  cls.def("scatter", scatter, py::arg("dim"), py::arg("index"), py::arg("src"),
          py::arg("reduce") = py::none());
  auto scatter_ = [](Tensor& x, int64_t dim, const Tensor& index, py::object src,
                     py::object reduce) {
    bool add = !reduce.is_none() && py::cast<std::string>(reduce) == "add";
    if (!reduce.is_none() && !add)
      throw py::value_error("[scatter_] only reduce='add' is supported");
    if (py::isinstance<Tensor>(src) && (py::cast<Tensor>(src).ndim() > 0 || add)) {
      Tensor s = py::cast<Tensor>(src);
      Check(add ? F::ScatterAdd_(x, dim, index, s) : F::Scatter_(x, dim, index, s));
    } else {
      if (add) throw py::value_error("[scatter_] reduce='add' needs a source tensor");
      Check(F::ScatterValue_(x, dim, index, FillValue(src)));
    }
    return x;
  };
  cls.def("scatter_", scatter_, py::arg("dim"), py::arg("index"), py::arg("src"),
          py::arg("reduce") = py::none());
  auto scatter_add = [](const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
    return Unwrap(F::ScatterAdd(x, dim, index, src));
  };
  m.def("scatter_add", scatter_add, py::arg("input"), py::arg("dim"), py::arg("index"),
        py::arg("src"));
  cls.def("scatter_add", scatter_add, py::arg("dim"), py::arg("index"), py::arg("src"));
  cls.def(
      "scatter_add_",
      [](Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
        Check(F::ScatterAdd_(x, dim, index, src));
        return x;
      },
      py::arg("dim"), py::arg("index"), py::arg("src"));

  auto masked_fill = [](const Tensor& x, const Tensor& mask, py::object v) {
    return Unwrap(F::MaskedFill(x, mask, FillValue(v)));
  };
  m.def("masked_fill", masked_fill, py::arg("input"), py::arg("mask"), py::arg("value"));
  cls.def("masked_fill", masked_fill, py::arg("mask"), py::arg("value"));
  cls.def(
      "masked_fill_",
      [](Tensor& x, const Tensor& mask, py::object v) {
        Check(F::MaskedFill_(x, mask, FillValue(v)));
        return x;
      },
      py::arg("mask"), py::arg("value"));
  auto masked_select = [](const Tensor& x, const Tensor& mask) {
    return Unwrap(F::MaskedSelect(x, mask));
  };
  m.def("masked_select", masked_select, py::arg("input"), py::arg("mask"));
  cls.def("masked_select", masked_select, py::arg("mask"));
  auto nonzero = [](const Tensor& x, bool as_tuple) -> py::object {
    Tensor nz = Unwrap(F::Nonzero(x));
    if (!as_tuple) return py::cast(nz);
    py::tuple r(nz.dim(1));
    for (int64_t i = 0; i < nz.dim(1); ++i)
      r[i] = py::cast(Unwrap(F::Contiguous(Unwrap(F::Select(nz, 1, i)))));
    return r;
  };
  m.def("nonzero", nonzero, py::arg("input"), py::kw_only(), py::arg("as_tuple") = false);
  cls.def("nonzero", nonzero, py::kw_only(), py::arg("as_tuple") = false);
  auto one_hot = [](const Tensor& x, int64_t n) { return Unwrap(F::OneHot(x, n)); };
  m.def("one_hot", one_hot, py::arg("input"), py::arg("num_classes") = -1);
  cls.def("one_hot", one_hot, py::arg("num_classes") = -1);

  auto index_put = [](const Tensor& x, py::tuple indices, py::object values, bool acc) {
    return Unwrap(F::IndexPut(x, IndexList(indices), ToTensor(values, &x), acc));
  };
  m.def("index_put", index_put, py::arg("input"), py::arg("indices"), py::arg("values"),
        py::arg("accumulate") = false);
  cls.def("index_put", index_put, py::arg("indices"), py::arg("values"),
          py::arg("accumulate") = false);
  cls.def(
      "index_put_",
      [](Tensor& x, py::tuple indices, py::object values, bool acc) {
        Check(F::IndexPut_(x, IndexList(indices), ToTensor(values, &x), acc));
        return x;
      },
      py::arg("indices"), py::arg("values"), py::arg("accumulate") = false);
}

}  // namespace
OFL_PY_BINDING(BindIndex);
}  // namespace python
}  // namespace oneflow_like
