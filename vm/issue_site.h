// Where an instruction was issued from, for its error message: the front end installs hooks
// that name the caller (the Python line, interned under the GIL by python/csrc/issue_site_py.cc)
// by a small id at issue time; the id becomes text only when an instruction fails, so the hot
// path costs one hook call (a hash lookup) per issue.
#pragma once
#include <cstdint>
#include <string>

#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace vm {

struct IssueSiteHooks {
  uint32_t (*capture)() = nullptr;              // the calling thread's site, 0 if unknown
  std::string (*describe)(uint32_t) = nullptr;  // "file.py:12 in f"; any thread, no GIL
};
// Installs (or, with empty hooks, removes) the hooks; safe while instructions are issued.
void SetIssueSiteHooks(IssueSiteHooks hooks);
// The calling thread's site: 0 without hooks and inside an instruction (work issued by work).
uint32_t CaptureIssueSite();
// `s` with " (issued at <site>)" appended when the site is known; the error code is kept.
Status WithIssueSite(const Status& s, uint32_t site);
// The appended suffix alone ("" when the site is unknown).
std::string IssueSiteSuffix(uint32_t site);

}  // namespace vm
}  // namespace oneflow_like
