// Creation family: the OpDefs of oneflow_like/opdefs/creation.def (generated below, with their
// Run<Name> entries) and the functional entries. Kernels: kernels/cpu/creation.cc,
// kernels/cuda/{creation,random}.cc.
#include "oneflow_like/ops/creation.h"

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/creation.h"
#include "vm/instructions_builder.h"

namespace oneflow_like {
namespace {

// ---- the table's out column (every op: the shape, dtype and device attributes) ------------------

template <typename A>
Status InferCreation(TensorSpan, const AttrMap& m, std::vector<TensorMeta>* out) {
  const A a = opdefs::ReadAttrs<A>(m);
  for (int64_t d : a.shape)
    if (d < 0) return InvalidArgument("[full] negative dimension %d in shape", d);
  ASSIGN_OR_RETURN(Device dev, Device::Parse(a.device));
  out->push_back(TensorMeta{Shape(DimVector(a.shape.begin(), a.shape.end())), a.dtype, dev});
  return Status();
}

std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

// ---- the OpDefs and Run<Name> (generated from creation.def) -------------------------------------

// An in-place op (fill_) writes its (strided) target, which is not among its inputs.
#define OFL_CREATION_STRIDED_fresh false
#define OFL_CREATION_STRIDED_target true
// fill_ overwrites its target: the old value gets no gradient (torch's FillBackward0), so a
// target with history (a non-leaf, a view of one) is cut off from it.
StatusOr<TensorList> OverwrittenGrad(const GradContext&) {
  return TensorList();
}
#define OFL_CREATION_GRAD_fresh
#define OFL_CREATION_GRAD_target .Grad(&OverwrittenGrad).SaveInputs(false).SaveOutputs(false)
// Run<Name>: fills in the output's shape, dtype and device and dispatches.
#define OFL_CREATION_RUN_fresh(Name, Attrs)                                         \
  StatusOr<Tensor> Run##Name(const Shape& shape, DType dtype, const Device& device, \
                             opdefs::Attrs a) {                                     \
    a.shape = Dims(shape);                                                          \
    a.dtype = dtype;                                                                \
    a.device = device.ToString();                                                   \
    return Dispatch1(k##Name, {}, opdefs::ToAttrMap(std::move(a)));                 \
  }
#define OFL_CREATION_RUN_target(Name, Attrs)                                      \
  Status Run##Name(opdefs::Attrs a, const Tensor& target) {                       \
    a.shape = Dims(target.shape());                                               \
    a.dtype = target.dtype();                                                     \
    a.device = target.device().ToString();                                        \
    return DispatchInplace(k##Name, {}, opdefs::ToAttrMap(std::move(a)), target); \
  }
// clang-format off
#define OFL_ATTRS(...)
#define OFL_CREATION_API(...)
#define OFL_CREATION(name, Name, Attrs, out)                                                   \
  const OpDef k##Name = OpSpec(#name, InferCreation<opdefs::Attrs>)                            \
                            .StridedInputs(OFL_CREATION_STRIDED_##out)                         \
                            OFL_CREATION_GRAD_##out;                                           \
  OFL_CREATION_RUN_##out(Name, Attrs)
#include "oneflow_like/opdefs/creation.def"
#undef OFL_CREATION
#undef OFL_CREATION_API
#undef OFL_ATTRS
// clang-format on

}  // namespace

namespace functional {

StatusOr<Tensor> Full(const Shape& shape, double value, DType dtype, Device device) {
  if (IsComplex(dtype)) {  // the real value, imaginary part 0
    ASSIGN_OR_RETURN(Tensor r, Full(shape, value, ToRealDType(dtype), device));
    return Cast(r, dtype);
  }
  opdefs::FullAttrs a;
  a.value = value;
  return RunFull(shape, dtype, device, std::move(a));
}
StatusOr<Tensor> Zeros(const Shape& shape, DType dtype, Device device) {
  return Full(shape, 0.0, dtype, device);
}
StatusOr<Tensor> Ones(const Shape& shape, DType dtype, Device device) {
  return Full(shape, 1.0, dtype, device);
}
StatusOr<Tensor> FullLike(const Tensor& x, double value) {
  return Full(x.shape(), value, x.dtype(), x.device());
}
StatusOr<Tensor> ZerosLike(const Tensor& x) {
  return FullLike(x, 0.0);
}
StatusOr<Tensor> OnesLike(const Tensor& x) {
  return FullLike(x, 1.0);
}

StatusOr<Tensor> Arange(double start, double end, double step, DType dtype, Device device) {
  if (step == 0) return InvalidArgument("[arange] step must be nonzero");
  if (!std::isfinite(start) || !std::isfinite(end))
    return InvalidArgument("[arange] unsupported range: %g -> %g", start, end);
  if ((step > 0 && end < start) || (step < 0 && end > start))
    return InvalidArgument(
        "[arange] upper bound and larger bound inconsistent with step sign: %g -> %g step %g",
        start, end, step);
  int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  opdefs::ArangeAttrs a;
  a.start = start;
  a.step = step;
  return RunArange(Shape{n}, dtype, device, std::move(a));
}

StatusOr<Tensor> Linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  if (steps < 0)
    return InvalidArgument("[linspace] number of steps must be non-negative, got %d", steps);
  opdefs::LinspaceAttrs a;
  a.start = start;
  a.end = end;
  return RunLinspace(Shape{steps}, dtype, device, std::move(a));
}

StatusOr<Tensor> Eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (m < 0) m = n;
  if (n < 0) return InvalidArgument("[eye] n must be non-negative, got %d", n);
  if (IsComplex(dtype)) {  // the real identity as the real part, zeros as the imaginary part
    const DType real = ToRealDType(dtype);
    ASSIGN_OR_RETURN(Tensor re, RunEye(Shape{n, m}, real, device, opdefs::EyeAttrs{}));
    ASSIGN_OR_RETURN(Tensor im, Full(Shape{n, m}, 0.0, real, device));
    return ComplexFromParts(re, im);
  }
  return RunEye(Shape{n, m}, dtype, device, opdefs::EyeAttrs{});
}

Status Fill_(const Tensor& x, double value) {
  if (IsComplex(x.dtype())) return ComplexFill_(x, value, 0.0);
  opdefs::FullAttrs a;
  a.value = value;
  return RunFillInplace(std::move(a), x);
}

StatusOr<Tensor> FromHost(const void* data, const Shape& shape, DType dtype, Device device) {
  Tensor t = Tensor::Empty(shape, dtype, Device::CPU());
  size_t bytes = static_cast<size_t>(shape.numel() * DTypeSize(dtype));
  if (bytes > 0) {
    RETURN_IF_ERROR(vm::SyncAccessBlob(t.blob(), vm::AccessMode::kWrite, [&](void* dst) {
      std::memcpy(dst, data, bytes);
      return Status();
    }));
  }
  t.bump_version();
  if (!device.is_cpu()) return To(t, device);
  return t;
}

StatusOr<Tensor> WrapHost(void* data, const Shape& shape, DType dtype,
                          std::shared_ptr<void> keep_alive) {
  Tensor t = Tensor::Empty(shape, dtype, Device::CPU());
  t.blob()->AdoptExternal(data, std::move(keep_alive));
  return t;
}

Status CopyToHost(const Tensor& x, void* dst) {
  if (x.is_lazy())
    return InvalidArgument("[numpy] cannot read a lazy tensor's value during tracing");
  Tensor c = x;
  if (!c.device().is_cpu()) {
    ASSIGN_OR_RETURN(c, To(c, Device::CPU()));
  }
  {
    NoGradGuard g;
    ASSIGN_OR_RETURN(c, Contiguous(c));
  }
  size_t bytes = static_cast<size_t>(c.numel() * DTypeSize(c.dtype()));
  if (bytes == 0) {
    // Nothing to copy, but the read still waits for the op that made the tensor, so its
    // failure is raised here (once) rather than by a later, unrelated flow.sync().
    if (!c.blob()) return Status();
    return vm::SyncAccessBlob(c.blob(), vm::AccessMode::kRead, [](void*) { return Status(); });
  }
  size_t off = static_cast<size_t>(c.offset() * DTypeSize(c.dtype()));
  return vm::SyncAccessBlob(c.blob(), vm::AccessMode::kRead, [&](void* src) {
    std::memcpy(dst, static_cast<char*>(src) + off, bytes);
    return Status();
  });
}

}  // namespace functional
}  // namespace oneflow_like
