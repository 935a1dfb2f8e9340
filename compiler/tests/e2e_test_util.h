// End-to-end helpers: compile IR text, run on random inputs, compare with the reference
// evaluator (double precision).
#pragma once
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/ir/hlo_parser.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {

inline Literal RandomLiteral(const HloShape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  Literal l(shape);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double& v : l.data)
    v = IsFloating(shape.dtype()) ? dist(gen) : std::floor((dist(gen) - lo) / (hi - lo) * 4);
  l.RoundToType();
  return l;
}

inline void ExpectNear(const Literal& want, const Literal& got, double tol,
                       const std::string& where = "") {
  ASSERT_EQ(want.shape.is_tuple(), got.shape.is_tuple()) << where;
  if (want.shape.is_tuple()) {
    ASSERT_EQ(want.elements.size(), got.elements.size());
    for (size_t i = 0; i < want.elements.size(); ++i)
      ExpectNear(want.elements[i], got.elements[i], tol, absl::StrCat(where, "{", i, "}"));
    return;
  }
  ASSERT_EQ(want.data.size(), got.data.size()) << where;
  int bad = 0;
  for (size_t i = 0; i < want.data.size() && bad < 5; ++i) {
    double err = std::fabs(want.data[i] - got.data[i]),
           scale = std::max(1.0, std::fabs(want.data[i]));
    if (want.data[i] == got.data[i]) continue;
    if (!(err <= tol * scale) && !(std::isnan(want.data[i]) && std::isnan(got.data[i]))) {
      ADD_FAILURE() << where << " element " << i << ": want " << want.data[i] << " got "
                    << got.data[i];
      ++bad;
    }
  }
}

// Compiles `text`, runs it on seeded random arguments and compares with the evaluator.
inline std::unique_ptr<Executable> CompileAndCompare(const std::string& text, double tol = 1e-4,
                                                     const CompileOptions& opts = {}) {
  auto parsed = ParseHloModule(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return nullptr;
  std::vector<Literal> args;
  for (HloInstruction* p : (*parsed)->entry_computation()->parameters())
    args.push_back(RandomLiteral(p->shape(), 1000 + p->parameter_number()));
  HloEvaluator ev;
  auto want = ev.Evaluate(**parsed, args);
  EXPECT_TRUE(want.ok()) << want.status();
  auto exe = Compile(std::move(parsed).value(), opts);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok() || !want.ok()) return nullptr;
  auto got = RunOnLiterals(**exe, args);
  EXPECT_TRUE(got.ok()) << got.status();
  if (got.ok()) ExpectNear(*want, *got, tol, (*exe)->module().name());
  return std::move(exe).value();
}

}  // namespace oneflow_like::hlo
