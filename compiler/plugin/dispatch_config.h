// What a dispatch op (custom-call "ofl.plugin.dispatch") carries in its backend_config: the
// plugin that compiled it, the dispatch library that runs it, the entry point and the bytecode
// (hex in the text, so the module still prints and parses exactly, and travels in artifacts).
#pragma once
#include <string>

#include "oneflow_like/base/status.h"

namespace oneflow_like::hlo::plugin {

struct DispatchConfig {
  std::string plugin;            // display name, for errors and reports
  std::string dispatch_library;  // file name or path
  std::string search_dir;        // the compiler plugin's folder ("" if none)
  std::string entry_point;
  std::string bytecode;
  std::string original;  // HLO text of the outlined partition (CPU fallback, debugging)
  std::string Encode() const;
  static StatusOr<DispatchConfig> Decode(const std::string& config);
};

}  // namespace oneflow_like::hlo::plugin
