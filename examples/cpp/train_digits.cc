// Trains the digits MLP of examples/train_digits.py in C++ alone, through the installed API:
// the same data (sklearn's bundled 8x8 digits, 80/20 split, standardised with the training
// split's statistics), model (64-128-64-10 with dropout 0.1), optimizer (Adam, lr 2e-3, weight
// decay 1e-4) and one-cycle schedule (max lr 5e-3, beta1 cycled 0.95 -> 0.85 -> 0.95).
//   train_digits [--data digits.csv.gz] [--epochs 30] [--seed 0] [--min-accuracy A]
// The last line printed is `accuracy: X.XXXX`; with --min-accuracy the exit status is 1 below A.
#include <oneflow_like/oneflow_like.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace ofl = oneflow_like;

namespace {

const char* kDigitsCsv = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

struct Split {
  std::vector<float> x_train, x_test;
  std::vector<int64_t> y_train, y_test;
};

// Reads the gzip'd CSV (64 pixel values 0..16 then the label per line) through `gzip -dc`.
std::vector<std::vector<double>> ReadCsvGz(const std::string& path) {
  std::string cmd = "gzip -dc '" + path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  if (pclose(p) != 0 || text.empty())
    throw std::runtime_error(path + ": cannot read (install python3-sklearn: make deps)");
  std::vector<std::vector<double>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    std::vector<double> row;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) row.push_back(std::stod(f));
    if (row.size() != 65) throw std::runtime_error(path + ": expected 65 columns");
    rows.push_back(std::move(row));
  }
  return rows;
}

// A fixed-seed 80/20 split; pixels / 16, standardised by the training split's per-pixel mean
// and (population) std + 0.1, as the Python example does.
Split LoadDigits(const std::string& path, uint64_t seed) {
  auto rows = ReadCsvGz(path);
  std::vector<size_t> perm(rows.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  size_t n_test = static_cast<size_t>(std::lround(rows.size() * 0.2));
  std::vector<double> mean(64, 0), var(64, 0);
  size_t n_train = rows.size() - n_test;
  for (size_t k = n_test; k < rows.size(); ++k)
    for (int j = 0; j < 64; ++j) mean[j] += rows[perm[k]][j] / 16.0 / n_train;
  for (size_t k = n_test; k < rows.size(); ++k)
    for (int j = 0; j < 64; ++j) {
      double d = rows[perm[k]][j] / 16.0 - mean[j];
      var[j] += d * d / n_train;
    }
  Split s;
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[perm[k]];
    auto& x = k < n_test ? s.x_test : s.x_train;
    for (int j = 0; j < 64; ++j)
      x.push_back(static_cast<float>((r[j] / 16.0 - mean[j]) / (std::sqrt(var[j]) + 0.1)));
    (k < n_test ? s.y_test : s.y_train).push_back(static_cast<int64_t>(r[64]));
  }
  return s;
}

// The 1cycle policy of python/oneflow_like/optim/lr_scheduler.py (two phases, cosine): lr rises
// from max_lr / 25 to max_lr over 30% of the steps, then falls to max_lr / 25 / 1e4; Adam's beta1
// moves the other way between 0.95 and 0.85.
struct OneCycle {
  double max_lr;
  int64_t total;
  static double Cos(double start, double end, double pct) {
    return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1);
  }
  void Apply(ofl::optim::Adam& opt, int64_t step) const {
    double initial = max_lr / 25.0, min_lr = initial / 1e4;
    double end1 = 0.3 * total - 1, end2 = total - 1;
    double lr, beta1;
    if (step <= end1) {
      double pct = step / end1;
      lr = Cos(initial, max_lr, pct);
      beta1 = Cos(0.95, 0.85, pct);
    } else {
      double pct = (step - end1) / (end2 - end1);
      lr = Cos(max_lr, min_lr, pct);
      beta1 = Cos(0.85, 0.95, pct);
    }
    opt.set_lr(lr);
    opt.options().beta1 = beta1;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string data = kDigitsCsv;
  int epochs = 30;
  uint64_t seed = 0;
  double min_accuracy = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--data")
      data = argv[i + 1];
    else if (a == "--epochs")
      epochs = std::atoi(argv[i + 1]);
    else if (a == "--seed")
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--min-accuracy")
      min_accuracy = std::atof(argv[i + 1]);
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }
  try {
    ofl::manual_seed(seed);
    Split s = LoadDigits(data, seed);
    const int64_t n = static_cast<int64_t>(s.y_train.size()), batch = 64;
    ofl::Device device = ofl::default_device();
    ofl::Tensor x_train = ofl::from_data(s.x_train.data(), {n, 64}, ofl::kFloat32).to(device);
    ofl::Tensor y_train = ofl::from_data(s.y_train.data(), {n}, ofl::kInt64).to(device);
    std::cout << "digits: " << n << " train / " << s.y_test.size() << " test images, device "
              << device << "\n";

    ofl::nn::Sequential model(ofl::nn::Linear(64, 128), ofl::nn::ReLU(), ofl::nn::Dropout(0.1),
                              ofl::nn::Linear(128, 64), ofl::nn::ReLU(), ofl::nn::Linear(64, 10));
    model.to(device);
    ofl::optim::Adam opt(model.parameters(), {2e-3, 0.9, 0.999, 1e-8, 1e-4});
    const int64_t steps_per_epoch = n / batch;  // drop_last
    OneCycle sched{5e-3, epochs * steps_per_epoch};
    sched.Apply(opt, 0);

    auto t0 = std::chrono::steady_clock::now();
    int64_t step = 0;
    double last_epoch_loss = 0;
    for (int e = 0; e < epochs; ++e) {
      ofl::Tensor perm = ofl::randperm(n).to(device);  // drawn on the CPU, as the DataLoader
      std::vector<ofl::Tensor> losses;
      for (int64_t b = 0; b < steps_per_epoch; ++b) {
        ofl::Tensor idx = perm.slice(0, b * batch, (b + 1) * batch);
        ofl::Tensor loss =
            ofl::cross_entropy(model(x_train.index_select(0, idx)), y_train.index_select(0, idx));
        opt.zero_grad();
        loss.backward();
        opt.step();
        sched.Apply(opt, ++step);
        losses.push_back(loss);
      }
      double sum = 0;  // read once per epoch, so the host never waits inside it
      for (const auto& l : losses) sum += l.item<float>();
      last_epoch_loss = sum / losses.size();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    model.eval();
    int64_t n_test = static_cast<int64_t>(s.y_test.size()), correct = 0;
    {
      ofl::NoGradGuard ng;
      ofl::Tensor x_test = ofl::from_data(s.x_test.data(), {n_test, 64}, ofl::kFloat32);
      std::vector<int64_t> pred = model(x_test.to(device)).argmax(1).to_vector<int64_t>();
      for (int64_t i = 0; i < n_test; ++i) correct += pred[i] == s.y_test[i];
    }
    double acc = static_cast<double>(correct) / n_test;
    std::printf("mlp (C++, %s): %d epochs in %.1fs, final loss %.4f, test accuracy %.4f\n",
                device.str().c_str(), epochs, secs, last_epoch_loss, acc);
    std::printf("accuracy: %.4f\n", acc);
    return min_accuracy >= 0 && acc < min_accuracy ? 1 : 0;
  } catch (const ofl::Error& e) {
    std::cerr << "oneflow_like error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
