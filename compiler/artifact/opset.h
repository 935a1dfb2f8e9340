// The versioned op set of .oflx artifacts (VHLO-style). Every HLO opcode and every custom-call
// target family exists in versions `name_vN`; each version has a stable wire code and the
// inclusive range of op-set versions that contain it. The table is add-only: a wire code is never
// reused or renumbered and a closed range never changes (tests/python/test_artifact_opset.py
// compares it with a golden copy). docs/compatibility.md says what the versions promise.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_like/base/status.h"

namespace oneflow_like::artifact {

// The op set this build writes by default and the oldest one it still reads and writes.
constexpr int kCurrentOpset = 3;
constexpr int kMinSupportedOpset = 1;
constexpr int kOpenRange = 0;  // max_opset of a version that is still current

// An attribute of a versioned op: the op-set version that introduced it and its default in HLO
// text form ("" = the attribute is absent, which the HLO printer/parser read as its default).
struct OpAttr {
  const char* name;
  int introduced;
  const char* default_value;
};

struct VersionedOp {
  const char* name;  // HLO opcode text ("add") or "custom-call.<target family>"
  int version;       // the N of name_vN
  uint32_t wire;     // stable wire code
  int min_opset;
  int max_opset;  // inclusive; kOpenRange = still in the current op set
  std::vector<OpAttr> attrs;

  std::string FullName() const;  // "pad_v2"
  bool InOpset(int opset) const {
    return opset >= min_opset && (max_opset == kOpenRange || opset <= max_opset);
  }
  const OpAttr* FindAttr(const std::string& attr) const;
};

const std::vector<VersionedOp>& AllVersionedOps();
const VersionedOp* FindByWire(uint32_t wire);
// The version of `name` that op-set `opset` contains, or null.
const VersionedOp* FindVersion(const std::string& name, int opset);
// The versioned-op family of a custom-call target ("ofl.kernel.relu" -> "custom-call.ofl.kernel").
StatusOr<std::string> CustomCallFamily(const std::string& target);
// One line per version: `name_vN wire=W opset=[min,max|current] attrs=a@1:default,...`.
std::string OpsetTableString();

}  // namespace oneflow_like::artifact
