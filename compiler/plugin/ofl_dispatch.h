/* The dispatch ABI: the runtime half of a compiler plugin, a separate library that runs the
 * bytecode the compiler half produced (at nn.Graph run time, or when loading an AOT artifact,
 * which needs only this library).
 *
 * Lifecycle, as a DispatchThunk drives it:
 *   OflDispatchGetApiVersion                 checked at load: major must equal ours
 *   OflDispatchInitialize(options)           once per process (options may be NULL)
 *   OflDispatchDeviceContextCreate(&ctx)     one per executable (queue, device buffers)
 *   OflDispatchLoadBytecode(ctx, code, entry, &inv)
 *                                            one invocation context per partition
 *   per run: OflDispatchBindInput/Output(inv, i, host pointer, bytes) for every argument,
 *            OflDispatchInvoke(inv) then OflDispatchWait(inv): outputs are written when Wait
 *            returns kOflOk
 *   OflDispatchUnloadBytecode(inv), OflDispatchDeviceContextDestroy(ctx)
 * Host pointers stay the caller's: a dispatch library copies or maps them, never frees them. */
#ifndef OFL_DISPATCH_H_
#define OFL_DISPATCH_H_

#include "compiler/plugin/ofl_plugin_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct OflDispatchDeviceContext OflDispatchDeviceContext;
typedef struct OflDispatchInvocation OflDispatchInvocation;

OFL_PLUGIN_EXPORT OflStatus OflDispatchGetApiVersion(OflApiVersion* version);
OFL_PLUGIN_EXPORT const char* OflDispatchGetLastError(void);
OFL_PLUGIN_EXPORT OflStatus OflDispatchInitialize(const char* options);

OFL_PLUGIN_EXPORT OflStatus OflDispatchDeviceContextCreate(OflDispatchDeviceContext** ctx);
OFL_PLUGIN_EXPORT void OflDispatchDeviceContextDestroy(OflDispatchDeviceContext* ctx);

OFL_PLUGIN_EXPORT OflStatus OflDispatchLoadBytecode(OflDispatchDeviceContext* ctx,
                                                    const void* bytecode, size_t size,
                                                    const char* entry_point,
                                                    OflDispatchInvocation** invocation);
OFL_PLUGIN_EXPORT void OflDispatchUnloadBytecode(OflDispatchInvocation* invocation);

/* Number of inputs/outputs the loaded partition takes (its parameters, its outputs). */
OFL_PLUGIN_EXPORT int32_t OflDispatchNumInputs(const OflDispatchInvocation* invocation);
OFL_PLUGIN_EXPORT int32_t OflDispatchNumOutputs(const OflDispatchInvocation* invocation);
OFL_PLUGIN_EXPORT OflStatus OflDispatchBindInput(OflDispatchInvocation* invocation, int32_t i,
                                                 const void* data, size_t bytes);
OFL_PLUGIN_EXPORT OflStatus OflDispatchBindOutput(OflDispatchInvocation* invocation, int32_t i,
                                                  void* data, size_t bytes);
OFL_PLUGIN_EXPORT OflStatus OflDispatchInvoke(OflDispatchInvocation* invocation);
OFL_PLUGIN_EXPORT OflStatus OflDispatchWait(OflDispatchInvocation* invocation);

#ifdef __cplusplus
}
#endif
#endif /* OFL_DISPATCH_H_ */
