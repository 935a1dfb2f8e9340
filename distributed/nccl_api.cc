#include "distributed/nccl_api.h"

#include <dlfcn.h>

#include <cstdlib>

namespace oneflow_like {
namespace distributed {

namespace {

constexpr const char* kLibrary = "libnccl.so.2";
// Non-blocking communicators (ncclCommInitRankConfig with blocking = 0, ncclCommFinalize).
constexpr int kMinVersion = 21400;

template <typename F>
Status Resolve(void* lib, const char* name, F* fn) {
  dlerror();
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(absl::StrFormat(
        "[nccl] %s has no %s (%s): this NCCL is too old or not NCCL; NCCL >= 2.14 is needed",
        kLibrary, name, why ? why : "null symbol"));
  }
  *fn = reinterpret_cast<F>(sym);
  return Status();
}

StatusOr<NcclApi*> Load() {
  const char* env = std::getenv("ONEFLOW_LIKE_NCCL_LIBRARY");
  const char* path = env != nullptr && *env != '\0' ? env : kLibrary;
  // RTLD_LOCAL: NCCL's symbols stay out of the global namespace (another copy, e.g. PyTorch's,
  // may be loaded in the same process).
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(absl::StrFormat(
        "[nccl] could not load %s (%s): the NCCL backend needs NCCL's shared library. Install "
        "it (pip install nvidia-nccl-cu13, then put its nvidia/nccl/lib folder on "
        "LD_LIBRARY_PATH; or the CUDA toolkit's NCCL in /usr/local/cuda/lib64), or name the "
        "file in ONEFLOW_LIKE_NCCL_LIBRARY",
        path, why ? why : "unknown error"));
  }
  auto* api = new NcclApi();  // lives as long as the process (the library stays loaded)
  RETURN_IF_ERROR(Resolve(lib, "ncclGetVersion", &api->GetVersion));
  RETURN_IF_ERROR(Resolve(lib, "ncclGetUniqueId", &api->GetUniqueId));
  RETURN_IF_ERROR(Resolve(lib, "ncclCommInitRankConfig", &api->CommInitRankConfig));
  RETURN_IF_ERROR(Resolve(lib, "ncclCommGetAsyncError", &api->CommGetAsyncError));
  RETURN_IF_ERROR(Resolve(lib, "ncclCommFinalize", &api->CommFinalize));
  RETURN_IF_ERROR(Resolve(lib, "ncclCommDestroy", &api->CommDestroy));
  RETURN_IF_ERROR(Resolve(lib, "ncclCommAbort", &api->CommAbort));
  RETURN_IF_ERROR(Resolve(lib, "ncclGetErrorString", &api->GetErrorString));
  RETURN_IF_ERROR(Resolve(lib, "ncclGetLastError", &api->GetLastError));
  RETURN_IF_ERROR(Resolve(lib, "ncclAllReduce", &api->AllReduce));
  RETURN_IF_ERROR(Resolve(lib, "ncclBroadcast", &api->Broadcast));
  RETURN_IF_ERROR(Resolve(lib, "ncclReduce", &api->Reduce));
  RETURN_IF_ERROR(Resolve(lib, "ncclAllGather", &api->AllGather));
  RETURN_IF_ERROR(Resolve(lib, "ncclReduceScatter", &api->ReduceScatter));
  RETURN_IF_ERROR(Resolve(lib, "ncclSend", &api->Send));
  RETURN_IF_ERROR(Resolve(lib, "ncclRecv", &api->Recv));
  RETURN_IF_ERROR(Resolve(lib, "ncclGroupStart", &api->GroupStart));
  RETURN_IF_ERROR(Resolve(lib, "ncclGroupEnd", &api->GroupEnd));
  ncclResult_t r = api->GetVersion(&api->version);
  if (r != ncclSuccess)
    return absl::UnavailableError(absl::StrFormat("[nccl] ncclGetVersion of %s failed: %s", path,
                                                  NcclErrorText(*api, r, nullptr)));
  if (api->version < kMinVersion)
    return absl::UnavailableError(
        absl::StrFormat("[nccl] %s is NCCL %d; the NCCL backend needs NCCL >= 2.14 (non-blocking "
                        "communicators): pip install -U nvidia-nccl-cu13",
                        path, api->version));
  return api;
}

}  // namespace

StatusOr<const NcclApi*> Nccl() {
  static const StatusOr<NcclApi*>* loaded = new StatusOr<NcclApi*>(Load());
  if (!loaded->ok()) return loaded->status();
  return static_cast<const NcclApi*>(**loaded);
}

std::string NcclErrorText(const NcclApi& api, ncclResult_t r, ncclComm_t comm) {
  std::string text = absl::StrFormat("NCCL error %d (%s)", static_cast<int>(r),
                                     api.GetErrorString ? api.GetErrorString(r) : "?");
  const char* last = api.GetLastError ? api.GetLastError(comm) : nullptr;
  if (last != nullptr && *last != '\0') absl::StrAppend(&text, ": ", last);
  return text;
}

}  // namespace distributed
}  // namespace oneflow_like
