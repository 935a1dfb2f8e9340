// Shape family: schemas, gradient formulas and functional entries.
#include "oneflow_like/ops/shape_ops.h"

#include <algorithm>
#include <numeric>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/reduce.h"

namespace oneflow_like {
namespace {

Shape ShapeAttr(const AttrMap& a) {
  return Shape(DimVector(a.Ints("shape").begin(), a.Ints("shape").end()));
}
std::vector<int64_t> Dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

// reshape(x; shape): x is contiguous (the functional entry ensures it).
const OpDef kReshape =
    OpSpec("reshape",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             Shape s = ShapeAttr(a);
             if (s.numel() != in[0].numel())
               return InvalidArgument("[reshape] shape %s is invalid for input %s", s.ToString(),
                                      in[0].meta_string());
             out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, functional::Reshape(c.grad_outputs[0], c.inputs[0].shape()));
          return TensorList{g};
        })
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          *shape = ShapeAttr(a);
          *strides = ContiguousStrides(*shape);
          *offset = x.offset();
          return Status();
        })
        .StridedInputs()
        .SaveOutputs(false);

const OpDef kExpand =
    OpSpec("expand",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             Shape s = ShapeAttr(a);
             ASSIGN_OR_RETURN(Shape b, BroadcastShapes("expand", in[0].shape(), s));
             if (b != s)
               return InvalidArgument("[expand] cannot expand %s to %s", in[0].meta_string(),
                                      s.ToString());
             out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g,
                           functional::SumToShape(c.grad_outputs[0], c.inputs[0].shape()));
          return TensorList{g};
        })
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          *shape = ShapeAttr(a);
          int64_t n = shape->ndim(), lead = n - x.ndim();
          strides->assign(n, 0);
          for (int64_t i = 0; i < x.ndim(); ++i)
            (*strides)[i + lead] = (x.dim(i) == 1 && (*shape)[i + lead] != 1) ? 0 : x.strides()[i];
          *offset = x.offset();
          return Status();
        })
        .StridedInputs()
        .SaveOutputs(false);

const OpDef kPermute =
    OpSpec("permute",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             const auto& p = a.Ints("perm");
             DimVector s;
             for (int64_t d : p) s.push_back(in[0].dim(d));
             out->push_back(TensorMeta{Shape(s), in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          const auto& p = c.attrs.Ints("perm");
          std::vector<int64_t> inv(p.size());
          for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
          ASSIGN_OR_RETURN(Tensor g, functional::Permute(c.grad_outputs[0], inv));
          return TensorList{g};
        })
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          DimVector s, st;
          for (int64_t d : a.Ints("perm")) {
            s.push_back(x.dim(d));
            st.push_back(x.strides()[d]);
          }
          *shape = Shape(s);
          *strides = st;
          *offset = x.offset();
          return Status();
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

Shape InShape(const AttrMap& a) {
  return Shape(DimVector(a.Ints("in_shape").begin(), a.Ints("in_shape").end()));
}
DimVector ToDims(const std::vector<int64_t>& v) {
  return DimVector(v.begin(), v.end());
}
std::vector<int64_t> Ints(const DimVector& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

// Views carry the input's shape as attr "in_shape", so backward needs no saved tensor.
Status InferView(const OpDef& op, const TensorList& in, const AttrMap& a,
                 std::vector<TensorMeta>* out) {
  Shape s;
  DimVector st;
  int64_t off = 0;
  RETURN_IF_ERROR(op.view(in[0], a, &s, &st, &off));
  out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
  return Status();
}

// The gradient of a view: the upstream gradient written into zeros of the input's shape at the
// place the view takes of a contiguous tensor.
StatusOr<TensorList> ScatterViewGrad(const OpDef& op, const GradContext& c) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = InShape(c.attrs);
  impl->strides = ContiguousStrides(impl->shape);
  Shape vs;
  DimVector st;
  int64_t off = 0;
  RETURN_IF_ERROR(op.view(Tensor(impl), c.attrs, &vs, &st, &off));
  ASSIGN_OR_RETURN(Tensor g, functional::AsStridedScatter(c.grad_outputs[0], impl->shape, st, off));
  return TensorList{g};
}

StatusOr<TensorList> ReshapeBackGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, functional::Reshape(c.grad_outputs[0], InShape(c.attrs)));
  return TensorList{g};
}

