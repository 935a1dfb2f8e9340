// Bindings of the shape family (functions and Tensor methods), PyTorch signatures.
#include <string>

#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

void BindShape(py::module_& m, TensorClass& cls) {
  auto reshape = [](const Tensor& x, py::args shape) {
    return Unwrap(F::ReshapeInfer(x, ParseShape(shape)));
  };
  m.def("reshape", [](const Tensor& x, py::object shape) {
    return Unwrap(F::ReshapeInfer(x, ParseIntList(shape)));
  });
  cls.def("reshape", reshape).def("view", reshape);
  auto expand = [](const Tensor& x, py::args shape) {
    auto s = ParseShape(shape);
    int64_t lead = static_cast<int64_t>(s.size()) - x.ndim();
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == -1 && static_cast<int64_t>(i) >= lead) s[i] = x.dim(i - lead);
    return Unwrap(F::Expand(x, Shape(DimVector(s.begin(), s.end()))));
  };
  cls.def("expand", expand);
  m.def("permute",
        [](const Tensor& x, py::object dims) { return Unwrap(F::Permute(x, ParseIntList(dims))); });
  cls.def("permute",
          [](const Tensor& x, py::args dims) { return Unwrap(F::Permute(x, ParseShape(dims))); });
  m.def("transpose",
        [](const Tensor& x, int64_t a, int64_t b) { return Unwrap(F::Transpose(x, a, b)); });
  cls.def("transpose",
          [](const Tensor& x, int64_t a, int64_t b) { return Unwrap(F::Transpose(x, a, b)); });
  cls.def("t", [](const Tensor& x) {
    if (x.ndim() > 2)
      throw py::value_error("[t] expects a tensor with <= 2 dims, got " + x.meta_string());
    return x.ndim() < 2 ? x : Unwrap(F::Transpose(x, 0, 1));
  });
  cls.def_property_readonly("T", [](const Tensor& x) {
    std::vector<int64_t> p;
    for (int64_t i = x.ndim() - 1; i >= 0; --i) p.push_back(i);
    return Unwrap(F::Permute(x, p));
  });

  // squeeze/unsqueeze/flatten and the slicing views.
  auto squeeze = [](const Tensor& x, py::object dim) {
    return Unwrap(F::Squeeze(x, dim.is_none() ? std::vector<int64_t>{} : ParseIntList(dim)));
  };
  m.def("squeeze", squeeze, py::arg("input"), py::arg("dim") = py::none());
  cls.def("squeeze", squeeze, py::arg("dim") = py::none());
  auto unsqueeze = [](const Tensor& x, int64_t dim) { return Unwrap(F::Unsqueeze(x, dim)); };
  m.def("unsqueeze", unsqueeze, py::arg("input"), py::arg("dim"));
  cls.def("unsqueeze", unsqueeze, py::arg("dim"));
  auto flatten = [](const Tensor& x, int64_t s, int64_t e) { return Unwrap(F::Flatten(x, s, e)); };
  m.def("flatten", flatten, py::arg("input"), py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  cls.def("flatten", flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  auto narrow = [](const Tensor& x, int64_t d, int64_t s, int64_t n) {
    return Unwrap(F::Narrow(x, d, s, n));
  };
  m.def("narrow", narrow, py::arg("input"), py::arg("dim"), py::arg("start"), py::arg("length"));
  cls.def("narrow", narrow, py::arg("dim"), py::arg("start"), py::arg("length"));
  auto select = [](const Tensor& x, int64_t d, int64_t i) { return Unwrap(F::Select(x, d, i)); };
  m.def("select", select, py::arg("input"), py::arg("dim"), py::arg("index"));
  cls.def("select", select, py::arg("dim"), py::arg("index"));
  cls.def("expand_as",
          [](const Tensor& x, const Tensor& other) { return Unwrap(F::Expand(x, other.shape())); });
  cls.def("view_as", [](const Tensor& x, const Tensor& other) {
    return Unwrap(F::Reshape(x, other.shape()));
  });
  cls.def("reshape_as", [](const Tensor& x, const Tensor& other) {
    return Unwrap(F::Reshape(x, other.shape()));
  });

  // Copies that join, split or rearrange.
  auto cat = [](std::vector<Tensor> xs, int64_t dim) { return Unwrap(F::Cat(xs, dim)); };
  for (const char* name : {"cat", "concat", "concatenate"})
    m.def(name, cat, py::arg("tensors"), py::arg("dim") = 0);
  m.def(
      "stack", [](std::vector<Tensor> xs, int64_t dim) { return Unwrap(F::Stack(xs, dim)); },
      py::arg("tensors"), py::arg("dim") = 0);
  auto to_tuple = [](const TensorList& ts) {
    py::tuple r(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) r[i] = py::cast(ts[i]);
    return r;
  };
  auto split = [to_tuple](const Tensor& x, py::object sizes, int64_t dim) {
    if (PyLong_Check(sizes.ptr()))
      return to_tuple(Unwrap(F::SplitEvery(x, py::cast<int64_t>(sizes), dim)));
    return to_tuple(Unwrap(F::Split(x, ParseIntList(sizes), dim)));
  };
  m.def("split", split, py::arg("tensor"), py::arg("split_size_or_sections"), py::arg("dim") = 0);
  cls.def("split", split, py::arg("split_size"), py::arg("dim") = 0);
  auto chunk = [to_tuple](const Tensor& x, int64_t chunks, int64_t dim) {
    return to_tuple(Unwrap(F::Chunk(x, chunks, dim)));
  };
  m.def("chunk", chunk, py::arg("input"), py::arg("chunks"), py::arg("dim") = 0);
  cls.def("chunk", chunk, py::arg("chunks"), py::arg("dim") = 0);
  auto unbind = [to_tuple](const Tensor& x, int64_t dim) {
    return to_tuple(Unwrap(F::Unbind(x, dim)));
  };
  m.def("unbind", unbind, py::arg("input"), py::arg("dim") = 0);
  cls.def("unbind", unbind, py::arg("dim") = 0);
  cls.def("repeat",
          [](const Tensor& x, py::args sizes) { return Unwrap(F::Repeat(x, ParseShape(sizes))); });
  auto flip = [](const Tensor& x, py::object dims) {
    return Unwrap(F::Flip(x, ParseIntList(dims)));
  };
  m.def("flip", flip, py::arg("input"), py::arg("dims"));
  cls.def("flip", [flip](const Tensor& x, py::args dims) {
    // x.flip(1), x.flip([0, 1]) and x.flip(0, 1) (py::object on both sides: a bare int must not
    // be converted to the args tuple type)
    return flip(x, dims.size() == 1 ? py::object(dims[0]) : py::object(dims));
  });
  auto roll = [](const Tensor& x, py::object shifts, py::object dims) {
    return Unwrap(F::Roll(x, ParseIntList(shifts),
                          dims.is_none() ? std::vector<int64_t>{} : ParseIntList(dims)));
  };
  m.def("roll", roll, py::arg("input"), py::arg("shifts"), py::arg("dims") = py::none());
  cls.def("roll", roll, py::arg("shifts"), py::arg("dims") = py::none());
  auto tril = [](const Tensor& x, int64_t k) { return Unwrap(F::Tril(x, k)); };
  auto triu = [](const Tensor& x, int64_t k) { return Unwrap(F::Triu(x, k)); };
  m.def("tril", tril, py::arg("input"), py::arg("diagonal") = 0);
  m.def("triu", triu, py::arg("input"), py::arg("diagonal") = 0);
  cls.def("tril", tril, py::arg("diagonal") = 0).def("triu", triu, py::arg("diagonal") = 0);
  // as_strided(input, size, stride, storage_offset=None) over a contiguous input; the offset is
  // in storage elements as in PyTorch (it may not precede the input's own offset).
  auto as_strided = [](const Tensor& x, py::object size, py::object stride,
                       py::object storage_offset) {
    int64_t off = storage_offset.is_none() ? 0 : py::cast<int64_t>(storage_offset) - x.offset();
    if (off < 0)
      throw py::index_error("[as_strided] storage_offset " +
                            std::to_string(py::cast<int64_t>(storage_offset)) +
                            " precedes the input's offset " + std::to_string(x.offset()));
    auto st = ParseIntList(stride);
    return Unwrap(F::AsStrided(x, Shape(absl::MakeConstSpan(ParseIntList(size))),
                               DimVector(st.begin(), st.end()), off));
  };
  m.def("as_strided", as_strided, py::arg("input"), py::arg("size"), py::arg("stride"),
        py::arg("storage_offset") = py::none());
  cls.def("as_strided", as_strided, py::arg("size"), py::arg("stride"),
          py::arg("storage_offset") = py::none());
  m.def(
      "pad",
      [](const Tensor& x, py::object pad, const std::string& mode, py::object value) {
        return Unwrap(
            F::Pad(x, ParseIntList(pad), mode, value.is_none() ? 0.0 : py::cast<double>(value)));
      },
      py::arg("input"), py::arg("pad"), py::arg("mode") = "constant",
      py::arg("value") = py::none());
}

}  // namespace
OFL_PY_BINDING(BindShape);
}  // namespace python
}  // namespace oneflow_like
