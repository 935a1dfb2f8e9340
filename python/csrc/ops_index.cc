// Bindings of the index family, generated from oneflow_like/opdefs/index.def: one Python function
// and Tensor method (kind fn_method) or in-place Tensor method (kind method_) per OFL_INDEX_API
// line, with the PyTorch signature of its sig column and defaults from the attribute structs; plus
// flow._C._index_table() for the op-table tests. Tensor __getitem__/__setitem__ are in
// indexing.cc.
#include <string>
#include <type_traits>
#include <utility>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/opdefs/index.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/ternary.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// A fill value given as a Python number or a one-element tensor.
double FillValue(py::handle v) {
  if (py::isinstance<Tensor>(v)) return py::cast<double>(v.attr("item")());
  return ScalarValue(v);
}

// masked_fill(mask, value) with a 0-d value tensor that requires grad: where(mask, value, x),
// so the value's gradient (the sum of the output's gradient over the mask) is recorded, as torch;
// the in-place form writes it into x with copy_ (from a recorded clone of x's old value).
template <typename R>
R MaskedFillTensor(const Tensor& x, const Tensor& mask, const Tensor& value) {
  const char* op = std::is_same_v<R, Status> ? "masked_fill_" : "masked_fill";
  if (value.ndim() != 0)
    return InvalidArgument(
        "[%s] only supports a 0-dimensional value tensor, but got tensor with %d dimension(s)", op,
        static_cast<int>(value.ndim()));
  if (mask.dtype() != DType::kBool)
    return TypeError("[%s] only supports boolean masks, but got mask %s", op, mask.meta_string());
  ASSIGN_OR_RETURN(Tensor v, F::Cast(value, x.dtype()));
  if constexpr (std::is_same_v<R, Status>) {
    ASSIGN_OR_RETURN(Tensor old, F::Clone(x));
    ASSIGN_OR_RETURN(Tensor r, F::Where(mask, v, old));
    if (r.shape() != x.shape())
      return InvalidArgument("[%s] mask %s is not broadcastable to %s", op, mask.meta_string(),
                             x.meta_string());
    return F::CopyInto(x, r);
  } else {
    return F::Where(mask, v, x);
  }
}

TensorList IndexList(py::handle indices) {
  TensorList r;
  for (auto item : py::reinterpret_borrow<py::iterable>(indices))
    r.push_back(item.is_none() ? Tensor() : ToTensor(item));
  return r;
}

// What a call returns: an out-of-place entry's tensor, or after an in-place entry (Status) the
// tensor it wrote.
Tensor Result(StatusOr<Tensor>&& r, const Tensor&) {
  return Unwrap(std::move(r));
}
Tensor Result(const Status& s, const Tensor& self) {
  Check(s);
  return self;
}

