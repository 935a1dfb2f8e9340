#include "oneflow_like/base/device.h"

#include "absl/strings/numbers.h"

namespace oneflow_like {

StatusOr<Device> Device::Parse(const std::string& s) {
  if (s == "cpu" || s == "cpu:0") return Device::CPU();
  if (s == "cuda") return Device(DeviceType::kCUDA, 0);
  if (s.rfind("cuda:", 0) == 0) {
    int idx;
    if (absl::SimpleAtoi(s.substr(5), &idx) && idx >= 0) return Device(DeviceType::kCUDA, idx);
  }
  return InvalidArgument("[device] unknown device '%s' (expected 'cpu', 'cuda' or 'cuda:N')", s);
}

std::string Device::ToString() const {
  return is_cpu() ? std::string("cpu") : absl::StrCat("cuda:", index_);
}

}  // namespace oneflow_like
