/* The compiler-plugin ABI: what a vendor's compiler library exports (all of it; the loader
 * refuses a library missing any function or built for another major version).
 *
 * Lifecycle, as the framework drives it at nn.Graph compile time or in the AOT tool:
 *   OflCompilerPluginGetApiVersion        checked first: major must equal ours
 *   OflCompilerPluginCreate(&plugin)      one instance per loaded library
 *   OflCompilerPluginPartition(plugin, graph, selection)
 *                                         marks the ops it supports, optionally with partition
 *                                         indices; the framework groups marked ops into the
 *                                         largest cycle-free sub-DAGs and outlines each
 *   OflCompilerPluginCompile(plugin, partitions, n, &result)
 *                                         one graph view per outlined partition; the result
 *                                         holds per-partition bytecode and call info
 *   OflCompiledResult* accessors, OflCompiledResultDestroy
 *   OflCompilerPluginDestroy(plugin)
 * The bytecode runs through the dispatch library named by OflCompilerPluginDispatchLibrary
 * (ofl_dispatch.h), which the framework loads from the plugin's folder first. */
#ifndef OFL_COMPILER_PLUGIN_H_
#define OFL_COMPILER_PLUGIN_H_

#include "compiler/plugin/ofl_plugin_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One op of a graph view. Opcodes and attributes are the HLO ones (compiler/ir/hlo_opcode.h);
 * every array is owned by the framework and valid for the duration of the call. Layouts are
 * row-major when has_default_layout is nonzero (a plugin should refuse others). */
typedef struct OflOpView {
  const char* name;   /* unique in the graph */
  const char* opcode; /* HLO text name: "add", "dot", "reduce", "parameter", "tuple", ... */
  OflDType dtype;     /* kOflOtherDType for tuples */
  int32_t rank;
  const int64_t* dims;
  int32_t has_default_layout;
  int32_t num_operands;
  const int32_t* operands; /* indices of earlier ops in the same view */
  /* broadcast/transpose/reduce/concatenate `dimensions` */
  int32_t num_dimensions;
  const int64_t* dimensions;
  /* slice: per dim start, limit, stride (rank entries each) */
  const int64_t* slice_starts;
  const int64_t* slice_limits;
  const int64_t* slice_strides;
  /* dot dimension numbers */
  int32_t num_lhs_batch, num_lhs_contracting, num_rhs_batch, num_rhs_contracting;
  const int64_t *lhs_batch, *lhs_contracting, *rhs_batch, *rhs_contracting;
  const char* comparison;  /* compare: "EQ" "NE" "LT" "LE" "GT" "GE"; else "" */
  const char* reduce_kind; /* reduce: "add" "mul" "max" "min" "and" "or", "" = custom to_apply */
  int64_t index;           /* parameter number, iota dimension, tuple index */
  int32_t is_scalar_constant;
  double scalar_value;    /* value of a rank-0 constant */
  const char* attributes; /* the full HLO attribute text, for anything not above */
} OflOpView;

/* A computation: ops in a topological order (operands first). In a partition view the
 * parameters are ops with opcode "parameter" (index = position in the call) and `outputs`
 * lists the ops whose values the partition returns, in order. */
typedef struct OflGraphView {
  const char* name;
  int32_t num_ops;
  const OflOpView* ops;
  int32_t num_outputs;
  const int32_t* outputs;
} OflGraphView;

/* Written by OflCompilerPluginPartition, both arrays num_ops long and preset by the framework:
 *   partition_index[i] = OFL_NOT_SELECTED (preset), OFL_ANY_PARTITION (any partition the
 *   framework chooses), or k >= 0 (only ops with the same k may share a partition);
 *   reason[i] = why op i was not selected (optional, a string the plugin owns until
 *   OflCompilerPluginDestroy; NULL preset). */
#define OFL_NOT_SELECTED (-2)
#define OFL_ANY_PARTITION (-1)
typedef struct OflSelection {
  int32_t num_ops;
  int32_t* partition_index;
  const char** reason;
} OflSelection;

typedef struct OflCompilerPlugin OflCompilerPlugin;
typedef struct OflCompiledResult OflCompiledResult;

OFL_PLUGIN_EXPORT OflStatus OflCompilerPluginGetApiVersion(OflApiVersion* version);
/* Static strings: "Khronos", "opencl-pocl;opencl-gpu", "libofl_opencl_dispatch.so". */
OFL_PLUGIN_EXPORT const char* OflCompilerPluginManufacturer(void);
OFL_PLUGIN_EXPORT const char* OflCompilerPluginSupportedHardware(void);
OFL_PLUGIN_EXPORT const char* OflCompilerPluginDispatchLibrary(void);
/* Message of the last failed call on this thread. */
OFL_PLUGIN_EXPORT const char* OflCompilerPluginGetLastError(void);

OFL_PLUGIN_EXPORT OflStatus OflCompilerPluginCreate(OflCompilerPlugin** plugin);
OFL_PLUGIN_EXPORT void OflCompilerPluginDestroy(OflCompilerPlugin* plugin);

OFL_PLUGIN_EXPORT OflStatus OflCompilerPluginPartition(OflCompilerPlugin* plugin,
                                                       const OflGraphView* graph,
                                                       OflSelection* selection);
OFL_PLUGIN_EXPORT OflStatus OflCompilerPluginCompile(OflCompilerPlugin* plugin,
                                                     const OflGraphView* const* partitions,
                                                     int32_t num_partitions,
                                                     OflCompiledResult** result);

/* Per compiled partition i: its bytecode (opaque to the framework, handed to the dispatch
 * library's OflDispatchLoadBytecode) and call info (the entry point's name). Both stay valid
 * until OflCompiledResultDestroy. */
OFL_PLUGIN_EXPORT int32_t OflCompiledResultNumPartitions(const OflCompiledResult* result);
OFL_PLUGIN_EXPORT OflStatus OflCompiledResultGetBytecode(const OflCompiledResult* result, int32_t i,
                                                         const void** data, size_t* size);
OFL_PLUGIN_EXPORT OflStatus OflCompiledResultGetCallInfo(const OflCompiledResult* result, int32_t i,
                                                         const char** entry_point);
OFL_PLUGIN_EXPORT void OflCompiledResultDestroy(OflCompiledResult* result);

#ifdef __cplusplus
}
#endif
#endif /* OFL_COMPILER_PLUGIN_H_ */
