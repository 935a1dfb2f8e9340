// Text form of instructions, computations and modules. The parser (hlo_parser.cc) reads exactly
// what is written here; keep the two in step.
#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {
namespace {

std::string Ints(const DimVector& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}
std::string Comp(const HloComputation* c) {
  return absl::StrCat("%", c->name());
}

std::string WindowToString(const std::vector<WindowDim>& w) {
  auto join = [&](auto field) {
    std::vector<std::string> parts;
    for (const WindowDim& d : w) parts.push_back(field(d));
    return absl::StrJoin(parts, "x");
  };
  std::string s =
      absl::StrCat("size=", join([](const WindowDim& d) { return absl::StrCat(d.size); }));
  bool stride = false, pad = false, lhs = false, rhs = false;
  for (const WindowDim& d : w) {
    stride |= d.stride != 1;
    pad |= d.pad_lo != 0 || d.pad_hi != 0;
    lhs |= d.lhs_dilation != 1;
    rhs |= d.rhs_dilation != 1;
  }
  if (stride)
    absl::StrAppend(&s,
                    " stride=", join([](const WindowDim& d) { return absl::StrCat(d.stride); }));
  if (pad)
    absl::StrAppend(&s, " pad=", join([](const WindowDim& d) {
      return absl::StrCat(d.pad_lo, "_", d.pad_hi);
    }));
  if (lhs)
    absl::StrAppend(
        &s, " lhs_dilate=", join([](const WindowDim& d) { return absl::StrCat(d.lhs_dilation); }));
  if (rhs)
    absl::StrAppend(
        &s, " rhs_dilate=", join([](const WindowDim& d) { return absl::StrCat(d.rhs_dilation); }));
  return absl::StrCat("{", s, "}");
}

}  // namespace

std::string HloInstruction::AttributesToString() const {
  std::vector<std::string> a;
  const HloAttrs& t = attrs_;
  auto reduce_fn = [&] {
    if (!called_.empty())
      a.push_back(absl::StrCat("to_apply=", Comp(called_[0])));
    else if (t.reduce_kind != ReduceKind::kNone)
      a.push_back(absl::StrCat("kind=", ReduceKindString(t.reduce_kind)));
  };
  switch (opcode_) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kConcatenate:
      a.push_back(absl::StrCat("dimensions=", Ints(t.dimensions)));
      break;
    case HloOpcode::kReduce:
      a.push_back(absl::StrCat("dimensions=", Ints(t.dimensions)));
      reduce_fn();
      break;
    case HloOpcode::kSlice: {
      std::vector<std::string> parts;
      for (const SliceDim& s : t.slice) {
        parts.push_back(s.stride == 1
                            ? absl::StrCat("[", s.start, ":", s.limit, "]")
                            : absl::StrCat("[", s.start, ":", s.limit, ":", s.stride, "]"));
      }
      a.push_back(absl::StrCat("slice={", absl::StrJoin(parts, ", "), "}"));
      break;
    }
    case HloOpcode::kPad: {
      std::vector<std::string> parts;
      for (const PadDim& p : t.padding) {
        parts.push_back(p.interior == 0 ? absl::StrCat(p.lo, "_", p.hi)
                                        : absl::StrCat(p.lo, "_", p.hi, "_", p.interior));
      }
      a.push_back(absl::StrCat("padding=", parts.empty() ? "{}" : absl::StrJoin(parts, "x")));
      break;
    }
    case HloOpcode::kDot:
      if (!t.dot.lhs_batch.empty())
        a.push_back(absl::StrCat("lhs_batch_dims=", Ints(t.dot.lhs_batch)));
      a.push_back(absl::StrCat("lhs_contracting_dims=", Ints(t.dot.lhs_contracting)));
      if (!t.dot.rhs_batch.empty())
        a.push_back(absl::StrCat("rhs_batch_dims=", Ints(t.dot.rhs_batch)));
      a.push_back(absl::StrCat("rhs_contracting_dims=", Ints(t.dot.rhs_contracting)));
      break;
    case HloOpcode::kConvolution:
      if (!t.window.empty()) a.push_back(absl::StrCat("window=", WindowToString(t.window)));
      a.push_back(absl::StrCat("dim_labels=", t.conv.ToString()));
      if (t.feature_group_count != 1)
        a.push_back(absl::StrCat("feature_group_count=", t.feature_group_count));
      break;
    case HloOpcode::kGather:
      a.push_back(absl::StrCat("offset_dims=", Ints(t.gather.offset_dims)));
      a.push_back(absl::StrCat("collapsed_slice_dims=", Ints(t.gather.collapsed_slice_dims)));
      a.push_back(absl::StrCat("start_index_map=", Ints(t.gather.start_index_map)));
      a.push_back(absl::StrCat("index_vector_dim=", t.gather.index_vector_dim));
      a.push_back(absl::StrCat("slice_sizes=", Ints(t.slice_sizes)));
      break;
    case HloOpcode::kScatter:
      a.push_back(absl::StrCat("update_window_dims=", Ints(t.scatter.update_window_dims)));
      a.push_back(absl::StrCat("inserted_window_dims=", Ints(t.scatter.inserted_window_dims)));
      a.push_back(absl::StrCat("scatter_dims_to_operand_dims=",
                               Ints(t.scatter.scatter_dims_to_operand_dims)));
      a.push_back(absl::StrCat("index_vector_dim=", t.scatter.index_vector_dim));
      reduce_fn();
      break;
    case HloOpcode::kDynamicSlice:
      a.push_back(absl::StrCat("dynamic_slice_sizes=", Ints(t.slice_sizes)));
      break;
    case HloOpcode::kCompare:
      a.push_back(absl::StrCat("direction=", ComparisonDirectionString(t.direction)));
      break;
    case HloOpcode::kCustomCall:
      a.push_back(absl::StrCat("custom_call_target=\"", absl::CEscape(t.custom_call_target), "\""));
      if (!t.backend_config.empty())
        a.push_back(absl::StrCat("backend_config=\"", absl::CEscape(t.backend_config), "\""));
      break;
    case HloOpcode::kFusion:
      a.push_back(absl::StrCat("kind=", FusionKindString(t.fusion_kind)));
      a.push_back(absl::StrCat("calls=", Comp(called_[0])));
      break;
    case HloOpcode::kWhile:
      a.push_back(absl::StrCat("condition=", Comp(called_[0])));
      a.push_back(absl::StrCat("body=", Comp(called_[1])));
      break;
    case HloOpcode::kConditional: {
      std::vector<std::string> parts;
      for (auto* c : called_) parts.push_back(Comp(c));
      a.push_back(absl::StrCat("branch_computations={", absl::StrJoin(parts, ", "), "}"));
      break;
    }
    case HloOpcode::kRng:
      a.push_back(absl::StrCat("distribution=", RngDistributionString(t.distribution)));
      break;
    case HloOpcode::kIota: a.push_back(absl::StrCat("iota_dimension=", t.index)); break;
    case HloOpcode::kGetTupleElement: a.push_back(absl::StrCat("index=", t.index)); break;
    default: break;
  }
  return absl::StrJoin(a, ", ");
}

