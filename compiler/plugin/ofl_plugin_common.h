/* Types shared by the compiler-plugin ABI (ofl_compiler_plugin.h) and the dispatch ABI
 * (ofl_dispatch.h). Plain C: a vendor builds against these headers alone.
 *
 * Versioning: a library reports the API version it was built against. The loader refuses a
 * library whose major version differs from OFL_PLUGIN_API_VERSION_MAJOR; a newer minor version
 * may only add functions or trailing struct fields the loader does not read. */
#ifndef OFL_PLUGIN_COMMON_H_
#define OFL_PLUGIN_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OFL_PLUGIN_API_VERSION_MAJOR 1
#define OFL_PLUGIN_API_VERSION_MINOR 0
#define OFL_PLUGIN_API_VERSION_PATCH 0

/* Exported ABI functions carry this so a library built with -fvisibility=hidden exports them. */
#if defined(__GNUC__)
#define OFL_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define OFL_PLUGIN_EXPORT
#endif

typedef struct OflApiVersion {
  int32_t major, minor, patch;
} OflApiVersion;

/* Return codes of every ABI call; on anything but kOflOk the library's *GetLastError gives a
 * message (thread-local, valid until the next call on that thread). */
typedef enum OflStatus {
  kOflOk = 0,
  kOflErrorInvalidArgument = 1,
  kOflErrorUnsupported = 2,
  kOflErrorCompilation = 3,
  kOflErrorRuntime = 4,
  kOflErrorOutOfMemory = 5,
  kOflErrorInternal = 6
} OflStatus;

/* Element types, as the framework's DType names them. */
typedef enum OflDType {
  kOflBool = 0, /* one byte, 0 or 1 */
  kOflS32 = 1,
  kOflS64 = 2,
  kOflF32 = 3,
  kOflF64 = 4,
  kOflOtherDType = 99 /* f16, bf16, u8, tuples...: a plugin should not select it */
} OflDType;

#ifdef __cplusplus
}
#endif
#endif /* OFL_PLUGIN_COMMON_H_ */
