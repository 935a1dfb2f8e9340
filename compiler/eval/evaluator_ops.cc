#include "compiler/eval/evaluator_ops.h"

#include <algorithm>
#include <cmath>

#include "compiler/ir/hlo_computation.h"
#include "compiler/library/library_ops.h"

namespace oneflow_like::hlo::eval_ops {
namespace {

int64_t AsInt(double v) {
  return static_cast<int64_t>(v);
}

Literal Map(const HloShape& shape, absl::Span<const Literal* const> ops,
            const std::function<double(int64_t)>& f) {
  Literal out(HloShape(shape.dtype(), shape.dims()));
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = f(i);
  if (!IsFloating(shape.dtype())) out.RoundToType();
  out.shape = shape;
  (void)ops;
  return out;
}

StatusOr<Literal> Reduce(const HloInstruction& inst, const Literal& x, double init,
                         HloEvaluator* ev) {
  const DimVector& rd = inst.dimensions();
  Literal out(inst.shape());
  for (double& v : out.data) v = init;
  ReduceKind kind = inst.GetReduceKind();
  DimVector oidx;
  int64_t i = 0;
  Status st;
  ForEachIndex(x.shape.dims(), [&](const DimVector& idx) {
    oidx.clear();
    for (int64_t d = 0; d < x.shape.rank(); ++d)
      if (std::find(rd.begin(), rd.end(), d) == rd.end()) oidx.push_back(idx[d]);
    double& acc = out.data[LinearIndex(out.shape.dims(), oidx)];
    double v = x.data[i++];
    if (kind != ReduceKind::kNone) {
      acc = ReduceIdentityCombine(kind, acc, v);
    } else {
      Literal a = Literal::Scalar(x.shape.dtype(), acc), b = Literal::Scalar(x.shape.dtype(), v);
      auto r = ev->Evaluate(*inst.to_apply(), {a, b});
      if (!r.ok()) {
        st = r.status();
        return false;
      }
      acc = r->data[0];
    }
    return true;
  });
  RETURN_IF_ERROR(st);
  if (!IsFloating(out.shape.dtype())) out.RoundToType();
  return out;
}

Literal Dot(const HloInstruction& inst, const Literal& l, const Literal& r) {
  const DotDims& d = inst.attrs().dot;
  Literal out(inst.shape());
  DimVector lfree, rfree;
  for (int64_t i = 0; i < l.shape.rank(); ++i)
    if (std::count(d.lhs_batch.begin(), d.lhs_batch.end(), i) +
            std::count(d.lhs_contracting.begin(), d.lhs_contracting.end(), i) ==
        0)
      lfree.push_back(i);
  for (int64_t i = 0; i < r.shape.rank(); ++i)
    if (std::count(d.rhs_batch.begin(), d.rhs_batch.end(), i) +
            std::count(d.rhs_contracting.begin(), d.rhs_contracting.end(), i) ==
        0)
      rfree.push_back(i);
  DimVector cdims;
  for (int64_t c : d.lhs_contracting) cdims.push_back(l.shape.dim(c));
  DimVector li(l.shape.rank()), ri(r.shape.rank());
  int64_t o = 0;
  ForEachIndex(out.shape.dims(), [&](const DimVector& idx) {
    size_t k = 0;
    for (size_t b = 0; b < d.lhs_batch.size(); ++b, ++k) {
      li[d.lhs_batch[b]] = idx[k];
      ri[d.rhs_batch[b]] = idx[k];
    }
    for (int64_t f : lfree) li[f] = idx[k++];
    for (int64_t f : rfree) ri[f] = idx[k++];
    double acc = 0;
    ForEachIndex(cdims, [&](const DimVector& c) {
      for (size_t j = 0; j < c.size(); ++j) {
        li[d.lhs_contracting[j]] = c[j];
        ri[d.rhs_contracting[j]] = c[j];
      }
      acc += l.Get(li) * r.Get(ri);
      return true;
    });
    if (cdims.empty()) acc = l.Get(li) * r.Get(ri);
    out.data[o++] = acc;
    return true;
  });
  if (!IsFloating(out.shape.dtype())) out.RoundToType();
  return out;
}

Literal Convolution(const HloInstruction& inst, const Literal& in, const Literal& k) {
  const ConvDims& cd = inst.attrs().conv;
  const auto& win = inst.attrs().window;
  const int64_t ns = cd.in_spatial.size(), groups = inst.attrs().feature_group_count;
  Literal out(inst.shape());
  const int64_t cin_per_group = k.shape.dim(cd.k_in), cout = k.shape.dim(cd.k_out);
  const int64_t cout_per_group = cout / groups;
  DimVector kspatial;
  for (int64_t s : cd.k_spatial) kspatial.push_back(k.shape.dim(s));
  DimVector ii(in.shape.rank()), ki(k.shape.rank());
  int64_t o = 0;
  ForEachIndex(out.shape.dims(), [&](const DimVector& idx) {
    const int64_t oc = idx[cd.out_feature], g = oc / cout_per_group;
    double acc = 0;
    ii[cd.in_batch] = idx[cd.out_batch];
    ki[cd.k_out] = oc;
    ForEachIndex(kspatial, [&](const DimVector& kp) {
      for (int64_t s = 0; s < ns; ++s) {
        WindowDim w = win.empty() ? WindowDim{kspatial[s]} : win[s];
        int64_t pos = idx[cd.out_spatial[s]] * w.stride - w.pad_lo + kp[s] * w.rhs_dilation;
        if (pos < 0 || pos % w.lhs_dilation != 0) return true;
        pos /= w.lhs_dilation;
        if (pos >= in.shape.dim(cd.in_spatial[s])) return true;
        ii[cd.in_spatial[s]] = pos;
        ki[cd.k_spatial[s]] = kp[s];
      }
      for (int64_t c = 0; c < cin_per_group; ++c) {
        ii[cd.in_feature] = g * cin_per_group + c;
        ki[cd.k_in] = c;
        acc += in.Get(ii) * k.Get(ki);
      }
      return true;
    });
    out.data[o++] = acc;
    return true;
  });
  return out;
}

// Start of the operand window for batch position `batch_idx` of gather/scatter indices.
DimVector IndexVector(const Literal& idx, const DimVector& batch_idx, int64_t index_vector_dim) {
  DimVector full;
  DimVector out;
  const int64_t n = index_vector_dim == idx.shape.rank() ? 1 : idx.shape.dim(index_vector_dim);
  for (int64_t j = 0; j < n; ++j) {
    full.clear();
    size_t b = 0;
    for (int64_t d = 0; d < idx.shape.rank(); ++d)
      full.push_back(d == index_vector_dim ? j : batch_idx[b++]);
    out.push_back(AsInt(idx.Get(full)));
  }
  return out;
}

Literal Gather(const HloInstruction& inst, const Literal& x, const Literal& idx) {
  const GatherDims& g = inst.attrs().gather;
  const DimVector& sizes = inst.attrs().slice_sizes;
  Literal out(inst.shape());
  DimVector xi(x.shape.rank());
  int64_t o = 0;
  ForEachIndex(out.shape.dims(), [&](const DimVector& oi) {
    DimVector batch, offs;
    for (int64_t d = 0; d < out.shape.rank(); ++d)
      (std::count(g.offset_dims.begin(), g.offset_dims.end(), d) ? offs : batch).push_back(oi[d]);
    DimVector start = IndexVector(idx, batch, g.index_vector_dim);
    std::fill(xi.begin(), xi.end(), 0);
    for (size_t j = 0; j < start.size(); ++j) {
      int64_t d = g.start_index_map[j];
      xi[d] = std::clamp<int64_t>(start[j], 0, x.shape.dim(d) - sizes[d]);
    }
    size_t k = 0;
    for (int64_t d = 0; d < x.shape.rank(); ++d)
      if (!std::count(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end(), d))
        xi[d] += offs[k++];
    out.data[o++] = x.Get(xi);
    return true;
  });
  return out;
}

Literal Scatter(const HloInstruction& inst, const Literal& x, const Literal& idx,
                const Literal& upd) {
  const ScatterDims& s = inst.attrs().scatter;
  ReduceKind kind = inst.GetReduceKind();
  Literal out = x;
  out.shape = inst.shape();
  DimVector xi(x.shape.rank());
  int64_t u = 0;
  ForEachIndex(upd.shape.dims(), [&](const DimVector& ui) {
    DimVector batch, win;
    for (int64_t d = 0; d < upd.shape.rank(); ++d)
      (std::count(s.update_window_dims.begin(), s.update_window_dims.end(), d) ? win : batch)
          .push_back(ui[d]);
    DimVector start = IndexVector(idx, batch, s.index_vector_dim);
    std::fill(xi.begin(), xi.end(), 0);
    for (size_t j = 0; j < start.size(); ++j) xi[s.scatter_dims_to_operand_dims[j]] = start[j];
    size_t k = 0;
    bool in_bounds = true;
    for (int64_t d = 0; d < x.shape.rank(); ++d) {
      if (!std::count(s.inserted_window_dims.begin(), s.inserted_window_dims.end(), d))
        xi[d] += win[k++];
      in_bounds &= xi[d] >= 0 && xi[d] < x.shape.dim(d);
    }
    double v = upd.data[u++];
    if (!in_bounds) return true;  // out-of-bounds updates are skipped
    double& dst = out.data[LinearIndex(x.shape.dims(), xi)];
    dst = kind == ReduceKind::kNone ? v : ReduceIdentityCombine(kind, dst, v);
    return true;
  });
  return out;
}

}  // namespace

double ReduceIdentityCombine(ReduceKind k, double acc, double v) {
  switch (k) {
    case ReduceKind::kAdd: return acc + v;
    case ReduceKind::kMul: return acc * v;
    case ReduceKind::kMax: return std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v);
    case ReduceKind::kMin: return std::isnan(acc) || std::isnan(v) ? NAN : std::min(acc, v);
    case ReduceKind::kAnd: return (acc != 0 && v != 0) ? 1 : 0;
    case ReduceKind::kOr: return (acc != 0 || v != 0) ? 1 : 0;
    default: return v;
  }
}