// squeeze(x; dims): removes the listed size-1 dims.
const OpDef kSqueeze =
    OpSpec("squeeze", [](const TensorList& in, const AttrMap& a,
                         std::vector<TensorMeta>* out) { return InferView(kSqueeze, in, a, out); })
        .Grad(ReshapeBackGrad)
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          const auto& dims = a.Ints("dims");
          DimVector s, st;
          for (int64_t i = 0; i < x.ndim(); ++i) {
            if (std::find(dims.begin(), dims.end(), i) != dims.end()) continue;
            s.push_back(x.dim(i));
            st.push_back(x.strides()[i]);
          }
          *shape = Shape(s);
          *strides = st;
          *offset = x.offset();
          return Status();
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

// unsqueeze(x; dim): inserts a size-1 dim at `dim` in [0, ndim].
const OpDef kUnsqueeze =
    OpSpec("unsqueeze",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             return InferView(kUnsqueeze, in, a, out);
           })
        .Grad(ReshapeBackGrad)
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          int64_t d = a.Int("dim");
          DimVector s = x.shape().dims(), st = x.strides();
          int64_t inner = d < x.ndim() ? st[d] * s[d] : 1;
          s.insert(s.begin() + d, 1);
          st.insert(st.begin() + d, inner);
          *shape = Shape(s);
          *strides = st;
          *offset = x.offset();
          return Status();
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

// slice(x; dim, start, length, step): normalised by the functional entry.
const OpDef kSlice =
    OpSpec("slice", [](const TensorList& in, const AttrMap& a,
                       std::vector<TensorMeta>* out) { return InferView(kSlice, in, a, out); })
        .Grad([](const GradContext& c) { return ScatterViewGrad(kSlice, c); })
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          int64_t d = a.Int("dim");
          *shape = x.shape();
          (*shape)[d] = a.Int("length");
          *strides = x.strides();
          (*strides)[d] *= a.Int("step");
          *offset = x.offset() + a.Int("start") * x.strides()[d];
          return Status();
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

// select(x; dim, index): index normalised to [0, size).
const OpDef kSelect =
    OpSpec("select", [](const TensorList& in, const AttrMap& a,
                        std::vector<TensorMeta>* out) { return InferView(kSelect, in, a, out); })
        .Grad([](const GradContext& c) { return ScatterViewGrad(kSelect, c); })
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          int64_t d = a.Int("dim");
          DimVector s = x.shape().dims(), st = x.strides();
          *offset = x.offset() + a.Int("index") * st[d];
          s.erase(s.begin() + d);
          st.erase(st.begin() + d);
          *shape = Shape(s);
          *strides = st;
          return Status();
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

