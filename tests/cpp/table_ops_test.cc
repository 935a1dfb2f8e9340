// The C++ functions generated from the op tables (include/oneflow_like/table_ops.h), through the
// public header and liboneflow_like.so. EveryTableRowRuns is expanded from the same tables: one
// call per Python API row of every family, on small valid inputs chosen per signature kind, so a
// row whose C++ expansion is missing or broken fails to compile or fails here. The other tests
// compare a sample of each family's results with values computed by hand or in float64 loops.
#include <oneflow_like/oneflow_like.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ofl = oneflow_like;
using ofl::Tensor;

namespace {

std::vector<double> Vec(const Tensor& t) {
  return t.to_vector<double>();
}
std::vector<int64_t> Ints(const Tensor& t) {
  return t.to_vector<int64_t>();
}
void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  std::vector<double> got = Vec(t);
  ASSERT_EQ(got.size(), want.size()) << t;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}
Tensor F64(const std::vector<double>& v, const ofl::IntList& shape) {
  return ofl::tensor(v).reshape(shape);
}
Tensor I64(const std::vector<int64_t>& v) {
  return ofl::tensor(v);
}

// Every result of a generated function must be a defined tensor; counts the rows run.
struct Runs {
  std::set<std::string> names;
  void Check(const char* name, const Tensor& t) {
    EXPECT_TRUE(t.defined()) << name;
    if (t.defined()) (void)t.numel();
    names.insert(name);
  }
  void Check(const char* name, const std::pair<Tensor, Tensor>& p) {
    Check(name, p.first);
    Check(name, p.second);
  }
  void Check(const char* name, const std::tuple<Tensor, Tensor, Tensor>& t) {
    Check(name, std::get<0>(t));
    Check(name, std::get<1>(t));
    Check(name, std::get<2>(t));
  }
  void Check(const char* name, const std::vector<Tensor>& ts) {
    EXPECT_FALSE(ts.empty()) << name;
    for (const Tensor& t : ts) Check(name, t);
  }
};

// The spatial dims a pooling function's name says ("max_pool3d" -> 3).
int SpatialDims(const std::string& name) {
  size_t d = name.rfind('d');
  return name[d - 1] - '0';
}
ofl::IntList Shape(int64_t lead, int nd, int64_t size) {
  ofl::IntList s = {lead, 1};
  for (int i = 0; i < nd; ++i) s.push_back(size);
  return s;
}

TEST(TableOps, EveryTableRowRuns) {
  ofl::manual_seed(0);
  Runs r;
  // Floating [2, 3] operands, positive.
  Tensor x = F64({0.5, 1.5, 2.0, 3.0, 0.25, 1.0}, {2, 3});
  Tensor y = F64({1.0, 2.0, 0.5, 1.5, 2.5, 3.0}, {2, 3});
  Tensor b1 = ofl::tensor(std::vector<int64_t>{1, 0, 1, 1, 0, 0}).reshape({2, 3}).to(ofl::kBool);
  Tensor b2 = ofl::tensor(std::vector<int64_t>{1, 1, 0, 1, 0, 1}).reshape({2, 3}).to(ofl::kBool);
  Tensor i1 = I64({6, 5, 3, 12, 7, 1}).reshape({2, 3});
  Tensor i2 = I64({3, 4, 1, 10, 2, 1}).reshape({2, 3});
  Tensor v1 = ofl::tensor(std::vector<double>{1, 2, 3});  // 1-d: index_select and gather alike
  Tensor idx = I64({2, 0});
  Tensor mask = ofl::tensor(std::vector<int64_t>{1, 0, 1}).to(ofl::kBool);
  Tensor spd = F64({4, 1, 1, 3}, {2, 2});
  // clang-format off

  // binary.def
#define RUN_BIN(name, Name) r.Check(#name, ofl::name(x, y));
#define RUN_BIN_promote RUN_BIN
#define RUN_BIN_division RUN_BIN
#define RUN_BIN_true_div RUN_BIN
#define RUN_BIN_logical(name, Name) r.Check(#name, ofl::name(b1, b2));
#define RUN_BIN_bitwise(name, Name) r.Check(#name, ofl::name(i1, i2));
#define RUN_BIN_special(name, Name) r.Check(#name, ofl::name(x * 0.3, ofl::full_like(x, 2.0)));
#define RUN_BIN_custom(name, Name)
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, ...) RUN_BIN_##api(name, Name)
#define OFL_BINARY_SCALAR(...)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR

  // ternary.def
#define RUN_TER_gen(name) r.Check(#name, ofl::name(x, y, y));
#define RUN_TER_gen_ip(name) \
  RUN_TER_gen(name) \
  { Tensor c = x.clone(); EXPECT_TRUE(ofl::name##_(c, y, y).same(c)) << #name; r.Check(#name "_", c); }
#define RUN_TER_custom(name)
#define RUN_TER_internal(name)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, ...) RUN_TER_##api(name)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR

  // reduce.def
#define RUN_RED_dims_dtype(name) \
  r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, {1}, true, ofl::kFloat32));
#define RUN_RED_dims(name) r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, {0}, true));
#define RUN_RED_dims_all RUN_RED_dims
#define RUN_RED_opt_dim(name) r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, 1));
#define RUN_RED_var(name) r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, {1}, 0.0));
#define RUN_RED_norm(name) r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, 1.0, {1}));
#define RUN_RED_values_indices(name) r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, 1));
#define OFL_REDUCE(...)
#define OFL_REDUCE_INTERNAL(...)
#define OFL_REDUCE_API(pyname, sig, entry, dim_entry) RUN_RED_##sig(pyname)
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE_API

  // scan.def
