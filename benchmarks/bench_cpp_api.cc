// The C++ API's costs, printed as `name value` lines (benchmarks/bench_cpp_api.py runs this and
// puts Python's figures beside them):
//   add_us / add_grad_us: microseconds per 1-element add (inputs without / with requires_grad),
//     each sample N calls then one synchronize(), median over samples;
//   mlp_step_ms: the digits MLP training step (64-128-64-10, dropout 0.1, batch 64, Adam with
//     weight decay: zero_grad, forward, cross_entropy, backward, step), samples of a few steps
//     then a sync, median after warm-up.
//   bench_cpp_api [--quick]
//   bench_cpp_api --adds N   only N 1-element adds after a warm-up, for instruction counts: the
//     slope of callgrind's totals between two N is the instructions per add
//     (benchmarks/README.md, "The C++ API vs Python"); --grad-adds N the same with an input
//     that requires grad (each add records its autograd node).
#include <oneflow_like/oneflow_like.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench_timing.h"

namespace ofl = oneflow_like;

int main(int argc, char** argv) {
  const auto kSync = [] { ofl::synchronize(); };
  const bool grad_adds = argc > 2 && std::strcmp(argv[1], "--grad-adds") == 0;
  if (argc > 2 && (std::strcmp(argv[1], "--adds") == 0 || grad_adds)) {
    const long n = std::atol(argv[2]);
    ofl::Tensor a = ofl::ones({1}).requires_grad_(grad_adds), b = ofl::ones({1}), c;
    for (int i = 0; i < 200; ++i) c = ofl::add(a, b);
    kSync();
    for (long i = 0; i < n; ++i) c = ofl::add(a, b);
    kSync();
    return 0;
  }
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int calls = quick ? 500 : 2000, repeats = quick ? 5 : 11;
  for (bool rg : {false, true}) {
    ofl::Tensor a = ofl::ones({1}).requires_grad_(rg), b = ofl::ones({1}).requires_grad_(rg);
    ofl::Tensor c;
    auto add = [&] { c = ofl::add(a, b); };
    add();
    std::printf("%s %.3f\n", rg ? "add_grad_us" : "add_us",
                bench::PerCall(add, kSync, calls, repeats) * 1e6);
  }

  ofl::manual_seed(0);
  ofl::nn::Sequential model(ofl::nn::Linear(64, 128), ofl::nn::ReLU(), ofl::nn::Dropout(0.1),
                            ofl::nn::Linear(128, 64), ofl::nn::ReLU(), ofl::nn::Linear(64, 10));
  ofl::optim::Adam opt(model.parameters(), {2e-3, 0.9, 0.999, 1e-8, 1e-4});
  ofl::Tensor x = ofl::randn({64, 64}), y = ofl::randint(0, 10, {64});
  auto step = [&] {
    ofl::Tensor loss = ofl::cross_entropy(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss.item<float>();  // as a training loop reads its loss
  };
  for (int i = 0; i < 5; ++i) step();
  std::printf("mlp_step_ms %.4f\n", bench::PerCall(step, kSync, quick ? 5 : 20, repeats) * 1e3);
  return 0;
}
