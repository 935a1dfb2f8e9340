// CPU kernel JIT: compiles generated C++ with the system compiler into a shared object, cached
// on disk by a hash of (source, compiler, flags), and loads it with dlopen.
//   compiler: $ONEFLOW_LIKE_CXX or `c++`; flags: -O2 -march=x86-64-v3 -shared -fPIC
//   cache:    $ONEFLOW_LIKE_CACHE_DIR or ~/.cache/oneflow_like/kernels
#pragma once
#include <memory>
#include <string>

#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo {

struct JitStats {
  bool cache_hit = false;
  double compile_seconds = 0;
  std::string so_path;
};

StatusOr<std::shared_ptr<KernelLibrary>> CompileAndLoadKernels(const std::string& source,
                                                               JitStats* stats = nullptr);
std::string KernelCacheDir();

}  // namespace oneflow_like::hlo