// as_strided(x; shape, strides, offset): x contiguous; offset relative to x's.
const OpDef kAsStrided =
    OpSpec("as_strided",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             return InferView(kAsStrided, in, a, out);
           })
        .Grad([](const GradContext& c) { return ScatterViewGrad(kAsStrided, c); })
        .View([](const Tensor& x, const AttrMap& a, Shape* shape, DimVector* strides,
                 int64_t* offset) {
          *shape = ShapeAttr(a);
          *strides = ToDims(a.Ints("strides"));
          *offset = x.offset() + a.Int("offset");
          return Status();
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

// as_strided_scatter(src; in_shape, shape, strides, offset) = zeros(in_shape) with src added into
// the view (overlapping view elements accumulate, as a gradient must).
const OpDef kAsStridedScatter =
    OpSpec("as_strided_scatter",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             if (ShapeAttr(a) != in[0].shape())
               return InvalidArgument(
                   "[as_strided_scatter] source %s does not match the view shape %s",
                   in[0].meta_string(), ShapeAttr(a).ToString());
             out->push_back(TensorMeta{InShape(a), in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, functional::Contiguous(c.grad_outputs[0]));
          ASSIGN_OR_RETURN(
              g, functional::AsStrided(g, ShapeAttr(c.attrs), ToDims(c.attrs.Ints("strides")),
                                       c.attrs.Int("offset")));
          return TensorList{g};
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false)
        .LowPrecision(kLowPrecisionCPU);

// cat(xs...; dim): inputs share dtype and all sizes but `dim`'s.
const OpDef kCat =
    OpSpec("cat",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             int64_t d = a.Int("dim");
             Shape s = in[0].shape();
             s[d] = 0;
             for (auto& t : in) {
               bool ok = t.ndim() == s.ndim() && t.dtype() == in[0].dtype();
               for (int64_t i = 0; ok && i < t.ndim(); ++i) ok = i == d || t.dim(i) == s[i];
               if (!ok)
                 return InvalidArgument("[cat] tensors must match except in dim %d: got %s and %s",
                                        d, in[0].meta_string(), t.meta_string());
               s[d] += t.dim(d);
             }
             out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          int64_t d = c.attrs.Int("dim"), start = 0;
          const auto& sizes = c.attrs.Ints("sizes");
          TensorList r;
          for (int64_t n : sizes) {
            ASSIGN_OR_RETURN(Tensor g, functional::Narrow(c.grad_outputs[0], d, start, n));
            r.push_back(g);
            start += n;
          }
          return r;
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false)
        .LowPrecision(kLowPrecisionCPU);

// flip(x; dims)
const OpDef kFlip =
    OpSpec("flip", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, functional::Flip(c.grad_outputs[0], c.attrs.Ints("dims")));
          return TensorList{g};
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false)
        .LowPrecision(kLowPrecisionCPU);

// tril/triu(x; diagonal, upper) over the last two dims.
const OpDef kTril =
    OpSpec("tril",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             const char* name = a.Bool("upper") ? "triu" : "tril";
             if (in[0].ndim() < 2)
               return InvalidArgument("[%s] expects a tensor with >= 2 dims, got %s", name,
                                      in[0].meta_string());
             return ops::InferSameAsInput(in, a, out);
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          int64_t k = c.attrs.Int("diagonal");
          ASSIGN_OR_RETURN(Tensor g, c.attrs.Bool("upper")
                                         ? functional::Triu(c.grad_outputs[0], k)
                                         : functional::Tril(c.grad_outputs[0], k));
          return TensorList{g};
        })
        .SaveInputs(false)
        .SaveOutputs(false)
        .LowPrecision(kLowPrecisionCPU);

// pad(x; pads (before, after per dim, all >= 0), value): constant padding.
const OpDef kPad = OpSpec("pad",
                          [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
                            Shape s = in[0].shape();
                            const auto& p = a.Ints("pads");
                            for (int64_t i = 0; i < s.ndim(); ++i) s[i] += p[2 * i] + p[2 * i + 1];
                            out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
                            return Status();
                          })
                       .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                         Shape in = InShape(c.attrs);
                         ASSIGN_OR_RETURN(Tensor g, functional::Contiguous(c.grad_outputs[0]));
                         DimVector st = ContiguousStrides(g.shape());
                         const auto& p = c.attrs.Ints("pads");
                         int64_t off = 0;
                         for (int64_t i = 0; i < in.ndim(); ++i) off += p[2 * i] * st[i];
                         ASSIGN_OR_RETURN(g, functional::AsStrided(g, in, st, off));
                         return TensorList{g};
                       })
                       .StridedInputs()
                       .SaveInputs(false)
                       .SaveOutputs(false)
                       .LowPrecision(kLowPrecisionCPU);

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
      if (infer >= 0)
        return InvalidArgument("[reshape] only one dimension can be -1, got %s",
                               Shape(s).ToString());
      infer = static_cast<int64_t>(i);
    } else if (s[i] < 0) {
      return InvalidArgument("[reshape] invalid dimension %d in %s", s[i], Shape(s).ToString());
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      return InvalidArgument("[reshape] shape %s is invalid for input %s", Shape(s).ToString(),
                             x.meta_string());
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
    return InvalidArgument("[permute] got %d dims in perm for input %s", int(perm.size()),
                           x.meta_string());
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

StatusOr<Tensor> Squeeze(const Tensor& x, std::vector<int64_t> dims) {
  std::vector<int64_t> keep;
  if (dims.empty()) {
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (x.dim(i) == 1) keep.push_back(i);
  } else {
    for (int64_t d : dims) {
      ASSIGN_OR_RETURN(int64_t w, WrapDim("squeeze", d, x.ndim()));
      if (x.ndim() > 0 && x.dim(w) == 1) keep.push_back(w);
    }
  }
  if (keep.empty()) return x;
  return Dispatch1(kSqueeze, {x}, {{"dims", keep}, {"in_shape", Dims(x.shape())}});
}

StatusOr<Tensor> Unsqueeze(const Tensor& x, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("unsqueeze", dim, x.ndim() + 1));
  return Dispatch1(kUnsqueeze, {x}, {{"dim", d}, {"in_shape", Dims(x.shape())}});
}