double EvalUnary(HloOpcode op, DType t, double x) {
  switch (op) {
    case HloOpcode::kNegate: return -x;
    case HloOpcode::kAbs: return std::fabs(x);
    case HloOpcode::kExp: return std::exp(x);
    case HloOpcode::kLog: return std::log(x);
    case HloOpcode::kLog1p: return std::log1p(x);
    case HloOpcode::kSqrt: return std::sqrt(x);
    case HloOpcode::kRsqrt: return 1.0 / std::sqrt(x);
    case HloOpcode::kSin: return std::sin(x);
    case HloOpcode::kCos: return std::cos(x);
    case HloOpcode::kTanh: return std::tanh(x);
    case HloOpcode::kLogistic: return 1.0 / (1.0 + std::exp(-x));
    case HloOpcode::kSign: return std::isnan(x) ? x : (x > 0) - (x < 0);
    case HloOpcode::kFloor: return std::floor(x);
    case HloOpcode::kCeil: return std::ceil(x);
    case HloOpcode::kRoundNearestEven: return std::nearbyint(x);
    case HloOpcode::kNot: return t == DType::kBool ? (x == 0) : static_cast<double>(~AsInt(x));
    case HloOpcode::kErf: return std::erf(x);
    default: return x;  // convert: rounding happens in RoundToType
  }
}

