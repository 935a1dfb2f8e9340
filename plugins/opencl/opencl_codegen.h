// OpenCL C code generation for one partition (an OflGraphView of plain HLO ops): every value
// that is a partition output, a dot, a reduce or read by several ops gets a buffer and a kernel
// (one work-item per element); everything else is computed inline where it is read, so chains
// of elementwise, broadcast, reshape, transpose and slice ops fuse into their consumer.
// The result is the bytecode format the dispatch library runs (plan.h).
#pragma once
#include <string>

#include "compiler/plugin/ofl_compiler_plugin.h"

namespace ofl_opencl {

// Why the plugin cannot run op `i` of `g`, or "" when it can (the Partition call's answer).
std::string UnsupportedReason(const OflGraphView& g, int32_t i);

// Bytecode (plan + source) for the partition `g`, kernels named `<prefix>_<k>`; "" and `*error`
// set on failure.
std::string CompilePartition(const OflGraphView& g, const std::string& prefix, std::string* error);

}  // namespace ofl_opencl