StatusOr<Tensor> Flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.ndim() == 0) return Reshape(x, Shape{1});
  ASSIGN_OR_RETURN(int64_t s, WrapDim("flatten", start_dim, x.ndim()));
  ASSIGN_OR_RETURN(int64_t e, WrapDim("flatten", end_dim, x.ndim()));
  if (s > e)
    return InvalidArgument("[flatten] start_dim %d comes after end_dim %d for %s", start_dim,
                           end_dim, x.meta_string());
  DimVector d;
  for (int64_t i = 0; i < s; ++i) d.push_back(x.dim(i));
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= x.dim(i);
  d.push_back(n);
  for (int64_t i = e + 1; i < x.ndim(); ++i) d.push_back(x.dim(i));
  return Reshape(x, Shape(d));
}

StatusOr<Tensor> Slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (x.ndim() == 0) return InvalidArgument("[slice] cannot slice a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("slice", dim, x.ndim()));
  if (step <= 0) return InvalidArgument("[slice] step must be greater than zero, got %d", step);
  int64_t n = x.dim(d);
  auto clamp = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t(0)), n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  int64_t length = (end - start + step - 1) / step;
  if (start == 0 && length == n && step == 1) return x;
  return Dispatch1(kSlice, {x},
                   {{"dim", d},
                    {"start", start},
                    {"length", length},
                    {"step", step},
                    {"in_shape", Dims(x.shape())}});
}

StatusOr<Tensor> Narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  if (x.ndim() == 0) return InvalidArgument("[narrow] cannot narrow a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("narrow", dim, x.ndim()));
  if (start < 0) start += x.dim(d);
  if (start < 0 || length < 0 || start + length > x.dim(d))
    return OutOfRange("[narrow] start %d, length %d out of range for dim %d of %s", start, length,
                      dim, x.meta_string());
  return Slice(x, d, start, start + length, 1);
}

