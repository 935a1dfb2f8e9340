// The fused recurrent cells' attribute struct expanded from rnn.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert it from/to an op call's AttrMap; the cells have no
// attributes). Shared by oneflow_like/ops and python/csrc.
#pragma once

namespace oneflow_like {
namespace opdefs {

#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_API(...)
#define OFL_TABLE "oneflow_like/opdefs/rnn.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_API

}  // namespace opdefs
}  // namespace oneflow_like