std::string HloInstruction::ToString() const {
  std::string args;
  if (opcode_ == HloOpcode::kParameter) {
    args = absl::StrCat(attrs_.index);
  } else if (opcode_ == HloOpcode::kConstant) {
    args = literal_.ValuesToString();
  } else {
    std::vector<std::string> names;
    for (auto* o : operands_) names.push_back(absl::StrCat("%", o->name()));
    args = absl::StrJoin(names, ", ");
  }
  std::string s = absl::StrCat("%", name_, " = ", shape_.ToString(), " ", HloOpcodeString(opcode_),
                               "(", args, ")");
  std::string attrs = AttributesToString();
  if (!attrs.empty()) absl::StrAppend(&s, ", ", attrs);
  return s;
}

std::string HloComputation::ToString(bool is_entry) const {
  std::vector<std::string> params;
  for (auto* p : params_) params.push_back(absl::StrCat(p->name(), ": ", p->shape().ToString()));
  std::string s =
      absl::StrCat(is_entry ? "ENTRY " : "", "%", name_, " (", absl::StrJoin(params, ", "), ") -> ",
                   root_ ? root_->shape().ToString() : "()", " {\n");
  for (HloInstruction* i : MakeInstructionPostOrder()) {
    absl::StrAppend(&s, "  ", i == root_ ? "ROOT " : "", i->ToString(), "\n");
  }
  absl::StrAppend(&s, "}\n");
  return s;
}

std::string HloModule::ToString() const {
  std::string s =
      absl::StrCat("HloModule ", name_, is_scheduled_ ? ", is_scheduled=true" : "", "\n");
  for (HloComputation* c : MakeComputationPostOrder()) {
    absl::StrAppend(&s, "\n", c->ToString(c == entry_));
  }
  return s;
}

}  // namespace oneflow_like::hlo
