// Timing helpers shared by bench_cpp_api.cc (our C++ API) and bench_libtorch.cc (libtorch's), so
// both sides of benchmarks/bench_cpp_api.py measure the same way. Header-only, standard library.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace bench {

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of `fn`: the median of `repeats` samples, each `calls` calls then `sync()`
// (the work the calls queued must be finished inside the sample).
inline double PerCall(const std::function<void()>& fn, const std::function<void()>& sync, int calls,
                      int repeats) {
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn();
    sync();
    samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                      calls);
  }
  return Median(samples);
}

}  // namespace bench