double EvalBinary(const HloInstruction& inst, DType t, double x, double y) {
  const bool integral = !IsFloating(t);
  switch (inst.opcode()) {
    // Integers wrap (two's complement), as the generated code does; RoundToType then truncates
    // to the width. A product of i32 operands is formed exactly in int64 first (a double would
    // lose its low bits). i64 values beyond 2^53 are not exact in this evaluator.
    case HloOpcode::kAdd: return x + y;
    case HloOpcode::kSubtract: return x - y;
    case HloOpcode::kMultiply:
      if (integral && t != DType::kBool)
        return static_cast<double>(static_cast<int64_t>(static_cast<uint64_t>(AsInt(x)) *
                                                        static_cast<uint64_t>(AsInt(y))) &
                                   (t == DType::kI64 ? ~int64_t{0} : int64_t{0xffffffff}));
      return x * y;
    case HloOpcode::kDivide:
      if (integral) return y == 0 ? -1 : static_cast<double>(AsInt(x) / AsInt(y));
      return x / y;
    case HloOpcode::kRemainder: return std::fmod(x, y);  // floats only (shape inference)
    case HloOpcode::kPower: return std::pow(x, y);
    case HloOpcode::kMaximum: return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
    case HloOpcode::kMinimum: return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
    case HloOpcode::kAnd:
      return t == DType::kBool ? (x != 0 && y != 0) : static_cast<double>(AsInt(x) & AsInt(y));
    case HloOpcode::kOr:
      return t == DType::kBool ? (x != 0 || y != 0) : static_cast<double>(AsInt(x) | AsInt(y));
    case HloOpcode::kXor:
      return t == DType::kBool ? ((x != 0) != (y != 0)) : static_cast<double>(AsInt(x) ^ AsInt(y));
    case HloOpcode::kShiftRightLogical: {
      const int bits = t == DType::kI64 ? 64 : t == DType::kI32 ? 32 : 8;
      const int64_t s = AsInt(y);
      if (s < 0 || s >= bits) return 0;
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      return static_cast<double>(
          static_cast<int64_t>((static_cast<uint64_t>(AsInt(x)) & mask) >> s));
    }
    case HloOpcode::kCompare:
      switch (inst.attrs().direction) {
        case ComparisonDirection::kEq: return x == y;
        case ComparisonDirection::kNe: return x != y;
        case ComparisonDirection::kLt: return x < y;
        case ComparisonDirection::kLe: return x <= y;
        case ComparisonDirection::kGt: return x > y;
        case ComparisonDirection::kGe: return x >= y;
      }
      return 0;
    default: return 0;
  }
}

