// One macro per CUDA library turning its return code into an absl::Status that names the
// failed call, the library's message, and file:line. Errors are Internal, except allocation
// failures which are ResourceExhausted (MemoryError in Python).
//   CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(...));
//   CUBLAS_RETURN_IF_ERROR(cublasSgemm(...));
//   CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(...));
//   NVRTC_RETURN_IF_ERROR(nvrtcCompileProgram(...));   // include <nvrtc.h> and link @cuda//:nvrtc
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace cuda {

Status CudaStatus(cudaError_t e, const char* expr, const char* file, int line);
// Errors after which the process's CUDA context is unusable (every later CUDA call returns them):
// a kernel's illegal address, trap or device assert, found asynchronously.
inline bool IsStickyError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}
Status CublasStatus(cublasStatus_t e, const char* expr, const char* file, int line);
Status CudnnStatus(cudnnStatus_t e, const char* expr, const char* file, int line);

// NVRTC is header-only here so that only users of NVRTC link libnvrtc.
template <typename NvrtcResult, typename GetString>
Status NvrtcStatus(NvrtcResult e, GetString get_string, const char* expr, const char* file,
                   int line) {
  return Internal("NVRTC error %d (%s) in %s at %s:%d", static_cast<int>(e), get_string(e), expr,
                  file, line);
}

}  // namespace cuda
}  // namespace oneflow_like

#define CUDA_RETURN_IF_ERROR(expr)                                                     \
  do {                                                                                 \
    cudaError_t _ofl_cuda_e = (expr);                                                  \
    if (_ofl_cuda_e != cudaSuccess)                                                    \
      return ::oneflow_like::cuda::CudaStatus(_ofl_cuda_e, #expr, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_RETURN_IF_ERROR(expr)                                                       \
  do {                                                                                     \
    cublasStatus_t _ofl_cublas_e = (expr);                                                 \
    if (_ofl_cublas_e != CUBLAS_STATUS_SUCCESS)                                            \
      return ::oneflow_like::cuda::CublasStatus(_ofl_cublas_e, #expr, __FILE__, __LINE__); \
  } while (0)

#define CUDNN_RETURN_IF_ERROR(expr)                                                      \
  do {                                                                                   \
    cudnnStatus_t _ofl_cudnn_e = (expr);                                                 \
    if (_ofl_cudnn_e != CUDNN_STATUS_SUCCESS)                                            \
      return ::oneflow_like::cuda::CudnnStatus(_ofl_cudnn_e, #expr, __FILE__, __LINE__); \
  } while (0)

#define NVRTC_RETURN_IF_ERROR(expr)                                                                \
  do {                                                                                             \
    nvrtcResult _ofl_nvrtc_e = (expr);                                                             \
    if (_ofl_nvrtc_e != NVRTC_SUCCESS)                                                             \
      return ::oneflow_like::cuda::NvrtcStatus(_ofl_nvrtc_e, nvrtcGetErrorString, #expr, __FILE__, \
                                               __LINE__);                                          \
  } while (0)
