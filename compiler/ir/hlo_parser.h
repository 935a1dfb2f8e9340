// Text -> HloModule. Reads what the printer writes (and XLA-style operand shapes such as
// `add(f32[2] %a, f32[2] %b)`). Malformed text gives InvalidArgument "line L:C: ...", never a
// crash.
#pragma once
#include <memory>

#include "absl/strings/string_view.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(absl::string_view text);
// A single shape such as `f32[2,3]{0,1}` or `(f32[], s32[4])`.
StatusOr<HloShape> ParseHloShape(absl::string_view text);

}  // namespace oneflow_like::hlo
