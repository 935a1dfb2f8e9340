#include "compiler/library/library_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace oneflow_like::library {
namespace {

struct Config {
  std::vector<std::pair<std::string, std::string>> kv;
  explicit Config(const std::string& s) {
    for (absl::string_view part : absl::StrSplit(s, ';', absl::SkipEmpty())) {
      std::pair<std::string, std::string> p = absl::StrSplit(part, absl::MaxSplits('=', 1));
      kv.push_back(p);
    }
  }
  const std::string* Find(const char* k) const {
    for (auto& p : kv)
      if (p.first == k) return &p.second;
    return nullptr;
  }
  double Double(const char* k, double def) const {
    double v;
    const std::string* s = Find(k);
    return s && absl::SimpleAtod(*s, &v) ? v : def;
  }
  std::vector<int64_t> Ints(const char* k, std::vector<int64_t> def) const {
    const std::string* s = Find(k);
    if (!s) return def;
    std::vector<int64_t> out;
    for (absl::string_view p : absl::StrSplit(*s, ',')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(p, &v)) return def;
      out.push_back(v);
    }
    return out;
  }
};

int64_t Prod(const DimVector& d, int64_t b, int64_t e) {
  int64_t n = 1;
  for (int64_t i = b; i < e; ++i) n *= d[i];
  return n;
}

struct Pool {
  int64_t kh, kw, sh, sw, ph, pw;
};
StatusOr<Pool> PoolConfig(const std::string& target, const Config& c) {
  auto k = c.Ints("kernel", {2, 2}), s = c.Ints("stride", k), p = c.Ints("pad", {0, 0});
  if (k.size() != 2 || s.size() != 2 || p.size() != 2 || k[0] < 1 || k[1] < 1 || s[0] < 1 ||
      s[1] < 1)
    return InvalidArgument("[%s] kernel/stride/pad must be two positive numbers each", target);
  return Pool{k[0], k[1], s[0], s[1], p[0], p[1]};
}

}  // namespace

bool IsLibraryCall(const std::string& t) {
  return t == "softmax" || t == "log_softmax" || t == "layer_norm" || t == "max_pool2d" ||
         t == "avg_pool2d" || t == "max_pool2d_grad";
}

StatusOr<DimVector> LibraryCallResultDims(const std::string& target, const std::string& config,
                                          const std::vector<DimVector>& in) {
  if (!IsLibraryCall(target)) return Unimplemented("[custom-call] unknown target '%s'", target);
  if (in.empty()) return InvalidArgument("[%s] needs an operand", target);
  if (target == "softmax" || target == "log_softmax" || target == "layer_norm") return in[0];
  if (target == "max_pool2d_grad") return in[0];
  if (in[0].size() != 4) return InvalidArgument("[%s] needs NCHW input", target);
  ASSIGN_OR_RETURN(Pool p, PoolConfig(target, Config(config)));
  DimVector out = in[0];
  out[2] = (in[0][2] + 2 * p.ph - p.kh) / p.sh + 1;
  out[3] = (in[0][3] + 2 * p.pw - p.kw) / p.sw + 1;
  return out;
}

template <typename T>
Status RunLibraryCall(const std::string& target, const std::string& config,
                      const std::vector<Operand>& ops, T* out, const DimVector& out_dims) {
  Config c(config);
  if (ops.empty()) return InvalidArgument("[%s] needs an operand", target);
  const T* x = static_cast<const T*>(ops[0].data);
  const DimVector& d = ops[0].dims;
  const int64_t rank = d.size();
  if (target == "softmax" || target == "log_softmax") {
    int64_t axis = static_cast<int64_t>(c.Double("axis", rank - 1));
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return InvalidArgument("[%s] axis out of range", target);
    const int64_t outer = Prod(d, 0, axis), n = d[axis], inner = Prod(d, axis + 1, rank);
    const bool log = target == "log_softmax";
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* xp = x + o * n * inner + i;
        T* yp = out + o * n * inner + i;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < n; ++k) m = std::max(m, xp[k * inner]);
        T sum = 0;
        for (int64_t k = 0; k < n; ++k) sum += std::exp(xp[k * inner] - m);
        for (int64_t k = 0; k < n; ++k) {
          yp[k * inner] =
              log ? xp[k * inner] - m - std::log(sum) : std::exp(xp[k * inner] - m) / sum;
        }
      }
    }
    return absl::OkStatus();
  }
  if (target == "layer_norm") {
    const T eps = static_cast<T>(c.Double("eps", 1e-5));
    const int64_t n = d.empty() ? 1 : d.back(), rows = Prod(d, 0, rank) / std::max<int64_t>(n, 1);
    const T* g = ops.size() > 1 ? static_cast<const T*>(ops[1].data) : nullptr;
    const T* b = ops.size() > 2 ? static_cast<const T*>(ops[2].data) : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      const T* xp = x + r * n;
      T mean = 0, var = 0;
      for (int64_t k = 0; k < n; ++k) mean += xp[k];
      mean /= n;
      for (int64_t k = 0; k < n; ++k) var += (xp[k] - mean) * (xp[k] - mean);
      T rstd = T(1) / std::sqrt(var / n + eps);
      for (int64_t k = 0; k < n; ++k) {
        T y = (xp[k] - mean) * rstd;
        out[r * n + k] = y * (g ? g[k] : T(1)) + (b ? b[k] : T(0));
      }
    }
    return absl::OkStatus();
  }
  if (target == "max_pool2d" || target == "avg_pool2d" || target == "max_pool2d_grad") {
    ASSIGN_OR_RETURN(Pool p, PoolConfig(target, c));
    if (rank != 4) return InvalidArgument("[%s] needs NCHW input", target);
    const bool grad = target == "max_pool2d_grad", avg = target == "avg_pool2d";
    const int64_t N = d[0], C = d[1], H = d[2], W = d[3];
    const int64_t OH = (H + 2 * p.ph - p.kh) / p.sh + 1, OW = (W + 2 * p.pw - p.kw) / p.sw + 1;
    const T* dy = grad ? static_cast<const T*>(ops.at(1).data) : nullptr;
    if (grad) std::fill(out, out + N * C * H * W, T(0));
    for (int64_t nc = 0; nc < N * C; ++nc) {
      const T* xp = x + nc * H * W;
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          T best = avg ? T(0) : -std::numeric_limits<T>::infinity();
          int64_t arg = -1, count = 0;
          for (int64_t kh = 0; kh < p.kh; ++kh) {
            for (int64_t kw = 0; kw < p.kw; ++kw) {
              int64_t h = oh * p.sh - p.ph + kh, w = ow * p.sw - p.pw + kw;
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              T v = xp[h * W + w];
              ++count;
              if (avg)
                best += v;
              else if (v > best || arg < 0) {
                best = v;
                arg = h * W + w;
              }
            }
          }
          const int64_t o = nc * OH * OW + oh * OW + ow;
          if (grad) {
            if (arg >= 0) out[nc * H * W + arg] += dy[o];
          } else
            out[o] = avg ? best / T(p.kh * p.kw) : best;
        }
      }
    }
    (void)out_dims;
    return absl::OkStatus();
  }
  return Unimplemented("[custom-call] unknown target '%s'", target);
}

template Status RunLibraryCall<float>(const std::string&, const std::string&,
                                      const std::vector<Operand>&, float*, const DimVector&);
template Status RunLibraryCall<double>(const std::string&, const std::string&,
                                       const std::vector<Operand>&, double*, const DimVector&);

}  // namespace oneflow_like::library
