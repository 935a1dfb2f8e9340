// Shape family: schemas, gradient formulas and functional entries.
#include "oneflow_like/ops/shape_ops.h"

#include <numeric>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/reduce.h"

namespace oneflow_like {
namespace {

Shape ShapeAttr(const AttrMap& a) { return Shape(DimVector(a.Ints("shape").begin(), a.Ints("shape").end())); }
std::vector<int64_t> Dims(const Shape& s) { return std::vector<int64_t>(s.dims().begin(), s.dims().end()); }

// reshape(x; shape): x is contiguous (the functional entry ensures it).
const OpDef kReshape{
    "reshape",
    [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      Shape s = ShapeAttr(a);
      if (s.numel() != in[0].numel())
        return InvalidArgument("[reshape] shape %s is invalid for input %s", s.ToString(), in[0].meta_string());
      out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
      return Status();
    },
    [](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(Tensor g, functional::Reshape(c.grad_outputs[0], c.inputs[0].shape()));
      return TensorList{g};
    },
    [](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides, int64_t* offset) {
      *shape = ShapeAttr(a);
      *strides = ContiguousStrides(*shape);
      *offset = x.offset();
      return Status();
    },
    true, false, true, false};

const OpDef kExpand{
    "expand",
    [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      Shape s = ShapeAttr(a);
      ASSIGN_OR_RETURN(Shape b, BroadcastShapes("expand", in[0].shape(), s));
      if (b != s) return InvalidArgument("[expand] cannot expand %s to %s", in[0].meta_string(), s.ToString());
      out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
      return Status();
    },
    [](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(Tensor g, functional::SumToShape(c.grad_outputs[0], c.inputs[0].shape()));
      return TensorList{g};
    },
    [](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides, int64_t* offset) {
      *shape = ShapeAttr(a);
      int64_t n = shape->ndim(), lead = n - x.ndim();
      strides->assign(n, 0);
      for (int64_t i = 0; i < x.ndim(); ++i)
        (*strides)[i + lead] = (x.dim(i) == 1 && (*shape)[i + lead] != 1) ? 0 : x.strides()[i];
      *offset = x.offset();
      return Status();
    },
    true, false, true, false};

const OpDef kPermute{
    "permute",
    [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
      const auto& p = a.Ints("perm");
      DimVector s;
      for (int64_t d : p) s.push_back(in[0].dim(d));
      out->push_back(TensorMeta{Shape(s), in[0].dtype(), in[0].device()});
      return Status();
    },
    [](const GradContext& c) -> StatusOr<TensorList> {
      const auto& p = c.attrs.Ints("perm");
      std::vector<int64_t> inv(p.size());
      for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
      ASSIGN_OR_RETURN(Tensor g, functional::Permute(c.grad_outputs[0], inv));
      return TensorList{g};
    },
    [](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides, int64_t* offset) {
      DimVector s, st;
      for (int64_t d : a.Ints("perm")) { s.push_back(x.dim(d)); st.push_back(x.strides()[d]); }
      *shape = Shape(s);
      *strides = st;
      *offset = x.offset();
      return Status();
    },
    true, false, false, false};

}  // namespace

namespace functional {

StatusOr<Tensor> Reshape(const Tensor& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  ASSIGN_OR_RETURN(Tensor c, Contiguous(x));
  return Dispatch1(kReshape, {c}, {{"shape", Dims(shape)}});
}

StatusOr<Tensor> ReshapeInfer(const Tensor& x, const std::vector<int64_t>& shape) {
  DimVector s(shape.begin(), shape.end());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) return InvalidArgument("[reshape] only one dimension can be -1, got %s", Shape(s).ToString());
      infer = static_cast<int64_t>(i);
    } else if (s[i] < 0) {
      return InvalidArgument("[reshape] invalid dimension %d in %s", s[i], Shape(s).ToString());
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      return InvalidArgument("[reshape] shape %s is invalid for input %s", Shape(s).ToString(), x.meta_string());
    s[infer] = x.numel() / known;
  }
  return Reshape(x, Shape(s));
}

StatusOr<Tensor> Expand(const Tensor& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  return Dispatch1(kExpand, {x}, {{"shape", Dims(shape)}});
}

StatusOr<Tensor> Permute(const Tensor& x, const std::vector<int64_t>& perm) {
  if (static_cast<int64_t>(perm.size()) != x.ndim())
    return InvalidArgument("[permute] got %d dims in perm for input %s", int(perm.size()), x.meta_string());
  std::vector<int64_t> p;
  std::vector<bool> seen(perm.size());
  for (int64_t d : perm) {
    ASSIGN_OR_RETURN(int64_t w, WrapDim("permute", d, x.ndim()));
    if (seen[w]) return InvalidArgument("[permute] repeated dim %d in perm", d);
    seen[w] = true;
    p.push_back(w);
  }
  return Dispatch1(kPermute, {x}, {{"perm", p}});
}

StatusOr<Tensor> Transpose(const Tensor& x, int64_t d0, int64_t d1) {
  ASSIGN_OR_RETURN(int64_t a, WrapDim("transpose", d0, x.ndim()));
  ASSIGN_OR_RETURN(int64_t b, WrapDim("transpose", d1, x.ndim()));
  std::vector<int64_t> p(x.ndim());
  std::iota(p.begin(), p.end(), 0);
  if (x.ndim() > 0) std::swap(p[a], p[b]);
  return Permute(x, p);
}

}  // namespace functional
}  // namespace oneflow_like
