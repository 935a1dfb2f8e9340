// Functional ops of the C++ API: the unary table's ops expanded from opdefs/unary.def, the table
// rows marked custom and the operators bound by hand to the functional entries
// (oneflow_like/ops/<family>.h); methods forward to the free functions (ops_tables.cc has the
// other tables' generated ones).
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/conv.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/loss.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/nn_misc.h"
#include "oneflow_like/ops/norm.h"
#include "oneflow_like/ops/pool.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/softmax.h"
#include "oneflow_like/ops/ternary.h"
#include "oneflow_like/ops/unary.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace F = ::oneflow_like::functional;
namespace {

// Public attribute struct -> the runtime's (same fields, both expanded from the table).
// clang-format off
#define OFL_ATTR(type, name, def) r.name = a.name;
#define OFL_ATTRS(Struct, fields)                              \
  [[maybe_unused]] opdefs::Struct Internal(const Struct& a) { \
    opdefs::Struct r;                                          \
    (void)a;                                                   \
    fields return r;                                           \
  }
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_ATTRS
#undef OFL_ATTR
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
// clang-format on

}  // namespace

// ---- The unary table.
// clang-format off
#define OFL_API_DEFINE_special(name, Name, Attrs)                            \
  Tensor name(const Tensor& x, const Attrs& attrs) {                         \
    return Out(F::Name(A(x, #name), Internal(attrs)));                       \
  }
#define OFL_API_DEFINE_gen(name, Name, Attrs)                                \
  OFL_API_DEFINE_special(name, Name, Attrs)                                  \
  Tensor Tensor::name(const Attrs& attrs) const { return v1::name(*this, attrs); }
#define OFL_API_DEFINE_gen_ip(name, Name, Attrs)                             \
  OFL_API_DEFINE_gen(name, Name, Attrs)                                      \
  Tensor& name##_(Tensor& x, const Attrs& attrs) {                           \
    Check(F::Name##_(A(x, #name "_"), Internal(attrs)));                     \
    return x;                                                                \
  }                                                                          \
  Tensor& Tensor::name##_(const Attrs& attrs) { return v1::name##_(*this, attrs); }
#define OFL_API_DEFINE_fn_only OFL_API_DEFINE_gen_ip
#define OFL_API_DEFINE_custom(name, Name, Attrs)
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) OFL_API_DEFINE_##api(name, Name, Attrs)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"

#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
// clang-format on

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh")
    throw Error(Error::Kind::kValue,
                "[gelu] approximate must be 'none' or 'tanh', got '" + approximate + "'");
  return Out(F::Gelu(A(x, "gelu"), {approximate == "tanh"}));
}
Tensor leaky_relu(const Tensor& x, double slope) {
  return Out(F::LeakyRelu(A(x, "leaky_relu"), {slope}));
}
Tensor elu(const Tensor& x, double alpha) {
  return Out(F::Elu(A(x, "elu"), {alpha}));
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return Out(F::Softplus(A(x, "softplus"), {beta, threshold}));
}
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  return Out(F::Clamp(A(x, "clamp"), lo, hi));
}
Tensor pow(const Tensor& x, double e) {
  return Out(F::PowScalar(A(x, "pow"), e));
}
Tensor pow(double base, const Tensor& e) {
  return Out(F::RPowScalar(A(e, "pow"), base));
}
Tensor bitwise_not(const Tensor& x) {
  return Out(F::BitwiseNot(A(x, "bitwise_not")));
}
Tensor logical_not(const Tensor& x) {
  return Out(F::LogicalNot(A(x, "logical_not")));
}