StatusOr<Tensor> Select(const Tensor& x, int64_t dim, int64_t index) {
  if (x.ndim() == 0) return OutOfRange("[select] cannot index a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("select", dim, x.ndim()));
  int64_t n = x.dim(d);
  if (index < -n || index >= n)
    return OutOfRange("[select] index %d is out of bounds for dim %d with size %d", index, d, n);
  if (index < 0) index += n;
  return Dispatch1(kSelect, {x}, {{"dim", d}, {"index", index}, {"in_shape", Dims(x.shape())}});
}

StatusOr<Tensor> AsStrided(const Tensor& x, const Shape& shape, const DimVector& strides,
                           int64_t offset) {
  if (!x.is_contiguous())
    return InvalidArgument("[as_strided] expects a contiguous input, got %s", x.meta_string());
  if (static_cast<int64_t>(strides.size()) != shape.ndim())
    return InvalidArgument("[as_strided] %d strides for shape %s", int(strides.size()),
                           shape.ToString());
  int64_t last = offset;
  for (int64_t i = 0; i < shape.ndim(); ++i) {
    if (strides[i] < 0)
      return InvalidArgument("[as_strided] negative stride in view of %s", x.meta_string());
    if (shape[i] > 0) last += (shape[i] - 1) * strides[i];
  }
  if (offset < 0 || (shape.numel() > 0 && last >= x.numel()))
    return OutOfRange("[as_strided] view %s with strides %s at offset %d exceeds %s",
                      shape.ToString(), Shape(strides).ToString(), offset, x.meta_string());
  return Dispatch1(kAsStrided, {x},
                   {{"shape", Dims(shape)},
                    {"strides", Ints(strides)},
                    {"offset", offset},
                    {"in_shape", Dims(x.shape())}});
}

StatusOr<Tensor> AsStridedScatter(const Tensor& src, const Shape& shape, const DimVector& strides,
                                  int64_t offset) {
  return Dispatch1(kAsStridedScatter, {src},
                   {{"in_shape", Dims(shape)},
                    {"shape", Dims(src.shape())},
                    {"strides", Ints(strides)},
                    {"offset", offset}});
}

StatusOr<Tensor> Cat(const TensorList& xs, int64_t dim) {
  if (xs.empty()) return InvalidArgument("[cat] expects a non-empty list of tensors");
  TensorList in;
  DType dt = xs[0].dtype();
  for (auto& t : xs) dt = PromoteTypes(dt, t.dtype());
  for (auto& t : xs) {
    if (t.ndim() == 1 && t.dim(0) == 0 && xs.size() > 1)
      continue;  // legacy: empty 1-d tensors are skipped
    ASSIGN_OR_RETURN(Tensor c, Cast(t, dt));
    in.push_back(c);
  }
  if (in.empty()) in.push_back(xs[0]);
  if (in[0].ndim() == 0)
    return InvalidArgument("[cat] zero-dimensional tensor %s cannot be concatenated",
                           in[0].meta_string());
  ASSIGN_OR_RETURN(int64_t d, WrapDim("cat", dim, in[0].ndim()));
  if (in.size() == 1) return in[0];
  std::vector<int64_t> sizes;
  for (auto& t : in) sizes.push_back(t.ndim() > d ? t.dim(d) : 0);
  return Dispatch1(kCat, in, {{"dim", d}, {"sizes", sizes}});
}

StatusOr<Tensor> Stack(const TensorList& xs, int64_t dim) {
  if (xs.empty()) return InvalidArgument("[stack] expects a non-empty list of tensors");
  ASSIGN_OR_RETURN(int64_t d, WrapDim("stack", dim, xs[0].ndim() + 1));
  TensorList u;
  for (auto& t : xs) {
    if (t.shape() != xs[0].shape())
      return InvalidArgument("[stack] expects each tensor to be equal size, got %s and %s",
                             xs[0].meta_string(), t.meta_string());
    ASSIGN_OR_RETURN(Tensor v, Unsqueeze(t, d));
    u.push_back(v);
  }
  if (u.size() == 1) return Contiguous(u[0]);
  return Cat(u, d);
}

StatusOr<TensorList> Split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("split", dim, x.ndim()));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return InvalidArgument("[split] negative split size %d", s);
    total += s;
  }
  if (total != x.dim(d))
    return InvalidArgument("[split] sizes %s sum to %d but dim %d of %s has size %d",
                           Shape(ToDims(sizes)).ToString(), total, d, x.meta_string(), x.dim(d));
  TensorList r;
  int64_t start = 0;
  for (int64_t s : sizes) {
    ASSIGN_OR_RETURN(Tensor t, Narrow(x, d, start, s));
    r.push_back(t);
    start += s;
  }
  return r;
}

