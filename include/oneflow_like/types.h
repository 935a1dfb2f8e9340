// Value types of the C++ API: Dtype, Device, Error. Standard library only.
//
// Everything public lives in `oneflow_like::v1`, an inline namespace: users write
// `oneflow_like::Tensor`; the versioned name keeps the exported symbols apart from the runtime's
// internal types and lets a later incompatible API sit beside this one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace oneflow_like {
inline namespace v1 {

// Element types (libtorch spellings). The order is the runtime's.
enum class Dtype : int8_t {
  kBool = 0,
  kUInt8,
  kInt8,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplexFloat,   // complex64: appended, so the earlier values keep their numbers
  kComplexDouble,  // complex128
  kInt16,          // appended after the complex ones, same reason
  kUInt16,         // uint16 / uint32 / uint64 / float8: torch's limited-support dtypes
  kUInt32,
  kUInt64,
  kFloat8_e4m3fn,
  kFloat8_e5m2,
  kFloat8_e4m3fnuz,
  kFloat8_e5m2fnuz,
};
constexpr Dtype kBool = Dtype::kBool;
constexpr Dtype kUInt8 = Dtype::kUInt8;
constexpr Dtype kInt8 = Dtype::kInt8;
constexpr Dtype kInt32 = Dtype::kInt32;
constexpr Dtype kInt64 = Dtype::kInt64;
constexpr Dtype kFloat16 = Dtype::kFloat16;
constexpr Dtype kBFloat16 = Dtype::kBFloat16;
constexpr Dtype kFloat32 = Dtype::kFloat32;
constexpr Dtype kFloat64 = Dtype::kFloat64;
constexpr Dtype kComplexFloat = Dtype::kComplexFloat;
constexpr Dtype kComplexDouble = Dtype::kComplexDouble;
constexpr Dtype kInt16 = Dtype::kInt16;
constexpr Dtype kUInt16 = Dtype::kUInt16;
constexpr Dtype kUInt32 = Dtype::kUInt32;
constexpr Dtype kUInt64 = Dtype::kUInt64;
constexpr Dtype kFloat8_e4m3fn = Dtype::kFloat8_e4m3fn;
constexpr Dtype kFloat8_e5m2 = Dtype::kFloat8_e5m2;
constexpr Dtype kFloat8_e4m3fnuz = Dtype::kFloat8_e4m3fnuz;
constexpr Dtype kFloat8_e5m2fnuz = Dtype::kFloat8_e5m2fnuz;
constexpr Dtype kShort = kInt16;
constexpr Dtype kInt = kInt32, kLong = kInt64, kFloat = kFloat32, kDouble = kFloat64;

const char* dtype_name(Dtype d);  // "float32", "int64", ... (the Python names)
size_t element_size(Dtype d);     // bytes per element
std::ostream& operator<<(std::ostream& os, Dtype d);

// The Dtype of a C++ element type (bool, uint8_t, int8_t, int16_t, uint16_t, uint32_t,
// uint64_t, int32_t, int64_t, float, double).
template <typename T>
struct DtypeOf;
#define OFL_API_DTYPE_OF(T, D)        \
  template <>                         \
  struct DtypeOf<T> {                 \
    static constexpr Dtype value = D; \
  };
OFL_API_DTYPE_OF(bool, kBool)
OFL_API_DTYPE_OF(uint8_t, kUInt8)
OFL_API_DTYPE_OF(int8_t, kInt8)
OFL_API_DTYPE_OF(int16_t, kInt16)
OFL_API_DTYPE_OF(uint16_t, kUInt16)
OFL_API_DTYPE_OF(uint32_t, kUInt32)
OFL_API_DTYPE_OF(uint64_t, kUInt64)
OFL_API_DTYPE_OF(int32_t, kInt32)
OFL_API_DTYPE_OF(int64_t, kInt64)
OFL_API_DTYPE_OF(float, kFloat32)
OFL_API_DTYPE_OF(double, kFloat64)
#undef OFL_API_DTYPE_OF

enum class DeviceType : int8_t { kCPU = 0, kCUDA = 1 };
constexpr DeviceType kCPU = DeviceType::kCPU;
constexpr DeviceType kCUDA = DeviceType::kCUDA;

// A device: "cpu" or "cuda:N". A small value type.
class Device {
 public:
  Device(DeviceType type = kCPU, int index = 0) : type_(type), index_(index) {}  // NOLINT
  explicit Device(const std::string& spec);  // "cpu", "cuda", "cuda:1"; throws Error
  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  std::string str() const;  // "cpu", "cuda:0"
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int index_;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

bool cuda_is_available();
int cuda_device_count();
// CUDA device 0 when one is present, else the CPU.
Device default_device();

// Every failure of the API: the message is the one Python shows (`[matmul] size mismatch (8 vs
// 5): got f32[3,8] and f32[5,8]`); kind() says which Python exception it would be.
class Error : public std::runtime_error {
 public:
  enum class Kind {
    kValue,     // bad argument: shapes, values (Python ValueError)
    kType,      // dtype not supported (TypeError)
    kIndex,     // index out of range, also found by a kernel (IndexError)
    kMemory,    // out of memory (MemoryError)
    kNotFound,  // missing file (FileNotFoundError)
    kRuntime,   // anything else, e.g. a kernel failure (RuntimeError)
  };
  Error(Kind kind, const std::string& message);
  ~Error() override;
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace v1
}  // namespace oneflow_like
