// Raw Gloo all-reduce timing, the baseline of benchmarks/bench_distributed.py: the same rendezvous
// (distributed::TcpStore), the same transport and the same float sum as the process group, but
// no VM, no signature check, no Python. Usage: gloo_allreduce_bench RANK WORLD PORT ITERS BYTES...
// Prints "BYTES SECONDS" per size on rank 0: the fastest of ITERS all-reduces.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "distributed/tcp_store.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/rendezvous/context.h"
#include "gloo/transport/tcp/device.h"

int main(int argc, char** argv) {
  using namespace oneflow_like::distributed;
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s RANK WORLD PORT ITERS BYTES...\n", argv[0]);
    return 2;
  }
  const int rank = std::atoi(argv[1]), world = std::atoi(argv[2]), port = std::atoi(argv[3]);
  const int iters = std::atoi(argv[4]);
  auto store = TcpStore::Create("127.0.0.1", port, rank == 0, std::chrono::seconds(60));
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, world);
  ctx->setTimeout(std::chrono::seconds(60));
  ctx->connectFullMesh(**store, device);
  uint32_t tag = 1;
  auto sum = [](void* o, const void* a, const void* b, size_t n) {
    float* out = static_cast<float*>(o);
    const float* x = static_cast<const float*>(a);
    const float* y = static_cast<const float*>(b);
    for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
  };
  for (int i = 5; i < argc; ++i) {
    const size_t bytes = std::strtoull(argv[i], nullptr, 10);
    std::vector<float> buf(bytes / 4, 1.0f);
    auto run = [&] {
      gloo::AllreduceOptions o(ctx);
      o.setOutput<float>(buf.data(), buf.size());
      o.setReduceFunction(sum);
      o.setTag(tag++);
      gloo::allreduce(o);
    };
    run();  // warm-up
    gloo::BarrierOptions b(ctx);
    b.setTag(tag++);
    gloo::barrier(b);
    double best = 1e30;  // the fastest iteration: the machine is shared, the minimum is stable
    for (int k = 0; k < iters; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      run();
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (rank == 0) std::printf("%zu %.9f\n", bytes, best);
  }
  return 0;
}
