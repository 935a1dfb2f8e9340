// CPU kernels of the copy family: contiguous, cast, copy_ (broadcast + cast into a strided
// destination), to_device (cpu -> cpu).
#include <cstring>
#include <type_traits>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
// kernels/cpu/complex.cc: the conversions where either side is complex64/complex128.
Status ComplexCastInto(const TensorView& out, const TensorView& in);
namespace {

template <typename TO, typename TI>
inline TO Convert(TI v) {
  // Floating to an integer narrower than 64 bits goes through int64 and wraps (-2.0 -> uint8 254,
  // as PyTorch); a direct conversion of an out-of-range value is undefined behaviour.
  constexpr bool to_narrow_int = std::is_integral_v<TO> && sizeof(TO) < 8;
  constexpr bool from_half = std::is_same_v<TI, float16> || std::is_same_v<TI, bfloat16>;
  if constexpr (std::is_same_v<TO, bool>)
    return static_cast<float>(v) != 0.0f;
  else if constexpr (std::is_same_v<TO, float16> || std::is_same_v<TO, bfloat16>)
    return TO(static_cast<float>(v));
  else if constexpr (from_half && to_narrow_int)
    return static_cast<TO>(static_cast<int64_t>(static_cast<float>(v)));
  else if constexpr (from_half)
    return static_cast<TO>(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<TI> && to_narrow_int)
    return static_cast<TO>(static_cast<int64_t>(v));
  else
    return static_cast<TO>(v);
}

// out (any strides) = cast(in broadcast to out's shape).
Status CastInto(const TensorView& out, const TensorView& in0) {
  TensorView in = BroadcastTo(in0, out.shape);
  if (out.dtype == in.dtype && out.contiguous() && in.contiguous()) {
    std::memcpy(out.data, in.data, out.numel() * DTypeSize(out.dtype));
    return Status();
  }
  if (IsComplex(out.dtype) || IsComplex(in.dtype)) return ComplexCastInto(out, in);
  OFL_SWITCH_ALL(out.dtype, {
    using TO = scalar_t;
    OFL_SWITCH_ALL(in.dtype, {
      using TI = scalar_t;
      UnaryLoop<TO, TI>(out, in, [](TI v) { return Convert<TO, TI>(v); });
    });
  });
  return Status();
}

Status ContiguousKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}
Status CastKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}
Status CopyIntoKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}
Status ToDeviceKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}

}  // namespace

OFL_REGISTER_KERNEL(contiguous, kCPU, ContiguousKernel);
OFL_REGISTER_KERNEL(cast, kCPU, CastKernel);
OFL_REGISTER_KERNEL(copy_, kCPU, CopyIntoKernel);
OFL_REGISTER_KERNEL(to_device, kCPU, ToDeviceKernel);

}  // namespace kernels
}  // namespace oneflow_like
