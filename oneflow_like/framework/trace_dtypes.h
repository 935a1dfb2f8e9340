// Which dtypes the active trace records. nn.Graph's compiler has no complex types, so its trace
// refuses complex tensors at the op (Dispatch names the op and dtype). flow.func.vmap's trace is
// only replayed eagerly, op by op through its batching rules, so it records complex ops too.
// Per thread; set by the Python _Trace scope (python/csrc/lazy_py.cc) for its recording.
#pragma once

namespace oneflow_like {

void SetTraceRecordsComplex(bool on);
bool TraceRecordsComplex();

}  // namespace oneflow_like