// One binder per sig column; `function` (kind fn_method) also defines flow.name(input, ...)
// besides Tensor.name(...).
struct Binder {
  py::module_& m;
  TensorClass& cls;
  template <typename Fn, typename... Extra>
  void Def(bool function, const char* name, Fn fn, Extra... extra) {
    if (function) m.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  }
  // (input, dim, index)
  template <typename R>
  void dim_index(bool function, const char* name, R (*f)(const Tensor&, int64_t, const Tensor&)) {
    Def(
        function, name,
        [f](const Tensor& x, int64_t dim, const Tensor& index) {
          return Result(f(x, dim, index), x);
        },
        py::arg("dim"), py::arg("index"));
  }
  // (input, dim, index, src)
  template <typename R>
  void dim_index_src(bool function, const char* name,
                     R (*f)(const Tensor&, int64_t, const Tensor&, const Tensor&)) {
    Def(
        function, name,
        [f](const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
          return Result(f(x, dim, index, src), x);
        },
        py::arg("dim"), py::arg("index"), py::arg("src"));
  }
  // (input, dim, index, source, *, alpha=1): source * alpha is added.
  template <typename R>
  void index_add(bool function, const char* name,
                 R (*f)(const Tensor&, int64_t, const Tensor&, const Tensor&)) {
    Def(
        function, name,
        [f](const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, double alpha) {
          Tensor s = alpha == 1.0 ? src : Unwrap(F::MulScalar(src, alpha));
          return Result(f(x, dim, index, s), x);
        },
        py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1.0);
  }
  // (input, dim, index, src, reduce=None): a tensor src (a 0-d one only with reduce='add') goes
  // to f / add, a number or 0-d tensor to fill. None is ScatterAttrs' reduce "none".
  template <typename R>
  void scatter(bool function, const char* name,
               R (*f)(const Tensor&, int64_t, const Tensor&, const Tensor&),
               R (*add)(const Tensor&, int64_t, const Tensor&, const Tensor&),
               R (*fill)(const Tensor&, int64_t, const Tensor&, double)) {
    std::string op = name;
    Def(
        function, name,
        [op, f, add, fill](const Tensor& x, int64_t dim, const Tensor& index, py::object src,
                           py::object reduce) {
          bool is_add = !reduce.is_none() && py::cast<std::string>(reduce) == "add";
          if (!reduce.is_none() && !is_add)
            throw py::value_error("[" + op + "] only reduce='add' is supported");
          if (py::isinstance<Tensor>(src) && (py::cast<Tensor>(src).ndim() > 0 || is_add)) {
            Tensor s = py::cast<Tensor>(src);
            return Result(is_add ? add(x, dim, index, s) : f(x, dim, index, s), x);
          }
          if (is_add) throw py::value_error("[" + op + "] reduce='add' needs a source tensor");
          return Result(fill(x, dim, index, FillValue(src)), x);
        },
        py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none());
  }
  // (input, mask)
  template <typename R>
  void mask(bool function, const char* name, R (*f)(const Tensor&, const Tensor&)) {
    Def(
        function, name, [f](const Tensor& x, const Tensor& mask) { return Result(f(x, mask), x); },
        py::arg("mask"));
  }
  // (input, mask, value): value a number or a one-element tensor.
  template <typename R>
  void mask_value(bool function, const char* name, R (*f)(const Tensor&, const Tensor&, double)) {
    Def(
        function, name,
        [f](const Tensor& x, const Tensor& mask, py::object v) {
          double re, im;
          if (py::isinstance<Tensor>(v) && py::cast<Tensor>(v).requires_grad() && GradModeEnabled())
            return Result(MaskedFillTensor<R>(x, mask, py::cast<Tensor>(v)), x);
          if (py::isinstance<Tensor>(v) && IsComplex(py::cast<Tensor>(v).dtype()))
            v = v.attr("item")();
          if (!ComplexScalarValue(v, &re, &im)) return Result(f(x, mask, FillValue(v)), x);
          if constexpr (std::is_same_v<R, Status>)
            return Result(F::ComplexMaskedFill_(x, mask, re, im), x);
          else
            return Result(F::ComplexMaskedFill(x, mask, re, im), x);
        },
        py::arg("mask"), py::arg("value"));
  }
  // (input, *, as_tuple=False): as_tuple gives one 1-d tensor per dim.
  void nonzero(bool function, const char* name, StatusOr<Tensor> (*f)(const Tensor&)) {
    Def(
        function, name,
        [f](const Tensor& x, bool as_tuple) -> py::object {
          Tensor nz = Unwrap(f(x));
          if (!as_tuple) return py::cast(nz);
          py::tuple r(nz.dim(1));
          for (int64_t i = 0; i < nz.dim(1); ++i)
            r[i] = py::cast(Unwrap(F::Contiguous(Unwrap(F::Select(nz, 1, i)))));
          return r;
        },
        py::kw_only(), py::arg("as_tuple") = false);
  }
  // (input, num_classes=-1)
  void one_hot(bool function, const char* name, StatusOr<Tensor> (*f)(const Tensor&, int64_t)) {
    Def(
        function, name, [f](const Tensor& x, int64_t n) { return Unwrap(f(x, n)); },
        py::arg("num_classes") = opdefs::OneHotAttrs{}.num_classes);
  }
  // (input, indices, values, accumulate=False): indices a tuple of tensors or None.
  template <typename R>
  void index_put(bool function, const char* name,
                 R (*f)(const Tensor&, const TensorList&, const Tensor&, bool)) {
    Def(
        function, name,
        [f](const Tensor& x, py::tuple indices, py::object values, bool acc) {
          return Result(f(x, IndexList(indices), ToTensor(values, &x), acc), x);
        },
        py::arg("indices"), py::arg("values"),
        py::arg("accumulate") = opdefs::IndexPutAttrs{}.accumulate);
  }
};

// One row per table entry, for flow._C._index_table().
constexpr char kOpCols[] = "name|check|out|grad|save|layout";
constexpr char kApiCols[] = "name|kind|sig|entry";
// The kind column: fn_method calls F::entry, method_ its in-place twin F::entry_.
#define OFL_INDEX_FUNCTION_fn_method true
#define OFL_INDEX_FUNCTION_method_ false
#define OFL_INDEX_FN_fn_method(entry) F::entry
#define OFL_INDEX_FN_method_(entry) F::entry##_
#define OFL_INDEX_ENTRY_NAME_fn_method(entry) #entry
#define OFL_INDEX_ENTRY_NAME_method_(entry) #entry "_"
// The entries a sig's binder takes: scatter's tensor, scatter_add and fill variants; one entry
// elsewhere.
#define OFL_INDEX_ENTRIES_scatter(kind, entry) \
  OFL_INDEX_FN_##kind(entry), OFL_INDEX_FN_##kind(entry##Add), OFL_INDEX_FN_##kind(entry##Value)
#define OFL_INDEX_ENTRIES_dim_index(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_dim_index_src(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_index_add(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_mask(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_mask_value(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_nonzero(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_one_hot(kind, entry) OFL_INDEX_FN_##kind(entry)
#define OFL_INDEX_ENTRIES_index_put(kind, entry) OFL_INDEX_FN_##kind(entry)
// clang-format off
#define OFL_ATTRS(...)
#define OFL_INDEX_API(...)
#define OFL_INDEX(name, Name, Attrs, check, out, grad, save, layout) \
  {#name "|" #check "|" #out "|" #grad "|" #save "|" #layout, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/index.def"
};
#undef OFL_INDEX
#undef OFL_INDEX_API
#define OFL_INDEX(...)
#define OFL_INDEX_API(pyname, kind, sig, entry) \
  {#pyname "|" #kind "|" #sig "|" OFL_INDEX_ENTRY_NAME_##kind(entry)},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/index.def"
};
#undef OFL_INDEX_API
// clang-format on

void BindIndex(py::module_& m, TensorClass& cls) {
  Binder b{m, cls};
  // clang-format off
#define OFL_INDEX_API(pyname, kind, sig, entry) \
  b.sig(OFL_INDEX_FUNCTION_##kind, #pyname, OFL_INDEX_ENTRIES_##sig(kind, entry));
#include "oneflow_like/opdefs/index.def"
#undef OFL_INDEX_API
#undef OFL_INDEX
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_index_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindIndex);
}  // namespace python
}  // namespace oneflow_like
