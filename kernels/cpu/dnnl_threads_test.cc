// oneDNN primitives are cached per shape and run on whichever thread executes the instruction (a
// VM worker, or the issuing thread inline). Each run must bring its own scratchpad: oneDNN's
// library-managed one is thread-local and sized on the thread that created the primitive, so a
// primitive created on one thread and run on a fresh one used to read a missing scratchpad (a
// segfault, seen in CI as a flaky crash of test_graph's grouped, dilated conv cases).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "device/cpu/gemm.h"
#include "kernels/kernel.h"

namespace oneflow_like {
namespace kernels {
// The CPU device layer (device/cpu): GEMM and oneDNN convolution helpers.
using cpu::GemmImpl;
using cpu::GemmShape;
using cpu::Sgemm;
namespace {

template <typename T>
std::vector<T> Fill(int64_t n, double scale) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(scale * std::sin(0.37 * i + 0.1));
  return v;
}

// Runs `op` (conv2d: x, w -> y; conv2d_grad_input: dy, w -> dx; conv2d_grad_weight: dy, x -> dw)
// for a grouped, strided, dilated, padded geometry whose oneDNN primitives need a scratchpad.
template <typename T>
std::vector<T> RunConv(const char* op) {
  const Shape xs{2, 4, 9, 8}, ws{6, 2, 3, 3}, ys{2, 6, 5, 6};
  const DType dt = std::is_same<T, float>::value ? DType::kF32 : DType::kF64;
  AttrMap attrs{{"stride", std::vector<int64_t>{2, 1}},
                {"padding", std::vector<int64_t>{2, 1}},
                {"dilation", std::vector<int64_t>{2, 2}},
                {"groups", int64_t{2}}};
  std::vector<T> x = Fill<T>(xs.numel(), 1.0), w = Fill<T>(ws.numel(), 0.5),
                 dy = Fill<T>(ys.numel(), 0.25);
  auto view = [&](std::vector<T>& v, const Shape& s) {
    return TensorView{v.data(), dt, s, ContiguousStrides(s)};
  };
  std::vector<TensorView> in;
  Shape out_shape;
  const std::string name = op;
  if (name == "conv2d") {
    in = {view(x, xs), view(w, ws)}, out_shape = ys;
  } else if (name == "conv2d_grad_input") {
    in = {view(dy, ys), view(w, ws)}, out_shape = xs;
  } else {
    in = {view(dy, ys), view(x, xs)}, out_shape = ws;
  }
  std::vector<T> out(out_shape.numel(), T(-7));
  std::vector<TensorView> o{view(out, out_shape)};
  KernelContext ctx(op, Device::CPU(), attrs, in, o, nullptr);
  auto fn = FindKernel(op, DeviceType::kCPU);
  EXPECT_TRUE(fn.ok()) << op;
  Status s = (*fn)(ctx);
  EXPECT_TRUE(s.ok()) << op << ": " << s.ToString();
  return out;
}

TEST(DnnlThreads, ConvPrimitivesRunOnThreadsOtherThanTheirCreator) {
  for (const char* op : {"conv2d", "conv2d_grad_input", "conv2d_grad_weight"}) {
    const std::vector<double> want = RunConv<double>(op);  // im2col + GEMM in float64
    const std::vector<float> first = RunConv<float>(op);   // creates the oneDNN primitives
    for (int t = 0; t < 3; ++t) {
      std::vector<float> got;
      std::thread([&] { got = RunConv<float>(op); }).join();  // a fresh thread each time
      ASSERT_EQ(got, first) << op << " on thread " << t;
    }
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(first[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << op << " at " << i;
  }
}

TEST(DnnlThreads, MatmulPrimitivesRunOnThreadsOtherThanTheirCreator) {
  // Shapes oneDNN's matmul packs (it needs a scratchpad for them).
  for (int64_t m : {64, 257}) {
    GemmShape g;
    g.m = m, g.n = 96, g.k = 300, g.lda = g.k, g.ldb = g.n, g.ldc = g.n;
    std::vector<float> a = Fill<float>(g.m * g.k, 1.0), b = Fill<float>(g.k * g.n, 0.5);
    auto run = [&] {
      std::vector<float> c(g.m * g.n, 0.0f);
      Status s = Sgemm(g, 1.0f, a.data(), b.data(), 0.0f, c.data(), GemmImpl::kDnnl);
      EXPECT_TRUE(s.ok()) << s.ToString();
      return c;
    };
    const std::vector<float> first = run();
    for (int t = 0; t < 3; ++t) {
      std::vector<float> got;
      std::thread([&] { got = run(); }).join();
      ASSERT_EQ(got, first) << "m=" << m << " on thread " << t;
    }
    for (int64_t i = 0; i < g.m; i += 37)
      for (int64_t j = 0; j < g.n; j += 11) {
        double want = 0;
        for (int64_t k = 0; k < g.k; ++k) want += double(a[i * g.k + k]) * b[k * g.n + j];
        ASSERT_NEAR(first[i * g.n + j], want, 1e-3 * (1 + std::abs(want)));
      }
  }
}

}  // namespace
}  // namespace kernels
}  // namespace oneflow_like
