// cpu::Sgemm against a float64 loop, for both implementations, over transposes, batches,
// broadcast operands, padded leading dims, alpha/beta and empty sums.
#include "device/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace oneflow_like::cpu {
namespace {

struct Case {
  bool ta, tb;
  int64_t batch, m, n, k;
  bool broadcast_b;
  int64_t pad;  // extra elements per row of every operand
  float alpha, beta;
};

void Check(const Case& t, GemmImpl impl) {
  GemmShape s;
  s.ta = t.ta, s.tb = t.tb, s.m = t.m, s.n = t.n, s.k = t.k;
  const int64_t arows = t.ta ? t.k : t.m, acols = t.ta ? t.m : t.k;
  const int64_t brows = t.tb ? t.n : t.k, bcols = t.tb ? t.k : t.n;
  s.lda = acols + t.pad, s.ldb = bcols + t.pad, s.ldc = t.n + t.pad;
  const int64_t sa = arows * s.lda, sb = t.broadcast_b ? 0 : brows * s.ldb;
  s.SetBatch(t.batch, sa, sb, t.m * s.ldc);
  std::mt19937 rng(static_cast<unsigned>(t.m * 131 + t.n * 7 + t.k + t.batch));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(t.batch * sa + 1), b((t.broadcast_b ? 1 : t.batch) * brows * s.ldb + 1),
      c(t.batch * s.c_batch_stride + 1);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  for (auto& x : c) x = u(rng);
  std::vector<float> c0 = c;
  ASSERT_TRUE(Sgemm(s, t.alpha, a.data(), b.data(), t.beta, c.data(), impl).ok());
  for (int64_t i = 0; i < t.batch; ++i)
    for (int64_t r = 0; r < t.m; ++r)
      for (int64_t j = 0; j < t.n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < t.k; ++p) {
          double x = a[i * sa + (t.ta ? p * s.lda + r : r * s.lda + p)];
          double y = b[i * sb + (t.tb ? j * s.ldb + p : p * s.ldb + j)];
          acc += x * y;
        }
        int64_t o = i * s.c_batch_stride + r * s.ldc + j;
        double want = t.alpha * acc + (t.beta == 0 ? 0.0 : t.beta * double(c0[o]));
        ASSERT_NEAR(c[o], want, 1e-4 * (1 + std::sqrt(double(t.k))))
            << GemmImplName(impl) << " batch " << i << " (" << r << ", " << j << ") m=" << t.m
            << " n=" << t.n << " k=" << t.k << " ta=" << t.ta << " tb=" << t.tb;
      }
  // Padding between rows is never written.
  for (int64_t i = 0; i < t.batch; ++i)
    for (int64_t r = 0; r < t.m; ++r)
      for (int64_t j = t.n; j < s.ldc; ++j)
        ASSERT_EQ(c[i * s.c_batch_stride + r * s.ldc + j],
                  c0[i * s.c_batch_stride + r * s.ldc + j]);
}

TEST(Sgemm, BothImplementationsMatchFloat64) {
  const Case cases[] = {
      {false, false, 1, 17, 23, 31, false, 0, 1.0f, 0.0f},
      {true, false, 3, 16, 40, 9, false, 0, 1.0f, 0.0f},
      {false, true, 4, 33, 8, 64, false, 3, 0.5f, 0.0f},
      {true, true, 2, 5, 7, 11, false, 1, 1.0f, 1.0f},
      {false, true, 32, 32, 32, 16, false, 0, 1.0f, 0.0f},
      {false, false, 5, 12, 20, 13, true, 0, 2.0f, 0.0f},
      {false, false, 3, 8, 9, 10, false, 0, 1.0f, 0.5f},
      {false, false, 2, 4, 5, 0, false, 0, 1.0f, 0.0f},
      {true, false, 2, 6, 3, 0, false, 2, 1.0f, 2.0f},
      // Row vector x matrix (the sgemv path), every transpose, padded, scaled, accumulating.
      {false, false, 1, 1, 300, 700, false, 0, 1.0f, 0.0f},
      {true, false, 1, 1, 70, 33, false, 3, 0.5f, 1.0f},
      {false, true, 3, 1, 2000, 600, false, 2, 1.0f, 0.0f},
      {true, true, 2, 1, 17, 9, false, 1, 2.0f, 0.5f},
  };
  for (const Case& t : cases)
    for (GemmImpl impl : {GemmImpl::kBlas, GemmImpl::kDnnl, GemmImpl::kAuto}) Check(t, impl);
}

