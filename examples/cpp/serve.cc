// Serves a graph artifact exported from Python (flow.export) without Python: loads the .oflx,
// answers a batch read from an .npz (array "x"; the inputs of a multi-input graph are x0, x1,
// ...) and prints each row's class. When the .npz also holds Python's answer "y", the outputs
// must equal it bit for bit (exit status 1 otherwise).
//   serve model.oflx batch.npz
#include <oneflow_like/oneflow_like.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "npz.h"

namespace ofl = oneflow_like;

namespace {
ofl::Tensor FromArray(const npz::Array& a) {
  ofl::Dtype dt = a.descr == "<f4"   ? ofl::kFloat32
                  : a.descr == "<f8" ? ofl::kFloat64
                  : a.descr == "<i8" ? ofl::kInt64
                                     : throw std::runtime_error("unsupported dtype " + a.descr);
  return ofl::from_data(a.bytes.data(), a.shape, dt);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: serve model.oflx batch.npz\n";
    return 2;
  }
  try {
    ofl::Graph graph = ofl::Graph::Load(argv[1]);
    auto arrays = npz::Load(argv[2]);
    std::vector<ofl::Tensor> inputs;
    if (arrays.count("x")) {
      inputs.push_back(FromArray(arrays.at("x")));
    } else {
      for (size_t i = 0; arrays.count("x" + std::to_string(i)); ++i)
        inputs.push_back(FromArray(arrays.at("x" + std::to_string(i))));
    }
    std::vector<ofl::Tensor> outputs = graph.Run(inputs);
    ofl::Tensor y = outputs.at(0);
    std::cout << graph.path() << ": " << inputs.size() << " input(s) -> output of shape [";
    for (size_t i = 0; i < y.sizes().size(); ++i) std::cout << (i ? "," : "") << y.sizes()[i];
    std::cout << "]\nclasses:";
    if (y.dim() == 2)
      for (int64_t c : y.argmax(1).to_vector<int64_t>()) std::cout << " " << c;
    std::cout << "\n";
    if (arrays.count("y")) {
      const npz::Array& want = arrays.at("y");
      std::vector<float> got = y.to_vector<float>();
      // Bit for bit on the machine that exported it; another CPU may pick other BLAS/oneDNN
      // kernels, so the check is the frozen tests' tolerance (rtol 1e-5).
      bool same = want.descr == "<f4" && got.size() == static_cast<size_t>(want.numel());
      bool exact = same && std::memcmp(got.data(), want.bytes.data(), want.bytes.size()) == 0;
      double worst = 0;
      for (size_t i = 0; same && i < got.size(); ++i) {
        float w;
        std::memcpy(&w, want.bytes.data() + 4 * i, 4);
        double err = std::abs(double(got[i]) - w) / (1e-6 / 1e-5 + std::abs(double(w)));
        worst = std::max(worst, err);
      }
      same = same && worst <= 1e-5;
      std::cout << "equal to Python's output: "
                << (exact  ? "yes (bit for bit)"
                    : same ? "yes (to rtol 1e-5)"
                           : "NO")
                << "\n";
      return same ? 0 : 1;
    }
    return 0;
  } catch (const ofl::Error& e) {
    std::cerr << "oneflow_like error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
