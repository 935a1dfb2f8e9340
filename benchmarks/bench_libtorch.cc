// libtorch's side of benchmarks/bench_cpp_api.py: the same three measurements as
// bench_cpp_api.cc, written against libtorch's C++ API (Debian's libtorch-dev, which
// python3-torch depends on), printed as `name value` lines:
//   add_us / add_grad_us: microseconds per 1-element torch::add (inputs without / with
//     requires_grad), each sample N calls, median over samples (libtorch's CPU ops are synchronous,
//     so there is nothing to wait for after the loop);
//   mlp_step_ms: the digits MLP training step (64-128-64-10, dropout 0.1, batch 64, Adam with
//     weight decay: zero_grad, forward, cross_entropy, backward, step, loss.item()).
// Not built by Bazel (so `bazel build //...` needs no libtorch); bench_cpp_api.py compiles it
// with g++ into build/ (git-ignored) when missing or older than this file.
//   bench_libtorch [--quick]
#include <torch/torch.h>

#include <cstdio>
#include <cstring>

#include "bench_timing.h"

int main(int argc, char** argv) {
  const auto kSync = [] {};
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int calls = quick ? 500 : 2000, repeats = quick ? 5 : 11;
  for (bool rg : {false, true}) {
    torch::Tensor a = torch::ones({1}).requires_grad_(rg), b = torch::ones({1}).requires_grad_(rg);
    torch::Tensor c;
    auto add = [&] { c = torch::add(a, b); };
    add();
    std::printf("%s %.3f\n", rg ? "add_grad_us" : "add_us",
                bench::PerCall(add, kSync, calls, repeats) * 1e6);
  }

  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(64, 128), torch::nn::ReLU(),
                              torch::nn::Dropout(0.1), torch::nn::Linear(128, 64),
                              torch::nn::ReLU(), torch::nn::Linear(64, 10));
  torch::optim::Adam opt(
      model->parameters(),
      torch::optim::AdamOptions(2e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(1e-4));
  torch::Tensor x = torch::randn({64, 64}), y = torch::randint(0, 10, {64});
  auto step = [&] {
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss.item<float>();
  };
  for (int i = 0; i < 5; ++i) step();
  std::printf("mlp_step_ms %.4f\n", bench::PerCall(step, kSync, quick ? 5 : 20, repeats) * 1e3);
  return 0;
}