// Attention's layout: [batch, seq, heads, dim] read as [batch, heads] products without a copy.
TEST(Sgemm, TwoBatchDimsWithViewStrides) {
  const int64_t B = 3, S = 9, H = 2, D = 5;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> q(B * S * H * D), k(B * S * H * D);
  for (auto& x : q) x = u(rng);
  for (auto& x : k) x = u(rng);
  for (GemmImpl impl : {GemmImpl::kBlas, GemmImpl::kDnnl}) {
    GemmShape s;  // scores[b, h] = q[b, :, h, :] @ k[b, :, h, :]^T
    s.tb = true, s.m = S, s.n = S, s.k = D, s.lda = H * D, s.ldb = H * D, s.ldc = S;
    s.batch = {B, H}, s.a_strides = {S * H * D, D}, s.b_strides = {S * H * D, D},
    s.c_batch_stride = S * S;
    std::vector<float> c(B * H * S * S, -7.0f);
    ASSERT_TRUE(Sgemm(s, 1.0f, q.data(), k.data(), 0.0f, c.data(), impl).ok());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t j = 0; j < S; ++j) {
            double want = 0;
            for (int64_t d = 0; d < D; ++d)
              want += double(q[((b * S + i) * H + h) * D + d]) * k[((b * S + j) * H + h) * D + d];
            ASSERT_NEAR(c[((b * H + h) * S + i) * S + j], want, 1e-5) << GemmImplName(impl);
          }
  }
}

TEST(Sgemm, MismatchedBatchStridesAreAnError) {
  GemmShape s;
  s.m = s.n = s.k = 2, s.lda = s.ldb = s.ldc = 2;
  s.batch = {2}, s.a_strides = {4};
  float a[8] = {}, b[8] = {}, c[8] = {};
  Status st = Sgemm(s, 1.0f, a, b, 0.0f, c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("matmul"), std::string::npos);
}

GemmShape Single(int64_t m, int64_t n, int64_t k, bool tb = false) {
  GemmShape s;
  s.tb = tb, s.m = m, s.n = n, s.k = k, s.lda = k, s.ldb = tb ? k : n, s.ldc = n;
  return s;
}

TEST(Sgemm, FixedRule) {
  GemmShape attn = Single(128, 128, 64, true);
  attn.SetBatch(32, 128 * 64, 128 * 64, 128 * 128);
  EXPECT_EQ(ChooseGemmImpl(attn), GemmImpl::kDnnl);  // batch of small products
  EXPECT_EQ(ChooseGemmImpl(Single(128, 1024, 1024, true)), GemmImpl::kDnnl);  // every dim >= 64
  EXPECT_EQ(ChooseGemmImpl(Single(128, 10, 1024, true)), GemmImpl::kBlas);    // thin output layer
  EXPECT_EQ(ChooseGemmImpl(Single(1, 2048, 1024)), GemmImpl::kBlas);          // row vector: sgemv
  EXPECT_EQ(ChooseGemmImpl(Single(64, 64, 64)), GemmImpl::kBlas);             // small
  GemmShape overlapping = Single(128, 128, 128);
  overlapping.SetBatch(4, 0, 0, 0);  // every product writes the same output: OpenBLAS, in order
  EXPECT_EQ(ChooseGemmImpl(overlapping), GemmImpl::kBlas);
}

TEST(Sgemm, AutotuneTimesBothAndRemembers) {
  GemmShape s = Single(256, 256, 256);
  std::vector<float> a(256 * 256, 0.5f), b(256 * 256, 0.25f), c(256 * 256, 0.0f);
  GemmImpl first = AutotuneGemm(s, a.data(), b.data());
  ASSERT_TRUE(first == GemmImpl::kBlas || first == GemmImpl::kDnnl);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(AutotuneGemm(s, a.data(), b.data()), first);
  ASSERT_TRUE(Sgemm(s, 1.0f, a.data(), b.data(), 0.0f, c.data(), first).ok());
  EXPECT_FLOAT_EQ(c[0], 256 * 0.125f);
  // Too small to time, or a row vector: the fixed rule.
  EXPECT_EQ(AutotuneGemm(Single(8, 8, 8), a.data(), b.data()), ChooseGemmImpl(Single(8, 8, 8)));
  EXPECT_EQ(AutotuneGemm(Single(1, 256, 256), a.data(), b.data()), GemmImpl::kBlas);
}

}  // namespace
}  // namespace oneflow_like::cpu
