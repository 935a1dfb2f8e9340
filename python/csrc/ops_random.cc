// Bindings of the random family: seeding (the random ops themselves bind here too).
#include "oneflow_like/ops/random.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

void BindRandom(py::module_& m, TensorClass&) {
  m.def("manual_seed", [](uint64_t seed) { F::ManualSeed(seed); }, py::arg("seed"));
  m.def("initial_seed", &F::InitialSeed);
  m.def("seed", [] {
    uint64_t s = F::NextSeed(Device::CPU());
    F::ManualSeed(s);
    return s;
  });
}

}  // namespace
OFL_PY_BINDING(BindRandom);
}  // namespace python
}  // namespace oneflow_like
