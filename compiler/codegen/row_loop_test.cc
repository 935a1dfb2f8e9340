// The C++ dialect's row loops: fused modules written as IR text, each fusion's kernel JIT-compiled
// and run over many [begin, end) splittings (all must give identical bytes), compared with the
// reference evaluator; the kernel text is checked for the expected access pattern.
#include <cstdlib>
#include <random>
#include <regex>

#include "compiler/backends/cpu/cpu_jit.h"
#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/hlo_parser.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {
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
std::string CheckFusion(const std::string& text, double tol = 1e-5) {
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

TEST(RowLoopTest, BiasReluOddSizesBroadcastAlongRows) {
  std::string code = CheckFusion(R"(HloModule bias_relu
%fused (x: f32[37,53], b: f32[53]) -> f32[37,53] {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  %bb = f32[37,53] broadcast(%b), dimensions={1}
  %a = f32[37,53] add(%x, %bb)
  %z = f32[] constant(0)
  %zb = f32[37,53] broadcast(%z), dimensions={}
  ROOT %r = f32[37,53] maximum(%a, %zb)
}
ENTRY %e {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  ROOT %f = f32[37,53] fusion(%x, %b), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "p1[j]")) << code;
  EXPECT_TRUE(Has(code, "p0[(rb + j)]")) << code;
  EXPECT_TRUE(Has(code, "row = begin / 53")) << code;
}

TEST(RowLoopTest, ElementwiseOnlyIsOneFlatRow) {
  std::string code = CheckFusion(R"(HloModule flat
%fused (x: f32[7,11,3], y: f32[7,11,3]) -> f32[7,11,3] {
  %x = f32[7,11,3] parameter(0)
  %y = f32[7,11,3] parameter(1)
  %m = f32[7,11,3] multiply(%x, %y)
  ROOT %t = f32[7,11,3] tanh(%m)
}
ENTRY %e {
  %x = f32[7,11,3] parameter(0)
  %y = f32[7,11,3] parameter(1)
  ROOT %f = f32[7,11,3] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "row = begin / 231")) << code;
}

TEST(RowLoopTest, TransposeIsStridedInJ) {
  std::string code = CheckFusion(R"(HloModule transpose
%fused (x: f32[13,29], y: f32[29,13]) -> f32[29,13] {
  %x = f32[13,29] parameter(0)
  %t = f32[29,13] transpose(%x), dimensions={1,0}
  %y = f32[29,13] parameter(1)
  ROOT %r = f32[29,13] add(%t, %y)
}
ENTRY %e {
  %x = f32[13,29] parameter(0)
  %y = f32[29,13] parameter(1)
  ROOT %f = f32[29,13] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "j * 29")) << code;
}

// Attention's head merge, three times side by side (the backward of slicing q, k, v out of one
// projection): [b, h, s, d] -> [b*s, 3*h*d]. A row of the output crosses a head every d = 16
// elements, so the rows are 16 long and every access is affine (no division per element).
TEST(RowLoopTest, HeadMergeRowsStayInsideOneHead) {
  std::string code = CheckFusion(R"(HloModule head_merge
%fused (q: f32[2,4,8,16], k: f32[2,4,8,16], v: f32[2,4,8,16]) -> f32[16,192] {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  %qt = f32[2,8,4,16] transpose(%q), dimensions={0,2,1,3}
  %kt = f32[2,8,4,16] transpose(%k), dimensions={0,2,1,3}
  %vt = f32[2,8,4,16] transpose(%v), dimensions={0,2,1,3}
  %qr = f32[16,64] reshape(%qt)
  %kr = f32[16,64] reshape(%kt)
  %vr = f32[16,64] reshape(%vt)
  ROOT %c = f32[16,192] concatenate(%qr, %kr, %vr), dimensions={1}
}
ENTRY %e {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  ROOT %f = f32[16,192] fusion(%q, %k, %v), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "k_test_row = 16;")) << code;
  EXPECT_FALSE(Has(code, "const int64_t y")) << code;  // no per-element index variables
}

// The same merge written as the backward of three slices: a sum of zero-padded pieces.
TEST(RowLoopTest, PaddedHeadMergeRowsStayInsideOneHead) {
  std::string code = CheckFusion(R"(HloModule padded_head_merge
%fused (q: f32[2,4,8,16], k: f32[2,4,8,16], v: f32[2,4,8,16]) -> f32[16,192] {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  %z = f32[] constant(0)
  %qt = f32[2,8,4,16] transpose(%q), dimensions={0,2,1,3}
  %kt = f32[2,8,4,16] transpose(%k), dimensions={0,2,1,3}
  %vt = f32[2,8,4,16] transpose(%v), dimensions={0,2,1,3}
  %qr = f32[16,64] reshape(%qt)
  %kr = f32[16,64] reshape(%kt)
  %vr = f32[16,64] reshape(%vt)
  %qp = f32[16,192] pad(%qr, %z), padding=0_0x0_128
  %kp = f32[16,192] pad(%kr, %z), padding=0_0x64_64
  %vp = f32[16,192] pad(%vr, %z), padding=0_0x128_0
  %s = f32[16,192] add(%qp, %kp)
  ROOT %r = f32[16,192] add(%s, %vp)
}
ENTRY %e {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  ROOT %f = f32[16,192] fusion(%q, %k, %v), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "k_test_row = 16;")) << code;
  EXPECT_FALSE(Has(code, "const int64_t y")) << code;
}

TEST(RowLoopTest, BroadcastOverCollapsedTrailingBlockAndSizeOneDims) {
  std::string code = CheckFusion(R"(HloModule bcast
%fused (x: f32[6,4,5,5], b: f32[4,1,1]) -> f32[6,4,5,5] {
  %x = f32[6,4,5,5] parameter(0)
  %b = f32[4,1,1] parameter(1)
  %br = f32[4] reshape(%b)
  %bb = f32[6,4,5,5] broadcast(%br), dimensions={1}
  ROOT %r = f32[6,4,5,5] add(%x, %bb)
}
ENTRY %e {
  %x = f32[6,4,5,5] parameter(0)
  %b = f32[4,1,1] parameter(1)
  ROOT %f = f32[6,4,5,5] fusion(%x, %b), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "row = begin / 25")) << code;
  CheckFusion(R"(HloModule ones
%fused (x: f32[5,1,7,1], b: f32[7]) -> f32[5,1,7,1] {
  %x = f32[5,1,7,1] parameter(0)
  %b = f32[7] parameter(1)
  %bb = f32[5,1,7,1] broadcast(%b), dimensions={2}
  ROOT %r = f32[5,1,7,1] subtract(%x, %bb)
}
ENTRY %e {
  %x = f32[5,1,7,1] parameter(0)
  %b = f32[7] parameter(1)
  ROOT %f = f32[5,1,7,1] fusion(%x, %b), kind=kLoop, calls=%fused
})");
}

TEST(RowLoopTest, StridedSliceAndWrappingReshape) {
  std::string code = CheckFusion(R"(HloModule slice
%fused (x: f32[20,30], y: f32[6,15]) -> f32[6,15] {
  %x = f32[20,30] parameter(0)
  %s = f32[6,15] slice(%x), slice={[2:20:3], [1:30:2]}
  %y = f32[6,15] parameter(1)
  ROOT %r = f32[6,15] multiply(%s, %y)
}
ENTRY %e {
  %x = f32[20,30] parameter(0)
  %y = f32[6,15] parameter(1)
  ROOT %f = f32[6,15] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "j * 2")) << code;
  // transpose -> reshape: the reshape wraps inside a row (per-j index arithmetic).
  CheckFusion(R"(HloModule wrap
%fused (x: f32[3,8], y: f32[4,6]) -> f32[4,6] {
  %x = f32[3,8] parameter(0)
  %t = f32[8,3] transpose(%x), dimensions={1,0}
  %r = f32[4,6] reshape(%t)
  %y = f32[4,6] parameter(1)
  ROOT %a = f32[4,6] add(%r, %y)
}
ENTRY %e {
  %x = f32[3,8] parameter(0)
  %y = f32[4,6] parameter(1)
  ROOT %f = f32[4,6] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  // reshape splitting the inner dim, then transposing the pieces.
  CheckFusion(R"(HloModule heads
%fused (x: f32[2,5,12]) -> f32[2,3,5,4] {
  %x = f32[2,5,12] parameter(0)
  %r = f32[2,5,3,4] reshape(%x)
  %t = f32[2,3,5,4] transpose(%r), dimensions={0,2,1,3}
  ROOT %e = f32[2,3,5,4] exponential(%t)
}
ENTRY %e {
  %x = f32[2,5,12] parameter(0)
  ROOT %f = f32[2,3,5,4] fusion(%x), kind=kLoop, calls=%fused
})");
}

TEST(RowLoopTest, PadConcatIotaSelectConvert) {
  CheckFusion(R"(HloModule pad
%fused (x: f32[5,6]) -> f32[12,14] {
  %x = f32[5,6] parameter(0)
  %v = f32[] constant(-3)
  ROOT %p = f32[12,14] pad(%x, %v), padding=1_2_1x2_1_1
}
ENTRY %e {
  %x = f32[5,6] parameter(0)
  ROOT %f = f32[12,14] fusion(%x), kind=kLoop, calls=%fused
})");
  CheckFusion(R"(HloModule pad_outer
%fused (x: f32[5,6]) -> f32[9,6] {
  %x = f32[5,6] parameter(0)
  %v = f32[] constant(7)
  %p = f32[9,6] pad(%x, %v), padding=3_1x0_0
  ROOT %n = f32[9,6] negate(%p)
}
ENTRY %e {
  %x = f32[5,6] parameter(0)
  ROOT %f = f32[9,6] fusion(%x), kind=kLoop, calls=%fused
})");
  CheckFusion(R"(HloModule concat
%fused (x: f32[4,3], y: f32[4,5], z: f32[2,8]) -> f32[6,8] {
  %x = f32[4,3] parameter(0)
  %y = f32[4,5] parameter(1)
  %c = f32[4,8] concatenate(%x, %y), dimensions={1}
  %z = f32[2,8] parameter(2)
  ROOT %d = f32[6,8] concatenate(%c, %z), dimensions={0}
}
ENTRY %e {
  %x = f32[4,3] parameter(0)
  %y = f32[4,5] parameter(1)
  %z = f32[2,8] parameter(2)
  ROOT %f = f32[6,8] fusion(%x, %y, %z), kind=kLoop, calls=%fused
})");
  std::string code = CheckFusion(R"(HloModule iota
%fused (x: f32[9,10]) -> f32[9,10] {
  %x = f32[9,10] parameter(0)
  %i = s32[9,10] iota(), iota_dimension=1
  %k = s32[9,10] iota(), iota_dimension=0
  %s = s32[9,10] add(%i, %k)
  %c = f32[9,10] convert(%s)
  %h = f32[] constant(0.25)
  %hb = f32[9,10] broadcast(%h), dimensions={}
  %m = f32[9,10] multiply(%c, %hb)
  %g = pred[9,10] compare(%x, %m), direction=GT
  ROOT %r = f32[9,10] select(%g, %x, %m)
}
ENTRY %e {
  %x = f32[9,10] parameter(0)
  ROOT %f = f32[9,10] fusion(%x), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "row = begin / 10")) << code;
}

TEST(RowLoopTest, MultiOutputPredAndDouble) {
  CheckFusion(R"(HloModule multi
%fused (x: f64[9,17], b: f64[9]) -> (f64[9,17], pred[9,17], s32[9,17]) {
  %x = f64[9,17] parameter(0)
  %b = f64[9] parameter(1)
  %bb = f64[9,17] broadcast(%b), dimensions={0}
  %s = f64[9,17] add(%x, %bb)
  %g = pred[9,17] compare(%s, %x), direction=LT
  %c = s32[9,17] convert(%s)
  ROOT %t = (f64[9,17], pred[9,17], s32[9,17]) tuple(%s, %g, %c)
}
ENTRY %e {
  %x = f64[9,17] parameter(0)
  %b = f64[9] parameter(1)
  ROOT %f = (f64[9,17], pred[9,17], s32[9,17]) fusion(%x, %b), kind=kLoop, calls=%fused
})");
}

TEST(RowLoopTest, RowReductionsUseLanes) {
  std::string code = CheckFusion(R"(HloModule rowsum
%fused (x: f32[33,50], m: f32[33]) -> f32[33] {
  %x = f32[33,50] parameter(0)
  %m = f32[33] parameter(1)
  %mb = f32[33,50] broadcast(%m), dimensions={0}
  %s = f32[33,50] subtract(%x, %mb)
  %e = f32[33,50] exponential(%s)
  %one = f32[] constant(1.5)
  ROOT %r = f32[33] reduce(%e, %one), dimensions={1}, kind=add
}
ENTRY %e {
  %x = f32[33,50] parameter(0)
  %m = f32[33] parameter(1)
  ROOT %f = f32[33] fusion(%x, %m), kind=kInput, calls=%fused
})");
  EXPECT_TRUE(Has(code, "ln[lane]")) << code;
  CheckFusion(R"(HloModule rowmax
%fused (x: f32[4,5,19]) -> f32[5] {
  %x = f32[4,5,19] parameter(0)
  %ninf = f32[] constant(-inf)
  ROOT %r = f32[5] reduce(%x, %ninf), dimensions={0,2}, kind=max
}
ENTRY %e {
  %x = f32[4,5,19] parameter(0)
  ROOT %f = f32[5] fusion(%x), kind=kInput, calls=%fused
})");
  CheckFusion(R"(HloModule all
%fused (x: f64[7,9]) -> f64[] {
  %x = f64[7,9] parameter(0)
  %z = f64[] constant(0)
  ROOT %r = f64[] reduce(%x, %z), dimensions={0,1}, kind=add
}
ENTRY %e {
  %x = f64[7,9] parameter(0)
  ROOT %f = f64[] fusion(%x), kind=kInput, calls=%fused
})");
  CheckFusion(R"(HloModule isum
%fused (x: s32[6,40]) -> s32[6] {
  %x = s32[6,40] parameter(0)
  %z = s32[] constant(3)
  ROOT %r = s32[6] reduce(%x, %z), dimensions={1}, kind=add
}
ENTRY %e {
  %x = s32[6,40] parameter(0)
  ROOT %f = s32[6] fusion(%x), kind=kInput, calls=%fused
})");
}

TEST(RowLoopTest, ColumnReductionsKeepTheInnerDim) {
  std::string code = CheckFusion(R"(HloModule colsum
%fused (x: f32[50,333]) -> f32[333] {
  %x = f32[50,333] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[333] reduce(%x, %z), dimensions={0}, kind=add
}
ENTRY %e {
  %x = f32[50,333] parameter(0)
  ROOT %f = f32[333] fusion(%x), kind=kInput, calls=%fused
})");
  EXPECT_TRUE(Has(code, "acc[j - jt]")) << code;
  CheckFusion(R"(HloModule bias_grad
%fused (x: f32[4,6,10], y: f32[4,6,10]) -> f32[10] {
  %x = f32[4,6,10] parameter(0)
  %y = f32[4,6,10] parameter(1)
  %m = f32[4,6,10] multiply(%x, %y)
  %z = f32[] constant(0)
  ROOT %r = f32[10] reduce(%m, %z), dimensions={0,1}, kind=add
}
ENTRY %e {
  %x = f32[4,6,10] parameter(0)
  %y = f32[4,6,10] parameter(1)
  ROOT %f = f32[10] fusion(%x, %y), kind=kInput, calls=%fused
})");
  CheckFusion(R"(HloModule mid
%fused (x: f32[3,5,7]) -> f32[3,7] {
  %x = f32[3,5,7] parameter(0)
  %ninf = f32[] constant(-inf)
  %t = f32[3,5,7] tanh(%x)
  ROOT %r = f32[3,7] reduce(%t, %ninf), dimensions={1}, kind=min
}
ENTRY %e {
  %x = f32[3,5,7] parameter(0)
  ROOT %f = f32[3,7] fusion(%x), kind=kInput, calls=%fused
})");
}

TEST(RowLoopTest, ZeroSizeOperandsAndReducedDims) {
  CheckFusion(R"(HloModule empty_concat
%fused (x: f32[4,0], y: f32[4,5]) -> f32[4,5] {
  %x = f32[4,0] parameter(0)
  %y = f32[4,5] parameter(1)
  ROOT %c = f32[4,5] concatenate(%x, %y), dimensions={1}
}
ENTRY %e {
  %x = f32[4,0] parameter(0)
  %y = f32[4,5] parameter(1)
  ROOT %f = f32[4,5] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  CheckFusion(R"(HloModule empty_reduce
%fused (x: f32[0,6]) -> f32[6] {
  %x = f32[0,6] parameter(0)
  %z = f32[] constant(2)
  ROOT %r = f32[6] reduce(%x, %z), dimensions={0}, kind=add
}
ENTRY %e {
  %x = f32[0,6] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
})");
}

TEST(RowLoopTest, CudaDialectKeepsOneThreadPerElement) {
  auto module = Parse(R"(HloModule cuda
%fused (x: f32[37,53], b: f32[53]) -> f32[37,53] {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  %bb = f32[37,53] broadcast(%b), dimensions={1}
  ROOT %a = f32[37,53] add(%x, %bb)
}
ENTRY %e {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  ROOT %f = f32[37,53] fusion(%x, %b), kind=kLoop, calls=%fused
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto src = EmitFusionKernel(*(*module)->entry_computation()->root_instruction(), "k",
                              KernelDialect::kCuda);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(Has(src->code, "blockIdx.x")) << src->code;
  EXPECT_FALSE(Has(src->code, "row")) << src->code;
  EXPECT_EQ(src->row, 1);
}

}  // namespace
}  // namespace oneflow_like::hlo
