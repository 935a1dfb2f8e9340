// The threaded VM under stress: random DAGs of 100k instructions over a few blobs, on several
// streams (cpu:0..2 compute, cpu:0 lazy-job; control inline), with in-place updates, inline
// runs, mid-way syncs and injected failures. Each blob holds {version, value}: every compute
// checks the versions it reads against the sequential program (so a misordered run fails
// loudly), and the final values and errors must equal a sequential replay.
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <mutex>
#include "gtest/gtest.h"
#include "vm/test_util.h"

namespace oneflow_like {
namespace vm {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kInstructions = 20000;  // sanitizers slow each instruction 10-50x
#else
constexpr int kInstructions = 100000;
#endif
constexpr int kBlobs = 16;
constexpr int64_t kPrime = 2147483647;

struct Cell {
  int64_t version;
  int64_t value;
};
Cell& At(const BlobPtr& b) {
  return *static_cast<Cell*>(b->data());
}

// Value written by instruction k from its inputs' values, with overflow checks.
StatusOr<int64_t> Mix(int64_t k, const std::vector<int64_t>& in) {
  int64_t acc = k % kPrime, t;
  for (size_t i = 0; i < in.size(); ++i) {
    if (__builtin_mul_overflow(in[i], static_cast<int64_t>(i + 7), &t) ||
        __builtin_add_overflow(acc, t, &acc))
      return OutOfRange("[mix] overflow in instruction %d", k);
    acc %= kPrime;
  }
  return acc;
}

struct Config {
  int64_t max_in_flight;
  int64_t inline_limit;
  double fail_rate;
};

class StressTest : public ::testing::TestWithParam<Config> {};

TEST_P(StressTest, RandomDagMatchesSequentialReplay) {
  const Config cfg = GetParam();
  VmOptions opts;
  opts.max_in_flight = cfg.max_in_flight;
  opts.inline_cost_limit = cfg.inline_limit;
  VirtualMachine vm(opts);
  const std::pair<Device, StreamRole> streams[] = {
      {Device(DeviceType::kCPU, 0), StreamRole::kCompute},
      {Device(DeviceType::kCPU, 1), StreamRole::kCompute},
      {Device(DeviceType::kCPU, 2), StreamRole::kCompute},
      {Device(DeviceType::kCPU, 0), StreamRole::kLazyJob}};
  std::vector<BlobPtr> blobs;
  std::vector<Cell> model(kBlobs);
  std::vector<bool> failed(kBlobs, false);
  for (int b = 0; b < kBlobs; ++b) {
    blobs.push_back(testing::NewBlob(sizeof(Cell)));
    model[b] = {-1 - b, b + 1};
    BlobPtr blob = blobs[b];
    Cell init = model[b];
    ASSERT_TRUE(testing::Issue(&vm, "init", {}, {blob}, [blob, init] {
                  At(blob) = init;
                  return Status();
                }).ok());
  }
  std::mt19937_64 rng(GetParam().max_in_flight * 7919 + cfg.inline_limit);
  std::mutex threads_mu;
  std::set<std::thread::id> threads;
  int mid_checks = 0;
  for (int64_t k = 0; k < kInstructions; ++k) {
    const int n_in = static_cast<int>(rng() % 4);
    std::vector<int> in;
    for (int i = 0; i < n_in; ++i) in.push_back(static_cast<int>(rng() % kBlobs));
    const int out = static_cast<int>(rng() % kBlobs);
    const bool inject = cfg.fail_rate > 0 && (rng() % 100000) < cfg.fail_rate * 100000;
    // Sequential semantics.
    std::vector<int64_t> want_versions, in_vals;
    bool in_failed = false;
    for (int i : in) {
      want_versions.push_back(model[i].version);
      in_vals.push_back(model[i].value);
      in_failed = in_failed || failed[i];
    }
    if (in_failed || inject) {
      failed[out] = true;
    } else {
      failed[out] = false;
      model[out] = {k, *Mix(k, in_vals)};
    }
    std::vector<BlobPtr> reads, writes{blobs[out]};
    for (int i : in) reads.push_back(blobs[i]);
    auto fn = [k, reads, want_versions, inject, out_blob = blobs[out], &threads_mu,
               &threads]() -> Status {
      if ((k & 255) == 0) {
        std::lock_guard<std::mutex> l(threads_mu);
        threads.insert(std::this_thread::get_id());
      }
      if (inject) return Internal("injected failure");
      std::vector<int64_t> vals;
      for (size_t i = 0; i < reads.size(); ++i) {
        const Cell& c = At(reads[i]);
        if (c.version != want_versions[i])
          return Internal("read version %d of input %d, program order says %d", c.version, i,
                          want_versions[i]);
        vals.push_back(c.value);
      }
      ASSIGN_OR_RETURN(int64_t v, Mix(k, vals));
      At(out_blob) = {k, v};
      return Status();
    };
    const auto& st = streams[rng() % 4];
    const int64_t cost = (rng() % 2) ? 1 : -1;
    ASSERT_TRUE(testing::Issue(&vm, absl::StrCat("op", k), std::move(reads), std::move(writes),
                               std::move(fn), cost, st.first, st.second)
                    .ok());
    if (rng() % 5000 == 0) {  // a sync point mid-way, like .item()
      const int b = static_cast<int>(rng() % kBlobs);
      auto got = SyncAccessBlob(&vm, blobs[b], AccessMode::kRead, [&](void* p) {
        const Cell& c = *static_cast<Cell*>(p);
        EXPECT_EQ(c.version, model[b].version);
        EXPECT_EQ(c.value, model[b].value);
        return Status();
      });
      EXPECT_EQ(got.ok(), !failed[b]) << got;
      ++mid_checks;
    }
  }
  Status all = vm.SyncAll();
  EXPECT_EQ(all.ok(), cfg.fail_rate == 0) << all;
  if (!all.ok()) {
    EXPECT_NE(std::string(all.message()).find("injected failure"), std::string::npos) << all;
  }
  int n_failed = 0;
  for (int b = 0; b < kBlobs; ++b) {
    Cell got{};
    Status s = SyncAccessBlob(&vm, blobs[b], AccessMode::kRead, [&](void* p) {
      got = *static_cast<Cell*>(p);
      return Status();
    });
    if (failed[b]) {
      ++n_failed;
      EXPECT_FALSE(s.ok()) << "blob " << b;
      EXPECT_NE(std::string(s.message()).find("injected failure"), std::string::npos) << s;
    } else {
      ASSERT_TRUE(s.ok()) << "blob " << b << ": " << s;
      EXPECT_EQ(got.version, model[b].version) << "blob " << b;
      EXPECT_EQ(got.value, model[b].value) << "blob " << b;
    }
  }
  EXPECT_EQ(vm.num_live(), 0);
  for (auto& b : blobs) EXPECT_TRUE(b->dependence()->idle());
  EXPECT_GE(threads.size(), 3u) << "work should spread over the stream threads";
  std::printf(
      "%d instructions, %d mid-way syncs, %zu threads ran work, %d blobs failed at the end\n",
      kInstructions, mid_checks, threads.size(), n_failed);
}

INSTANTIATE_TEST_SUITE_P(Configs, StressTest,
                         ::testing::Values(Config{1 << 16, 0, 0.0},  // everything on workers
                                           Config{1 << 16, 100,
                                                  0.0},           // half the ops may run inline
                                           Config{64, 100, 0.0},  // tight backpressure
                                           Config{1024, 100, 0.002}));  // failures injected

}  // namespace
}  // namespace vm
}  // namespace oneflow_like
