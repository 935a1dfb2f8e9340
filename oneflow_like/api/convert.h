// Internal to the C++ API's implementation: conversions between the public handles and the
// runtime's types, and Status -> Error. Include it after every runtime header in
// oneflow_like/api/*.cc: it binds the runtime's names (RT::) before the public header declares
// `oneflow_like::Tensor` and `oneflow_like::Device` in the inline namespace v1, after which those
// names are ambiguous in `oneflow_like` and its other namespaces (a runtime header included later
// would not compile). Implementation code lives in `oneflow_like::v1`, where they mean the
// public types.
#pragma once
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/base/device.h"
#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/shape.h"
#include "oneflow_like/base/status.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/framework/tensor.h"

namespace oneflow_like::api_internal {
using RTTensor = ::oneflow_like::Tensor;
using RTTensorImpl = ::oneflow_like::TensorImpl;
using RTTensorList = ::oneflow_like::TensorList;
using RTDevice = ::oneflow_like::Device;
using RTDeviceType = ::oneflow_like::DeviceType;
using RTDType = ::oneflow_like::DType;
using RTShape = ::oneflow_like::Shape;
using DimVector = ::oneflow_like::DimVector;
using RTNoGradGuard = ::oneflow_like::NoGradGuard;
}  // namespace oneflow_like::api_internal

#include "oneflow_like/oneflow_like.h"

// Hidden: these helpers name absl and runtime types; liboneflow_like.so must not export them.
#pragma GCC visibility push(hidden)
namespace oneflow_like {
inline namespace v1 {
namespace RT = ::oneflow_like::api_internal;

// Throws the Error a non-OK status stands for (the message is Python's).
[[noreturn]] void ThrowStatus(const absl::Status& s);
inline void Check(const absl::Status& s) {
  if (!s.ok()) ThrowStatus(s);
}
template <typename T>
T Check(absl::StatusOr<T>&& s) {
  if (!s.ok()) ThrowStatus(s.status());
  return std::move(s).value();
}

// The public Tensor holds a runtime Tensor in its handle_ bytes (constructed by its special
// members in tensor.cc), so a public handle converts to the runtime's by reference.
struct TensorAccess {
  static_assert(sizeof(RT::RTTensor) == sizeof(Tensor::handle_) &&
                    alignof(RT::RTTensor) <= alignof(Tensor),
                "the public Tensor's handle_ must hold a runtime Tensor");
  static const RT::RTTensor& In(const Tensor& t) {
    return *std::launder(reinterpret_cast<const RT::RTTensor*>(t.handle_));
  }
  static RT::RTTensor& Mut(Tensor& t) {
    return *std::launder(reinterpret_cast<RT::RTTensor*>(t.handle_));
  }
  static void* Bytes(Tensor& t) { return t.handle_; }
  static Tensor Out(const RT::RTTensor& t) {
    Tensor r;
    Mut(r) = t;
    return r;
  }
  // Takes the handle over (no reference-count round trip): `t` is a result the caller owns.
  static Tensor Out(RT::RTTensor&& t) {
    Tensor r;
    Mut(r) = std::move(t);
    return r;
  }
};
// Public handle -> runtime tensor (undefined stays undefined), by reference: valid while `t` is.
inline const RT::RTTensor& In(const Tensor& t) {
  return TensorAccess::In(t);
}
// The same; throws naming `op` when `t` is undefined.
const RT::RTTensor& InDefined(const Tensor& t, const char* op);
inline Tensor Out(const RT::RTTensor& t) {
  return TensorAccess::Out(t);
}
inline Tensor Out(RT::RTTensor&& t) {
  return TensorAccess::Out(std::move(t));
}
inline Tensor Out(absl::StatusOr<RT::RTTensor>&& t) {
  return Out(Check(std::move(t)));
}
RT::RTTensorList In(const std::vector<Tensor>& ts);
std::vector<Tensor> Out(const RT::RTTensorList& ts);

inline RT::RTDType In(Dtype d) {
  return static_cast<RT::RTDType>(d);
}
inline Dtype Out(RT::RTDType d) {
  return static_cast<Dtype>(d);
}
inline RT::RTDevice In(const Device& d) {
  return RT::RTDevice(static_cast<RT::RTDeviceType>(d.type()), d.index());
}
inline Device Out(const RT::RTDevice& d) {
  return Device(static_cast<DeviceType>(d.type()), d.index());
}
RT::RTShape InShape(const IntList& s);
// Shorthands of the op bindings: a defined input of `op`, a dims list.
inline const RT::RTTensor& A(const Tensor& t, const char* op) {
  return InDefined(t, op);
}
inline std::vector<int64_t> Dims(const IntList& d) {
  return std::vector<int64_t>(d.begin(), d.end());
}
IntList OutShape(const RT::RTShape& s);
// A new tensor of a factory, made to require grad when the options say so.
Tensor Finish(RT::RTTensor t, const TensorOptions& o);

}  // namespace v1
}  // namespace oneflow_like
#pragma GCC visibility pop
