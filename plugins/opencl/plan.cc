#include "plugins/opencl/plan.h"

#include <sstream>

namespace ofl_opencl {

std::string Plan::Serialize() const {
  std::ostringstream s;
  s << "oflcl 1\n";
  for (size_t k = 0; k < input_bytes.size(); ++k)
    s << "input " << k << " " << input_bytes[k] << "\n";
  for (size_t k = 0; k < output_bytes.size(); ++k)
    s << "output " << k << " " << output_bytes[k] << "\n";
  for (size_t k = 0; k < temp_bytes.size(); ++k) s << "temp " << k << " " << temp_bytes[k] << "\n";
  for (const Launch& l : launches) {
    s << "kernel " << l.kernel << " " << l.global_size << " " << l.inner;
    for (const std::string& a : l.args) s << " " << a;
    s << "\n";
  }
  s << "---\n" << source;
  return s.str();
}

bool Plan::Parse(const std::string& bytecode, Plan* plan, std::string* error) {
  const size_t sep = bytecode.find("\n---\n");
  if (bytecode.compare(0, 8, "oflcl 1\n") != 0 || sep == std::string::npos) {
    *error = "bytecode is not an OpenCL plugin plan (expected `oflcl 1` ... `---`)";
    return false;
  }
  *plan = Plan{};
  plan->source = bytecode.substr(sep + 5);
  std::istringstream lines(bytecode.substr(8, sep - 8 + 1));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string what;
    in >> what;
    if (what == "input" || what == "output" || what == "temp") {
      int64_t k = -1, bytes = -1;
      in >> k >> bytes;
      auto& v = what == "input"    ? plan->input_bytes
                : what == "output" ? plan->output_bytes
                                   : plan->temp_bytes;
      if (!in || k != static_cast<int64_t>(v.size()) || bytes < 0) {
        *error = "bad plan line: " + line;
        return false;
      }
      v.push_back(bytes);
    } else if (what == "kernel") {
      Launch l;
      in >> l.kernel >> l.global_size >> l.inner;
      if (!in || l.inner < 1 || l.global_size % l.inner != 0) {
        *error = "bad plan line: " + line;
        return false;
      }
      std::string a;
      while (in >> a) l.args.push_back(a);
      plan->launches.push_back(std::move(l));
    } else {
      *error = "bad plan line: " + line;
      return false;
    }
  }
  return true;
}

}  // namespace ofl_opencl
