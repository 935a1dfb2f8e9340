#include "compiler/ir/shape_inference.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "compiler/ir/hlo_computation.h"

namespace oneflow_like::hlo {
namespace {

using Shapes = absl::Span<const HloShape* const>;

struct Ctx {
  HloOpcode op;
  Status Err(const std::string& msg) const {
    return InvalidArgument("[%s] %s", HloOpcodeString(op), msg);
  }
};

std::string S(const HloShape& s) {
  return s.ToString(false);
}
std::string L(const DimVector& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}

Status CheckDims(const Ctx& c, const DimVector& dims, int64_t rank, const char* what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d])
      return c.Err(absl::StrCat(what, " ", L(dims), " invalid for rank ", rank));
    seen[d] = true;
  }
  return absl::OkStatus();
}

Status CheckScalarComputation(const Ctx& c, const HloComputation* comp, DType t, int64_t params) {
  if (comp->num_parameters() != params)
    return c.Err(absl::StrCat("to_apply %", comp->name(), " needs ", params, " parameters"));
  for (auto* p : comp->parameters())
    if (!p->shape().Compatible(HloShape::Scalar(t)))
      return c.Err(absl::StrCat("to_apply parameter must be ", DTypeName(t), "[]"));
  if (!comp->root_instruction()->shape().Compatible(HloShape::Scalar(t)))
    return c.Err("to_apply must return a scalar");
  return absl::OkStatus();
}

