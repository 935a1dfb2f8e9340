#include <cstdlib>
#include <random>
#include <regex>

#include "compiler/backends/cpu/cpu_jit.h"
#include "compiler/codegen/emitter_test_util.h"
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/hlo_parser.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::testing {
namespace {

using KernelFn = void (*)(char**, int64_t, int64_t);

Literal Random(const HloShape& shape, uint64_t seed) {
  Literal l(shape);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  for (double& v : l.data) v = IsFloating(shape.dtype()) ? dist(gen) : std::floor(dist(gen) * 2);
  l.RoundToType();
  return l;
}

std::vector<Literal> Leaves(const Literal& l) {
  if (!l.shape.is_tuple()) return {l};
  std::vector<Literal> out;
  for (const Literal& e : l.elements)
    for (Literal& x : Leaves(e)) out.push_back(std::move(x));
  return out;
}

// Splittings of [0, n): whole, one element at a time (small n), fixed chunks, random cuts,
// reversed chunk order.
std::vector<std::vector<std::pair<int64_t, int64_t>>> Splittings(int64_t n, int64_t row) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> out;
  out.push_back({{0, n}});
  for (int64_t chunk :
       {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{64}, row, row + 1, row > 1 ? row - 1 : 2}) {
    if (chunk < 1 || (chunk == 1 && n > 5000)) continue;
    std::vector<std::pair<int64_t, int64_t>> s;
    for (int64_t b = 0; b < n; b += chunk) s.push_back({b, std::min(n, b + chunk)});
    out.push_back(s);
  }
  std::mt19937_64 gen(n);
  std::vector<std::pair<int64_t, int64_t>> cuts;
  for (int64_t b = 0; b < n;) {
    int64_t e = std::min(n, b + 1 + static_cast<int64_t>(gen() % (2 * row + 5)));
    cuts.push_back({b, e});
    b = e;
  }
  std::reverse(cuts.begin(), cuts.end());
  out.push_back(cuts);
  return out;
}

}  // namespace

// Names are module-wide: the entry's instructions get a `_e` suffix (the tests write them like
// the fused computation's, for readability).
StatusOr<std::unique_ptr<HloModule>> Parse(const std::string& text) {
  const size_t entry = text.find("ENTRY");
  return ParseHloModule(text.substr(0, entry) +
                        std::regex_replace(text.substr(entry),
                                           std::regex("([^=])%([A-Za-z_][A-Za-z0-9_.]*)"),
                                           "$1%$2_e"));
}

// Compiles the entry root fusion of `text`, runs it over the splittings, compares with the
// evaluator and returns the kernel source (for pattern checks).
std::string CheckFusion(const std::string& text, double tol) {
  auto module = Parse(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  const HloInstruction* fusion = (*module)->entry_computation()->root_instruction();
  EXPECT_EQ(fusion->opcode(), HloOpcode::kFusion);
  auto src = EmitFusionKernel(*fusion, "k_test", KernelDialect::kCpp);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return "";
  const char* tmp = std::getenv("TEST_TMPDIR");
  setenv("ONEFLOW_LIKE_CACHE_DIR", absl::StrCat(tmp ? tmp : "/tmp", "/row_loop_kcache").c_str(), 1);
  auto lib = CompileAndLoadKernels(KernelPrelude(KernelDialect::kCpp) + src->code);
  EXPECT_TRUE(lib.ok()) << lib.status() << "\n" << src->code;
  if (!lib.ok()) return src->code;
  auto fn = (*lib)->Resolve("k_test");
  auto row_sym = (*lib)->Resolve("k_test_row");
  EXPECT_TRUE(fn.ok()) << src->code;
  if (!fn.ok()) return src->code;
  // Row kernels export their row length; per-element kernels (row 1) do not.
  EXPECT_EQ(row_sym.ok() ? *reinterpret_cast<const int64_t*>(*row_sym) : 1, src->row);

  std::vector<Literal> args;
  for (const HloInstruction* p : (*module)->entry_computation()->parameters())
    args.push_back(Random(p->shape(), 100 + p->parameter_number()));
  HloEvaluator ev;
  auto want = ev.Evaluate(**module, args);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return src->code;
  const std::vector<Literal> want_leaves = Leaves(*want);

  std::vector<std::vector<char>> in;
  for (const Literal& a : args) in.push_back(a.ToBytes());
  std::vector<std::vector<char>> reference;
  for (const auto& split : Splittings(src->num_elements, src->row)) {
    std::vector<std::vector<char>> out;
    std::vector<char*> ptrs;
    for (auto& b : in) ptrs.push_back(b.data());
    for (const Literal& w : want_leaves) out.push_back(std::vector<char>(w.ToBytes().size(), 0x5a));
    for (auto& b : out) ptrs.push_back(b.data());
    for (auto [b, e] : split) reinterpret_cast<KernelFn> (*fn)(ptrs.data(), b, e);
    if (reference.empty()) {
      reference = out;
      for (size_t k = 0; k < want_leaves.size(); ++k) {
        Literal got = Literal::FromBytes(want_leaves[k].shape, out[k].data());
        for (size_t i = 0; i < got.data.size(); ++i) {
          const double w = want_leaves[k].data[i], g = got.data[i];
          if (w == g || (std::isnan(w) && std::isnan(g))) continue;
          if (std::fabs(w - g) > tol * std::max(1.0, std::fabs(w))) {
            ADD_FAILURE() << (*module)->name() << " output " << k << " element " << i << ": want "
                          << w << " got " << g << "\n"
                          << src->code;
            return src->code;
          }
        }
      }
    } else {
      EXPECT_TRUE(out == reference) << (*module)->name() << ": a splitting into " << split.size()
                                    << " ranges changed the output\n"
                                    << src->code;
    }
  }
  return src->code;
}

bool Has(const std::string& code, const std::string& s) {
  return code.find(s) != std::string::npos;
}

StatusOr<KernelSource> EmitEntryFusion(const std::string& text, KernelDialect dialect) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, Parse(text));
  return EmitFusionKernel(*module->entry_computation()->root_instruction(), "k", dialect);
}

}  // namespace oneflow_like::hlo::testing
