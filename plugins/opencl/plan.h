// The OpenCL plugin's bytecode: a plan (buffers and kernel launches, one per line) then the
// OpenCL C source, separated by a line `---`:
//   oflcl 1
//   input <k> <bytes>        one per partition parameter, in order
//   output <k> <bytes>       one per partition output, in order
//   temp <k> <bytes>         intermediate buffers
//   kernel <name> <global size> <inner> <args...>
//                            args: i<k>, o<k>, t<k>, launched in this order; a 2-D range
//                            {inner, global / inner} (dim 0 = the output's innermost dim)
//   ---
//   <OpenCL C>
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ofl_opencl {

struct Plan {
  struct Launch {
    std::string kernel;
    int64_t global_size = 0;
    int64_t inner = 1;              // size of range dim 0 (divides global_size)
    std::vector<std::string> args;  // "i0", "o1", "t3"
  };
  std::vector<int64_t> input_bytes, output_bytes, temp_bytes;
  std::vector<Launch> launches;
  std::string source;

  std::string Serialize() const;
  // false and `*error` set when `bytecode` is not a plan.
  static bool Parse(const std::string& bytecode, Plan* plan, std::string* error);
};

}  // namespace ofl_opencl
