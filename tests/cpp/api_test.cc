// The C++ embedding API through its umbrella header only, linked against liboneflow_like.so
// (so every call also checks that the symbol is exported): each op family, autograd against
// finite differences, one test per error kind, nn/optim, graph artifacts from Python, threads.
#include <oneflow_like/oneflow_like.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "examples/cpp/npz.h"
#include "gtest/gtest.h"

namespace ofl = oneflow_like;
using ofl::Tensor;

namespace {

std::vector<double> Vec(const Tensor& t) {
  return t.to_vector<double>();
}

void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  std::vector<double> got = Vec(t);
  ASSERT_EQ(got.size(), want.size()) << t;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// Runs f, which must throw ofl::Error of `kind` whose message contains every `parts`.
void ExpectError(const std::function<void()>& f, ofl::Error::Kind kind,
                 const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const ofl::Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    return;
  }
  ADD_FAILURE() << "no oneflow_like::Error thrown";
}

TEST(Tensor, FactoriesShapesAndHostAccess) {
  Tensor a = ofl::ones({2, 3});
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.dtype(), ofl::kFloat32);
  EXPECT_TRUE(a.device().is_cpu());
  EXPECT_EQ(a.numel(), 6);
  EXPECT_EQ(a.size(-1), 3);
  ExpectNear(ofl::zeros({2}), {0, 0});
  ExpectNear(ofl::full({3}, 2.5, ofl::kFloat64), {2.5, 2.5, 2.5});
  Tensor r = ofl::arange(5);
  EXPECT_EQ(r.dtype(), ofl::kInt64);
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  ExpectNear(ofl::arange(1, 2, 0.25, ofl::kFloat32), {1, 1.25, 1.5, 1.75});
  ExpectNear(ofl::eye(2), {1, 0, 0, 1});
  EXPECT_EQ(ofl::scalar_tensor(4.5).item<float>(), 4.5f);
  EXPECT_EQ(ofl::scalar_tensor(3, ofl::kInt32).item<int64_t>(), 3);
  EXPECT_TRUE(ofl::ones({1}, ofl::kBool).item<bool>());
  EXPECT_TRUE(Tensor().str() == "tensor(undefined)");
}

TEST(Tensor, FromBlobSharesMemoryAndCloneCopies) {
  std::vector<float> buf{1, 2, 3, 4, 5, 6};
  bool freed = false;
  {
    Tensor t = ofl::from_blob(buf.data(), {2, 3}, ofl::kFloat32, [&](void*) { freed = true; });
    EXPECT_EQ(t.data<float>(), buf.data());  // no copy
    Tensor c = t.clone();
    buf[0] = 10;  // visible through the blob, not through the clone
    ExpectNear(t.sum(), {10 + 2 + 3 + 4 + 5 + 6});
    ExpectNear(c.sum(), {21});
    t.data<float>()[1] = 20;  // writes through data() are seen by later ops
    EXPECT_EQ(buf[1], 20);
    ExpectNear(t * 1.0, {10, 20, 3, 4, 5, 6});
  }
  ofl::synchronize();
  EXPECT_TRUE(freed);
  Tensor copied = ofl::from_data(buf.data(), {6}, ofl::kFloat32);
  buf[2] = -1;
  EXPECT_EQ(copied.to_vector<float>()[2], 3);
}

TEST(Tensor, ConversionsViewsAndPrinting) {
  Tensor x = ofl::arange(6, ofl::kFloat32).reshape({2, 3});
  Tensor t = x.t();
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 3}));
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  ExpectNear(c, {0, 3, 1, 4, 2, 5});
  EXPECT_EQ(x.to(ofl::kInt64).dtype(), ofl::kInt64);
  EXPECT_EQ(x.to(ofl::kFloat64).to_vector<double>()[5], 5.0);
  EXPECT_EQ(x.to(ofl::Device("cpu")).device(), ofl::Device(ofl::kCPU));
  ExpectNear(x[1], {3, 4, 5});
  ExpectNear(x.slice(1, 0, 3, 2), {0, 2, 3, 5});
  EXPECT_EQ(ofl::Device("cuda:1").str(), "cuda:1");
  EXPECT_EQ(std::string(ofl::dtype_name(ofl::kBFloat16)), "bfloat16");
  EXPECT_EQ(ofl::element_size(ofl::kFloat64), 8u);
}

