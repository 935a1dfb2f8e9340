// libFuzzer entry: any bytes must give a module or an error, never a crash; a parsed module
// must print to text that parses again to the same text.
#include <cstdlib>
#include <string>

#include "compiler/ir/hlo_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto m = oneflow_like::hlo::ParseHloModule(text);
  if (!m.ok()) return 0;
  std::string printed = (*m)->ToString();
  auto again = oneflow_like::hlo::ParseHloModule(printed);
  if (!again.ok() || (*again)->ToString() != printed) std::abort();
  return 0;
}
