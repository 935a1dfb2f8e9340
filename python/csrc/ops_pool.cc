// Bindings of the pooling family, generated from oneflow_like/opdefs/pool.def: one
// torch.nn.functional-style function per OFL_POOL_API line, defined in `_C` and `_C.nn_functional`
// (nn/functional.py wraps them), with the signature of its sig column and the defaults of
// PoolAttrs; plus flow._C._pool_table() for the op-table tests.
#include <vector>

#include "oneflow_like/opdefs/pool.h"
#include "oneflow_like/ops/pool.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using PoolFn = StatusOr<Tensor> (*)(const Tensor&, const F::Pool2dOptions&);
using IndicesFn = StatusOr<std::pair<Tensor, Tensor>> (*)(const Tensor&, const F::Pool2dOptions&);
using AdaptiveFn = StatusOr<Tensor> (*)(const Tensor&, const std::vector<int64_t>&);

// A list attribute's Python default: None where the struct's is empty (stride: the kernel's),
// else its one value.
py::object ListDefault(const opdefs::Ints& v) {
  return v.empty() ? py::object(py::none()) : py::object(py::int_(v[0]));
}

F::Pool2dOptions PoolOpts(py::object k, py::object s, py::object p, py::object d, bool ceil) {
  F::Pool2dOptions o;
  o.kernel_size = ParseIntList(k);
  if (!s.is_none()) o.stride = ParseIntList(s);
  if (!s.is_none() && o.stride.empty()) o.stride = o.kernel_size;  // stride=[] means kernel_size
  o.padding = ParseIntList(p);
  o.dilation = ParseIntList(d);
  o.ceil_mode = ceil;
  return o;
}

// output_size: an int, or a sequence whose None entries (-1) keep the input's size.
std::vector<int64_t> OutputSize(py::object o) {
  if (PyLong_Check(o.ptr())) return {o.cast<int64_t>()};
  std::vector<int64_t> r;
  for (auto h : o) r.push_back(h.is_none() ? -1 : h.cast<int64_t>());
  return r;
}

// One binder per sig column: defines name(input, ...) in `_C` and `_C.nn_functional`.
struct Binder {
  py::module_& m;
  py::module_& sub;
  const opdefs::PoolAttrs d{};
  template <typename Fn, typename... Extra>
  void Both(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    sub.def(name, fn, py::arg("input"), extra...);
  }
  void max_indices(const char* name, IndicesFn f) {
    Both(
        name,
        [f](const Tensor& x, py::object k, py::object s, py::object p, py::object dl, bool ceil,
            bool ret_idx) -> py::object {
          auto yi = Unwrap(f(x, PoolOpts(k, s, p, dl, ceil)));
          if (ret_idx) return py::make_tuple(yi.first, yi.second);
          return py::cast(yi.first);
        },
        py::arg("kernel_size"), py::arg("stride") = ListDefault(d.stride),
        py::arg("padding") = ListDefault(d.padding), py::arg("dilation") = ListDefault(d.dilation),
        py::arg("ceil_mode") = d.ceil_mode, py::arg("return_indices") = false);
  }
  void max(const char* name, PoolFn f) {
    Both(
        name,
        [f](const Tensor& x, py::object k, py::object s, py::object p, py::object dl, bool ceil) {
          return Unwrap(f(x, PoolOpts(k, s, p, dl, ceil)));
        },
        py::arg("kernel_size"), py::arg("stride") = ListDefault(d.stride),
        py::arg("padding") = ListDefault(d.padding), py::arg("dilation") = ListDefault(d.dilation),
        py::arg("ceil_mode") = d.ceil_mode);
  }
  void avg_divisor(const char* name, PoolFn f) {
    Both(
        name,
        [f](const Tensor& x, py::object k, py::object s, py::object p, bool ceil, bool inc,
            py::object div) {
          F::Pool2dOptions o = PoolOpts(k, s, p, py::int_(1), ceil);
          o.count_include_pad = inc;
          o.divisor_override = div.is_none() ? 0 : div.cast<int64_t>();
          return Unwrap(f(x, o));
        },
        py::arg("kernel_size"), py::arg("stride") = ListDefault(d.stride),
        py::arg("padding") = ListDefault(d.padding), py::arg("ceil_mode") = d.ceil_mode,
        py::arg("count_include_pad") = d.count_include_pad,
        py::arg("divisor_override") = d.divisor_override > 0
                                          ? py::object(py::int_(d.divisor_override))
                                          : py::object(py::none()));
  }
  void avg(const char* name, PoolFn f) {
    Both(
        name,
        [f](const Tensor& x, py::object k, py::object s, py::object p, bool ceil, bool inc) {
          F::Pool2dOptions o = PoolOpts(k, s, p, py::int_(1), ceil);
          o.count_include_pad = inc;
          return Unwrap(f(x, o));
        },
        py::arg("kernel_size"), py::arg("stride") = ListDefault(d.stride),
        py::arg("padding") = ListDefault(d.padding), py::arg("ceil_mode") = d.ceil_mode,
        py::arg("count_include_pad") = d.count_include_pad);
  }
  void adaptive(const char* name, AdaptiveFn f) {
    Both(
        name, [f](const Tensor& x, py::object os) { return Unwrap(f(x, OutputSize(os))); },
        py::arg("output_size"));
  }
};

// One row per table entry, for flow._C._pool_table().
struct OpRow {
  const char *name, *kind, *grad, *save;
  int nd;
  py::dict (*attrs)();
};
struct ApiRow {
  const char *name, *sig, *entry;
};
// clang-format off
#define OFL_ATTRS(...)
#define OFL_POOL_API(...)
#define OFL_POOL(name, Name, nd, Attrs, kind, grad, save) \
  {#name, #kind, #grad, #save, nd, &AttrsDict<opdefs::Attrs>},
#define OFL_POOL_GRAD(name, Name, nd, Attrs) \
  {#name, "grad", "NoGrad", "none", nd, &AttrsDict<opdefs::Attrs>},
const OpRow kOpRows[] = {
#include "oneflow_like/opdefs/pool.def"
};
#undef OFL_POOL
#undef OFL_POOL_GRAD
#undef OFL_POOL_API
#define OFL_POOL(...)
#define OFL_POOL_GRAD(...)
#define OFL_POOL_API(pyname, sig, entry) {#pyname, #sig, #entry},
const ApiRow kApiRows[] = {
#include "oneflow_like/opdefs/pool.def"
};
#undef OFL_POOL_API
// clang-format on

void BindPool(py::module_& m, TensorClass&) {
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  Binder b{m, sub};
  // clang-format off
#define OFL_POOL_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL_API
#undef OFL_POOL_GRAD
#undef OFL_POOL
#undef OFL_ATTRS
  // clang-format on
  m.def("_pool_table", [] {
    py::list ops, apis;
    for (const OpRow& r : kOpRows)
      ops.append(py::dict(py::arg("name") = r.name, py::arg("nd") = r.nd, py::arg("kind") = r.kind,
                          py::arg("grad") = r.grad, py::arg("save") = r.save,
                          py::arg("attrs") = r.attrs()));
    for (const ApiRow& r : kApiRows)
      apis.append(
          py::dict(py::arg("name") = r.name, py::arg("sig") = r.sig, py::arg("entry") = r.entry));
    return py::dict(py::arg("ops") = ops, py::arg("apis") = apis);
  });
}

}  // namespace
OFL_PY_BINDING(BindPool);
}  // namespace python
}  // namespace oneflow_like
