// HLO modules (IR text) that the GPU backend's tests compile: every fusion shape the fused-loop
// emitter covers (elementwise chains, broadcasts, transposes, slices, pads, concatenates, iota,
// reductions as roots, multi-output fusions) over f32/f64/s32/s64/u8/s8/pred, plus GEMMs.
#pragma once
#include <string>
#include <vector>

namespace oneflow_like::hlo::gpu_test {

struct TestModule {
  const char* name;
  const char* text;
  double tolerance;  // relative, against the double-precision evaluator
};

inline const std::vector<TestModule>& Modules() {
  static const std::vector<TestModule> kModules = {
      {"chain", R"(HloModule chain
ENTRY %e {
  %x = f32[41,67] parameter(0)
  %y = f32[41,67] parameter(1)
  %d = f32[41,67] subtract(%x, %y)
  %s = f32[41,67] logistic(%d)
  %c = f32[] constant(0.25)
  %cb = f32[41,67] broadcast(%c), dimensions={}
  %m = f32[41,67] multiply(%s, %cb)
  %mx = f32[41,67] maximum(%m, %y)
  ROOT %r = f32[41,67] exponential(%mx)
})",
       1e-5},
      {"reductions", R"(HloModule reductions
ENTRY %e {
  %x = f32[16,33,7] parameter(0)
  %z = f32[] constant(0)
  %one = f32[] constant(1)
  %ex = f32[16,33,7] exponential(%x)
  %rows = f32[16,33] reduce(%ex, %z), dimensions={2}, kind=add
  %cols = f32[33,7] reduce(%x, %z), dimensions={0}, kind=add
  %mid = f32[16,7] reduce(%x, %one), dimensions={1}, kind=mul
  %ninf = f32[] constant(-inf)
  %all = f32[] reduce(%x, %ninf), dimensions={0,1,2}, kind=max
  %inf = f32[] constant(inf)
  %mn = f32[33] reduce(%x, %inf), dimensions={0,2}, kind=min
  ROOT %t = (f32[16,33], f32[33,7], f32[16,7], f32[], f32[33]) tuple(%rows, %cols, %mid, %all, %mn)
})",
       1e-4},
      {"data_movement", R"(HloModule data_movement
ENTRY %e {
  %x = f32[5,8] parameter(0)
  %t = f32[8,5] transpose(%x), dimensions={1,0}
  %s = f32[4,5] slice(%t), slice={[1:8:2], [0:5]}
  %v = f32[] constant(3)
  %p = f32[7,9] pad(%s, %v), padding=0_0_1x1_3
  %i = s64[7,9] iota(), iota_dimension=0
  %c = f32[7,9] convert(%i)
  %cat = f32[7,18] concatenate(%c, %p), dimensions={1}
  %r = f32[126] reshape(%cat)
  %rr = f32[9,14] reshape(%r)
  ROOT %n = f32[9,14] abs(%rr)
})",
       0},
      {"transpose_3d_and_broadcasts", R"(HloModule transpose_3d
ENTRY %e {
  %x = f32[5,6,7] parameter(0)
  %b = f32[6] parameter(1)
  %t = f32[7,5,6] transpose(%x), dimensions={2,0,1}
  %bb = f32[7,5,6] broadcast(%b), dimensions={2}
  %m = f32[7,5,6] multiply(%t, %bb)
  %s = f32[3,5,2] slice(%m), slice={[1:7:2], [0:5], [2:6:2]}
  ROOT %o = f32[3,5,2] sqrt(%s)
})",
       1e-6},
      {"multi_output", R"(HloModule multi_output
ENTRY %e {
  %x = f32[128,9] parameter(0)
  %a = f32[128,9] exponential(%x)
  %b = f32[128,9] negate(%x)
  %c = f32[128,9] cosine(%x)
  ROOT %t = (f32[128,9], f32[128,9], f32[128,9]) tuple(%a, %b, %c)
})",
       1e-6},
      {"f64_math", R"(HloModule f64_math
ENTRY %e {
  %x = f64[300] parameter(0)
  %y = f64[300] parameter(1)
  %ax = f64[300] abs(%x)
  %two = f64[] constant(2)
  %tb = f64[300] broadcast(%two), dimensions={}
  %pos = f64[300] add(%ax, %tb)
  %l = f64[300] log(%pos)
  %l1 = f64[300] log-plus-one(%ax)
  %sq = f64[300] sqrt(%pos)
  %rs = f64[300] rsqrt(%pos)
  %sn = f64[300] sine(%x)
  %cs = f64[300] cosine(%y)
  %lg = f64[300] logistic(%y)
  %sg = f64[300] sign(%x)
  %fl = f64[300] floor(%y)
  %cl = f64[300] ceil(%y)
  %rn = f64[300] round-nearest-even(%y)
  %er = f64[300] erf(%x)
  %pw = f64[300] power(%pos, %y)
  %dv = f64[300] divide(%x, %pos)
  %mn = f64[300] minimum(%x, %y)
  %a1 = f64[300] add(%l, %l1)
  %a2 = f64[300] add(%a1, %sq)
  %a3 = f64[300] subtract(%a2, %rs)
  %a4 = f64[300] multiply(%a3, %sn)
  %a5 = f64[300] add(%a4, %cs)
  %a6 = f64[300] add(%a5, %lg)
  %a7 = f64[300] add(%a6, %sg)
  %a8 = f64[300] add(%a7, %fl)
  %a9 = f64[300] add(%a8, %cl)
  %b1 = f64[300] add(%a9, %rn)
  %b2 = f64[300] add(%b1, %er)
  %b3 = f64[300] add(%b2, %pw)
  %b4 = f64[300] add(%b3, %dv)
  ROOT %b5 = f64[300] add(%b4, %mn)
})",
       1e-12},
      {"integers", R"(HloModule integers
ENTRY %e {
  %x = s32[40,3] parameter(0)
  %y = s32[40,3] parameter(1)
  %one = s32[] constant(1)
  %ob = s32[40,3] broadcast(%one), dimensions={}
  %y1 = s32[40,3] add(%y, %ob)
  %q = s32[40,3] divide(%x, %y1)
  %m = s32[40,3] multiply(%x, %y)
  %s = s32[40,3] subtract(%q, %m)
  %n = s32[40,3] negate(%s)
  %a = s32[40,3] abs(%n)
  %sg = s32[40,3] sign(%s)
  %mx = s32[40,3] maximum(%a, %sg)
  %mn = s32[40,3] minimum(%mx, %y)
  %w = s64[40,3] convert(%mn)
  %big = s64[] constant(4294967296)
  %bb = s64[40,3] broadcast(%big), dimensions={}
  %wb = s64[40,3] add(%w, %bb)
  %z = s64[] constant(0)
  %rs = s64[40] reduce(%wb, %z), dimensions={1}, kind=add
  %d = f64[40,3] convert(%wb)
  ROOT %t = (s64[40], f64[40,3], s32[40,3]) tuple(%rs, %d, %q)
})",
       0},
      {"predicates", R"(HloModule predicates
ENTRY %e {
  %x = f32[20,10] parameter(0)
  %y = f32[20,10] parameter(1)
  %lt = pred[20,10] compare(%x, %y), direction=LT
  %ge = pred[20,10] compare(%x, %y), direction=GE
  %z = f32[] constant(0)
  %zb = f32[20,10] broadcast(%z), dimensions={}
  %pos = pred[20,10] compare(%x, %zb), direction=GT
  %ne = pred[20,10] compare(%y, %zb), direction=NE
  %and = pred[20,10] and(%lt, %pos)
  %or = pred[20,10] or(%ge, %ne)
  %not = pred[20,10] not(%and)
  %sel = f32[20,10] select(%not, %x, %y)
  %t = pred[] constant(true)
  %all = pred[20] reduce(%or, %t), dimensions={1}, kind=and
  %f = pred[] constant(false)
  %any = pred[10] reduce(%and, %f), dimensions={0}, kind=or
  %cv = f32[20,10] convert(%not)
  %o = f32[20,10] add(%sel, %cv)
  ROOT %r = (f32[20,10], pred[20], pred[10]) tuple(%o, %all, %any)
})",
       // Not exact: %o adds in f32 on the device while the evaluator's sum is double (seen on
       // the H200: 0.79489091038703918 vs its f32 rounding 0.7948908805847168).
       1e-7},
      {"small_ints", R"(HloModule small_ints
ENTRY %e {
  %x = u8[64] parameter(0)
  %y = s8[64] parameter(1)
  %xx = u8[64] add(%x, %x)
  %yy = s8[64] multiply(%y, %y)
  %nx = u8[64] not(%xx)
  %ny = s8[64] negate(%yy)
  %cx = s32[64] convert(%nx)
  %cy = s32[64] convert(%ny)
  %s = s32[64] add(%cx, %cy)
  %b = pred[64] convert(%s)
  ROOT %t = (s32[64], pred[64]) tuple(%s, %b)
})",
       0},
      {"nan_inf_constants", R"(HloModule nan_inf
ENTRY %e {
  %x = f32[50] parameter(0)
  %ninf = f32[] constant(-inf)
  %nb = f32[50] broadcast(%ninf), dimensions={}
  %m = f32[50] maximum(%x, %nb)
  %nan = f32[] constant(nan)
  %nanb = f32[50] broadcast(%nan), dimensions={}
  %mn = f32[50] minimum(%m, %nanb)
  %isnan = pred[50] compare(%mn, %mn), direction=NE
  %s = f32[50] select(%isnan, %m, %mn)
  ROOT %t = (f32[50], pred[50]) tuple(%s, %isnan)
})",
       0},
      {"mlp_step", R"(HloModule mlp_step
ENTRY %step {
  %in = f32[16,48] parameter(0)
  %wa = f32[48,96] parameter(1)
  %ba = f32[96] parameter(2)
  %wb = f32[96,12] parameter(3)
  %target = f32[16,12] parameter(4)
  %pre = f32[16,96] dot(%in, %wa), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bias = f32[16,96] broadcast(%ba), dimensions={1}
  %act_in = f32[16,96] add(%pre, %bias)
  %act = f32[16,96] tanh(%act_in)
  %pred = f32[16,12] dot(%act, %wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %err = f32[16,12] subtract(%pred, %target)
  %zero = f32[] constant(0)
  %abserr = f32[16,12] abs(%err)
  %l1 = f32[] reduce(%abserr, %zero), dimensions={0,1}, kind=add
  %gwb = f32[96,12] dot(%act, %err), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %gact = f32[16,96] dot(%err, %wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %a2 = f32[16,96] multiply(%act, %act)
  %one = f32[] constant(1)
  %ones = f32[16,96] broadcast(%one), dimensions={}
  %dtanh = f32[16,96] subtract(%ones, %a2)
  %gpre = f32[16,96] multiply(%gact, %dtanh)
  %gba = f32[96] reduce(%gpre, %zero), dimensions={0}, kind=add
  %gwa = f32[48,96] dot(%in, %gpre), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT %r = (f32[], f32[96,12], f32[96], f32[48,96]) tuple(%l1, %gwb, %gba, %gwa)
})",
       1e-4},
      {"batched_gemm_f64", R"(HloModule batched_gemm
ENTRY %e {
  %a = f64[3,5,7] parameter(0)
  %b = f64[3,9,7] parameter(1)
  %d = f64[3,5,9] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  ROOT %o = f64[3,5,9] tanh(%d)
})",
       1e-12},
      {"boundary_layouts", R"(HloModule boundary_layouts
ENTRY %e {
  %x = f32[5,7]{0,1} parameter(0)
  %y = f32[5,7] parameter(1)
  %a = f32[5,7] add(%x, %y)
  ROOT %t = f32[5,7]{0,1} exponential(%a)
})",
       1e-6},
      {"counter_hash", R"(HloModule counter_hash
ENTRY %e {
  %x = f32[5,33] parameter(0)
  %seed = s32[] parameter(1)
  %iota = s32[165] iota(), iota_dimension=0
  %idx = s32[5,33] reshape(%iota)
  %sb = s32[5,33] broadcast(%seed), dimensions={}
  %h0 = s32[5,33] xor(%idx, %sb)
  %c15 = s32[] constant(15)
  %s15 = s32[5,33] broadcast(%c15), dimensions={}
  %sh = s32[5,33] shift-right-logical(%h0, %s15)
  %x1 = s32[5,33] xor(%h0, %sh)
  %k = s32[] constant(-2073254261)
  %kb = s32[5,33] broadcast(%k), dimensions={}
  %h = s32[5,33] multiply(%x1, %kb)
  %t = s32[] constant(0)
  %tb = s32[5,33] broadcast(%t), dimensions={}
  %keep = pred[5,33] compare(%h, %tb), direction=GE
  %z = f32[] constant(0)
  %zb = f32[5,33] broadcast(%z), dimensions={}
  %out = f32[5,33] select(%keep, %x, %zb)
  ROOT %r = (f32[5,33], s32[5,33]) tuple(%out, %h)
})",
       0},
      {"aliased_outputs", R"(HloModule aliased_outputs
ENTRY %e {
  %x = f32[4] parameter(0)
  %c = f32[4] constant({1, 2, 3, 4})
  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%x, %c, %x)
})",
       0},
  };
  return kModules;
}

// The text of the module called `name` ("" if none).
inline std::string Find(const std::string& name) {
  for (const TestModule& m : Modules())
    if (name == m.name) return m.text;
  return "";
}

}  // namespace oneflow_like::hlo::gpu_test
