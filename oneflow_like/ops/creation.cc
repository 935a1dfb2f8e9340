// Creation family schemas and functional entries.
#include "oneflow_like/ops/creation.h"

#include <cmath>
#include <cstring>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "vm/instructions_builder.h"

namespace oneflow_like {
namespace {

Status InferFull(const TensorList&, const AttrMap& a, std::vector<TensorMeta>* out) {
  for (int64_t d : a.Ints("shape"))
    if (d < 0) return InvalidArgument("[full] negative dimension %d in shape", d);
  ASSIGN_OR_RETURN(Device dev, Device::Parse(a.Str("device", "cpu")));
  out->push_back(TensorMeta{Shape(DimVector(a.Ints("shape").begin(), a.Ints("shape").end())),
                            a.Dtype("dtype"), dev});
  return Status();
}

const OpDef kFull = OpSpec("full", InferFull);
// fill_(x): no inputs; writes `value` into the target in place.
const OpDef kFillInplace = OpSpec("fill_", InferFull).StridedInputs();

// Sequences: arange(start, step), linspace(start, end); out shape from attr "shape".
const OpDef kArange = OpSpec("arange", InferFull);
const OpDef kLinspace = OpSpec("linspace", InferFull);
const OpDef kEye = OpSpec("eye", InferFull);

std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

}  // namespace

namespace functional {

StatusOr<Tensor> Full(const Shape& shape, double value, DType dtype, Device device) {
  return Dispatch1(
      kFull, {},
      {{"shape", Dims(shape)}, {"value", value}, {"dtype", dtype}, {"device", device.ToString()}});
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
  return Dispatch1(kArange, {},
                   {{"shape", std::vector<int64_t>{n}},
                    {"start", start},
                    {"step", step},
                    {"dtype", dtype},
                    {"device", device.ToString()}});
}

StatusOr<Tensor> Linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  if (steps < 0)
    return InvalidArgument("[linspace] number of steps must be non-negative, got %d", steps);
  return Dispatch1(kLinspace, {},
                   {{"shape", std::vector<int64_t>{steps}},
                    {"start", start},
                    {"end", end},
                    {"dtype", dtype},
                    {"device", device.ToString()}});
}

StatusOr<Tensor> Eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (m < 0) m = n;
  if (n < 0) return InvalidArgument("[eye] n must be non-negative, got %d", n);
  return Dispatch1(
      kEye, {},
      {{"shape", std::vector<int64_t>{n, m}}, {"dtype", dtype}, {"device", device.ToString()}});
}

Status Fill_(const Tensor& x, double value) {
  return DispatchInplace(kFillInplace, {},
                         {{"shape", Dims(x.shape())},
                          {"value", value},
                          {"dtype", x.dtype()},
                          {"device", x.device().ToString()}},
                         x);
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
