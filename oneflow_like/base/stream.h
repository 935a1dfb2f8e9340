// Stream and Event: the device-side ordering primitives under the VM's stream policies.
// CPU streams are the VM's worker threads (no Stream object needed); the CUDA backend
// implements these over cudaStream_t / cudaEvent_t.
#pragma once
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {

class Stream {
 public:
  virtual ~Stream() = default;
  virtual Device device() const = 0;
  virtual void* native_handle() const = 0;  // cudaStream_t for CUDA
  virtual Status Synchronize() = 0;         // blocks the caller until queued work is done
};

class Event {
 public:
  virtual ~Event() = default;
  virtual Status Record(Stream* stream) = 0;  // marks the point reached on `stream`
  virtual Status WaitOn(Stream* stream) = 0;  // `stream` waits for the recorded point
  virtual StatusOr<bool> Query() = 0;         // true when the recorded work is done
  virtual Status Synchronize() = 0;           // blocks the caller
};

}  // namespace oneflow_like
