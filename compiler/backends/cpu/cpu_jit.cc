#include "compiler/backends/cpu/cpu_jit.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace oneflow_like::hlo {
namespace {

// -O3: GCC 12's -O2 vectorises only loops without an epilogue (very-cheap cost model), which
// excludes row loops over [j0, j1). (No libmvec: its vector exp/tanh round differently from the
// scalar calls of a loop's epilogue, so results would depend on how [begin, end) is chunked.)
// -fno-trapping-math: lets GCC if-convert selects whose arms do floating-point work (it will not
// execute a multiply speculatively while FP exceptions count as side effects), e.g. relu then a
// dropout scale: that loop was scalar with a mispredicted branch per element (6.0 -> 0.9 ms for
// 2M floats). Values are unchanged: NaN, infinities and signed zeros keep their IEEE handling.
constexpr const char* kFlags =
    "-std=c++17 -O3 -march=x86-64-v3 -fno-math-errno -fno-trapping-math -shared -fPIC";

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

class DlKernelLibrary : public KernelLibrary {
 public:
  explicit DlKernelLibrary(void* handle) : handle_(handle) {}
  // The handle stays open for the life of the process: kernels may be referenced by thunks
  // that outlive this object's last owner during shutdown.
  StatusOr<void*> Resolve(const std::string& name) const override {
    void* sym = dlsym(handle_, name.c_str());
    if (sym == nullptr) return Internal("[jit] kernel %s not found in the compiled library", name);
    return sym;
  }

 private:
  void* handle_;
};

Status MakeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty()) mkdir(cur.c_str(), 0755);
    }
    if (i < path.size()) cur += path[i];
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Internal("[jit] cannot create cache dir %s", path);
  return absl::OkStatus();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string KernelCacheDir() {
  if (const char* d = std::getenv("ONEFLOW_LIKE_CACHE_DIR"); d && *d) return d;
  const char* home = std::getenv("HOME");
  return absl::StrCat(home && *home ? home : "/tmp", "/.cache/oneflow_like/kernels");
}

StatusOr<std::shared_ptr<KernelLibrary>> CompileAndLoadKernels(const std::string& source,
                                                               JitStats* stats) {
  const char* cxx_env = std::getenv("ONEFLOW_LIKE_CXX");
  const std::string cxx = cxx_env && *cxx_env ? cxx_env : "c++";
  const std::string dir = KernelCacheDir();
  RETURN_IF_ERROR(MakeDirs(dir));
  const std::string key =
      absl::StrFormat("%016x", Fnv1a(absl::StrCat(cxx, "\n", kFlags, "\n", source)));
  const std::string so = absl::StrCat(dir, "/k_", key, ".so");
  JitStats local;
  JitStats& st = stats ? *stats : local;
  st.so_path = so;
  st.cache_hit = access(so.c_str(), R_OK) == 0;
  if (!st.cache_hit) {
    auto t0 = std::chrono::steady_clock::now();
    const std::string tag = absl::StrCat(getpid(), "_", reinterpret_cast<uintptr_t>(&source));
    const std::string src = absl::StrCat(dir, "/k_", key, ".", tag, ".cc");
    const std::string tmp = absl::StrCat(dir, "/k_", key, ".", tag, ".so");
    const std::string log = absl::StrCat(dir, "/k_", key, ".", tag, ".log");
    {
      std::ofstream out(src);
      out << source;
      if (!out) return Internal("[jit] cannot write %s", src);
    }
    std::string cmd =
        absl::StrCat(cxx, " ", kFlags, " -o '", tmp, "' '", src, "' > '", log, "' 2>&1");
    int rc = std::system(cmd.c_str());
    if (rc != 0) {
      std::string msg = ReadFile(log);
      std::remove(log.c_str());
      return Internal("[jit] `%s` failed (%d): %s (source kept at %s)", cmd, rc,
                      msg.substr(0, 4000), src);
    }
    std::remove(log.c_str());
    std::remove(src.c_str());
    if (std::rename(tmp.c_str(), so.c_str()) != 0)
      return Internal("[jit] cannot move %s to %s", tmp, so);
    st.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Internal("[jit] dlopen %s: %s", so, dlerror());
  return std::shared_ptr<KernelLibrary>(new DlKernelLibrary(handle));
}

}  // namespace oneflow_like::hlo