StatusOr<TensorList> SplitEvery(const Tensor& x, int64_t size, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("split", dim, x.ndim()));
  if (size <= 0) return InvalidArgument("[split] split size must be positive, got %d", size);
  std::vector<int64_t> sizes;
  for (int64_t s = 0; s < x.dim(d); s += size) sizes.push_back(std::min(size, x.dim(d) - s));
  if (sizes.empty()) sizes.push_back(0);
  return Split(x, sizes, d);
}

StatusOr<TensorList> Chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  if (chunks <= 0) return InvalidArgument("[chunk] chunks must be positive, got %d", chunks);
  ASSIGN_OR_RETURN(int64_t d, WrapDim("chunk", dim, x.ndim()));
  int64_t n = x.dim(d);
  return SplitEvery(x, std::max<int64_t>(1, (n + chunks - 1) / chunks), d);
}

StatusOr<TensorList> Unbind(const Tensor& x, int64_t dim) {
  ASSIGN_OR_RETURN(int64_t d, WrapDim("unbind", dim, x.ndim()));
  TensorList r;
  for (int64_t i = 0; i < x.dim(d); ++i) {
    ASSIGN_OR_RETURN(Tensor t, Select(x, d, i));
    r.push_back(t);
  }
  return r;
}

StatusOr<Tensor> Repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  int64_t n = static_cast<int64_t>(repeats.size());
  if (n < x.ndim())
    return InvalidArgument(
        "[repeat] %d repeat dims can not be smaller than the number of dims of %s", n,
        x.meta_string());
  // x viewed as (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), then merged.
  DimVector shape, expanded, merged;
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = i < n - x.ndim() ? 1 : x.dim(i - (n - x.ndim()));
    if (repeats[i] < 0) return InvalidArgument("[repeat] negative repeat %d", repeats[i]);
    shape.push_back(1);
    shape.push_back(s);
    expanded.push_back(repeats[i]);
    expanded.push_back(s);
    merged.push_back(repeats[i] * s);
  }
  ASSIGN_OR_RETURN(Tensor v, Reshape(x, Shape(shape)));
  ASSIGN_OR_RETURN(v, Expand(v, Shape(expanded)));
  ASSIGN_OR_RETURN(v, Contiguous(v));
  return Reshape(v, Shape(merged));
}

StatusOr<Tensor> Flip(const Tensor& x, const std::vector<int64_t>& dims) {
  ASSIGN_OR_RETURN(
      auto d, ops::NormalizeDims("flip", dims.empty() ? std::vector<int64_t>{} : dims, x.ndim()));
  if (dims.empty()) d.clear();
  return Dispatch1(kFlip, {x}, {{"dims", d}});
}

StatusOr<Tensor> Roll(const Tensor& x, const std::vector<int64_t>& shifts,
                      const std::vector<int64_t>& dims) {
  if (dims.empty()) {  // roll the flattened tensor
    if (shifts.size() != 1)
      return InvalidArgument("[roll] expects one shift without dims, got %d", int(shifts.size()));
    ASSIGN_OR_RETURN(Tensor f, Flatten(x));
    ASSIGN_OR_RETURN(f, Roll(f, shifts, {0}));
    return Reshape(f, x.shape());
  }
  if (shifts.size() != dims.size())
    return InvalidArgument("[roll] %d shifts for %d dims", int(shifts.size()), int(dims.size()));
  Tensor r = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t d, WrapDim("roll", dims[i], x.ndim()));
    int64_t n = x.dim(d);
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    ASSIGN_OR_RETURN(Tensor tail, Narrow(r, d, n - s, s));
    ASSIGN_OR_RETURN(Tensor head, Narrow(r, d, 0, n - s));
    ASSIGN_OR_RETURN(r, Cat({tail, head}, d));
  }
  return r.same(x) ? Clone(x) : StatusOr<Tensor>(r);
}

