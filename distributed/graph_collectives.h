// Collectives inside compiled graphs (nn.Graph with DistributedDataParallel, or
// dist.all_reduce / dist.broadcast called in build()). While a graph is traced they are ops,
// `dist_all_reduce` and `dist_broadcast` (attrs: the group's id, the reduce op or root), so the
// trace records them like any op; they have no HLO lowering, so the compiled graph holds a
// custom-call `ofl.kernel.dist_*` whose thunk runs the op's CPU kernel on the graph's buffers:
// the kernel calls the process group directly (ProcessGroupGloo::AllReduceNow), on the thread
// that runs the graph's launch, with the graph's own Gloo tags.
#pragma once
#include "distributed/process_group.h"

namespace oneflow_like {
namespace distributed {

// In place on `t` (a lazy value or a tensor captured by the active trace): records the op.
// Outside a trace it runs as an ordinary op on the compute stream (blocking it while Gloo runs).
Status AllReduceOp(const Tensor& t, const ProcessGroupGloo& pg, ReduceOp op);
Status BroadcastOp(const Tensor& t, const ProcessGroupGloo& pg, int root);

}  // namespace distributed
}  // namespace oneflow_like
