// libnccl.so.2, loaded with dlopen on first use instead of linked: the library is 218 MB and only
// processes that create an NCCL group need it. The types come from the CUDA toolkit's nccl.h;
// each entry point is resolved once with dlsym. Built only with --config=cuda.
// Where it is found: the loader's usual search (LD_LIBRARY_PATH, the runtime's RUNPATH,
// /usr/local/cuda/lib64 here), or the file named by ONEFLOW_LIKE_NCCL_LIBRARY.
#pragma once
#include <nccl.h>

#include <string>

#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace distributed {

struct NcclApi {
  int version = 0;  // the loaded library's ncclGetVersion (e.g. 22809 for 2.28.9)
  decltype(&::ncclGetVersion) GetVersion = nullptr;
  decltype(&::ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&::ncclCommInitRankConfig) CommInitRankConfig = nullptr;
  decltype(&::ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&::ncclCommFinalize) CommFinalize = nullptr;
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclCommAbort) CommAbort = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
  decltype(&::ncclGetLastError) GetLastError = nullptr;
  decltype(&::ncclAllReduce) AllReduce = nullptr;
  decltype(&::ncclBroadcast) Broadcast = nullptr;
  decltype(&::ncclReduce) Reduce = nullptr;
  decltype(&::ncclAllGather) AllGather = nullptr;
  decltype(&::ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&::ncclSend) Send = nullptr;
  decltype(&::ncclRecv) Recv = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;
};

// The loaded library (loaded by the first call; later calls return the same table or the same
// error). The error names libnccl.so.2, the loader's message and what to install.
StatusOr<const NcclApi*> Nccl();

// "NCCL error 6 ncclRemoteError (remote process exited or there was a network error): <last
// error>" for `r` on `comm` (null: no communicator-specific message).
std::string NcclErrorText(const NcclApi& api, ncclResult_t r, ncclComm_t comm);

}  // namespace distributed
}  // namespace oneflow_like
