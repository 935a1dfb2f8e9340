// PYBIND11_MODULE(_C): the Tensor class, then every op family's binder (ops_<family>.cc).
#include "python/csrc/binding.h"
#include "python/csrc/tensor_py.h"

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  using namespace oneflow_like::python;
  m.doc() = "oneflow_like C++ core: tensors, functional ops, autograd, the VM";
  TensorClass cls(m, "Tensor");
  SetTensorType(cls);
  BindCore(m, cls);
  for (Binder b : Binders()) b(m, cls);
}
