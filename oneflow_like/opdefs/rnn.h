// The recurrent ops' attribute structs (RnnCellAttrs, RnnSeqAttrs) expanded from rnn.def (with
// ForEachAttr, so opdefs/attrs.h ReadAttrs/ToAttrMap convert it from/to an op call's AttrMap; the
// cells have no attributes). Shared by oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace oneflow_like {
namespace opdefs {

#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_API(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_TABLE "oneflow_like/opdefs/rnn.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_API
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD

}  // namespace opdefs
}  // namespace oneflow_like
