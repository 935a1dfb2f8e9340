// CopyInsertion: adds copies so every buffer has one owner at run time.
//  - entry outputs that are parameters or constants (or alias them through bitcast/gte/tuple),
//    or that appear twice in the output tuple, get a copy: outputs live in the caller's buffers.
//  - while bodies: a root element that is a constant, or the loop state of another index,
//    gets a copy, so writing the new state never clobbers state still to be read.
// While init and conditional results are copied by their thunks (see compiler/thunks).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class CopyInsertion {
 public:
  static const char* name() { return "copy-insertion"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
