// The bindings of the NN op families, generated from their op tables (oneflow_like/opdefs/
// {norm,conv,pool,softmax,loss,nn_misc}.def): torch.nn.functional-style functions in `_C` and
// `_C.nn_functional` (nn/functional.py wraps them), Tensor methods where PyTorch has them, and each
// table's flow._C._<family>_table(). One translation unit for the six families (python/csrc/nn/
// *.inc, one per family, each in its own namespace; BindNnFamilies below calls their binders):
// every pybind11 file pays about 6 s of compile time for the headers alone, so splitting the
// families into files of their own would grow the cold build.
#include <optional>
#include <string>
#include <vector>

#include "oneflow_like/opdefs/conv.h"
#include "oneflow_like/opdefs/loss.h"
#include "oneflow_like/opdefs/nn_misc.h"
#include "oneflow_like/opdefs/norm.h"
#include "oneflow_like/opdefs/pool.h"
#include "oneflow_like/opdefs/softmax.h"
#include "oneflow_like/ops/conv.h"
#include "oneflow_like/ops/loss.h"
#include "oneflow_like/ops/nn_misc.h"
#include "oneflow_like/ops/norm.h"
#include "oneflow_like/ops/pool.h"
#include "oneflow_like/ops/softmax.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

#include "python/csrc/nn/norm.inc"
#include "python/csrc/nn/conv.inc"
#include "python/csrc/nn/pool.inc"
#include "python/csrc/nn/softmax.inc"
#include "python/csrc/nn/loss.inc"
#include "python/csrc/nn/nn_misc.inc"

namespace oneflow_like {
namespace python {
namespace {
void BindNnFamilies(py::module_& m, TensorClass& cls) {
  norm_py::BindNorm(m, cls);
  conv_py::BindConvFamily(m, cls);
  pool_py::BindPool(m, cls);
  softmax_py::BindSoftmax(m, cls);
  loss_py::BindLoss(m, cls);
  nn_misc_py::BindNnMisc(m, cls);
}
}  // namespace
OFL_PY_BINDING(BindNnFamilies);
}  // namespace python
}  // namespace oneflow_like