// ---- Binary, ternary.
Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  return Out(F::Add(A(a, "add"), A(b, "add"), alpha));
}
Tensor sub(const Tensor& a, const Tensor& b, double alpha) {
  return Out(F::Sub(A(a, "sub"), A(b, "sub"), alpha));
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return Out(F::Mul(A(a, "mul"), A(b, "mul")));
}
Tensor div(const Tensor& a, const Tensor& b) {
  return Out(F::Div(A(a, "div"), A(b, "div")));
}
Tensor pow(const Tensor& a, const Tensor& b) {
  return Out(F::Pow(A(a, "pow"), A(b, "pow")));
}
#define OFL_API_COMPARE(name, Op)                                       \
  Tensor name(const Tensor& a, const Tensor& b) {                       \
    return Out(F::Compare(F::CompareOp::Op, A(a, #name), A(b, #name))); \
  }                                                                     \
  Tensor Tensor::name(const Tensor& other) const {                      \
    return v1::name(*this, other);                                      \
  }
OFL_API_COMPARE(eq, kEq)
OFL_API_COMPARE(ne, kNe)
OFL_API_COMPARE(lt, kLt)
OFL_API_COMPARE(le, kLe)
OFL_API_COMPARE(gt, kGt)
OFL_API_COMPARE(ge, kGe)
#undef OFL_API_COMPARE
Tensor where(const Tensor& c, const Tensor& x, const Tensor& y) {
  return Out(F::Where(A(c, "where"), A(x, "where"), A(y, "where")));
}
Tensor addcmul(const Tensor& in, const Tensor& t1, const Tensor& t2, double value) {
  return Out(F::Addcmul(A(in, "addcmul"), A(t1, "addcmul"), A(t2, "addcmul"), value));
}
Tensor addcdiv(const Tensor& in, const Tensor& t1, const Tensor& t2, double value) {
  return Out(F::Addcdiv(A(in, "addcdiv"), A(t1, "addcdiv"), A(t2, "addcdiv"), value));
}
Tensor lerp(const Tensor& s, const Tensor& e, double w) {
  return Out(F::LerpScalar(A(s, "lerp"), A(e, "lerp"), w));
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator+(const Tensor& a, double s) {
  return Out(F::AddScalar(A(a, "add"), s));
}
Tensor operator-(const Tensor& a, double s) {
  return Out(F::AddScalar(A(a, "sub"), -s));
}
Tensor operator*(const Tensor& a, double s) {
  return Out(F::MulScalar(A(a, "mul"), s));
}
Tensor operator/(const Tensor& a, double s) {
  return Out(F::MulScalar(A(a, "div"), 1.0 / s));
}
Tensor operator+(double s, const Tensor& a) {
  return a + s;
}
Tensor operator-(double s, const Tensor& a) {
  return Out(F::RSubScalar(A(a, "sub"), s));
}
Tensor operator*(double s, const Tensor& a) {
  return a * s;
}
Tensor operator/(double s, const Tensor& a) {
  return Out(F::RDivScalar(A(a, "div"), s));
}
Tensor operator-(const Tensor& a) {
  return neg(a);
}
Tensor operator==(const Tensor& a, const Tensor& b) {
  return eq(a, b);
}
Tensor operator<(const Tensor& a, const Tensor& b) {
  return lt(a, b);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
  return gt(a, b);
}
Tensor& operator+=(Tensor& a, const Tensor& b) {
  return a.add_(b);
}
Tensor& operator*=(Tensor& a, const Tensor& b) {
  return a.mul_(b);
}
Tensor& operator+=(Tensor& a, double s) {
  return a.add_(s);
}
Tensor& operator*=(Tensor& a, double s) {
  return a.mul_(s);
}

Tensor Tensor::add(const Tensor& o, double alpha) const {
  return v1::add(*this, o, alpha);
}
Tensor Tensor::add(double o) const {
  return *this + o;
}
Tensor Tensor::sub(const Tensor& o, double alpha) const {
  return v1::sub(*this, o, alpha);
}
Tensor Tensor::sub(double o) const {
  return *this - o;
}
Tensor Tensor::mul(const Tensor& o) const {
  return v1::mul(*this, o);
}
Tensor Tensor::mul(double o) const {
  return *this * o;
}
Tensor Tensor::div(const Tensor& o) const {
  return v1::div(*this, o);
}
Tensor Tensor::div(double o) const {
  return *this / o;
}
Tensor Tensor::pow(const Tensor& e) const {
  return v1::pow(*this, e);
}
Tensor Tensor::pow(double e) const {
  return v1::pow(*this, e);
}
Tensor Tensor::maximum(const Tensor& o) const {
  return v1::maximum(*this, o);
}
Tensor Tensor::minimum(const Tensor& o) const {
  return v1::minimum(*this, o);
}
Tensor Tensor::clamp(std::optional<double> lo, std::optional<double> hi) const {
  return v1::clamp(*this, lo, hi);
}

// In place.
Tensor& Tensor::add_(const Tensor& o, double alpha) {
  Check(F::Add_(A(*this, "add_"), A(o, "add_"), alpha));
  return *this;
}
Tensor& Tensor::add_(double o) {
  Check(F::AddScalar_(A(*this, "add_"), o));
  return *this;
}
Tensor& Tensor::mul_(const Tensor& o) {
  Check(F::Mul_(A(*this, "mul_"), A(o, "mul_")));
  return *this;
}
Tensor& Tensor::mul_(double o) {
  Check(F::MulScalar_(A(*this, "mul_"), o));
  return *this;
}
Tensor& Tensor::div_(const Tensor& o) {
  Check(F::Div_(A(*this, "div_"), A(o, "div_")));
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src) {
  Check(F::CopyInto(A(*this, "copy_"), A(src, "copy_")));
  return *this;
}
Tensor& Tensor::fill_(double v) {
  Check(F::Fill_(A(*this, "fill_"), v));
  return *this;
}

// ---- Reductions.
Tensor Tensor::sum(const IntList& d, bool k) const {
  return v1::sum(*this, d, k);
}
Tensor Tensor::mean(const IntList& d, bool k) const {
  return v1::mean(*this, d, k);
}
Tensor Tensor::amax(const IntList& d, bool k) const {
  return v1::amax(*this, d, k);
}
Tensor Tensor::amin(const IntList& d, bool k) const {
  return v1::amin(*this, d, k);
}
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const {
  return v1::argmax(*this, d, k);
}
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const {
  return v1::argmin(*this, d, k);
}

// ---- Matrix products.
Tensor Tensor::matmul(const Tensor& o) const {
  return v1::matmul(*this, o);
}
Tensor Tensor::mm(const Tensor& o) const {
  return v1::mm(*this, o);
}

// ---- Shapes and indexing.
Tensor reshape(const Tensor& x, const IntList& shape) {
  return Out(F::ReshapeInfer(A(x, "reshape"), Dims(shape)));
}
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  return Out(F::Transpose(A(x, "transpose"), d0, d1));
}
Tensor permute(const Tensor& x, const IntList& dims) {
  return Out(F::Permute(A(x, "permute"), Dims(dims)));
}
Tensor Tensor::reshape(const IntList& s) const {
  return v1::reshape(*this, s);
}
Tensor Tensor::flatten(int64_t s, int64_t e) const {
  return v1::flatten(*this, s, e);
}
Tensor Tensor::transpose(int64_t a, int64_t b) const {
  return v1::transpose(*this, a, b);
}
Tensor Tensor::permute(const IntList& d) const {
  return v1::permute(*this, d);
}
Tensor Tensor::unsqueeze(int64_t d) const {
  return v1::unsqueeze(*this, d);
}
Tensor Tensor::squeeze(std::optional<int64_t> d) const {
  return v1::squeeze(*this, d);
}
Tensor Tensor::select(int64_t dim, int64_t index) const {
  return Out(F::Select(A(*this, "select"), dim, index));
}
Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  return Out(F::Slice(A(*this, "slice"), dim, start, end, step));
}
Tensor Tensor::index_select(int64_t d, const Tensor& i) const {
  return v1::index_select(*this, d, i);
}
Tensor Tensor::gather(int64_t d, const Tensor& i) const {
  return v1::gather(*this, d, i);
}

// ---- nn.functional.
Tensor Tensor::softmax(int64_t d) const {
  return v1::softmax(*this, d);
}
Tensor Tensor::log_softmax(int64_t d) const {
  return v1::log_softmax(*this, d);
}

}  // namespace v1
}  // namespace oneflow_like