StatusOr<Tensor> Tril(const Tensor& x, int64_t diagonal) {
  return Dispatch1(kTril, {x}, {{"diagonal", diagonal}, {"upper", false}});
}
StatusOr<Tensor> Triu(const Tensor& x, int64_t diagonal) {
  return Dispatch1(kTril, {x}, {{"diagonal", diagonal}, {"upper", true}});
}

StatusOr<Tensor> Pad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode,
                     double value) {
  int64_t np = static_cast<int64_t>(pads.size());
  if (np % 2 != 0 || np / 2 > x.ndim())
    return InvalidArgument("[pad] padding of length %d is invalid for input %s", np,
                           x.meta_string());
  // Per-dim (before, after), dims in order.
  std::vector<int64_t> per(2 * x.ndim(), 0);
  for (int64_t i = 0; i < np / 2; ++i) {
    int64_t d = x.ndim() - 1 - i;
    per[2 * d] = pads[2 * i];
    per[2 * d + 1] = pads[2 * i + 1];
  }
  if (mode == "constant") {
    Tensor v = x;  // negative pads crop
    for (int64_t d = 0; d < x.ndim(); ++d) {
      int64_t b = std::min<int64_t>(per[2 * d], 0), a = std::min<int64_t>(per[2 * d + 1], 0);
      if (b < 0 || a < 0) {
        if (v.dim(d) + a + b < 0)
          return InvalidArgument("[pad] padding %d,%d crops dim %d of %s below zero", b, a, d,
                                 x.meta_string());
        ASSIGN_OR_RETURN(v, Narrow(v, d, -b, v.dim(d) + a + b));
      }
      per[2 * d] = std::max<int64_t>(per[2 * d], 0);
      per[2 * d + 1] = std::max<int64_t>(per[2 * d + 1], 0);
    }
    return Dispatch1(kPad, {v}, {{"pads", per}, {"value", value}, {"in_shape", Dims(v.shape())}});
  }
  bool reflect = mode == "reflect";
  if (!reflect && mode != "replicate" && mode != "circular")
    return InvalidArgument("[pad] unknown mode '%s' (constant, reflect, replicate, circular)",
                           mode);
  // Built from views and cat, so gradients come from theirs.
  Tensor r = x;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    int64_t b = per[2 * d], a = per[2 * d + 1], n = x.dim(d);
    if (b == 0 && a == 0) continue;
    if (b < 0 || a < 0)
      return InvalidArgument("[pad] negative padding is only supported in constant mode");
    if ((reflect && (b >= n || a >= n)) || (mode == "circular" && (b > n || a > n)) || n == 0)
      return InvalidArgument("[pad] padding (%d, %d) is too large for dim %d of %s in %s mode", b,
                             a, d, x.meta_string(), mode);
    TensorList parts;
    Tensor before, after;
    if (reflect) {
      ASSIGN_OR_RETURN(before, Narrow(r, d, 1, b));
      ASSIGN_OR_RETURN(before, Flip(before, {d}));
      ASSIGN_OR_RETURN(after, Narrow(r, d, n - 1 - a, a));
      ASSIGN_OR_RETURN(after, Flip(after, {d}));
    } else if (mode == "replicate") {
      Shape sb = r.shape(), sa = r.shape();
      sb[d] = b;
      sa[d] = a;
      ASSIGN_OR_RETURN(before, Narrow(r, d, 0, 1));
      ASSIGN_OR_RETURN(before, Expand(before, sb));
      ASSIGN_OR_RETURN(after, Narrow(r, d, n - 1, 1));
      ASSIGN_OR_RETURN(after, Expand(after, sa));
    } else {
      ASSIGN_OR_RETURN(before, Narrow(r, d, n - b, b));
      ASSIGN_OR_RETURN(after, Narrow(r, d, 0, a));
    }
    ASSIGN_OR_RETURN(r, Cat({before, r, after}, d));
  }
  return r.same(x) ? Clone(x) : StatusOr<Tensor>(r);
}

}  // namespace functional
}  // namespace oneflow_like