// The dtypes appended after the complex ones: int16 (full support), uint16-64 and float8
// (casts, copies, printing).
TEST(Tensor, NewDtypes) {
  EXPECT_EQ(std::string(ofl::dtype_name(ofl::kInt16)), "int16");
  EXPECT_EQ(std::string(ofl::dtype_name(ofl::kFloat8_e4m3fn)), "float8_e4m3fn");
  EXPECT_EQ(ofl::element_size(ofl::kUInt64), 8u);
  EXPECT_EQ(ofl::element_size(ofl::kFloat8_e5m2), 1u);
  EXPECT_EQ(ofl::kShort, ofl::kInt16);
  Tensor x = ofl::arange(6, ofl::kFloat32) - 2.0;
  Tensor s = x.to(ofl::kInt16);
  EXPECT_EQ(s.dtype(), ofl::kInt16);
  EXPECT_EQ(s.to_vector<int16_t>(), (std::vector<int16_t>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ((s * s).to_vector<int16_t>(), (std::vector<int16_t>{4, 1, 0, 1, 4, 9}));
  EXPECT_EQ(s.to(ofl::kUInt16).to_vector<uint16_t>()[0], 65534);  // wraps, as torch
  EXPECT_EQ(x.to(ofl::kFloat8_e4m3fn).to_vector<float>(), (std::vector<float>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(s.str(), "tensor([-2, -1,  0,  1,  2,  3], dtype=oneflow_like.int16)");
}

// Printing gives Python's text (NumPy's array2string layout); the expected strings are what
// `print(...)` showed in Python for the same tensors.
TEST(Tensor, PrintsAsPython) {
  std::ostringstream os;
  os << ofl::tensor(std::vector<float>{1.5f, -2.f});
  EXPECT_EQ(os.str(), "tensor([ 1.5, -2. ])");
  EXPECT_EQ(ofl::arange(4).reshape({2, 2}).str(), "tensor([[0, 1],\n        [2, 3]])");
  EXPECT_EQ(ofl::ones({1}, ofl::kFloat64).requires_grad_().str(),
            "tensor([1.], dtype=oneflow_like.float64, requires_grad=True)");
  EXPECT_EQ(ofl::scalar_tensor(30).str(), "tensor(30.)");
  EXPECT_EQ((ofl::ones({2}).requires_grad_() * 2.0).sum().str(),
            "tensor(4., grad_fn=<SumBackward0>)");
  EXPECT_EQ((ofl::arange(30).to(ofl::kFloat32) / 3.0).str(),
            "tensor([0.        , 0.33333334, 0.6666667 , 1.        , 1.3333334 ,\n"
            "        1.6666667 , 2.        , 2.3333335 , 2.6666667 , 3.        ,\n"
            "        3.3333335 , 3.6666667 , 4.        , 4.3333335 , 4.666667  ,\n"
            "        5.        , 5.3333335 , 5.666667  , 6.        , 6.3333335 ,\n"
            "        6.666667  , 7.        , 7.3333335 , 7.666667  , 8.        ,\n"
            "        8.333334  , 8.666667  , 9.        , 9.333334  , 9.666667  ])");
  EXPECT_EQ(ofl::arange(25).str(),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n"
            "        17, 18, 19, 20, 21, 22, 23, 24])");
  EXPECT_EQ(ofl::tensor(std::vector<float>{0.1f, 100.f, NAN, -1.f}).reshape({2, 2}).str(),
            "tensor([[  0.1, 100. ],\n        [  nan,  -1. ]])");
  EXPECT_EQ(ofl::tensor(std::vector<double>{1e-5, 1.0}).str(),
            "tensor([1.e-05, 1.e+00], dtype=oneflow_like.float64)");
  EXPECT_EQ(ofl::zeros({2, 3, 1000}).str(),
            "tensor([[[0., 0., 0., ..., 0., 0., 0.],\n"
            "         [0., 0., 0., ..., 0., 0., 0.],\n"
            "         [0., 0., 0., ..., 0., 0., 0.]],\n\n"
            "        [[0., 0., 0., ..., 0., 0., 0.],\n"
            "         [0., 0., 0., ..., 0., 0., 0.],\n"
            "         [0., 0., 0., ..., 0., 0., 0.]]])");
  EXPECT_EQ(ofl::tensor(std::vector<int64_t>{1, 0}).to(ofl::kBool).str(), "tensor([ True, False])");
}

// ---- Op families.
TEST(Ops, UnaryTableOpsAreGenerated) {
  Tensor x = ofl::tensor(std::vector<double>{0.5, 1.0, 2.0});
  ExpectNear(ofl::exp(x), {std::exp(0.5), std::exp(1.0), std::exp(2.0)});
  ExpectNear(x.log(), {std::log(0.5), 0, std::log(2.0)});
  ExpectNear(ofl::sqrt(x), {std::sqrt(0.5), 1, std::sqrt(2.0)});
  ExpectNear(ofl::sigmoid(x),
             {1 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(-2.0))});
  ExpectNear(ofl::logit(ofl::tensor(std::vector<double>{0.0, 0.5}), {0.25}),
             {std::log(0.25 / 0.75), 0.0});  // attributes from the table (eps)
  Tensor y = ofl::tensor(std::vector<float>{-1, 2});
  y.relu_();
  ExpectNear(y, {0, 2});
  ofl::neg_(y);
  ExpectNear(y, {0, -2});
  ExpectNear(ofl::round(ofl::tensor(std::vector<float>{0.5f, 1.5f, 2.4f})), {0, 2, 2});
  ExpectNear(ofl::gelu(ofl::tensor(std::vector<double>{1.0})), {0.8413447460685429});
  ExpectNear(ofl::clamp(ofl::tensor(std::vector<float>{-3, 0, 3}), -1.0, 1.0), {-1, 0, 1});
  ExpectNear(ofl::leaky_relu(ofl::tensor(std::vector<float>{-1}), 0.1), {-0.1});
  ExpectNear(ofl::pow(ofl::tensor(std::vector<float>{3}), 2.0), {9});
  ExpectNear(ofl::pow(2.0, ofl::tensor(std::vector<float>{3})), {8});
}

// Bit patterns (NaN == NaN).
std::vector<uint64_t> Bits(const Tensor& t) {
  std::vector<double> v = Vec(t);
  std::vector<uint64_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(double));
  return b;
}

// Every op the table generates (api gen / gen_ip / fn_only in oneflow_like/opdefs/unary.def):
// the free function, the method and the in-place forms agree. A new table op is checked here
// without a new line.
TEST(Ops, EveryGeneratedTableOpAsFunctionMethodAndInPlace) {
  // In (0.1, 0.9): inside most domains; outside one (acosh) both forms give the same NaN bits.
  Tensor x = ofl::rand({5}, ofl::kFloat64) * 0.8 + 0.1;
  int checked = 0;
  // clang-format off
#define CHECK_gen(name)                                           \
  {                                                               \
    Tensor f = ofl::name(x);                                      \
    EXPECT_EQ(f.sizes(), x.sizes()) << #name;                     \
    EXPECT_EQ(Bits(f), Bits(x.name())) << #name;                    \
    ++checked;                                                    \
  }
#define CHECK_gen_ip(name)                                        \
  CHECK_gen(name) {                                               \
    Tensor c = x.clone();                                         \
    EXPECT_TRUE(ofl::name##_(c).same(c));                         \
    EXPECT_EQ(Bits(c), Bits(ofl::name(x))) << #name "_";            \
    Tensor d = x.clone();                                         \
    d.name##_();                                                  \
    EXPECT_EQ(Bits(d), Bits(c)) << "Tensor::" #name "_";            \
  }
#define CHECK_fn_only CHECK_gen_ip
#define CHECK_custom(name)
#define CHECK_special(name)                                       \
  {                                                               \
    EXPECT_EQ(ofl::name(x).sizes(), x.sizes()) << #name;          \
    ++checked;                                                    \
  }
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) CHECK_##api(name)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
  // clang-format on
  EXPECT_GE(checked, 20);
}

TEST(Ops, BinaryOperatorsAndComparisons) {
  Tensor a = ofl::tensor(std::vector<float>{1, 2, 3});
  Tensor b = ofl::tensor(std::vector<float>{4, 5, 6});
  ExpectNear(a + b, {5, 7, 9});
  ExpectNear(a - b, {-3, -3, -3});
  ExpectNear(a * b, {4, 10, 18});
  ExpectNear(b / a, {4, 2.5, 2});
  ExpectNear(2.0 - a, {1, 0, -1});
  ExpectNear(6.0 / a, {6, 3, 2});
  ExpectNear(-a + 1.0, {0, -1, -2});
  ExpectNear(a.add(b, 2.0), {9, 12, 15});
  ExpectNear(ofl::maximum(a, ofl::full({1}, 2.0)), {2, 2, 3});  // broadcasting
  EXPECT_EQ((a > ofl::full({1}, 1.5)).dtype(), ofl::kBool);
  ExpectNear((a > ofl::full({1}, 1.5)).to(ofl::kFloat32), {0, 1, 1});
  ExpectNear(ofl::where(a < b, a, b), {1, 2, 3});
  ExpectNear(ofl::addcmul(a, a, b, 0.5), {3, 7, 12});
  Tensor i = ofl::arange(3) + ofl::full({3}, 1.5);  // int64 + float32 -> float32
  EXPECT_EQ(i.dtype(), ofl::kFloat32);
  a += b;
  a *= 2.0;
  ExpectNear(a, {10, 14, 18});
}

TEST(Ops, ReductionsMatmulShapes) {
  Tensor x = ofl::arange(6, ofl::kFloat32).reshape({2, 3});
  ExpectNear(x.sum(), {15});
  ExpectNear(x.sum({1}), {3, 12});
  ExpectNear(x.mean({0}, true), {1.5, 2.5, 3.5});
  EXPECT_EQ(x.mean({0}, true).sizes(), (std::vector<int64_t>{1, 3}));
  ExpectNear(x.amax({1}), {2, 5});
  EXPECT_EQ(x.argmax(1).to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  ExpectNear(ofl::var(x, {1}), {1, 1});
  ExpectNear(ofl::logsumexp(ofl::zeros({2, 2}), {1}), {std::log(2.0), std::log(2.0)});
  ExpectNear(x.matmul(x.t()), {5, 14, 14, 50});
  ExpectNear(ofl::bmm(ofl::ones({2, 1, 3}), ofl::ones({2, 3, 1})), {3, 3});
  EXPECT_EQ(x.unsqueeze(0).sizes(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(0).squeeze(0).sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(x.permute({1, 0}).sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(x.reshape({-1}).sizes(), (std::vector<int64_t>{6}));
  ExpectNear(ofl::cat({x, x}, 0).sum(), {30});
  EXPECT_EQ(ofl::stack({x, x}, 0).sizes(), (std::vector<int64_t>{2, 2, 3}));
  ExpectNear(x.index_select(1, ofl::tensor(std::vector<int64_t>{2, 0})), {2, 0, 5, 3});
  ExpectNear(x.gather(1, ofl::tensor(std::vector<int64_t>{1, 0}).reshape({2, 1})), {1, 3});
  ExpectNear(ofl::one_hot(ofl::tensor(std::vector<int64_t>{1}), 3).to(ofl::kFloat32), {0, 1, 0});
}

TEST(Ops, NeuralNetworkFunctions) {
  Tensor logits = ofl::tensor(std::vector<double>{1, 2, 3}).reshape({1, 3});
  double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  ExpectNear(logits.softmax(1), {std::exp(1 - lse), std::exp(2 - lse), std::exp(3 - lse)});
  ExpectNear(logits.log_softmax(1), {1 - lse, 2 - lse, 3 - lse});
  Tensor target = ofl::tensor(std::vector<int64_t>{2});
  ExpectNear(ofl::cross_entropy(logits, target), {lse - 3});
  ExpectNear(ofl::nll_loss(logits.log_softmax(1), target), {lse - 3});
  ExpectNear(ofl::mse_loss(ofl::ones({2}), ofl::zeros({2})), {1});
  // conv2d of ones with a 3x3 ones kernel, padding 1: 4 at corners, 6 at edges, 9 inside.
  Tensor y = ofl::conv2d(ofl::ones({1, 1, 3, 3}), ofl::ones({1, 1, 3, 3}), Tensor(), {1}, {1});
  ExpectNear(y, {4, 6, 4, 6, 9, 6, 4, 6, 4});
  ExpectNear(ofl::max_pool2d(y, {2}, {1}), {9, 9, 9, 9});
  ExpectNear(ofl::avg_pool2d(ofl::ones({1, 1, 2, 2}), {2}), {1});
  ExpectNear(ofl::linear(ofl::ones({1, 2}), ofl::ones({3, 2}), ofl::ones({3})), {3, 3, 3});
  Tensor rm = ofl::zeros({2}), rv = ofl::ones({2});
  Tensor bn = ofl::batch_norm(ofl::arange(4, ofl::kFloat32).reshape({2, 2, 1, 1}), rm, rv, Tensor(),
                              Tensor(), true, 0.5, 0.0);
  ExpectNear(bn, {-1, -1, 1, 1});
  ExpectNear(rm, {0.5, 1.0});  // running stats updated in place: 0.5 * 0 + 0.5 * mean
  ExpectNear(ofl::layer_norm(ofl::tensor(std::vector<float>{1, 3}), {2}, Tensor(), Tensor(), 0.0),
             {-1, 1});
  ExpectNear(ofl::dropout(ofl::ones({4}), 0.5, false), {1, 1, 1, 1});
  Tensor d = ofl::dropout(ofl::ones({1000}), 0.5, true);
  double kept = d.sum().item<double>() / 2;  // each kept element is 2
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
  ExpectNear(ofl::embedding(ofl::tensor(std::vector<int64_t>{1}), ofl::eye(2)), {0, 1});
}

TEST(Ops, ShapeIndexAndStatistics) {
  Tensor x = ofl::arange(6, ofl::kFloat32).reshape({2, 3});
  EXPECT_EQ(ofl::expand(ofl::ones({1, 3}), {4, -1}).sizes(), (std::vector<int64_t>{4, 3}));
  ExpectNear(ofl::repeat(ofl::arange(2, ofl::kFloat32), {2}), {0, 1, 0, 1});
  ExpectNear(ofl::narrow(x, 1, 1, 2), {1, 2, 4, 5});
  ExpectNear(ofl::flip(x, {1}), {2, 1, 0, 5, 4, 3});
  ExpectNear(ofl::roll(ofl::arange(3, ofl::kFloat32), {1}, {0}), {2, 0, 1});
  ExpectNear(ofl::tril(ofl::ones({2, 2})), {1, 0, 1, 1});
  ExpectNear(ofl::triu(ofl::ones({2, 2}), 1), {0, 1, 0, 0});
  ExpectNear(ofl::pad(ofl::ones({2}), {1, 2}, "constant", 5.0), {5, 1, 1, 5, 5});
  std::vector<Tensor> parts = ofl::split(ofl::arange(5, ofl::kFloat32), 2);
  ASSERT_EQ(parts.size(), 3u);
  ExpectNear(parts[2], {4});
  EXPECT_EQ(ofl::chunk(x, 3, 1).size(), 3u);
  ExpectNear(ofl::unbind(x, 0)[1], {3, 4, 5});
  Tensor idx = ofl::tensor(std::vector<int64_t>{2, 0}).reshape({1, 2});
  ExpectNear(ofl::scatter(ofl::zeros({1, 3}), 1, idx, ofl::ones({1, 2})), {1, 0, 1});
  ExpectNear(ofl::scatter_add(ofl::ones({1, 3}), 1, idx, ofl::ones({1, 2})), {2, 1, 2});
  ExpectNear(
      ofl::index_add(ofl::zeros({3}), 0, ofl::tensor(std::vector<int64_t>{1, 1}), ofl::ones({2})),
      {0, 2, 0});
  ExpectNear(
      ofl::index_put(ofl::zeros({3}), {ofl::tensor(std::vector<int64_t>{2})}, ofl::full({1}, 7.0)),
      {0, 0, 7});
  Tensor mask = x > ofl::full({1}, 3.5);
  ExpectNear(ofl::masked_select(x, mask), {4, 5});
  EXPECT_EQ(ofl::nonzero(mask).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 2}));
  ExpectNear(ofl::std(ofl::tensor(std::vector<double>{1, 3})), {std::sqrt(2.0)});
  ExpectNear(ofl::norm(ofl::tensor(std::vector<double>{3, 4})), {5});
  auto [values, indices] = ofl::max(x, 1);
  ExpectNear(values, {2, 5});
  EXPECT_EQ(indices.to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  ExpectNear(ofl::min(x, 0).first, {0, 1, 2});
  ExpectNear(ofl::fmod(ofl::tensor(std::vector<float>{-3}), ofl::full({1}, 2.0)), {-1});
  EXPECT_EQ(ofl::bitwise_and(ofl::arange(4), ofl::full({1}, 1.0, ofl::kInt64)).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, 0, 1}));
  ExpectNear(ofl::hardtanh(ofl::tensor(std::vector<float>{-3, 0.5f, 3})), {-1, 0.5, 1});
}

TEST(Ops, MoreNeuralNetworkFunctions) {
  ExpectNear(
      ofl::group_norm(ofl::arange(4, ofl::kFloat32).reshape({1, 2, 2}), 1, Tensor(), Tensor(), 0.0)
          .sum(),
      {0}, 1e-5);
  ExpectNear(ofl::adaptive_avg_pool2d(ofl::arange(4, ofl::kFloat32).reshape({1, 1, 2, 2}), {1}),
             {1.5});
  ExpectNear(ofl::conv1d(ofl::ones({1, 1, 4}), ofl::ones({1, 1, 2})), {2, 2, 2});
  Tensor q = ofl::ones({1, 2, 4});
  Tensor v = ofl::arange(8, ofl::kFloat32).reshape({1, 2, 4});
  // Equal scores: each query averages the values.
  ExpectNear(ofl::scaled_dot_product_attention(q, q, v), {2, 3, 4, 5, 2, 3, 4, 5});
  ExpectNear(ofl::binary_cross_entropy_with_logits(ofl::zeros({2}), ofl::ones({2})),
             {std::log(2.0)});
}

TEST(Random, ManualSeedReproduces) {
  ofl::manual_seed(3);
  std::vector<float> a = ofl::randn({8}).to_vector<float>();
  ofl::manual_seed(3);
  std::vector<float> b = ofl::randn({8}).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, ofl::randn({8}).to_vector<float>());
  std::vector<int64_t> p = ofl::randperm(5).to_vector<int64_t>();
  std::sort(p.begin(), p.end());
  EXPECT_EQ(p, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  Tensor u = ofl::rand({1000});
  EXPECT_GE(u.amin().item<float>(), 0.f);
  EXPECT_LT(u.amax().item<float>(), 1.f);
  Tensor ri = ofl::randint(2, 5, {100});
  EXPECT_GE(ri.amin().item<int64_t>(), 2);
  EXPECT_LE(ri.amax().item<int64_t>(), 4);
}

// ---- Autograd.
// Central differences of scalar f at x (float64), against x.grad() from backward().
void CheckGradient(const std::function<Tensor(const Tensor&)>& f, std::vector<double> x0) {
  Tensor x = ofl::tensor(x0).requires_grad_();
  Tensor y = f(x);
  y.backward();
  std::vector<double> g = Vec(x.grad());
  ASSERT_EQ(g.size(), x0.size());
  const double h = 1e-6;
  ofl::NoGradGuard ng;
  for (size_t i = 0; i < x0.size(); ++i) {
    std::vector<double> p = x0, m = x0;
    p[i] += h;
    m[i] -= h;
    double fd = (f(ofl::tensor(p)).item<double>() - f(ofl::tensor(m)).item<double>()) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6 * (1 + std::abs(fd))) << "element " << i;
  }
}

TEST(Autograd, MatchesFiniteDifferences) {
  std::vector<double> x0{0.3, -1.2, 0.7, 2.0, -0.4, 1.1};
  CheckGradient([](const Tensor& x) { return (x.tanh() * x.sigmoid()).sum(); }, x0);
  CheckGradient(
      [](const Tensor& x) {
        Tensor m = x.reshape({2, 3});
        return m.matmul(m.t()).softmax(1).log().mean();
      },
      x0);
  CheckGradient(
      [](const Tensor& x) {
        Tensor logits = x.reshape({2, 3});
        return ofl::cross_entropy(logits, ofl::tensor(std::vector<int64_t>{2, 0}));
      },
      x0);
  CheckGradient([](const Tensor& x) { return ofl::gelu(x).pow(2.0).sum() / x.exp().sum(); }, x0);
  // conv2d, batch norm (training statistics) and max pooling, through the same check.
  CheckGradient(
      [](const Tensor& x) {
        Tensor img = x.reshape({1, 1, 2, 3});
        Tensor w = ofl::arange(4, ofl::kFloat64).reshape({1, 1, 2, 2}) - 1.5;
        Tensor y = ofl::conv2d(img, w, Tensor(), {1}, {1});
        Tensor bn = ofl::batch_norm(y, Tensor(), Tensor(), Tensor(), Tensor(), true);
        return (ofl::max_pool2d(bn, {2}) * ofl::tanh(ofl::max_pool2d(y, {2}))).sum();
      },
      x0);
}

TEST(Nn, SmallCnnLearns) {
  ofl::manual_seed(1);
  ofl::nn::Sequential cnn(ofl::nn::Conv2d(1, 4, 3, 1, 1), ofl::nn::BatchNorm2d(4), ofl::nn::ReLU(),
                          ofl::nn::MaxPool2d(2), ofl::nn::Flatten(), ofl::nn::Linear(16, 2));
  // Class 1 images are bright on the left half, class 0 on the right.
  Tensor left = ofl::cat({ofl::ones({8, 1, 4, 2}), ofl::zeros({8, 1, 4, 2})}, 3);
  Tensor x = ofl::cat({left, ofl::flip(left, {3})}, 0) + ofl::randn({16, 1, 4, 4}) * 0.1;
  Tensor y = ofl::cat({ofl::ones({8}, ofl::kInt64), ofl::zeros({8}, ofl::kInt64)}, 0);
  ofl::optim::Adam opt(cnn.parameters(), {0.02});
  float first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    Tensor loss = ofl::cross_entropy(cnn(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, 0.1f * first) << first << " -> " << last;
  cnn.eval();
  EXPECT_EQ(cnn(x).argmax(1).to_vector<int64_t>(), y.to_vector<int64_t>());
}

TEST(Autograd, GradNoGradGuardAndLeaves) {
  Tensor w = ofl::ones({2}).requires_grad_();
  EXPECT_TRUE(w.is_leaf());
  Tensor y = (w * 3.0).sum();
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.requires_grad());
  y.backward();
  ExpectNear(w.grad(), {3, 3});
  (w * 2.0).sum().backward();  // accumulates
  ExpectNear(w.grad(), {5, 5});
  w.set_grad(Tensor());
  EXPECT_FALSE(w.grad().defined());
  {
    ofl::NoGradGuard ng;
    EXPECT_FALSE(ofl::is_grad_enabled());
    EXPECT_FALSE((w * 2.0).requires_grad());
  }
  EXPECT_TRUE(ofl::is_grad_enabled());
  std::vector<Tensor> g = ofl::grad({(w * w).sum()}, {w});
  ExpectNear(g[0], {2, 2});
  EXPECT_FALSE(w.grad().defined());  // grad() leaves .grad alone
  ExpectError([] { ofl::ones({2}).sum().backward(); }, ofl::Error::Kind::kRuntime,
              {"[backward]", "does not require grad"});  // RuntimeError, as torch
}

// ---- One test per error kind: the message is Python's (op, shapes, dtypes, devices).
TEST(Errors, ShapeMismatch) {
  ExpectError(
      [] {
        ofl::ones({2, 3}) + ofl::ones({4});
      },
      ofl::Error::Kind::kValue, {"[add]", "[2,3]", "[4]"});
  ExpectError(
      [] {
        ofl::ones({3, 8}).matmul(ofl::ones({5, 8}));
      },
      ofl::Error::Kind::kValue, {"[matmul]", "f32[3,8]", "f32[5,8]"});
  ExpectError([] { ofl::ones({2}).reshape({3}); }, ofl::Error::Kind::kValue, {"reshape"});
}

TEST(Errors, Dtype) {
  ExpectError([] { ofl::gelu(ofl::arange(3)); }, ofl::Error::Kind::kType, {"[gelu]", "s64[3]"});
  ExpectError(
      [] {
        ofl::Tensor t = ofl::arange(3);
        ofl::exp_(t);  // exp(t) computes in float32, as in PyTorch; in place it cannot
      },
      ofl::Error::Kind::kType, {"[exp_]", "s64[3]"});
  ExpectError([] { ofl::arange(3).requires_grad_(); }, ofl::Error::Kind::kType,
              {"requires_grad", "s64[3]"});
  ExpectError([] { ofl::ones({2}).data<double>(); }, ofl::Error::Kind::kType,
              {"[data]", "float64", "f32[2]"});
}

TEST(Errors, Device) {
  if (!ofl::cuda_is_available()) {
    // No GPU: asking for one fails with a message naming the device; the CPU keeps working.
    ExpectError([] { ofl::ones({2}, ofl::Device(ofl::kCUDA, 0)).sum().item<float>(); },
                ofl::Error::Kind::kRuntime, {"cuda"});
  } else {
    Tensor g = ofl::ones({2}, ofl::Device(ofl::kCUDA, 0));
    ExpectError([&] { ofl::ones({2}) + g; }, ofl::Error::Kind::kValue, {"[add]", "cuda:0", "cpu"});
    ExpectError([&] { g.data<float>(); }, ofl::Error::Kind::kValue, {"[data]", "cuda:0"});
    ExpectNear(g.cpu() * 2.0, {2, 2});
  }
  ExpectError([] { ofl::Device("tpu"); }, ofl::Error::Kind::kValue, {"tpu"});
  ExpectNear(ofl::ones({1}) * 3.0, {3});
}

TEST(Errors, BadIndexFoundInAKernelRaisesAtSyncAndRuntimeRecovers) {
  Tensor bad = ofl::index_select(ofl::ones({3, 2}), 0, ofl::tensor(std::vector<int64_t>{0, 7}));
  ExpectError([&] { bad.to_vector<float>(); }, ofl::Error::Kind::kIndex, {"index_select", "7"});
  ExpectError([&] { bad.sum().item<float>(); }, ofl::Error::Kind::kIndex, {"index_select"});
  Tensor bad2 = ofl::gather(ofl::ones({2, 3}), 1,
                            ofl::tensor(std::vector<int64_t>{0, 7, 1, 2}).reshape({2, 2}));
  (void)bad2;
  ExpectError([] { ofl::synchronize(); }, ofl::Error::Kind::kIndex, {"gather"});
  ofl::synchronize();                        // reported once
  ExpectNear(ofl::ones({2}) + 1.0, {2, 2});  // still usable
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST(Errors, FileNotFound) {
  ExpectError([] { ofl::Graph::Load("/nonexistent/model.oflx"); }, ofl::Error::Kind::kNotFound,
              {"/nonexistent/model.oflx", "no such file"});
}

TEST(Errors, CorruptArtifact) {
  std::string path = TempPath("corrupt.oflx");
  {
    std::ofstream f(path, std::ios::binary);
    f << "this is not an artifact, just some bytes of text padding it out to a header size....";
  }
  ExpectError([&] { ofl::Graph::Load(path); }, ofl::Error::Kind::kValue, {path});
  // A real artifact with one payload byte flipped: the checksum catches it.
  std::ifstream in("tests/testdata/artifacts/2/mlp_infer.oflx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() / 2] ^= 0x5a;
  std::string flipped = TempPath("flipped.oflx");
  std::ofstream(flipped, std::ios::binary) << bytes;
  ExpectError([&] { ofl::Graph::Load(flipped); }, ofl::Error::Kind::kValue, {flipped});
}

// ---- nn and optim.
TEST(Nn, NamedParametersTrainEvalAndTo) {
  ofl::nn::Sequential model(ofl::nn::Linear(4, 8), ofl::nn::ReLU(), ofl::nn::Dropout(0.1),
                            ofl::nn::Linear(8, 3));
  std::vector<std::string> names;
  for (auto& [n, p] : model.named_parameters()) {
    names.push_back(n);
    EXPECT_TRUE(p.requires_grad());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias"}));
  EXPECT_EQ(model.parameters()[2].sizes(), (std::vector<int64_t>{3, 8}));
  double bound = 1 / std::sqrt(4.0);
  EXPECT_LE(model.parameters()[0].abs().amax().item<float>(), bound);
  EXPECT_EQ(model(ofl::ones({5, 4})).sizes(), (std::vector<int64_t>{5, 3}));
  model.eval();
  EXPECT_FALSE(model[2].is_training());
  Tensor a = model(ofl::ones({2, 4})), b = model(ofl::ones({2, 4}));
  ExpectNear(a, Vec(b), 0);  // dropout off in eval
  model.to(ofl::Device(ofl::kCPU));
  ofl::nn::Sequential copy(model);  // a value copy: the same children and tensors
  ASSERT_EQ(copy.size(), 4u);
  EXPECT_TRUE(copy.parameters()[0].same(model.parameters()[0]));
  EXPECT_NE(model.name().find("Linear(in_features=4, out_features=8, bias=True)"),
            std::string::npos);

  ofl::nn::Sequential cnn(ofl::nn::Conv2d(1, 4, 3, 1, 1), ofl::nn::BatchNorm2d(4), ofl::nn::ReLU(),
                          ofl::nn::MaxPool2d(2), ofl::nn::Flatten(), ofl::nn::Linear(16, 2));
  EXPECT_EQ(cnn(ofl::randn({3, 1, 4, 4})).sizes(), (std::vector<int64_t>{3, 2}));
  auto buffers = cnn.named_buffers();
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].first, "1.running_mean");
  EXPECT_NE(buffers[0].second.abs().sum().item<float>(), 0.f);  // updated while training
}

// A user-defined module with children, as a C++ user writes one.
struct TwoLayer : ofl::nn::Module {
  std::shared_ptr<ofl::nn::Linear> fc1 = std::make_shared<ofl::nn::Linear>(2, 16);
  std::shared_ptr<ofl::nn::Linear> fc2 = std::make_shared<ofl::nn::Linear>(16, 2);
  TwoLayer() {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  Tensor forward(const Tensor& x) override { return (*fc2)(ofl::relu((*fc1)(x))); }
  std::string name() const override { return "TwoLayer"; }
};

float TrainXor(ofl::optim::Optimizer& opt, TwoLayer& model) {
  Tensor x = ofl::tensor(std::vector<float>{0, 0, 0, 1, 1, 0, 1, 1}).reshape({4, 2});
  Tensor y = ofl::tensor(std::vector<int64_t>{0, 1, 1, 0});
  float loss = 0;
  for (int step = 0; step < 300; ++step) {
    Tensor l = ofl::cross_entropy(model(x), y);
    opt.zero_grad();
    l.backward();
    opt.step();
    loss = l.item<float>();
  }
  return loss;
}

TEST(Optim, SgdAndAdamLearnXor) {
  ofl::manual_seed(0);
  TwoLayer m1;
  EXPECT_EQ(m1.named_parameters()[2].first, "fc2.weight");
  ofl::optim::SGD sgd(m1.parameters(), ofl::optim::SGDOptions{0.5, 0.9});
  EXPECT_LT(TrainXor(sgd, m1), 0.05f);
  TwoLayer m2;
  ofl::optim::Adam adam(m2.parameters(), ofl::optim::AdamOptions{0.05});
  EXPECT_LT(TrainXor(adam, m2), 0.05f);
  ExpectError([] { ofl::optim::SGD(std::vector<Tensor>{ofl::ones({1})}, 0.1); },
              ofl::Error::Kind::kValue, {"requires grad"});
}

TEST(Optim, AdamMatchesTheFormula) {
  Tensor p = ofl::tensor(std::vector<double>{1.0}).requires_grad_();
  ofl::optim::Adam adam({p}, ofl::optim::AdamOptions{0.1, 0.9, 0.999, 1e-8, 0.0});
  double m = 0, v = 0, w = 1.0;
  for (int t = 1; t <= 3; ++t) {
    adam.zero_grad();
    (p * p).sum().backward();  // g = 2p
    adam.step();
    double g = 2 * w;
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    w -= 0.1 / (1 - std::pow(0.9, t)) * m /
         (std::sqrt(v) / std::sqrt(1 - std::pow(0.999, t)) + 1e-8);
    EXPECT_NEAR(p.item<double>(), w, 1e-12);
  }
}

// ---- Graph artifacts exported from Python (the frozen files of tests/testdata/artifacts).
Tensor FromNpz(const npz::Array& a) {
  ofl::Dtype dt = a.descr == "<f4" ? ofl::kFloat32 : a.descr == "<f8" ? ofl::kFloat64 : ofl::kInt64;
  return ofl::from_data(a.bytes.data(), a.shape, dt);
}

// The frozen results were recorded by Python on the machine that wrote them; another CPU may
// pick other oneDNN/OpenBLAS kernels (ISA), so results agree to the frozen tests' tolerance
// (rtol 1e-5, as tests/python/test_artifact_frozen.py), not bit for bit.
TEST(Graph, InferenceMatchesPython) {
  for (const std::string model : {"mlp", "cnn", "transformer"}) {
    std::string base = "tests/testdata/artifacts/2/" + model + "_infer";
    auto arrays = npz::Load(base + ".npz");
    ofl::Graph g = ofl::Graph::Load(base + ".oflx");
    EXPECT_FALSE(g.training());
    EXPECT_EQ(g.input_names().size(), 1u);
    std::vector<Tensor> out = g.Run({FromNpz(arrays["x"])});
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> got = out[0].to_vector<float>();
    const npz::Array& y = arrays["y"];
    ASSERT_EQ(got.size(), static_cast<size_t>(y.numel()));
    std::vector<float> want(got.size());
    std::memcpy(want.data(), y.bytes.data(), y.bytes.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-6 + 1e-5 * std::abs(want[i])) << model << " element " << i;
  }
  ofl::Graph g = ofl::Graph::Load("tests/testdata/artifacts/2/mlp_infer.oflx");
  ExpectError([&] { g.Run({}); }, ofl::Error::Kind::kValue, {"expected 1 tensor inputs"});
  ExpectError([&] { g.Run({ofl::ones({16, 5})}); }, ofl::Error::Kind::kValue, {"[16,5]"});
}

TEST(Graph, TrainingStepsMatchPythonLosses) {
  for (const std::string model : {"mlp", "cnn"}) {
    std::string base = "tests/testdata/artifacts/2/" + model + "_train";
    auto arrays = npz::Load(base + ".npz");
    ofl::Graph g = ofl::Graph::Load(base + ".oflx");
    EXPECT_TRUE(g.training());
    EXPECT_FALSE(g.named_tensors().empty());
    Tensor xs = FromNpz(arrays["x"]), ys = FromNpz(arrays["y"]);
    std::vector<double> losses(arrays["losses"].numel());
    std::memcpy(losses.data(), arrays["losses"].bytes.data(), losses.size() * 8);
    for (size_t s = 0; s < losses.size(); ++s) {  // each run steps the optimizer in place
      std::vector<Tensor> out = g.Run({xs[s], ys[s]});
      EXPECT_NEAR(out[0].item<float>(), losses[s], 1e-5 * std::abs(losses[s]))
          << model << " step " << s;
    }
  }
}

// ---- Threads: independent tensors used from two threads give the single-thread results.
TEST(Threads, IndependentTensorsFromTwoThreads) {
  auto work = [](int seed) {
    Tensor w = ofl::full({16, 16}, 0.01 * seed).requires_grad_();
    Tensor x = ofl::arange(16 * 16, ofl::kFloat32).reshape({16, 16}) / 256.0;
    double total = 0;
    for (int i = 0; i < 50; ++i) {
      Tensor loss = ofl::tanh(x.matmul(w)).sum();
      loss.backward();
      total += loss.item<float>() + w.grad().sum().item<float>();
      w.set_grad(Tensor());
    }
    return total;
  };
  double want1 = work(1), want2 = work(2);
  double got1 = 0, got2 = 0;
  std::thread t1([&] { got1 = work(1); });
  std::thread t2([&] { got2 = work(2); });
  t1.join();
  t2.join();
  EXPECT_EQ(got1, want1);
  EXPECT_EQ(got2, want2);
}

}  // namespace
