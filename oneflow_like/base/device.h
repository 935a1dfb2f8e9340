// Device: a small value type, "cpu" or "cuda:N".
#pragma once
#include <cstdint>
#include <string>

#include "oneflow_like/base/status.h"

namespace oneflow_like {

enum class DeviceType : int8_t { kCPU = 0, kCUDA = 1 };
constexpr int kNumDeviceTypes = 2;

class Device {
 public:
  constexpr Device() = default;
  constexpr Device(DeviceType type, int index) : type_(type), index_(index) {}
  static constexpr Device CPU() { return Device(DeviceType::kCPU, 0); }
  static StatusOr<Device> Parse(const std::string& s);  // "cpu", "cuda", "cuda:1"

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::kCPU; }
  bool is_cuda() const { return type_ == DeviceType::kCUDA; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string ToString() const;

 private:
  DeviceType type_ = DeviceType::kCPU;
  int index_ = 0;
};

}  // namespace oneflow_like
