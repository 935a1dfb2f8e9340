// One error type: absl::Status / absl::StatusOr<T>. Messages follow `[op] what went wrong: got
// ...`.
#pragma once
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace oneflow_like {

using absl::Status;
using absl::StatusOr;

#define OFL_CONCAT_INNER(a, b) a##b
#define OFL_CONCAT(a, b) OFL_CONCAT_INNER(a, b)

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status _ofl_status = (expr);       \
    if (!_ofl_status.ok()) return _ofl_status; \
  } while (0)

#define OFL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()

// `ASSIGN_OR_RETURN(auto x, StatusOrExpr())` binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  OFL_ASSIGN_OR_RETURN_IMPL(OFL_CONCAT(_ofl_statusor_, __LINE__), lhs, expr)

// Argument errors raised synchronously on the caller's thread (map to ValueError in Python).
template <typename... Args>
Status InvalidArgument(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrFormat(fmt, args...));
}
// Index errors (map to IndexError in Python).
template <typename... Args>
Status OutOfRange(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  return absl::OutOfRangeError(absl::StrFormat(fmt, args...));
}
// Dtype errors (map to TypeError in Python).
template <typename... Args>
Status TypeError(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  return absl::FailedPreconditionError(absl::StrFormat(fmt, args...));
}
// Out-of-memory (maps to MemoryError in Python).
template <typename... Args>
Status OutOfMemory(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  return absl::ResourceExhaustedError(absl::StrFormat(fmt, args...));
}
template <typename... Args>
Status Internal(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  return absl::InternalError(absl::StrFormat(fmt, args...));
}
template <typename... Args>
Status Unimplemented(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  return absl::UnimplementedError(absl::StrFormat(fmt, args...));
}

}  // namespace oneflow_like
// Note: ASSIGN_OR_RETURN expands to several statements; brace it inside a one-line `if`.
