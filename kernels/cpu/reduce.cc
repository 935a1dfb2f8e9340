// CPU kernels of the reduction family.
#include <algorithm>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

// Splits input dims into kept (output order) and reduced, with the input's strides.
struct ReducePlan {
  DimVector keep_sizes, keep_strides, red_sizes, red_strides;
  int64_t red_numel = 1;
};

ReducePlan Plan(const TensorView& x, const std::vector<int64_t>& dims) {
  ReducePlan p;
  for (int64_t i = 0; i < x.shape.ndim(); ++i) {
    if (std::find(dims.begin(), dims.end(), i) != dims.end()) {
      p.red_sizes.push_back(x.shape[i]);
      p.red_strides.push_back(x.strides[i]);
      p.red_numel *= x.shape[i];
    } else {
      p.keep_sizes.push_back(x.shape[i]);
      p.keep_strides.push_back(x.strides[i]);
    }
  }
  return p;
}

// For each output element (parallel), folds `f` over the reduced index space.
template <typename TI, typename Acc, typename Init, typename Fold, typename Fin>
void GenericReduce(const TensorView& x, const ReducePlan& p, int64_t out_numel, Init init, Fold fold, Fin fin) {
  const TI* in = x.ptr<const TI>();
  int64_t nk = p.keep_sizes.size(), nr = p.red_sizes.size();
  ParallelFor(out_numel, [&](int64_t b, int64_t e) {
    DimVector ridx(nr);
    for (int64_t o = b; o < e; ++o) {
      int64_t base = 0, rem = o;
      for (int64_t d = nk - 1; d >= 0; --d) { base += (rem % p.keep_sizes[d]) * p.keep_strides[d]; rem /= p.keep_sizes[d]; }
      Acc acc = init();
      std::fill(ridx.begin(), ridx.end(), 0);
      int64_t inner = nr ? p.red_sizes[nr - 1] : 1, istride = nr ? p.red_strides[nr - 1] : 0;
      for (int64_t r = 0; r < p.red_numel; r += inner) {
        int64_t off = base;
        for (int64_t d = 0; d + 1 < nr; ++d) off += ridx[d] * p.red_strides[d];
        for (int64_t i = 0; i < inner; ++i) acc = fold(acc, in[off + i * istride]);
        for (int64_t d = nr - 2; d >= 0; --d) { if (++ridx[d] < p.red_sizes[d]) break; ridx[d] = 0; }
      }
      fin(o, acc);
    }
  }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(p.red_numel, 1)));
}

Status SumKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  const auto& dims = ctx.attrs().Ints("dims");
  ReducePlan p = Plan(x, dims);
  int64_t on = out.numel();
  // Fast path: reducing leading dims of a contiguous input = adding rows into the output.
  bool leading = x.contiguous() && !dims.empty();
  for (size_t i = 0; i < dims.size(); ++i) leading &= dims[i] == static_cast<int64_t>(i);
  bool done = false;
  if (IsFloating(x.dtype) && leading && on > 1) {
    OFL_SWITCH_FLOAT(x.dtype, {
      const scalar_t* in = x.ptr<const scalar_t>();
      scalar_t* o = out.ptr<scalar_t>();
      ParallelFor(on, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) o[j] = 0;
        for (int64_t r = 0; r < p.red_numel; ++r) {
          const scalar_t* row = in + r * on;
          for (int64_t j = b; j < e; ++j) o[j] += row[j];
        }
      }, std::max<int64_t>(64, kParallelGrain / std::max<int64_t>(p.red_numel, 1)));
      done = true;
    });
    if (done) return Status();
  }
  if (IsFloating(x.dtype)) {
    OFL_SWITCH_FLOAT(x.dtype, {
      scalar_t* o = out.ptr<scalar_t>();
      GenericReduce<scalar_t, double>(x, p, on, [] { return 0.0; }, [](double a, scalar_t v) { return a + v; },
                                      [&](int64_t i, double a) { o[i] = static_cast<scalar_t>(a); });
      done = true;
    });
  } else {
    int64_t* o = out.ptr<int64_t>();
    OFL_SWITCH_ALL(x.dtype, {
      if constexpr (!std::is_same_v<scalar_t, float16> && !std::is_same_v<scalar_t, bfloat16> &&
                    !std::is_floating_point_v<scalar_t>) {
        GenericReduce<scalar_t, int64_t>(x, p, on, [] { return int64_t(0); },
                                         [](int64_t a, scalar_t v) { return a + static_cast<int64_t>(v); },
                                         [&](int64_t i, int64_t a) { o[i] = a; });
        done = true;
      }
    });
  }
  if (!done) return TypeError("[sum] not supported for %s on cpu", DTypeName(x.dtype));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(sum, kCPU, SumKernel);

}  // namespace kernels
}  // namespace oneflow_like
