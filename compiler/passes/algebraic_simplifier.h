// AlgebraicSimplifier: local rewrites that never change results (floating point included):
//   x+0, 0+x, x-0, x*1, 1*x, x/1 -> x;  negate(negate(x)) -> x;  select(const p, a, b) -> a|b
//   reshape(reshape(x)) -> reshape(x); reshape/transpose/broadcast/slice/pad/concat that change
//   nothing -> x; transpose(transpose(x)) -> one transpose; broadcast(broadcast(x)) -> one;
//   convert to the same type -> x; op(broadcast(scalar c1), broadcast(scalar c2)) ->
//   broadcast(op(c1, c2)) so constant folding can finish it without materialising big constants.
// Leaves alone: x*0 (NaN/inf), x-x, anything on layouts (run before layout assignment).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class AlgebraicSimplifier {
 public:
  static const char* name() { return "algsimp"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
