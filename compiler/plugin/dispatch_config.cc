#include "compiler/plugin/dispatch_config.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"

namespace oneflow_like::hlo::plugin {

// Every value in hex: names and paths may hold any byte, the parser of `key=value;` none of ';'.
std::string DispatchConfig::Encode() const {
  return absl::StrCat("plugin=", absl::BytesToHexString(plugin),
                      ";dispatch=", absl::BytesToHexString(dispatch_library),
                      ";dir=", absl::BytesToHexString(search_dir),
                      ";entry=", absl::BytesToHexString(entry_point),
                      ";bytecode=", absl::BytesToHexString(bytecode),
                      ";original=", absl::BytesToHexString(original));
}

StatusOr<DispatchConfig> DispatchConfig::Decode(const std::string& config) {
  DispatchConfig c;
  int found = 0;
  for (absl::string_view kv : absl::StrSplit(config, ';', absl::SkipEmpty())) {
    std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    std::string* field = p.first == "plugin"     ? &c.plugin
                         : p.first == "dispatch" ? &c.dispatch_library
                         : p.first == "dir"      ? &c.search_dir
                         : p.first == "entry"    ? &c.entry_point
                         : p.first == "bytecode" ? &c.bytecode
                         : p.first == "original" ? &c.original
                                                 : nullptr;
    if (field == nullptr) continue;
    if (p.second.size() % 2 != 0 ||
        p.second.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      return InvalidArgument("[plugin dispatch] backend_config field %s is not hex", p.first);
    *field = absl::HexStringToBytes(p.second);
    found += field != &c.original;
  }
  if (found != 5 || c.dispatch_library.empty())
    return InvalidArgument("[plugin dispatch] backend_config lacks fields (%d of 5 found)", found);
  return c;
}

}  // namespace oneflow_like::hlo::plugin
