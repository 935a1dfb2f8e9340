// libFuzzer entry for the artifact loader: any bytes must give an artifact or an error naming the
// file, never a crash; an accepted artifact's module must upgrade and lower (or fail cleanly),
// and re-serialising it must be accepted again. Built by tools/build_artifact_fuzzer.sh (clang),
// run by tests/python/test_artifact_fuzz.py for a bounded number of iterations.
#include <cstdlib>
#include <string>

#include "compiler/artifact/artifact_file.h"

using namespace oneflow_like::artifact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Checksum checked (what loading does), then ignored (so mutations reach what lies behind it).
  auto checked = ParseArtifact(data, size, "fuzz.oflx", nullptr);
  if (!checked.ok() && checked.status().message().rfind("fuzz.oflx: ", 0) != 0) std::abort();
  auto a = ParseArtifact(data, size, "fuzz.oflx", nullptr, /*verify_checksum=*/false);
  if (!a.ok()) {
    if (a.status().message().rfind("fuzz.oflx: ", 0) != 0) std::abort();
    return 0;
  }
  VModule m = a->contents.module;
  if (Upgrade(&m).ok()) (void)LowerToHlo(m);
  auto again = SerializeArtifact(a->contents);
  if (!again.ok()) return 0;
  auto b = ParseArtifact(reinterpret_cast<const uint8_t*>(again->data()), again->size(),
                         "fuzz.oflx", nullptr);
  if (!b.ok()) std::abort();
  return 0;
}