StatusOr<HloShape> InferDot(const Ctx& c, const HloShape& l, const HloShape& r, const DotDims& d) {
  if (l.dtype() != r.dtype())
    return c.Err(absl::StrCat("operand types differ: got ", S(l), " and ", S(r)));
  if (d.lhs_batch.size() != d.rhs_batch.size() ||
      d.lhs_contracting.size() != d.rhs_contracting.size())
    return c.Err("batch/contracting dim counts differ between lhs and rhs");
  DimVector lall(d.lhs_batch), rall(d.rhs_batch);
  lall.insert(lall.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  rall.insert(rall.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  RETURN_IF_ERROR(CheckDims(c, lall, l.rank(), "lhs batch+contracting dims"));
  RETURN_IF_ERROR(CheckDims(c, rall, r.rank(), "rhs batch+contracting dims"));
  for (size_t i = 0; i < lall.size(); ++i) {
    if (l.dim(lall[i]) != r.dim(rall[i]))
      return c.Err(absl::StrCat("batch/contracting sizes differ: got ", S(l), " and ", S(r)));
  }
  DimVector out;
  for (int64_t b : d.lhs_batch) out.push_back(l.dim(b));
  for (int64_t i = 0; i < l.rank(); ++i)
    if (std::find(lall.begin(), lall.end(), i) == lall.end()) out.push_back(l.dim(i));
  for (int64_t i = 0; i < r.rank(); ++i)
    if (std::find(rall.begin(), rall.end(), i) == rall.end()) out.push_back(r.dim(i));
  return HloShape(l.dtype(), out);
}

StatusOr<HloShape> InferConvolution(const Ctx& c, const HloShape& in, const HloShape& k,
                                    const HloAttrs& a) {
  const ConvDims& d = a.conv;
  const int64_t n = d.in_spatial.size();
  if (in.rank() != n + 2 || k.rank() != n + 2)
    return c.Err(absl::StrCat("dim_labels ", d.ToString(), " do not fit ", S(in), " and ", S(k)));
  if (in.dtype() != k.dtype())
    return c.Err(absl::StrCat("operand types differ: got ", S(in), " and ", S(k)));
  if (!a.window.empty() && static_cast<int64_t>(a.window.size()) != n)
    return c.Err("window rank differs from spatial rank");
  if (a.feature_group_count < 1 || in.dim(d.in_feature) != k.dim(d.k_in) * a.feature_group_count ||
      k.dim(d.k_out) % a.feature_group_count != 0)
    return c.Err(absl::StrCat("input features of ", S(in), " do not match kernel ", S(k), " with ",
                              a.feature_group_count, " groups"));
  DimVector out(n + 2);
  out[d.out_batch] = in.dim(d.in_batch);
  out[d.out_feature] = k.dim(d.k_out);
  for (int64_t i = 0; i < n; ++i) {
    WindowDim w = a.window.empty() ? WindowDim{k.dim(d.k_spatial[i])} : a.window[i];
    if (w.size != k.dim(d.k_spatial[i]))
      return c.Err("window size differs from the kernel's spatial size");
    if (w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1)
      return c.Err("window strides/dilations must be >= 1");
    int64_t padded = (in.dim(d.in_spatial[i]) - 1) * w.lhs_dilation + 1 + w.pad_lo + w.pad_hi;
    int64_t eff = (w.size - 1) * w.rhs_dilation + 1;
    out[d.out_spatial[i]] = padded >= eff ? (padded - eff) / w.stride + 1 : 0;
  }
  return HloShape(in.dtype(), out);
}

StatusOr<HloShape> InferGather(const Ctx& c, const HloShape& operand, const HloShape& idx,
                               const HloAttrs& a) {
  const GatherDims& g = a.gather;
  if (!IsIntegral(idx.dtype())) return c.Err("indices must be integers");
  if (static_cast<int64_t>(a.slice_sizes.size()) != operand.rank())
    return c.Err("slice_sizes rank differs from the operand");
  if (g.index_vector_dim < 0 || g.index_vector_dim > idx.rank())
    return c.Err("index_vector_dim out of range");
  int64_t nidx = g.index_vector_dim == idx.rank() ? 1 : idx.dim(g.index_vector_dim);
  if (static_cast<int64_t>(g.start_index_map.size()) != nidx)
    return c.Err("start_index_map size differs from the index vector");
  RETURN_IF_ERROR(CheckDims(c, g.start_index_map, operand.rank(), "start_index_map"));
  RETURN_IF_ERROR(CheckDims(c, g.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims"));
  for (int64_t i = 0; i < operand.rank(); ++i)
    if (a.slice_sizes[i] < 0 || a.slice_sizes[i] > operand.dim(i))
      return c.Err("slice_sizes exceed the operand");
  for (int64_t d : g.collapsed_slice_dims)
    if (a.slice_sizes[d] != 1) return c.Err("collapsed dims need slice size 1");
  DimVector offsets, batch;
  for (int64_t i = 0; i < operand.rank(); ++i)
    if (std::find(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end(), i) ==
        g.collapsed_slice_dims.end())
      offsets.push_back(a.slice_sizes[i]);
  for (int64_t i = 0; i < idx.rank(); ++i)
    if (i != g.index_vector_dim) batch.push_back(idx.dim(i));
  if (offsets.size() != g.offset_dims.size())
    return c.Err("offset_dims count differs from the uncollapsed slice dims");
  const int64_t rank = batch.size() + offsets.size();
  RETURN_IF_ERROR(CheckDims(c, g.offset_dims, rank, "offset_dims"));
  DimVector out(rank);
  size_t oi = 0, bi = 0;
  for (int64_t i = 0; i < rank; ++i) {
    bool is_offset =
        std::find(g.offset_dims.begin(), g.offset_dims.end(), i) != g.offset_dims.end();
    out[i] = is_offset ? offsets[oi++] : batch[bi++];
  }
  return HloShape(operand.dtype(), out);
}

}  // namespace

StatusOr<HloShape> InferShape(HloOpcode op, Shapes o, const HloAttrs& a,
                              absl::Span<HloComputation* const> called, const HloShape* declared) {
  Ctx c{op};
  const int arity = HloOpcodeArity(op);
  if (arity >= 0 && static_cast<int64_t>(o.size()) != arity)
    return c.Err(absl::StrCat("takes ", arity, " operands, got ", o.size()));
  for (size_t i = 0; i < o.size(); ++i) {
    bool tuple_ok = op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement ||
                    op == HloOpcode::kWhile || op == HloOpcode::kConditional ||
                    op == HloOpcode::kCustomCall || op == HloOpcode::kFusion ||
                    op == HloOpcode::kCopy;
    if (o[i]->is_tuple() && !tuple_ok)
      return c.Err(absl::StrCat("operand ", i, " is a tuple: ", S(*o[i])));
  }
  auto need_declared = [&]() -> Status {
    return declared == nullptr ? c.Err("needs a declared result shape") : absl::OkStatus();
  };
  if (IsElementwiseUnary(op)) {
    const HloShape& x = *o[0];
    if (op == HloOpcode::kConvert) {
      RETURN_IF_ERROR(need_declared());
      if (declared->dims() != x.dims())
        return c.Err(absl::StrCat("changes dims: ", S(x), " to ", S(*declared)));
      return HloShape(declared->dtype(), x.dims());
    }
    if (op == HloOpcode::kNot && IsFloating(x.dtype()))
      return c.Err(absl::StrCat("needs pred or integers, got ", S(x)));
    bool float_only = op != HloOpcode::kNegate && op != HloOpcode::kAbs && op != HloOpcode::kSign &&
                      op != HloOpcode::kNot;
    if (float_only && !IsFloating(x.dtype()))
      return c.Err(absl::StrCat("needs a floating type, got ", S(x)));
    return HloShape(x.dtype(), x.dims());
  }
  if (IsElementwiseBinary(op)) {
    const HloShape &x = *o[0], &y = *o[1];
    if (!x.Compatible(y))
      return c.Err(absl::StrCat("operand shapes differ: got ", S(x), " and ", S(y)));
    if ((op == HloOpcode::kAnd || op == HloOpcode::kOr || op == HloOpcode::kXor) &&
        IsFloating(x.dtype()))
      return c.Err(absl::StrCat("needs pred or integers, got ", S(x)));
    if (op == HloOpcode::kRemainder &&
        !IsFloating(x.dtype()))  // C fmod; integer division by zero has no value
      return c.Err(absl::StrCat("needs a floating type, got ", S(x)));
    if (op == HloOpcode::kShiftRightLogical && (IsFloating(x.dtype()) || x.dtype() == DType::kBool))
      return c.Err(absl::StrCat("needs integers, got ", S(x)));
    return HloShape(op == HloOpcode::kCompare ? DType::kBool : x.dtype(), x.dims());
  }
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kCustomCall: RETURN_IF_ERROR(need_declared()); return *declared;
    case HloOpcode::kIota:
      RETURN_IF_ERROR(need_declared());
      if (!declared->is_array() || a.index < 0 ||
          a.index >= std::max<int64_t>(declared->rank(), 1) || declared->rank() == 0)
        return c.Err(absl::StrCat("iota_dimension ", a.index, " invalid for ", S(*declared)));
      return *declared;
    case HloOpcode::kRng: {
      RETURN_IF_ERROR(need_declared());
      if (o[0]->rank() != 0 || !o[0]->Compatible(*o[1]) || o[0]->dtype() != declared->dtype())
        return c.Err(absl::StrCat("bounds must be scalars of the result type: got ", S(*o[0]),
                                  " and ", S(*o[1])));
      return *declared;
    }
    case HloOpcode::kSelect: {
      const HloShape &p = *o[0], &x = *o[1], &y = *o[2];
      if (p.dtype() != DType::kBool)
        return c.Err(absl::StrCat("predicate must be pred, got ", S(p)));
      if (!x.Compatible(y))
        return c.Err(absl::StrCat("branches differ: got ", S(x), " and ", S(y)));
      if (p.rank() != 0 && p.dims() != x.dims())
        return c.Err(absl::StrCat("predicate ", S(p), " does not fit ", S(x)));
      return HloShape(x.dtype(), x.dims());
    }
    case HloOpcode::kBroadcast: {
      RETURN_IF_ERROR(need_declared());
      const HloShape& x = *o[0];
      if (static_cast<int64_t>(a.dimensions.size()) != x.rank())
        return c.Err(absl::StrCat("dimensions ", L(a.dimensions), " do not fit ", S(x)));
      RETURN_IF_ERROR(CheckDims(c, a.dimensions, declared->rank(), "dimensions"));
      for (int64_t i = 0; i < x.rank(); ++i)
        if (declared->dim(a.dimensions[i]) != x.dim(i))
          return c.Err(absl::StrCat("cannot broadcast ", S(x), " to ", S(*declared)));
      return HloShape(x.dtype(), declared->dims());
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast: {
      RETURN_IF_ERROR(need_declared());
      const HloShape& x = *o[0];
      bool ok = op == HloOpcode::kReshape
                    ? (x.numel() == declared->numel() && x.dtype() == declared->dtype())
                    : x.ByteSize() == declared->ByteSize();
      if (!ok) return c.Err(absl::StrCat("cannot turn ", S(x), " into ", S(*declared)));
      return *declared;
    }
    case HloOpcode::kTranspose: {
      const HloShape& x = *o[0];
      if (static_cast<int64_t>(a.dimensions.size()) != x.rank())
        return c.Err(absl::StrCat("permutation ", L(a.dimensions), " does not fit ", S(x)));
      RETURN_IF_ERROR(CheckDims(c, a.dimensions, x.rank(), "permutation"));
      DimVector out;
      for (int64_t d : a.dimensions) out.push_back(x.dim(d));
      return HloShape(x.dtype(), out);
    }
    case HloOpcode::kSlice: {
      const HloShape& x = *o[0];
      if (static_cast<int64_t>(a.slice.size()) != x.rank())
        return c.Err(absl::StrCat("slice rank differs from ", S(x)));
      DimVector out;
      for (int64_t i = 0; i < x.rank(); ++i) {
        const SliceDim& s = a.slice[i];
        if (s.start < 0 || s.start > s.limit || s.limit > x.dim(i) || s.stride < 1)
          return c.Err(absl::StrCat("bad slice [", s.start, ":", s.limit, ":", s.stride,
                                    "] of dim ", i, " of ", S(x)));
        out.push_back((s.limit - s.start + s.stride - 1) / s.stride);
      }
      return HloShape(x.dtype(), out);
    }
    case HloOpcode::kConcatenate: {
      if (o.empty() || a.dimensions.size() != 1) return c.Err("needs operands and one dimension");
      const int64_t dim = a.dimensions[0];
      if (dim < 0 || dim >= o[0]->rank()) return c.Err("dimension out of range");
      DimVector out = o[0]->dims();
      for (size_t i = 1; i < o.size(); ++i) {
        if (o[i]->rank() != o[0]->rank() || o[i]->dtype() != o[0]->dtype())
          return c.Err(absl::StrCat("operands differ: got ", S(*o[0]), " and ", S(*o[i])));
        for (int64_t d = 0; d < o[0]->rank(); ++d)
          if (d != dim && o[i]->dim(d) != o[0]->dim(d))
            return c.Err(absl::StrCat("operands differ: got ", S(*o[0]), " and ", S(*o[i])));
        out[dim] += o[i]->dim(dim);
      }
      return HloShape(o[0]->dtype(), out);
    }
    case HloOpcode::kPad: {
      const HloShape &x = *o[0], &v = *o[1];
      if (v.rank() != 0 || v.dtype() != x.dtype())
        return c.Err(absl::StrCat("padding value must be a ", DTypeName(x.dtype()), " scalar"));
      if (static_cast<int64_t>(a.padding.size()) != x.rank())
        return c.Err(absl::StrCat("padding rank differs from ", S(x)));
      DimVector out;
      for (int64_t i = 0; i < x.rank(); ++i) {
        const PadDim& p = a.padding[i];
        int64_t n = p.lo + p.hi + x.dim(i) + std::max<int64_t>(x.dim(i) - 1, 0) * p.interior;
        if (p.interior < 0 || n < 0) return c.Err("padding gives a negative size");
        out.push_back(n);
      }
      return HloShape(x.dtype(), out);
    }
    case HloOpcode::kReduce: {
      const HloShape &x = *o[0], &init = *o[1];
      if (init.rank() != 0 || init.dtype() != x.dtype())
        return c.Err(absl::StrCat("init must be a ", DTypeName(x.dtype()), " scalar"));
      RETURN_IF_ERROR(CheckDims(c, a.dimensions, x.rank(), "dimensions"));
      if (called.empty() && a.reduce_kind == ReduceKind::kNone)
        return c.Err("needs to_apply or kind");
      if (!called.empty()) RETURN_IF_ERROR(CheckScalarComputation(c, called[0], x.dtype(), 2));
      DimVector out;
      for (int64_t i = 0; i < x.rank(); ++i)
        if (std::find(a.dimensions.begin(), a.dimensions.end(), i) == a.dimensions.end())
          out.push_back(x.dim(i));
      return HloShape(x.dtype(), out);
    }
    case HloOpcode::kDot: return InferDot(c, *o[0], *o[1], a.dot);
    case HloOpcode::kConvolution: return InferConvolution(c, *o[0], *o[1], a);
    case HloOpcode::kGather: return InferGather(c, *o[0], *o[1], a);
    case HloOpcode::kScatter: {
      const HloShape &x = *o[0], &idx = *o[1], &upd = *o[2];
      if (!IsIntegral(idx.dtype())) return c.Err("indices must be integers");
      if (upd.dtype() != x.dtype()) return c.Err("updates type differs from the operand");
      const ScatterDims& s = a.scatter;
      if (static_cast<int64_t>(s.update_window_dims.size() + s.inserted_window_dims.size()) !=
          x.rank())
        return c.Err("update_window_dims + inserted_window_dims must cover the operand rank");
      if (!called.empty()) RETURN_IF_ERROR(CheckScalarComputation(c, called[0], x.dtype(), 2));
      return HloShape(x.dtype(), x.dims());
    }
    case HloOpcode::kDynamicSlice: {
      const HloShape& x = *o[0];
      if (static_cast<int64_t>(o.size()) != x.rank() + 1)
        return c.Err(absl::StrCat("needs ", x.rank(), " start indices"));
      for (size_t i = 1; i < o.size(); ++i)
        if (o[i]->rank() != 0 || !IsIntegral(o[i]->dtype()))
          return c.Err("start indices must be integer scalars");
      if (static_cast<int64_t>(a.slice_sizes.size()) != x.rank())
        return c.Err("dynamic_slice_sizes rank differs");
      for (int64_t i = 0; i < x.rank(); ++i)
        if (a.slice_sizes[i] < 0 || a.slice_sizes[i] > x.dim(i))
          return c.Err("slice size exceeds the operand");
      return HloShape(x.dtype(), a.slice_sizes);
    }
    case HloOpcode::kTuple: {
      std::vector<HloShape> elems;
      for (auto* s : o) elems.push_back(*s);
      return HloShape::Tuple(std::move(elems));
    }
    case HloOpcode::kGetTupleElement: {
      if (!o[0]->is_tuple() || a.index < 0 || a.index >= o[0]->tuple_size())
        return c.Err(absl::StrCat("index ", a.index, " invalid for ", S(*o[0])));
      return o[0]->tuple_shape(a.index);
    }
    case HloOpcode::kCopy: return *o[0];
    case HloOpcode::kFusion: {
      if (called.size() != 1) return c.Err("needs one fused computation");
      const HloComputation* f = called[0];
      if (f->num_parameters() != static_cast<int64_t>(o.size()))
        return c.Err("operand count differs from fused parameters");
      for (size_t i = 0; i < o.size(); ++i)
        if (!f->parameter(i)->shape().Compatible(*o[i]))
          return c.Err(absl::StrCat("operand ", i, " differs from fused parameter"));
      return f->root_instruction()->shape();
    }
    case HloOpcode::kWhile: {
      if (called.size() != 2) return c.Err("needs condition and body");
      const HloComputation *cond = called[0], *body = called[1];
      if (cond->num_parameters() != 1 || body->num_parameters() != 1)
        return c.Err("condition and body take one parameter");
      if (!cond->parameter(0)->shape().Compatible(*o[0]) ||
          !body->parameter(0)->shape().Compatible(*o[0]) ||
          !body->root_instruction()->shape().Compatible(*o[0]))
        return c.Err(
            absl::StrCat("loop state ", S(*o[0]), " differs from condition/body signatures"));
      if (!cond->root_instruction()->shape().Compatible(HloShape::Scalar(DType::kBool)))
        return c.Err("condition must return pred[]");
      return *o[0];
    }
    case HloOpcode::kConditional: {
      if (o.empty() || o[0]->rank() != 0 ||
          (o[0]->dtype() != DType::kBool && o[0]->dtype() != DType::kI32))
        return c.Err("first operand must be pred[] or s32[]");
      if (called.empty() || called.size() + 1 != o.size())
        return c.Err("needs one operand per branch");
      for (size_t i = 0; i < called.size(); ++i) {
        if (called[i]->num_parameters() != 1 ||
            !called[i]->parameter(0)->shape().Compatible(*o[i + 1]))
          return c.Err(absl::StrCat("branch ", i, " parameter differs from its operand"));
        if (!called[i]->root_instruction()->shape().Compatible(
                called[0]->root_instruction()->shape()))
          return c.Err("branches return different shapes");
      }
      return called[0]->root_instruction()->shape();
    }
    default: return c.Err("no shape inference");
  }
}

StatusOr<HloShape> InferShape(const HloInstruction& inst) {
  std::vector<const HloShape*> shapes;
  for (auto* o : inst.operands()) shapes.push_back(&o->shape());
  return InferShape(inst.opcode(), shapes, inst.attrs(), inst.called_computations(), &inst.shape());
}

}  // namespace oneflow_like::hlo
