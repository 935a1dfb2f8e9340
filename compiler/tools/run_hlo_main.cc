// run_hlo: compiles an HLO text file, runs it on seeded random inputs, compares with the
// reference evaluator and prints compile stats, buffer sizes and run time.
//   bazel run //compiler/tools:run_hlo -- path/to/module.hlo [iterations]
// Honors ONEFLOW_LIKE_DUMP_TO / ONEFLOW_LIKE_DUMP_PASS_RE.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/compile.h"
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/ir/hlo_parser.h"

using namespace oneflow_like;
using namespace oneflow_like::hlo;

static double MaxRelError(const Literal& a, const Literal& b) {
  double worst = 0;
  if (a.shape.is_tuple()) {
    for (size_t i = 0; i < a.elements.size(); ++i)
      worst = std::max(worst, MaxRelError(a.elements[i], b.elements[i]));
    return worst;
  }
  for (size_t i = 0; i < a.data.size(); ++i)
    if (a.data[i] != b.data[i])
      worst =
          std::max(worst, std::fabs(a.data[i] - b.data[i]) / std::max(1.0, std::fabs(a.data[i])));
  return worst;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s module.hlo [iterations]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  const int iters = argc > 2 ? std::atoi(argv[2]) : 10;
  auto module = ParseHloModule(ss.str());
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", module.status().ToString().c_str());
    return 1;
  }
  std::vector<Literal> args;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (HloInstruction* p : (*module)->entry_computation()->parameters()) {
    Literal l(p->shape());
    for (double& v : l.data) v = dist(gen);
    l.RoundToType();
    args.push_back(std::move(l));
  }
  HloEvaluator ev;
  auto want = ev.Evaluate(**module, args);
  auto t0 = std::chrono::steady_clock::now();
  auto exe = Compile(std::move(module).value());
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
    return 1;
  }
  auto got = RunOnLiterals(**exe, args);
  if (!got.ok()) {
    std::fprintf(stderr, "%s\n", got.status().ToString().c_str());
    return 1;
  }
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) (void)RunOnLiterals(**exe, args);
  double run_ms = 1e3 *
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                  std::max(iters, 1);
  const BufferAssignment& ba = (*exe)->buffer_assignment();
  std::printf(
      "compile %.3f s (%s)\nrun %.3f ms (incl. literal conversion)\ntemp arena %lld bytes, lower "
      "bound %lld bytes\n",
      compile_s, (*exe)->stats().ToString().c_str(), run_ms,
      static_cast<long long>(ba.temp_bytes()), static_cast<long long>(ba.lower_bound_bytes()));
  if (want.ok()) std::printf("max relative error vs evaluator: %.3g\n", MaxRelError(*want, *got));
  return 0;
}
