#include "compiler/backends/gpu/gpu_kernel_compiler.h"

#include <nvrtc.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/backends/cpu/cpu_jit.h"
#include "device/cuda/cuda_status.h"

namespace oneflow_like::hlo {
namespace {

// Marks where each kernel starts in the translation unit, so NVRTC errors can name it.
constexpr const char* kKernelMarker = "// ofl-kernel: ";
constexpr const char* kProgramName = "ofl_kernels.cu";

// What NVRTC lacks that the emitter's CUDA prelude assumes: nothing today beyond the integer
// typedefs, which KernelPrelude(kCuda) provides itself. Here: the by-value argument block.
constexpr const char* kNvrtcPrelude =
    "// oneflow_like fused-loop kernels for NVRTC (compiler/backends/gpu).\n"
    "template <int N> struct OflKernelArgs { char* p[N]; };\n";

uint64_t Fnv1a64(const std::string& s, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Key(const std::string& s) {
  return absl::StrFormat("%016x%016x", Fnv1a64(s, 1469598103934665603ull),
                         Fnv1a64(s, 0x9e3779b97f4a7c15ull));
}

StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes through a temporary file and a rename, so concurrent compiles never see half a file.
Status WriteAtomically(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = absl::StrCat(path, ".", getpid(), ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary);
    out << bytes;
    if (!out) return Internal("[nvrtc] cannot write %s", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Internal("[nvrtc] cannot move %s to %s", tmp, path);
  }
  return absl::OkStatus();
}

// The kernels that the log's `ofl_kernels.cu(LINE): error` lines point into.
std::vector<std::string> KernelsNamedByLog(const std::string& source, const std::string& log) {
  std::map<int, std::string> starts;  // line -> kernel starting there
  int line = 1;
  for (absl::string_view l : absl::StrSplit(source, '\n')) {
    if (absl::StartsWith(l, kKernelMarker))
      starts[line] = std::string(l.substr(std::strlen(kKernelMarker)));
    ++line;
  }
  std::vector<std::string> named;
  const std::string prefix = absl::StrCat(kProgramName, "(");
  for (absl::string_view l : absl::StrSplit(log, '\n')) {
    if (!absl::StartsWith(l, prefix) || l.find("error") == absl::string_view::npos) continue;
    int at = 0;
    if (!absl::SimpleAtoi(l.substr(prefix.size(), l.find(')') - prefix.size()), &at)) continue;
    auto it = starts.upper_bound(at);
    if (it == starts.begin()) continue;
    const std::string& k = std::prev(it)->second;
    if (std::find(named.begin(), named.end(), k) == named.end()) named.push_back(k);
  }
  return named;
}

bool ImageHasEntry(const GpuKernelImage& img, const std::string& name) {
  if (img.is_cubin) return img.image.find(name) != std::string::npos;  // ELF string table
  return img.image.find(absl::StrCat(".entry ", name, "(")) != std::string::npos;
}

// One NVRTC program; destroyed on every path.
class NvrtcProgram {
 public:
  ~NvrtcProgram() {
    if (prog_ != nullptr) nvrtcDestroyProgram(&prog_);
  }
  Status Create(const std::string& source) {
    NVRTC_RETURN_IF_ERROR(
        nvrtcCreateProgram(&prog_, source.c_str(), kProgramName, 0, nullptr, nullptr));
    return absl::OkStatus();
  }
  nvrtcProgram get() const { return prog_; }
  std::string Log() const {
    size_t n = 0;
    if (nvrtcGetProgramLogSize(prog_, &n) != NVRTC_SUCCESS || n == 0) return "";
    std::string log(n, '\0');
    if (nvrtcGetProgramLog(prog_, log.data()) != NVRTC_SUCCESS) return "";
    log.resize(std::strlen(log.c_str()));
    return log;
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

}  // namespace

std::string GpuKernelName(const HloInstruction& fusion) {
  std::string name = "k_";
  for (char ch : fusion.name()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

std::string GpuKernelCompiler::NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

std::string GpuKernelCompiler::ArchForComputeCapability(int capability) {
  int n = 0;
  std::vector<int> archs;
  if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    archs.resize(n);
    if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) archs.clear();
  }
  std::sort(archs.begin(), archs.end());
  int best = archs.empty() ? capability : archs.front();  // older than all: loading will say so
  for (int a : archs)
    if (a <= capability) best = a;
  return absl::StrCat("compute_", best);
}

std::vector<std::string> GpuKernelCompiler::CompileOptions() const {
  std::vector<std::string> opts = {absl::StrCat("--gpu-architecture=", options_.arch), "-std=c++17",
                                   "--device-as-default-execution-space"};
  opts.insert(opts.end(), options_.extra_options.begin(), options_.extra_options.end());
  return opts;
}

StatusOr<std::string> GpuKernelCompiler::TranslationUnit(absl::Span<const KernelSource> kernels) {
  std::string tu = absl::StrCat(kNvrtcPrelude, KernelPrelude(KernelDialect::kCuda));
  for (const KernelSource& k : kernels) {
    const std::string header = absl::StrCat("extern \"C\" __global__ void ", k.name,
                                            "(char** args, int64_t begin, int64_t end) {");
    const size_t at = k.code.find(header);
    if (at == std::string::npos || k.code.find(header, at + 1) != std::string::npos)
      return InvalidArgument(
          "[nvrtc] kernel %s: expected the emitter's CUDA ABI header `%s` exactly once", k.name,
          header);
    if (k.num_args < 1)
      return InvalidArgument("[nvrtc] kernel %s has %d arguments", k.name, k.num_args);
    std::string body = k.code;
    body.replace(at, header.size(),
                 absl::StrCat("static __device__ __forceinline__ void ofl_body_", k.name,
                              "(char** args, int64_t begin, int64_t end) {"));
    absl::StrAppend(&tu, "\n", kKernelMarker, k.name, "\n", body, "extern \"C\" __global__ void ",
                    k.name, "(const OflKernelArgs<", k.num_args,
                    "> args, const int64_t begin, const int64_t end) {\n", "  ofl_body_", k.name,
                    "(const_cast<char**>(args.p), begin, end);\n}\n");
  }
  return tu;
}

StatusOr<GpuKernelImage> GpuKernelCompiler::Compile(const std::string& module_name,
                                                    absl::Span<const KernelSource> kernels) const {
  ASSIGN_OR_RETURN(std::string tu, TranslationUnit(kernels));
  std::vector<std::string> names;
  for (const KernelSource& k : kernels) names.push_back(k.name);
  return CompileSource(absl::StrCat("module ", module_name), tu, names);
}

StatusOr<GpuKernelImage> GpuKernelCompiler::CompileSource(
    const std::string& what, const std::string& source,
    const std::vector<std::string>& entries) const {
  GpuKernelImage img;
  img.translation_unit = source;
  img.kernel_names = entries;
  img.is_cubin = absl::StartsWith(options_.arch, "sm_");
  if (!img.is_cubin && !absl::StartsWith(options_.arch, "compute_"))
    return InvalidArgument("[nvrtc] %s: arch must be compute_XY (PTX) or sm_XY (CUBIN), got \"%s\"",
                           what, options_.arch);
  const std::vector<std::string> opts = CompileOptions();
  if (options_.use_disk_cache) {
    const std::string key =
        Key(absl::StrCat("nvrtc ", NvrtcVersion(), "\n", absl::StrJoin(opts, " "), "\n", source));
    img.cache_path = absl::StrCat(KernelCacheDir(), "/gpu_", key, img.is_cubin ? ".cubin" : ".ptx");
    if (auto cached = ReadWhole(img.cache_path); cached.ok() && !cached->empty()) {
      img.image = std::move(cached).value();
      img.cache_hit = true;
      bool complete = true;
      for (const std::string& e : entries) complete &= ImageHasEntry(img, e);
      if (complete) return img;
      img.cache_hit = false;  // damaged or foreign file: compile again and overwrite it
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  NvrtcProgram prog;
  RETURN_IF_ERROR(prog.Create(source));
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  const nvrtcResult rc =
      nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  if (rc != NVRTC_SUCCESS) {
    const std::string log = prog.Log();
    const std::vector<std::string> bad = KernelsNamedByLog(source, log);
    return InvalidArgument(
        "[nvrtc] %s: %s compiling %d kernel(s) for %s%s:\n%s", what, nvrtcGetErrorString(rc),
        static_cast<int64_t>(entries.size()), options_.arch,
        bad.empty() ? "" : absl::StrCat(" (errors in ", absl::StrJoin(bad, ", "), ")"),
        log.substr(0, 16000));
  }
  size_t n = 0;
  if (img.is_cubin) {
    NVRTC_RETURN_IF_ERROR(nvrtcGetCUBINSize(prog.get(), &n));
    img.image.resize(n);
    NVRTC_RETURN_IF_ERROR(nvrtcGetCUBIN(prog.get(), img.image.data()));
  } else {
    NVRTC_RETURN_IF_ERROR(nvrtcGetPTXSize(prog.get(), &n));
    img.image.resize(n);
    NVRTC_RETURN_IF_ERROR(nvrtcGetPTX(prog.get(), img.image.data()));
    img.image.resize(std::strlen(img.image.c_str()));  // drop the terminating NUL
  }
  for (const std::string& e : entries)
    if (!ImageHasEntry(img, e))
      return Internal("[nvrtc] %s: kernel %s missing from the compiled image", what, e);
  img.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // An unwritable cache costs the next compile, not this one.
  if (options_.use_disk_cache && !WriteAtomically(img.cache_path, img.image).ok())
    img.cache_path.clear();
  return img;
}

}  // namespace oneflow_like::hlo