StatusOr<Literal> EvaluateArrayOp(const HloInstruction& inst, absl::Span<const Literal* const> ops,
                                  HloEvaluator* ev) {
  const HloShape& shape = inst.shape();
  const HloOpcode op = inst.opcode();
  if (IsElementwiseUnary(op)) {
    const Literal& x = *ops[0];
    const DType t = x.shape.dtype();
    Literal out = Map(shape, ops, [&](int64_t i) { return EvalUnary(op, t, x.data[i]); });
    if (op == HloOpcode::kConvert) out.RoundToType();
    return out;
  }
  if (IsElementwiseBinary(op)) {
    const Literal &x = *ops[0], &y = *ops[1];
    const DType t = x.shape.dtype();
    return Map(shape, ops, [&](int64_t i) { return EvalBinary(inst, t, x.data[i], y.data[i]); });
  }
  switch (op) {
    case HloOpcode::kSelect: {
      const Literal &p = *ops[0], &x = *ops[1], &y = *ops[2];
      const bool scalar = p.shape.rank() == 0;
      return Map(shape, ops,
                 [&](int64_t i) { return p.data[scalar ? 0 : i] != 0 ? x.data[i] : y.data[i]; });
    }
    case HloOpcode::kIota: {
      Literal out(shape);
      int64_t i = 0;
      ForEachIndex(shape.dims(), [&](const DimVector& idx) {
        out.data[i++] = idx[inst.attrs().index];
        return true;
      });
      out.RoundToType();
      return out;
    }
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose: {
      const Literal& x = *ops[0];
      const DimVector& dims = inst.dimensions();
      Literal out(shape);
      DimVector xi(x.shape.rank());
      int64_t i = 0;
      ForEachIndex(shape.dims(), [&](const DimVector& idx) {
        for (size_t j = 0; j < dims.size(); ++j) {
          if (op == HloOpcode::kBroadcast)
            xi[j] = idx[dims[j]];
          else
            xi[dims[j]] = idx[j];
        }
        out.data[i++] = x.Get(xi);
        return true;
      });
      return out;
    }
    case HloOpcode::kReshape: return Literal(shape, ops[0]->data);
    case HloOpcode::kBitcast: {
      // Same bytes, new shape and layout: go through the physical order.
      const Literal& x = *ops[0];
      std::vector<double> phys(x.data.size());
      int64_t i = 0;
      ForEachIndex(x.shape.dims(), [&](const DimVector& idx) {
        phys[PhysicalOffset(x.shape, idx)] = x.data[i++];
        return true;
      });
      Literal out(shape);
      if (shape.dtype() != x.shape.dtype())
        return Unimplemented("[bitcast] changing the element type is not supported");
      i = 0;
      ForEachIndex(shape.dims(), [&](const DimVector& idx) {
        out.data[i++] = phys[PhysicalOffset(shape, idx)];
        return true;
      });
      return out;
    }
    case HloOpcode::kSlice: {
      const Literal& x = *ops[0];
      Literal out(shape);
      DimVector xi(x.shape.rank());
      int64_t i = 0;
      ForEachIndex(shape.dims(), [&](const DimVector& idx) {
        for (int64_t d = 0; d < x.shape.rank(); ++d)
          xi[d] = inst.attrs().slice[d].start + idx[d] * inst.attrs().slice[d].stride;
        out.data[i++] = x.Get(xi);
        return true;
      });
      return out;
    }
    case HloOpcode::kDynamicSlice: {
      const Literal& x = *ops[0];
      Literal out(shape);
      DimVector start(x.shape.rank()), xi(x.shape.rank());
      for (int64_t d = 0; d < x.shape.rank(); ++d)
        start[d] =
            std::clamp<int64_t>(AsInt(ops[d + 1]->data[0]), 0, x.shape.dim(d) - shape.dim(d));
      int64_t i = 0;
      ForEachIndex(shape.dims(), [&](const DimVector& idx) {
        for (int64_t d = 0; d < x.shape.rank(); ++d) xi[d] = start[d] + idx[d];
        out.data[i++] = x.Get(xi);
        return true;
      });
      return out;
    }
    case HloOpcode::kConcatenate: {
      Literal out(shape);
      const int64_t dim = inst.dimensions()[0];
      int64_t offset = 0;
      for (const Literal* x : ops) {
        int64_t i = 0;
        DimVector oi;
        ForEachIndex(x->shape.dims(), [&](const DimVector& idx) {
          oi = idx;
          oi[dim] += offset;
          out.Set(oi, x->data[i++]);
          return true;
        });
        offset += x->shape.dim(dim);
      }
      return out;
    }
    case HloOpcode::kPad: {
      const Literal& x = *ops[0];
      Literal out(shape);
      for (double& v : out.data) v = ops[1]->data[0];
      int64_t i = 0;
      DimVector oi(x.shape.rank());
      ForEachIndex(x.shape.dims(), [&](const DimVector& idx) {
        bool inside = true;
        for (int64_t d = 0; d < x.shape.rank(); ++d) {
          const PadDim& p = inst.attrs().padding[d];
          oi[d] = p.lo + idx[d] * (p.interior + 1);
          inside &= oi[d] >= 0 && oi[d] < shape.dim(d);
        }
        if (inside) out.Set(oi, x.data[i]);
        ++i;
        return true;
      });
      return out;
    }
    case HloOpcode::kReduce: return Reduce(inst, *ops[0], ops[1]->data[0], ev);
    case HloOpcode::kDot: return Dot(inst, *ops[0], *ops[1]);
    case HloOpcode::kConvolution: return Convolution(inst, *ops[0], *ops[1]);
    case HloOpcode::kGather: return Gather(inst, *ops[0], *ops[1]);
    case HloOpcode::kScatter: return Scatter(inst, *ops[0], *ops[1], *ops[2]);
    case HloOpcode::kCustomCall: {
      if (!shape.is_array()) return Unimplemented("[custom-call] tuple results are not supported");
      std::vector<library::Operand> args;
      for (const Literal* o : ops) args.push_back({o->data.data(), o->shape.dims()});
      Literal out(shape);
      RETURN_IF_ERROR(library::RunLibraryCall<double>(inst.attrs().custom_call_target,
                                                      inst.attrs().backend_config, args,
                                                      out.data.data(), shape.dims()));
      return out;
    }
    case HloOpcode::kWhile: {
      Literal state = *ops[0];
      for (int64_t iter = 0;; ++iter) {
        ASSIGN_OR_RETURN(Literal c, ev->Evaluate(*inst.while_condition(), {state}));
        if (c.data.at(0) == 0) break;
        ASSIGN_OR_RETURN(state, ev->Evaluate(*inst.while_body(), {state}));
        if (iter > (int64_t{1} << 32)) return Internal("[while] runaway loop");
      }
      return state;
    }
    case HloOpcode::kConditional: {
      int64_t n = inst.called_computations().size();
      int64_t b = ops[0]->shape.dtype() == DType::kBool ? (ops[0]->data[0] != 0 ? 0 : 1)
                                                        : AsInt(ops[0]->data[0]);
      if (b < 0 || b >= n) b = n - 1;
      return ev->Evaluate(*inst.called_computations()[b], {*ops[b + 1]});
    }
    default: return Unimplemented("[evaluator] %s is not supported", HloOpcodeString(op));
  }
}

}  // namespace oneflow_like::hlo::eval_ops
