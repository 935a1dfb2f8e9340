// Bindings of the shape family, generated from oneflow_like/opdefs/shape.def where the signature is
// regular: one Python function (and, kind fn_method, Tensor method) per OFL_SHAPE_API line, with
// the PyTorch signature of its sig column and defaults from the attribute structs; plus
// flow._C._shape_table() for the op-table tests. The view ops' variadic or positional-only
// signatures (reshape/view, expand, permute, transpose, t, T, *_as, repeat) are hand-written below
// the table's.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "oneflow_like/opdefs/shape.h"
#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// What a call returns: a tensor, or a tuple for an entry returning several.
Tensor Result(StatusOr<Tensor>&& r) {
  return Unwrap(std::move(r));
}
py::tuple Result(StatusOr<TensorList>&& r) {
  TensorList ts = Unwrap(std::move(r));
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
  return t;
}

// One binder per sig column: flow.name(input, ...) and, when `method` (kind fn_method),
// Tensor.name(...).
struct ShapeBinder {
  py::module_& m;
  TensorClass& cls;
  template <typename Fn, typename... Extra>
  void Def(bool method, const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    if (method) cls.def(name, fn, extra...);
  }
  // (input, dim)
  template <typename Fn>
  void dim(bool method, const char* name, Fn f) {
    Def(
        method, name, [f](const Tensor& x, int64_t dim) { return Result(f(x, dim)); },
        py::arg("dim"));
  }
  // (input, dim=None): None is every size-1 dim; an int or a sequence.
  template <typename Fn>
  void opt_dims(bool method, const char* name, Fn f) {
    Def(
        method, name,
        [f](const Tensor& x, py::object dim) {
          return Result(f(x, dim.is_none() ? std::vector<int64_t>{} : ParseIntList(dim)));
        },
        py::arg("dim") = py::none());
  }
  // (input, start_dim=0, end_dim=-1)
  template <typename Fn>
  void flatten(bool method, const char* name, Fn f) {
    Def(
        method, name, [f](const Tensor& x, int64_t s, int64_t e) { return Result(f(x, s, e)); },
        py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  }
  // (input, dim, start, length)
  template <typename Fn>
  void narrow(bool method, const char* name, Fn f) {
    Def(
        method, name,
        [f](const Tensor& x, int64_t d, int64_t s, int64_t n) { return Result(f(x, d, s, n)); },
        py::arg("dim"), py::arg("start"), py::arg("length"));
  }
  // (input, dim, index)
  template <typename Fn>
  void select(bool method, const char* name, Fn f) {
    Def(
        method, name, [f](const Tensor& x, int64_t d, int64_t i) { return Result(f(x, d, i)); },
        py::arg("dim"), py::arg("index"));
  }
  // (tensors, dim=0): CatAttrs' dim. A function only.
  template <typename Fn>
  void tensors(bool, const char* name, Fn f) {
    m.def(
        name, [f](std::vector<Tensor> xs, int64_t dim) { return Result(f(xs, dim)); },
        py::arg("tensors"), py::arg("dim") = opdefs::CatAttrs{}.dim);
  }
  // (tensor, split_size_or_sections, dim=0), Tensor.split(split_size, dim=0): an int gives pieces
  // of that size (every), a sequence the sizes (f).
  template <typename Fn, typename Every>
  void split(bool method, const char* name, Fn f, Every every) {
    auto fn = [f, every](const Tensor& x, py::object sizes, int64_t dim) {
      if (PyLong_Check(sizes.ptr())) return Result(every(x, py::cast<int64_t>(sizes), dim));
      return Result(f(x, ParseIntList(sizes), dim));
    };
    m.def(name, fn, py::arg("tensor"), py::arg("split_size_or_sections"), py::arg("dim") = 0);
    if (method) cls.def(name, fn, py::arg("split_size"), py::arg("dim") = 0);
  }
  // (input, chunks, dim=0)
  template <typename Fn>
  void chunk(bool method, const char* name, Fn f) {
    Def(
        method, name,
        [f](const Tensor& x, int64_t chunks, int64_t dim) { return Result(f(x, chunks, dim)); },
        py::arg("chunks"), py::arg("dim") = 0);
  }
  // (input, dim=0)
  template <typename Fn>
  void unbind(bool method, const char* name, Fn f) {
    Def(
        method, name, [f](const Tensor& x, int64_t dim) { return Result(f(x, dim)); },
        py::arg("dim") = 0);
  }
  // (input, dims), Tensor.flip(*dims): x.flip(1), x.flip([0, 1]) and x.flip(0, 1).
  template <typename Fn>
  void flip(bool method, const char* name, Fn f) {
    auto fn = [f](const Tensor& x, py::object dims) { return Result(f(x, ParseIntList(dims))); };
    m.def(name, fn, py::arg("input"), py::arg("dims"));
    if (!method) return;
    cls.def(name, [fn](const Tensor& x, py::args dims) {
      // py::object on both sides: a bare int must not be converted to the args tuple type
      return fn(x, dims.size() == 1 ? py::object(dims[0]) : py::object(dims));
    });
  }
  // (input, shifts, dims=None): None rolls the flattened tensor.
  template <typename Fn>
  void roll(bool method, const char* name, Fn f) {
    Def(
        method, name,
        [f](const Tensor& x, py::object shifts, py::object dims) {
          return Result(f(x, ParseIntList(shifts),
                          dims.is_none() ? std::vector<int64_t>{} : ParseIntList(dims)));
        },
        py::arg("shifts"), py::arg("dims") = py::none());
  }
  // (input, diagonal=0): TrilAttrs' diagonal.
  template <typename Fn>
  void diagonal(bool method, const char* name, Fn f) {
    Def(
        method, name, [f](const Tensor& x, int64_t k) { return Result(f(x, k)); },
        py::arg("diagonal") = opdefs::TrilAttrs{}.diagonal);
  }
  // (input, size, stride, storage_offset=None) over a contiguous input; the offset is in storage
  // elements as in PyTorch (it may not precede the input's own offset; None: AsStridedAttrs'
  // offset past it).
  template <typename Fn>
  void as_strided(bool method, const char* name, Fn f) {
    std::string op = name;
    Def(
        method, name,
        [op, f](const Tensor& x, py::object size, py::object stride, py::object storage_offset) {
          int64_t off = storage_offset.is_none() ? opdefs::AsStridedAttrs{}.offset
                                                 : py::cast<int64_t>(storage_offset) - x.offset();
          if (off < 0)
            throw py::index_error("[" + op + "] storage_offset " +
                                  std::to_string(py::cast<int64_t>(storage_offset)) +
                                  " precedes the input's offset " + std::to_string(x.offset()));
          auto st = ParseIntList(stride);
          return Result(f(x, Shape(absl::MakeConstSpan(ParseIntList(size))),
                          DimVector(st.begin(), st.end()), off));
        },
        py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
  }
  // (input, pad, mode='constant', value=None): None is PadAttrs' value.
  template <typename Fn>
  void pad(bool method, const char* name, Fn f) {
    Def(
        method, name,
        [f](const Tensor& x, py::object pad, const std::string& mode, py::object value) {
          return Result(f(x, ParseIntList(pad), mode,
                          value.is_none() ? opdefs::PadAttrs{}.value : py::cast<double>(value)));
        },
        py::arg("pad"), py::arg("mode") = "constant", py::arg("value") = py::none());
  }
};

// One row per table entry, for flow._C._shape_table().
constexpr char kOpCols[] = "name|out|view|grad|save|layout|lowp";
constexpr char kApiCols[] = "name|kind|sig|entry";
// The kind column: fn_method also defines the Tensor method.
#define OFL_SHAPE_METHOD_fn_method true
#define OFL_SHAPE_METHOD_fn false
// The entries a sig's binder takes: split's sizes and size variants; one entry elsewhere.
#define OFL_SHAPE_ENTRIES_split(entry) F::entry, F::entry##Every
#define OFL_SHAPE_ENTRIES_dim(entry) F::entry
#define OFL_SHAPE_ENTRIES_opt_dims(entry) F::entry
#define OFL_SHAPE_ENTRIES_flatten(entry) F::entry
#define OFL_SHAPE_ENTRIES_narrow(entry) F::entry
#define OFL_SHAPE_ENTRIES_select(entry) F::entry
#define OFL_SHAPE_ENTRIES_tensors(entry) F::entry
#define OFL_SHAPE_ENTRIES_chunk(entry) F::entry
#define OFL_SHAPE_ENTRIES_unbind(entry) F::entry
#define OFL_SHAPE_ENTRIES_flip(entry) F::entry
#define OFL_SHAPE_ENTRIES_roll(entry) F::entry
#define OFL_SHAPE_ENTRIES_diagonal(entry) F::entry
#define OFL_SHAPE_ENTRIES_as_strided(entry) F::entry
#define OFL_SHAPE_ENTRIES_pad(entry) F::entry
// clang-format off
#define OFL_ATTRS(...)
#define OFL_SHAPE_API(...)
#define OFL_SHAPE(name, Name, Attrs, out, view, grad, save, layout, lowp) \
  {#name "|" #out "|" #view "|" #grad "|" #save "|" #layout "|" #lowp, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/shape.def"
};
#undef OFL_SHAPE
#undef OFL_SHAPE_API
#define OFL_SHAPE(...)
#define OFL_SHAPE_API(pyname, kind, sig, entry) {#pyname "|" #kind "|" #sig "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/shape.def"
};
#undef OFL_SHAPE_API
// clang-format on

void BindShape(py::module_& m, TensorClass& cls) {
  ShapeBinder b{m, cls};
  // clang-format off
#define OFL_SHAPE_API(pyname, kind, sig, entry) \
  b.sig(OFL_SHAPE_METHOD_##kind, #pyname, OFL_SHAPE_ENTRIES_##sig(entry));
#include "oneflow_like/opdefs/shape.def"
#undef OFL_SHAPE_API
#undef OFL_SHAPE
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_shape_table", kOpCols, kOpRows, kApiCols, kApiRows);

  // Hand-written: the views' variadic shapes and positional-only arguments.
  auto reshape = [](const Tensor& x, py::args shape) {
    return Unwrap(F::ReshapeInfer(x, ParseShape(shape)));
  };
  m.def("reshape", [](const Tensor& x, py::object shape) {
    return Unwrap(F::ReshapeInfer(x, ParseIntList(shape)));
  });
  // Tensor.view(dtype): the same bytes read as another dtype (torch's reinterpretation; uint16
  // <-> int16 <-> float16, float8 <-> uint8, float32 <-> uint8 ...). It shares the storage and,
  // as a different dtype, carries no gradient. Between sizes, as torch: the last dim (stride 1)
  // grows or shrinks by the size ratio; the other strides and the offset scale with it and must
  // divide evenly.
  auto view_dtype = [](const Tensor& x, DType dt) -> Tensor {
    if (dt == x.dtype())
      return Unwrap(F::ReshapeInfer(
          x, std::vector<int64_t>(x.shape().dims().begin(), x.shape().dims().end())));
    if (x.is_lazy())
      throw py::type_error(absl::StrFormat(
          "[view] view(dtype) of a tensor traced by nn.Graph is not supported (%s to %s)",
          x.meta_string(), DTypeLongName(dt)));
    const int64_t from = DTypeSize(x.dtype()), to = DTypeSize(dt);
    DimVector dims(x.shape().dims().begin(), x.shape().dims().end());
    DimVector strides = x.strides();
    int64_t offset = x.offset();
    if (from != to) {
      auto fail = [&](const std::string& what) {
        throw std::runtime_error(
            absl::StrFormat("[view] %s to view %s as %s (different element sizes), tensor %s", what,
                            DTypeLongName(x.dtype()), DTypeLongName(dt), x.meta_string()));
      };
      const int64_t nd = static_cast<int64_t>(dims.size());
      if (nd == 0) fail("self.dim() cannot be 0");
      if (strides[nd - 1] != 1 && dims[nd - 1] != 1)
        fail(absl::StrFormat("self.stride(-1) must be 1, but got %d", strides[nd - 1]));
      if (to > from) {
        const int64_t r = to / from;
        if (dims[nd - 1] % r != 0)
          fail(absl::StrFormat("self.size(-1) must be divisible by %d, but got %d", r,
                               dims[nd - 1]));
        if (offset % r != 0)
          fail(absl::StrFormat("self.storage_offset() must be divisible by %d, but got %d", r,
                               offset));
        for (int64_t i = 0; i + 1 < nd; ++i)
          if (strides[i] % r != 0)
            fail(absl::StrFormat("self.stride(%d) must be divisible by %d, but got %d", i, r,
                                 strides[i]));
        dims[nd - 1] /= r;
        for (int64_t i = 0; i + 1 < nd; ++i) strides[i] /= r;
        offset /= r;
      } else {
        const int64_t r = from / to;
        dims[nd - 1] *= r;
        for (int64_t i = 0; i + 1 < nd; ++i) strides[i] *= r;
        offset *= r;
      }
      strides[nd - 1] = 1;
    }
    Tensor v = Tensor::MakeView(x, Shape(dims), strides, offset);
    v.impl()->dtype = dt;
    return v;
  };
  auto view = [reshape, view_dtype](const Tensor& x, py::args args, py::kwargs kw) -> Tensor {
    if (kw.contains("dtype") && args.size() == 0 && kw.size() == 1)
      return view_dtype(x, ParseDType(kw["dtype"]));
    if (kw.size() != 0) throw py::type_error("[view] takes a shape or a dtype");
    if (args.size() == 1 && py::isinstance<DType>(args[0]))
      return view_dtype(x, py::cast<DType>(args[0]));
    return reshape(x, args);
  };
  cls.def("reshape", reshape).def("view", view);
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
  cls.def("expand_as",
          [](const Tensor& x, const Tensor& other) { return Unwrap(F::Expand(x, other.shape())); });
  cls.def("view_as", [](const Tensor& x, const Tensor& other) {
    return Unwrap(F::Reshape(x, other.shape()));
  });
  cls.def("reshape_as", [](const Tensor& x, const Tensor& other) {
    return Unwrap(F::Reshape(x, other.shape()));
  });
  cls.def("repeat",
          [](const Tensor& x, py::args sizes) { return Unwrap(F::Repeat(x, ParseShape(sizes))); });
}

}  // namespace
OFL_PY_BINDING(BindShape);
}  // namespace python
}  // namespace oneflow_like