#define RUN_SCAN_dim_dtype(name) r.Check(#name, ofl::name(x, 1));
#define RUN_SCAN_dim(name) r.Check(#name, ofl::name(x, 1));
#define RUN_SCAN_dim_pair(name) r.Check(#name, ofl::name(x, 1));
#define RUN_SCAN_sort(name) r.Check(#name, ofl::name(x));
#define RUN_SCAN_argsort(name) r.Check(#name, ofl::name(x));
#define RUN_SCAN_msort(name) r.Check(#name, ofl::name(x));
#define RUN_SCAN_topk(name) r.Check(#name, ofl::name(x, 2));
#define RUN_SCAN_kthvalue(name) r.Check(#name, ofl::name(x, 2));
#define OFL_SCAN(...)
#define OFL_SCAN_GRAD(...)
#define OFL_SCAN_API(pyname, sig, entry) RUN_SCAN_##sig(pyname)
#include "oneflow_like/opdefs/scan.def"
#undef OFL_SCAN
#undef OFL_SCAN_GRAD
#undef OFL_SCAN_API

  // index.def: fn_method returns a new tensor; method_ writes into a clone and returns it.
#define RUN_IDX_fn_method(name, ...) r.Check(#name, ofl::name(v1, __VA_ARGS__));
#define RUN_IDX_method_(name, ...) \
  { Tensor c = v1.clone(); EXPECT_TRUE(ofl::name(c, __VA_ARGS__).same(c)) << #name; \
    r.Check(#name, c); }
#define RUN_IDX_dim_index(name, kind) RUN_IDX_##kind(name, 0, idx)
#define RUN_IDX_dim_index_src(name, kind) RUN_IDX_##kind(name, 0, idx, ofl::full({2}, 10.0, ofl::kFloat64))
#define RUN_IDX_index_add(name, kind) RUN_IDX_##kind(name, 0, idx, ofl::full({2}, 10.0, ofl::kFloat64))
#define RUN_IDX_scatter(name, kind) \
  RUN_IDX_##kind(name, 0, idx, ofl::full({2}, 10.0, ofl::kFloat64)) RUN_IDX_##kind(name, 0, idx, 7.0)
#define RUN_IDX_mask(name, kind) RUN_IDX_##kind(name, mask)
#define RUN_IDX_mask_value(name, kind) RUN_IDX_##kind(name, mask, 5.0)
#define RUN_IDX_nonzero(name, kind) r.Check(#name, ofl::name(v1));
#define RUN_IDX_one_hot(name, kind) r.Check(#name, ofl::name(idx, 3));
#define RUN_IDX_index_put(name, kind) RUN_IDX_##kind(name, {idx}, ofl::full({2}, 7.0, ofl::kFloat64))
#define OFL_INDEX(...)
#define OFL_INDEX_API(pyname, kind, sig, entry) RUN_IDX_##sig(pyname, kind)
#include "oneflow_like/opdefs/index.def"
#undef OFL_INDEX
#undef OFL_INDEX_API

  // shape.def
#define RUN_SHAPE_dim(name) r.Check(#name, ofl::name(x, 0));
#define RUN_SHAPE_opt_dims(name) r.Check(#name, ofl::name(x)); r.Check(#name, ofl::name(x, 0));
#define RUN_SHAPE_flatten(name) r.Check(#name, ofl::name(x));
#define RUN_SHAPE_narrow(name) r.Check(#name, ofl::name(x, 1, 0, 2));
#define RUN_SHAPE_select(name) r.Check(#name, ofl::name(x, 0, 1));
#define RUN_SHAPE_tensors(name) r.Check(#name, ofl::name({x, y}, 0));
#define RUN_SHAPE_split(name) r.Check(#name, ofl::name(x, 1)); r.Check(#name, ofl::name(x, {1, 2}, 1));
#define RUN_SHAPE_chunk(name) r.Check(#name, ofl::name(x, 2));
#define RUN_SHAPE_unbind(name) r.Check(#name, ofl::name(x));
#define RUN_SHAPE_flip(name) r.Check(#name, ofl::name(x, {0}));
#define RUN_SHAPE_roll(name) r.Check(#name, ofl::name(x, {1})); r.Check(#name, ofl::name(x, {1}, {1}));
#define RUN_SHAPE_diagonal(name) r.Check(#name, ofl::name(x));
#define RUN_SHAPE_as_strided(name) r.Check(#name, ofl::name(x, {2, 2}, {3, 1}));
#define RUN_SHAPE_pad(name) r.Check(#name, ofl::name(x, {1, 1}));
#define OFL_SHAPE(...)
#define OFL_SHAPE_API(pyname, kind, sig, entry) RUN_SHAPE_##sig(pyname)
#include "oneflow_like/opdefs/shape.def"
#undef OFL_SHAPE
#undef OFL_SHAPE_API

  // copy.def (as_dtype has no C++ function: its names are C++ keywords)
#define RUN_COPY_self(name) r.Check(#name, ofl::name(x));
#define RUN_COPY_as_dtype(name)
#define RUN_COPY_type_as(name) r.Check(#name, ofl::name(x, i1));
#define RUN_COPY_to(name) \
  r.Check(#name, ofl::name(x, ofl::Device(ofl::kCPU))); r.Check(#name, ofl::name(x, ofl::kFloat32)); \
  r.Check(#name, ofl::name(x, ofl::Device(ofl::kCPU), ofl::kInt64));
#define RUN_COPY_cpu(name) r.Check(#name, ofl::name(x));
#define RUN_COPY_cuda(name) \
  if (ofl::default_device().is_cuda()) r.Check(#name, ofl::name(x)); \
  else EXPECT_THROW(ofl::name(x), ofl::Error);
#define RUN_COPY_copy_(name) { Tensor c = x.clone(); EXPECT_TRUE(ofl::name(c, y).same(c)); r.Check(#name, c); }
#define RUN_COPY_cast(name) r.Check(#name, ofl::name(x, ofl::kInt32));
#define OFL_COPY(...)
#define OFL_COPY_API(pyname, sig, entry, dtype) RUN_COPY_##sig(pyname)
#include "oneflow_like/opdefs/copy.def"
#undef OFL_COPY
#undef OFL_COPY_API

  // creation.def
#define RUN_CREATION_size(name) r.Check(#name, ofl::name({2, 3})); r.Check(#name, ofl::name({2}, ofl::kInt64));
#define RUN_CREATION_full(name) r.Check(#name, ofl::name({2}, 1.5));
#define RUN_CREATION_like(name) r.Check(#name, ofl::name(x));
#define RUN_CREATION_full_like(name) r.Check(#name, ofl::name(x, 2.0));
#define RUN_CREATION_arange(name) r.Check(#name, ofl::name(5)); r.Check(#name, ofl::name(1, 3, 0.5, ofl::kFloat32));
#define RUN_CREATION_linspace(name) r.Check(#name, ofl::name(0, 1, 3));
#define RUN_CREATION_eye(name) r.Check(#name, ofl::name(2)); r.Check(#name, ofl::name(2, 3));
#define RUN_CREATION_fill(name) { Tensor c = x.clone(); EXPECT_TRUE(ofl::name(c, 3.0).same(c)); r.Check(#name, c); }
#define RUN_CREATION_zero(name) { Tensor c = x.clone(); EXPECT_TRUE(ofl::name(c).same(c)); r.Check(#name, c); }
#define OFL_CREATION(...)
#define OFL_CREATION_API(pyname, sig, entry, fill) RUN_CREATION_##sig(pyname)
#include "oneflow_like/opdefs/creation.def"
#undef OFL_CREATION
#undef OFL_CREATION_API

  // random.def
#define RUN_RANDOM_size(name) r.Check(#name, ofl::name({2, 3}));
#define RUN_RANDOM_like(name) r.Check(#name, ofl::name(x));
#define RUN_RANDOM_randint(name) r.Check(#name, ofl::name(0, 5, {3})); r.Check(#name, ofl::name(5, {3}));
#define RUN_RANDOM_randint_like(name) r.Check(#name, ofl::name(x, 0, 5)); r.Check(#name, ofl::name(x, 5));
#define RUN_RANDOM_randperm(name) r.Check(#name, ofl::name(4));
#define RUN_RANDOM_normal(name) r.Check(#name, ofl::name(0.0, 1.0, {3}));
#define RUN_RANDOM_bernoulli(name) r.Check(#name, ofl::name(ofl::full({3}, 0.5)));
#define RUN_RANDOM_INPLACE(name, ...) \
  { Tensor c = x.clone(); EXPECT_TRUE(ofl::name(c __VA_ARGS__).same(c)); r.Check(#name, c); }
#define RUN_RANDOM_fill_uniform(name) RUN_RANDOM_INPLACE(name) RUN_RANDOM_INPLACE(name, , -1.0, 1.0)
#define RUN_RANDOM_fill_normal(name) RUN_RANDOM_INPLACE(name) RUN_RANDOM_INPLACE(name, , 1.0, 2.0)
#define RUN_RANDOM_fill_random(name) \
  RUN_RANDOM_INPLACE(name) RUN_RANDOM_INPLACE(name, , 4) RUN_RANDOM_INPLACE(name, , 2, 4)
#define OFL_RANDOM(...)
#define OFL_RANDOM_API(pyname, sig, entry, Attrs) RUN_RANDOM_##sig(pyname)
#include "oneflow_like/opdefs/random.def"
#undef OFL_RANDOM
#undef OFL_RANDOM_API

  // linalg.def: a symmetric positive definite matrix serves every signature.
#define RUN_LINALG_a(name) r.Check(#name, ofl::name(spd));
#define RUN_LINALG_upper(name) r.Check(#name, ofl::name(spd)); r.Check(#name, ofl::name(spd, true));
#define RUN_LINALG_solve(name) r.Check(#name, ofl::name(spd, F64({1, 2}, {2, 1})));
#define RUN_LINALG_mode(name) r.Check(#name, ofl::name(spd)); r.Check(#name, ofl::name(spd, "complete"));
#define RUN_LINALG_some(name) r.Check(#name, ofl::name(spd));
#define RUN_LINALG_full(name) r.Check(#name, ofl::name(spd));
#define RUN_LINALG_uplo(name) r.Check(#name, ofl::name(spd)); r.Check(#name, ofl::name(spd, "U"));
#define RUN_LINALG_triangular(name) r.Check(#name, ofl::name(spd, spd, true)); r.Check(#name, ofl::name(spd, spd, false, false, true));
#define RUN_LINALG_tau(name) r.Check(#name, ofl::name(spd, F64({1.0}, {1})));
#define RUN_LINALG_ormqr(name) r.Check(#name, ofl::name(spd, F64({1.0}, {1}), spd)); r.Check(#name, ofl::name(spd, F64({1.0}, {1}), spd, false, true));
#define RUN_LINALG_hermitian(name) r.Check(#name, ofl::name(spd));
#define RUN_LINALG_ldl_solve(name) { auto f = ofl::_linalg_ldl_factor_ex(spd); r.Check(#name, ofl::name(std::get<0>(f), std::get<1>(f), spd)); }
#define RUN_LINALG_pivots(name) { auto f = ofl::_linalg_lu_factor_ex(spd); r.Check(#name, ofl::name(std::get<0>(f), std::get<1>(f))); }
#define OFL_LINALG(...)
#define OFL_LINALG_API(pyname, kind, sig, result, entry) RUN_LINALG_##sig(pyname)
#include "oneflow_like/opdefs/linalg.def"
#undef OFL_LINALG
#undef OFL_LINALG_API

  // matmul.def (bmm's operands are batches)
#define RUN_MATMUL_other(name) r.Check(#name, ofl::name(spd, spd));
#define RUN_MATMUL_mat2(name) \
  { Tensor m = std::string(#name) == "bmm" ? spd.unsqueeze(0) : spd; r.Check(#name, ofl::name(m, m)); }
#define RUN_MATMUL_addmm(name) r.Check(#name, ofl::name(spd, spd, spd));
#define RUN_MATMUL_linear(name) r.Check(#name, ofl::name(spd, spd)); r.Check(#name, ofl::name(spd, spd, ofl::ones({2}, ofl::kFloat64)));
#define OFL_MATMUL(...)
#define OFL_MATMUL_API(pyname, kind, sig, entry) RUN_MATMUL_##sig(pyname)
#include "oneflow_like/opdefs/matmul.def"
#undef OFL_MATMUL
#undef OFL_MATMUL_API

  // conv.def: [1, 1, 3...] with a [1, 1, 2...] kernel.
#define OFL_CONV_API(name, nd, entry) \
  r.Check(#name, ofl::name(ofl::ones(Shape(1, nd, 3)), ofl::ones(Shape(1, nd, 2))));
#define OFL_CONV(...)
#define OFL_CONV_GRAD(...)
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV
#undef OFL_CONV_GRAD
#undef OFL_CONV_API

  // pool.def: [1, 1, 4...] pooled by 2 (the name gives the spatial dims).
#define RUN_POOL_IN(name) ofl::rand(Shape(1, SpatialDims(#name), 4))
#define RUN_POOL_max_indices(name) \
  r.Check(#name, ofl::name(RUN_POOL_IN(name), {2})); \
  r.Check(#name, ofl::name##_with_indices(RUN_POOL_IN(name), {2}));
#define RUN_POOL_max(name) r.Check(#name, ofl::name(RUN_POOL_IN(name), {2}));
#define RUN_POOL_avg_divisor(name) \
  r.Check(#name, ofl::name(RUN_POOL_IN(name), {2})); r.Check(#name, ofl::name(RUN_POOL_IN(name), {2}, {}, {0}, false, true, 3));
#define RUN_POOL_avg(name) r.Check(#name, ofl::name(RUN_POOL_IN(name), {2}));
#define RUN_POOL_adaptive(name) r.Check(#name, ofl::name(RUN_POOL_IN(name), {2}));
#define OFL_POOL(...)
#define OFL_POOL_GRAD(...)
#define OFL_POOL_API(pyname, sig, entry) RUN_POOL_##sig(pyname)
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL
#undef OFL_POOL_GRAD
#undef OFL_POOL_API

  // norm.def: x as [N=2, C=3].
#define RUN_NORM_batch_norm(name) \
  r.Check(#name, ofl::name(x, ofl::zeros({3}, ofl::kFloat64), ofl::ones({3}, ofl::kFloat64)));
#define RUN_NORM_shape_affine(name) r.Check(#name, ofl::name(x, {3}));
#define RUN_NORM_groups_affine(name) r.Check(#name, ofl::name(x, 1));
#define RUN_NORM_shape_weight(name) r.Check(#name, ofl::name(x, {3}));
#define OFL_NORM(...)
#define OFL_NORM_GRAD(...)
#define OFL_NORM_API(pyname, sig, entry) RUN_NORM_##sig(pyname)
#include "oneflow_like/opdefs/norm.def"
#undef OFL_NORM
#undef OFL_NORM_GRAD
#undef OFL_NORM_API

  // softmax.def
#define OFL_SOFTMAX_API(pyname, sig, entry) r.Check(#pyname, ofl::pyname(x));
#define OFL_SOFTMAX(...)
#define OFL_SOFTMAX_GRAD(...)
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX_API

  // loss.def
#define RUN_LOSS_nll_smoothing(name) r.Check(#name, ofl::name(x, I64({2, 0})));
#define RUN_LOSS_nll(name) r.Check(#name, ofl::name(ofl::log_softmax(x, 1), I64({2, 0})));
#define RUN_LOSS_pointwise(name) r.Check(#name, ofl::name(x, y));
#define RUN_LOSS_logits(name) r.Check(#name, ofl::name(x, b1.to(ofl::kFloat64)));
#define OFL_LOSS(...)
#define OFL_LOSS_GRAD(...)
#define OFL_LOSS_API(pyname, sig, entry) RUN_LOSS_##sig(pyname)
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS
#undef OFL_LOSS_GRAD
#undef OFL_LOSS_API

  // nn_misc.def
#define RUN_NN_MISC_embedding(name) r.Check(#name, ofl::name(idx, x.t()));
#define RUN_NN_MISC_dropout(name) r.Check(#name, ofl::name(x));
#define RUN_NN_MISC_flash(name) \
  r.Check(#name, ofl::name(x.unsqueeze(0), y.unsqueeze(0), x.unsqueeze(0)).first);
#define RUN_NN_MISC_attention(name) \
  r.Check(#name, ofl::name(x.unsqueeze(0), y.unsqueeze(0), x.unsqueeze(0)));
#define OFL_NN_MISC(...)
#define OFL_NN_MISC_API(pyname, sig, entry) RUN_NN_MISC_##sig(pyname)
#include "oneflow_like/opdefs/nn_misc.def"
#undef OFL_NN_MISC
#undef OFL_NN_MISC_API

  // rnn.def: hidden size 2, batch 1.
#define RUN_RNN_lstm(name) r.Check(#name, ofl::name(ofl::randn({1, 8}), ofl::randn({1, 2})));
#define RUN_RNN_gru(name) \
  r.Check(#name, ofl::name(ofl::randn({1, 6}), ofl::randn({1, 6}), ofl::randn({1, 2})));
#define RUN_RNN_seq(name)                                                                  \
  {                                                                                        \
    ofl::attrs::RnnSeqAttrs a;                                                             \
    a.hidden_size = 2;                                                                     \
    r.Check(#name, ofl::name({ofl::randn({3, 1, 2}), ofl::randn({1, 1, 2}),                \
                              ofl::randn({1, 1, 2}), ofl::randn({8, 2}), ofl::randn({8, 2}), \
                              ofl::randn({8}), ofl::randn({8})},                           \
                             a));                                                          \
  }
#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN_API(pyname, sig, entry) RUN_RNN_##sig(pyname)
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_RNN_API
#undef OFL_ATTRS
  // clang-format on
  ofl::synchronize();
  // Every family ran (names from each table; see the tables for the full lists).
  for (const char* n : {"xlogy", "addcdiv_", "nanmedian", "kthvalue", "index_put_", "as_strided",
                        "type_as", "empty_like", "random_", "_linalg_svd", "addmm", "conv3d",
                        "max_pool3d", "rms_norm", "log_softmax", "binary_cross_entropy_with_logits",
                        "scaled_dot_product_attention", "_fused_gru_cell", "_rnn_seq"})
    EXPECT_EQ(r.names.count(n), 1u) << n;
  EXPECT_GE(r.names.size(), 120u);
}

double Sig(double v) {
  return 1 / (1 + std::exp(-v));
}
const double kLse123 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));

TEST(TableOps, BinaryAndTernaryValues) {
  ExpectNear(ofl::xlogy(F64({0, 2}, {2}), F64({5, 3}, {2})), {0, 2 * std::log(3.0)});
  ExpectNear(ofl::fmod(F64({-3, 7}, {2}), F64({2, 3}, {2})), {-1, 1});
  ExpectNear(ofl::remainder(F64({-3, 7}, {2}), F64({2, 3}, {2})), {1, 1});
  EXPECT_EQ(Ints(ofl::floor_divide(I64({7, -7}), I64({2, 2}))), (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(Ints(ofl::bitwise_and(I64({6, 5}), I64({3, 4}))), (std::vector<int64_t>{2, 4}));
  ExpectNear(ofl::igamma(F64({1, 1}, {2}), F64({0.5, 2}, {2})),
             {1 - std::exp(-0.5), 1 - std::exp(-2.0)});
  ExpectNear(ofl::special_chebyshev_polynomial_t(F64({0.5}, {1}), F64({3}, {1})), {-1});
  ExpectNear(ofl::special_hermite_polynomial_h(F64({0.5}, {1}), F64({2}, {1})), {-1});
  ExpectNear(ofl::special_zeta(F64({2}, {1}), F64({1}, {1})), {M_PI * M_PI / 6}, 1e-9);
  Tensor a = F64({1, 2}, {2}), t1 = F64({3, 4}, {2}), t2 = F64({2, 8}, {2});
  ExpectNear(ofl::addcdiv(a, t1, t2, {0.5}), {1.75, 2.25});
  Tensor c = a.clone();
  ofl::addcmul_(c, t1, t2);
  ExpectNear(c, {7, 34});
}

TEST(TableOps, ReduceValues) {
  Tensor x = F64({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectNear(ofl::sum(x, {1}), {6, 15});
  Tensor s = ofl::sum(I64({1, 2, 3}), {}, false, ofl::kFloat64);
  EXPECT_EQ(s.dtype(), ofl::kFloat64);
  ExpectNear(s, {6});
  ExpectNear(ofl::nansum(F64({1, NAN, 2}, {3})), {3});
  ExpectNear(ofl::prod(x, {0}), {4, 10, 18});
  ExpectNear(ofl::var(x, {1}), {1, 1});
  ExpectNear(ofl::std(x, {1}, 0.0), {std::sqrt(2.0 / 3), std::sqrt(2.0 / 3)});
  ExpectNear(ofl::norm(x), {std::sqrt(91.0)});
  ExpectNear(ofl::norm(x, 1.0, {1}), {6, 15});
  ExpectNear(ofl::logsumexp(x, {1}), {kLse123, kLse123 + 3});
  ExpectNear(ofl::amax(x, {0}), {4, 5, 6});
  ExpectNear(ofl::max(x), {6});
  auto mx = ofl::max(x, 1);
  ExpectNear(mx.first, {3, 6});
  EXPECT_EQ(Ints(mx.second), (std::vector<int64_t>{2, 2}));
  auto mn = ofl::min(x, 0, true);
  EXPECT_EQ(mn.first.sizes(), (ofl::IntList{1, 3}));
  EXPECT_EQ(Ints(mn.second), (std::vector<int64_t>{0, 0, 0}));
  ExpectNear(ofl::nanmedian(F64({1, NAN, 3, 2}, {4})), {2});
  auto md = ofl::nanmedian(x, 1);
  ExpectNear(md.first, {2, 5});
  EXPECT_EQ(Ints(md.second), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Ints(ofl::argmax(x)), (std::vector<int64_t>{5}));
  EXPECT_EQ(Ints(ofl::argmin(x, 1)), (std::vector<int64_t>{0, 0}));
}

TEST(TableOps, ScanValues) {
  Tensor v = F64({3, 1, 2}, {3});
  ExpectNear(ofl::cumsum(v, 0), {3, 4, 6});
  EXPECT_EQ(ofl::cumsum(I64({1, 2}), 0, ofl::kFloat64).dtype(), ofl::kFloat64);
  ExpectNear(ofl::cumprod(v, 0), {3, 3, 6});
  ExpectNear(ofl::logcumsumexp(v, 0), {3, std::log(std::exp(3.0) + std::exp(1.0)), kLse123});
  auto cmax = ofl::cummax(v, 0);
  ExpectNear(cmax.first, {3, 3, 3});
  EXPECT_EQ(Ints(cmax.second), (std::vector<int64_t>{0, 0, 0}));
  auto cmin = ofl::cummin(v, 0);
  ExpectNear(cmin.first, {3, 1, 1});
  EXPECT_EQ(Ints(cmin.second), (std::vector<int64_t>{0, 1, 1}));
  auto up = ofl::sort(v);
  ExpectNear(up.first, {1, 2, 3});
  EXPECT_EQ(Ints(up.second), (std::vector<int64_t>{1, 2, 0}));
  auto down = ofl::sort(v, 0, true);
  ExpectNear(down.first, {3, 2, 1});
  EXPECT_EQ(Ints(ofl::argsort(v, -1, true)), (std::vector<int64_t>{0, 2, 1}));
  ExpectNear(ofl::msort(F64({3, 1, 1, 2}, {2, 2})), {1, 1, 3, 2});
  auto top = ofl::topk(v, 2);
  ExpectNear(top.first, {3, 2});
  EXPECT_EQ(Ints(top.second), (std::vector<int64_t>{0, 2}));
  auto low = ofl::topk(v, 2, -1, false);
  ExpectNear(low.first, {1, 2});
  auto kth = ofl::kthvalue(v, 2);
  ExpectNear(kth.first, {2});
  EXPECT_EQ(Ints(kth.second), (std::vector<int64_t>{2}));
}

TEST(TableOps, IndexValues) {
  Tensor v = F64({1, 2, 3}, {3});
  Tensor idx = I64({2, 0});
  Tensor src = F64({10, 20}, {2});
  Tensor mask = I64({1, 0, 1}).to(ofl::kBool);
  ExpectNear(ofl::index_add(v, 0, idx, src, 2.0), {41, 2, 23});
  ExpectNear(ofl::scatter(v, 0, idx, src), {20, 2, 10});
  ExpectNear(ofl::scatter(v, 0, idx, src, "add"), {21, 2, 13});
  ExpectNear(ofl::scatter(v, 0, idx, 7.0), {7, 2, 7});
  EXPECT_THROW(ofl::scatter(v, 0, idx, src, "max"), ofl::Error);
  Tensor c = v.clone();
  ofl::scatter_add_(c, 0, idx, src);
  ExpectNear(c, {21, 2, 13});
  ofl::masked_fill_(c, mask, 5.0);
  ExpectNear(c, {5, 2, 5});
  ofl::index_put_(c, {I64({1})}, F64({9}, {1}));
  ExpectNear(c, {5, 9, 5});
  ExpectNear(ofl::index_put(v, {I64({1, 1})}, F64({1, 1}, {2}), true), {1, 4, 3});
  EXPECT_EQ(Ints(ofl::one_hot(idx, 3)), (std::vector<int64_t>{0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(Ints(ofl::nonzero(F64({0, 1, 0, 2}, {4}))), (std::vector<int64_t>{1, 3}));
  ExpectNear(ofl::masked_select(v, mask), {1, 3});
  ExpectNear(ofl::gather(F64({1, 2, 3, 4}, {2, 2}), 1, I64({1, 0}).reshape({2, 1})), {2, 3});
}

TEST(TableOps, ShapeValues) {
  Tensor x = F64({1, 2, 3, 4, 5, 6}, {2, 3});
  auto parts = ofl::split(x, {1, 2}, 1);
  ASSERT_EQ(parts.size(), 2u);
  ExpectNear(parts[0], {1, 4});
  ExpectNear(parts[1], {2, 3, 5, 6});
  EXPECT_EQ(ofl::split(x, 1).size(), 2u);
  ExpectNear(ofl::roll(x, {1}), {6, 1, 2, 3, 4, 5});
  ExpectNear(ofl::roll(x, {1}, {1}), {3, 1, 2, 6, 4, 5});
  ExpectNear(ofl::as_strided(x, {2, 2}, {1, 3}), {1, 4, 2, 5});
  ExpectNear(ofl::as_strided(x, {2}, {1}, 1), {2, 3});
  ExpectNear(ofl::pad(x, {1, 0}, "constant", -1), {-1, 1, 2, 3, -1, 4, 5, 6});
  ExpectNear(ofl::triu(x, 1), {0, 2, 3, 0, 0, 6});
  ExpectNear(ofl::tril(x), {1, 0, 0, 4, 5, 0});
  ExpectNear(ofl::select(x, 1, -1), {3, 6});
  ExpectNear(ofl::narrow(x, 1, 1, 2), {2, 3, 5, 6});
  EXPECT_EQ(ofl::concatenate({x, x}, 1).sizes(), (ofl::IntList{2, 6}));
  EXPECT_EQ(ofl::stack({x, x}).sizes(), (ofl::IntList{2, 2, 3}));
  auto cols = ofl::unbind(x, 1);
  ASSERT_EQ(cols.size(), 3u);
  ExpectNear(cols[1], {2, 5});
  EXPECT_EQ(ofl::chunk(x, 3, 1).size(), 3u);
  EXPECT_EQ(ofl::squeeze(x.unsqueeze(0)).sizes(), (ofl::IntList{2, 3}));
  ExpectNear(ofl::flip(x, {1}), {3, 2, 1, 6, 5, 4});
}

TEST(TableOps, CopyCreationAndRandomValues) {
  Tensor x = F64({1.5, -2.5}, {2});
  Tensor t = ofl::type_as(x, I64({0}));
  EXPECT_EQ(t.dtype(), ofl::kInt64);
  EXPECT_EQ(Ints(t), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(ofl::cast(x, ofl::kInt32).dtype(), ofl::kInt32);
  EXPECT_EQ(ofl::to(x, ofl::Device(ofl::kCPU), ofl::kFloat32).dtype(), ofl::kFloat32);
  Tensor cl = ofl::clone(x);
  EXPECT_FALSE(cl.same(x));
  Tensor dst = ofl::zeros({2, 3}, ofl::kFloat64);
  ofl::copy_(dst, F64({7, 8, 9}, {3}));
  ExpectNear(dst, {7, 8, 9, 7, 8, 9});

  ExpectNear(ofl::full({2}, 1.5), {1.5, 1.5});
  Tensor e = ofl::empty_like(x);
  EXPECT_EQ(e.dtype(), ofl::kFloat64);
  ExpectNear(e, {0, 0});  // creation.def: empty is zero-filled
  ExpectNear(ofl::full_like(x, 2), {2, 2});
  ExpectNear(ofl::eye(2, 3), {1, 0, 0, 0, 1, 0});
  ExpectNear(ofl::arange(1, 3, 0.5, ofl::kFloat32), {1, 1.5, 2, 2.5});
  ExpectNear(ofl::linspace(0, 1, 3), {0, 0.5, 1});
  EXPECT_TRUE(ofl::zeros({2}, ofl::TensorOptions().requires_grad(true)).requires_grad());
  Tensor c = x.clone();
  ofl::fill_(c, 3);
  ExpectNear(c, {3, 3});
  ofl::zero_(c);
  ExpectNear(c, {0, 0});

  ofl::manual_seed(3);
  std::vector<double> a = Vec(ofl::randn({4}));
  ofl::manual_seed(3);
  EXPECT_EQ(Vec(ofl::randn({4})), a);
  ExpectNear(ofl::normal(2.0, 0.0, {3}), {2, 2, 2});
  ExpectNear(ofl::bernoulli(F64({0, 1, 0, 1}, {4})), {0, 1, 0, 1});
  std::vector<int64_t> ri = Ints(ofl::randint(3, 5, {100}));
  std::set<int64_t> seen(ri.begin(), ri.end());
  EXPECT_EQ(seen, (std::set<int64_t>{3, 4}));
  std::vector<int64_t> perm = Ints(ofl::randperm(5));
  EXPECT_EQ(std::set<int64_t>(perm.begin(), perm.end()), (std::set<int64_t>{0, 1, 2, 3, 4}));
  Tensor rl = ofl::rand_like(x);
  EXPECT_EQ(rl.dtype(), ofl::kFloat64);
  for (double u : Vec(rl)) EXPECT_TRUE(u >= 0 && u < 1) << u;
  Tensor f = ofl::zeros({64}, ofl::kFloat64);
  ofl::uniform_(f, -1, 1);
  for (double u : Vec(f)) EXPECT_TRUE(u >= -1 && u < 1) << u;
  ofl::normal_(f, 5.0, 0.0);
  for (double u : Vec(f)) EXPECT_EQ(u, 5.0);
  ofl::random_(f, 2, 4);
  for (double u : Vec(f)) EXPECT_TRUE(u == 2 || u == 3) << u;
  ofl::random_(f, 4);
  for (double u : Vec(f)) EXPECT_TRUE(u >= 0 && u < 4 && u == std::floor(u)) << u;
}

TEST(TableOps, LinalgAndMatmulValues) {
  Tensor m = F64({4, 1, 1, 3}, {2, 2});
  ExpectNear(ofl::det(m), {11});
  ExpectNear(ofl::logdet(m), {std::log(11.0)});
  auto sl = ofl::slogdet(m);
  ExpectNear(sl.first, {1});
  ExpectNear(sl.second, {std::log(11.0)});
  ExpectNear(ofl::inverse(m), {3 / 11.0, -1 / 11.0, -1 / 11.0, 4 / 11.0});
  const double l11 = std::sqrt(3 - 0.25);
  ExpectNear(ofl::cholesky(m), {2, 0, 0.5, l11});
  ExpectNear(ofl::cholesky(m, true), {2, 0.5, 0, l11});
  ExpectNear(ofl::_linalg_solve(m, F64({1, 2}, {2, 1})), {1 / 11.0, 7 / 11.0});
  const double lo = (7 - std::sqrt(5.0)) / 2, hi = (7 + std::sqrt(5.0)) / 2;
  ExpectNear(ofl::_linalg_eigh(m).first, {lo, hi});
  ExpectNear(std::get<1>(ofl::_linalg_svd(m)), {hi, lo});
  auto qr = ofl::qr(m);
  ExpectNear(ofl::matmul(qr.first, qr.second), {4, 1, 1, 3});
  EXPECT_NEAR(std::fabs(Vec(qr.second)[0]), std::sqrt(17.0), 1e-9);
  EXPECT_NEAR(Vec(qr.second)[2], 0, 1e-12);
  ExpectNear(ofl::addmm(m, m, ofl::eye(2, ofl::kFloat64), 2.0, 0.5), {10, 2.5, 2.5, 7.5});
  EXPECT_EQ(ofl::bmm(m.unsqueeze(0), m.unsqueeze(0)).sizes(), (ofl::IntList{1, 2, 2}));
}

TEST(TableOps, ConvPoolValues) {
  Tensor in = ofl::ones({1, 1, 3, 3, 3});
  Tensor w = ofl::ones({1, 1, 2, 2, 2});
  ExpectNear(ofl::conv3d(in, w, ofl::ones({1})), std::vector<double>(8, 9));
  // stride 2, padding 1: windows cover 1 then 2 input elements per dim.
  ExpectNear(ofl::conv3d(in, w, Tensor(), {2}, {1}), {1, 2, 2, 4, 2, 4, 4, 8});
  Tensor seq = ofl::tensor(std::vector<float>{1, 3, 2, 4}).reshape({1, 1, 4});
  ExpectNear(ofl::max_pool1d(seq, {2}), {3, 4});
  ExpectNear(ofl::avg_pool1d(seq, {2}), {2, 3});
  auto mi = ofl::max_pool2d_with_indices(seq.reshape({1, 1, 2, 2}), {2});
  ExpectNear(mi.first, {4});
  EXPECT_EQ(Ints(mi.second), (std::vector<int64_t>{3}));
  ExpectNear(ofl::avg_pool2d(ofl::ones({1, 1, 4, 4}), {2}, {}, {0}, false, true, 3),
             std::vector<double>(4, 4.0 / 3));
  ExpectNear(ofl::avg_pool2d(ofl::ones({1, 1, 2, 2}), {2}, {}, {1}), std::vector<double>(4, 0.25));
  ExpectNear(ofl::avg_pool2d(ofl::ones({1, 1, 2, 2}), {2}, {}, {1}, false, false),
             std::vector<double>(4, 1));
  Tensor cube = ofl::arange(0, 8, 1, ofl::kFloat32).reshape({1, 1, 2, 2, 2});
  ExpectNear(ofl::adaptive_avg_pool3d(cube, {1}), {3.5});
  ExpectNear(ofl::max_pool3d(cube, {2}), {7});
}

TEST(TableOps, NormSoftmaxValues) {
  std::vector<double> v = {1, 2, 3, 4, 5, 7};
  Tensor x = F64(v, {2, 3});
  std::vector<double> rms, ln;
  for (int r = 0; r < 2; ++r) {
    double ms = 0, mean = 0, var = 0;
    for (int j = 0; j < 3; ++j) ms += v[r * 3 + j] * v[r * 3 + j] / 3, mean += v[r * 3 + j] / 3;
    for (int j = 0; j < 3; ++j) var += (v[r * 3 + j] - mean) * (v[r * 3 + j] - mean) / 3;
    for (int j = 0; j < 3; ++j) {
      rms.push_back(v[r * 3 + j] / std::sqrt(ms + 1e-6));
      ln.push_back((v[r * 3 + j] - mean) / std::sqrt(var + 1e-5));
    }
  }
  ExpectNear(ofl::rms_norm(x, {3}, Tensor(), 1e-6), rms);
  ExpectNear(ofl::layer_norm(x, {3}), ln);
  const double g = 0.5 / std::sqrt(0.25 + 1e-5);
  ExpectNear(ofl::group_norm(F64({1, 2, 3, 4}, {1, 4, 1}), 2), {-g, g, -g, g});
  Tensor rm = ofl::zeros({3}, ofl::kFloat64), rv = ofl::ones({3}, ofl::kFloat64);
  Tensor bn = ofl::batch_norm(x, rm, rv, Tensor(), Tensor(), true);
  const double b = 1.5 / std::sqrt(2.25 + 1e-5);
  ExpectNear(bn.select(1, 0), {-b, b});
  ExpectNear(rm, {0.25, 0.35, 0.5});    // 0.1 * batch mean
  ExpectNear(rv.select(0, 0), {1.35});  // 0.9 + 0.1 * unbiased var 4.5
  ExpectNear(ofl::softmax(F64({1, 2, 3}, {3})),
             {std::exp(1 - kLse123), std::exp(2 - kLse123), std::exp(3 - kLse123)});
}

TEST(TableOps, LossNnMiscRnnValues) {
  Tensor logits = F64({1, 2, 3, 1, 2, 3}, {2, 3});
  Tensor target = I64({2, 0});
  ExpectNear(ofl::cross_entropy(logits, target), {((kLse123 - 3) + (kLse123 - 1)) / 2});
  ExpectNear(ofl::cross_entropy(logits, target, "sum", 0.0, F64({1, 1, 2}, {3})),
             {2 * (kLse123 - 3) + (kLse123 - 1)});
  ExpectNear(ofl::cross_entropy(logits, target, "mean", 0.0, Tensor(), 0), {kLse123 - 3});
  ExpectNear(ofl::cross_entropy(logits.select(0, 0), I64({2}).reshape({}), "mean", 0.1),
             {0.9 * (kLse123 - 3) + 0.1 * (kLse123 - 2)});
  ExpectNear(ofl::nll_loss(ofl::log_softmax(logits, 1), target, "none"),
             {kLse123 - 3, kLse123 - 1});
  ExpectNear(ofl::mse_loss(F64({1, 2}, {2}), F64({0, 4}, {2}), "sum"), {5});
  ExpectNear(ofl::binary_cross_entropy_with_logits(F64({0, 1}, {2}), F64({1, 0}, {2}), "none",
                                                   Tensor(), F64({2, 2}, {2})),
             {2 * std::log(2.0), std::log(1 + std::exp(1.0))});

  Tensor w = F64({1, 2, 3, 4, 5, 6}, {3, 2}).requires_grad_();
  ExpectNear(ofl::embedding(I64({2, 0}), w), {5, 6, 1, 2});
  ofl::embedding(I64({0, 1}), w, 0).sum().backward();
  ExpectNear(w.grad(), {0, 0, 1, 1, 0, 0});
  ExpectNear(ofl::dropout(logits, 0.0), {1, 2, 3, 1, 2, 3});
  ExpectNear(ofl::dropout(logits, 0.5, false), {1, 2, 3, 1, 2, 3});
  Tensor q = F64({1, 0, 0, 1}, {1, 2, 2}), val = F64({1, 2, 3, 4}, {1, 2, 2});
  ExpectNear(ofl::scaled_dot_product_attention(q, q, val, Tensor(), 0.0, false, 0.0), {2, 3, 2, 3});
  ExpectNear(ofl::scaled_dot_product_attention(q, q, val, Tensor(), 0.0, true, 0.0), {1, 2, 2, 3});

  // LSTM gates (i, f, g, o), GRU (r, z, n): one hidden unit, float64 by hand.
  auto lstm = ofl::_fused_lstm_cell(F64({0.5, -0.3, 0.8, 0.1}, {1, 4}), F64({0.2}, {1, 1}));
  const double c1 = Sig(-0.3) * 0.2 + Sig(0.5) * std::tanh(0.8);
  ExpectNear(lstm.second, {c1});
  ExpectNear(lstm.first, {Sig(0.1) * std::tanh(c1)});
  Tensor h1 = ofl::_fused_gru_cell(F64({0.1, 0.2, 0.3}, {1, 3}), F64({0.4, -0.5, 0.6}, {1, 3}),
                                   F64({0.7}, {1, 1}));
  const double rg = Sig(0.1 + 0.4), zg = Sig(0.2 - 0.5), ng = std::tanh(0.3 + rg * 0.6);
  ExpectNear(h1, {(1 - zg) * ng + zg * 0.7});
}

}  // namespace
