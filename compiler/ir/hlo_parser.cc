#include "compiler/ir/hlo_parser.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"

namespace oneflow_like::hlo {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 40;  // keeps numel() far from overflow on bad input

class Parser {
 public:
  explicit Parser(absl::string_view text) : s_(text) {}

  StatusOr<std::unique_ptr<HloModule>> ParseModule();
  StatusOr<HloShape> ParseShapeOnly() {
    ASSIGN_OR_RETURN(HloShape shape, ParseShape());
    SkipWs();
    if (pos_ != s_.size()) return Error("trailing text after the shape");
    return shape;
  }

 private:
  Status Error(const std::string& msg) const {
    int64_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return InvalidArgument("line %d:%d: %s", line, col, msg);
  }
  void SkipWs() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
        continue;
      }
      if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      break;
    }
  }
  char Peek() {
    SkipWs();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool TryConsume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  Status Expect(char c) {
    if (!TryConsume(c)) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    return absl::OkStatus();
  }
  bool TryConsumeStr(absl::string_view w) {
    SkipWs();
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  static bool IsIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  }
  StatusOr<std::string> ParseIdent(const char* what) {
    SkipWs();
    size_t start = pos_;
    while (pos_ < s_.size() && IsIdentChar(s_[pos_])) ++pos_;
    if (start == pos_) return Error(absl::StrCat("expected ", what));
    return std::string(s_.substr(start, pos_ - start));
  }
  StatusOr<std::string> ParseName(const char* what) {
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == '%') ++pos_;
    return ParseIdent(what);
  }
  StatusOr<int64_t> ParseInt() {
    SkipWs();
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    int64_t v;
    if (!absl::SimpleAtoi(s_.substr(start, pos_ - start), &v)) {
      pos_ = start;
      return Error("expected an integer");
    }
    return v;
  }
  StatusOr<double> ParseNumber() {
    SkipWs();
    size_t start = pos_;
    while (pos_ < s_.size() && (IsIdentChar(s_[pos_]) || s_[pos_] == '+')) ++pos_;
    std::string tok(s_.substr(start, pos_ - start));
    if (tok == "true") return 1.0;
    if (tok == "false") return 0.0;
    if (tok == "inf" || tok == "+inf") return HUGE_VAL;
    if (tok == "-inf") return -HUGE_VAL;
    if (tok == "nan" || tok == "-nan") return std::nan("");
    char* end = nullptr;
    double v = tok.empty() ? 0 : std::strtod(tok.c_str(), &end);
    if (tok.empty() || end != tok.c_str() + tok.size()) {
      pos_ = start;
      return Error("expected a number");
    }
    return v;
  }
  StatusOr<DimVector> ParseIntList() {
    RETURN_IF_ERROR(Expect('{'));
    DimVector v;
    if (TryConsume('}')) return v;
    do {
      ASSIGN_OR_RETURN(int64_t x, ParseInt());
      v.push_back(x);
    } while (TryConsume(','));
    RETURN_IF_ERROR(Expect('}'));
    return v;
  }
  StatusOr<std::string> ParseString() {
    RETURN_IF_ERROR(Expect('"'));
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') pos_ += (s_[pos_] == '\\') ? 2 : 1;
    if (pos_ >= s_.size()) return Error("unterminated string");
    std::string raw(s_.substr(start, pos_ - start)), out;
    ++pos_;
    if (!absl::CUnescape(raw, &out)) return Error("bad escape in string");
    return out;
  }
  StatusOr<HloShape> ParseShape();
  Status ParseLiteralValues(std::vector<double>* out, int depth);
  Status ParseComputation();
  Status ParseInstruction(HloComputation* comp, bool* is_root);
  Status ParseAttribute(HloInstruction* inst, const std::string& key);
  StatusOr<HloComputation*> ParseComputationRef();
  Status ParseWindow(std::vector<WindowDim>* w);
  StatusOr<std::vector<SliceDim>> ParseSlice();
  StatusOr<std::vector<PadDim>> ParsePadding();

  absl::string_view s_;
  size_t pos_ = 0;
  std::unique_ptr<HloModule> module_;
  absl::flat_hash_map<std::string, HloInstruction*> scope_;  // names in the current computation
  absl::flat_hash_set<std::string> all_names_;
};

StatusOr<HloShape> Parser::ParseShape() {
  if (TryConsume('(')) {
    std::vector<HloShape> elems;
    if (!TryConsume(')')) {
      do {
        ASSIGN_OR_RETURN(HloShape e, ParseShape());
        elems.push_back(std::move(e));
      } while (TryConsume(','));
      RETURN_IF_ERROR(Expect(')'));
    }
    return HloShape::Tuple(std::move(elems));
  }
  size_t start = pos_;
  SkipWs();
  start = pos_;
  while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  std::string type(s_.substr(start, pos_ - start));
  auto dtype = DTypeFromName(type);
  if (type.empty() || !dtype.ok()) {
    pos_ = start;
    return Error(absl::StrCat("expected a shape, got '", type, "'"));
  }
  if (pos_ >= s_.size() || s_[pos_] != '[') return Error("expected '[' after the element type");
  ++pos_;
  DimVector dims;
  if (!TryConsume(']')) {
    do {
      ASSIGN_OR_RETURN(int64_t d, ParseInt());
      if (d < 0 || d > kMaxDim) return Error(absl::StrCat("bad dimension size ", d));
      dims.push_back(d);
    } while (TryConsume(','));
    RETURN_IF_ERROR(Expect(']'));
  }
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d != 0 && numel > kMaxDim / d) return Error("shape has too many elements");
    numel *= d;
  }
  HloShape shape(*dtype, std::move(dims));
  if (pos_ < s_.size() && s_[pos_] == '{') {
    ASSIGN_OR_RETURN(DimVector m2m, ParseIntList());
    if (shape.rank() > 0) {
      std::vector<bool> seen(shape.rank(), false);
      if (static_cast<int64_t>(m2m.size()) != shape.rank())
        return Error("layout rank differs from the shape rank");
      for (int64_t d : m2m) {
        if (d < 0 || d >= shape.rank() || seen[d])
          return Error("layout is not a permutation of the dims");
        seen[d] = true;
      }
      shape.set_minor_to_major(std::move(m2m));
    } else if (!m2m.empty()) {
      return Error("a scalar has an empty layout");
    }
  }
  return shape;
}

Status Parser::ParseLiteralValues(std::vector<double>* out, int depth) {
  if (depth > 64) return Error("literal nested too deeply");
  if (TryConsume('{')) {
    if (TryConsume('}')) return absl::OkStatus();
    do {
      RETURN_IF_ERROR(ParseLiteralValues(out, depth + 1));
    } while (TryConsume(','));
    return Expect('}');
  }
  ASSIGN_OR_RETURN(double v, ParseNumber());
  out->push_back(v);
  return absl::OkStatus();
}

StatusOr<HloComputation*> Parser::ParseComputationRef() {
  ASSIGN_OR_RETURN(std::string name, ParseName("a computation name"));
  HloComputation* c = module_->GetComputation(name);
  if (c == nullptr)
    return Error(absl::StrCat("unknown computation '", name, "' (define callees first)"));
  return c;
}

StatusOr<std::unique_ptr<HloModule>> Parser::ParseModule() {
  if (!TryConsumeStr("HloModule")) return Error("expected 'HloModule'");
  ASSIGN_OR_RETURN(std::string name, ParseIdent("a module name"));
  module_ = std::make_unique<HloModule>(name);
  while (TryConsume(',')) {
    ASSIGN_OR_RETURN(std::string key, ParseIdent("a module attribute"));
    RETURN_IF_ERROR(Expect('='));
    if (key == "is_scheduled") {
      ASSIGN_OR_RETURN(std::string v, ParseIdent("true or false"));
      module_->set_is_scheduled(v == "true");
    } else {
      return Error(absl::StrCat("unknown module attribute '", key, "'"));
    }
  }
  while (Peek() != '\0') RETURN_IF_ERROR(ParseComputation());
  if (module_->entry_computation() == nullptr) return Error("module has no ENTRY computation");
  return std::move(module_);
}

Status Parser::ParseComputation() {
  bool is_entry = TryConsumeStr("ENTRY");
  ASSIGN_OR_RETURN(std::string name, ParseName("a computation name"));
  if (module_->GetComputation(name) != nullptr)
    return Error(absl::StrCat("duplicate computation '", name, "'"));
  if (is_entry && module_->entry_computation() != nullptr) return Error("second ENTRY computation");
  if (TryConsume('(')) {  // signature: informative only, checked by the verifier through params
    if (!TryConsume(')')) {
      do {
        RETURN_IF_ERROR(ParseName("a parameter name").status());
        RETURN_IF_ERROR(Expect(':'));
        RETURN_IF_ERROR(ParseShape().status());
      } while (TryConsume(','));
      RETURN_IF_ERROR(Expect(')'));
    }
    if (!TryConsumeStr("->")) return Error("expected '->'");
    RETURN_IF_ERROR(ParseShape().status());
  }
  RETURN_IF_ERROR(Expect('{'));
  HloComputation* comp = module_->AddComputation(std::make_unique<HloComputation>(name), is_entry);
  scope_.clear();
  HloInstruction* last = nullptr;
  bool has_root = false;
  std::vector<HloInstruction*> params;
  while (!TryConsume('}')) {
    if (Peek() == '\0') return Error("unexpected end of text inside a computation");
    bool is_root = false;
    RETURN_IF_ERROR(ParseInstruction(comp, &is_root));
    last = comp->instructions().back();
    if (is_root) {
      if (has_root) return Error("second ROOT in a computation");
      has_root = true;
      comp->set_root_instruction(last);
    }
  }
  if (last == nullptr) return Error(absl::StrCat("computation '", name, "' is empty"));
  if (!has_root) comp->set_root_instruction(last);
  Status st = comp->RebuildParameterList();
  if (!st.ok()) return Error(std::string(st.message()));
  return absl::OkStatus();
}

Status Parser::ParseInstruction(HloComputation* comp, bool* is_root) {
  *is_root = TryConsumeStr("ROOT ");
  ASSIGN_OR_RETURN(std::string name, ParseName("an instruction name"));
  if (!all_names_.insert(name).second)
    return Error(absl::StrCat("duplicate instruction name '", name, "'"));
  RETURN_IF_ERROR(Expect('='));
  ASSIGN_OR_RETURN(HloShape shape, ParseShape());
  ASSIGN_OR_RETURN(std::string opname, ParseIdent("an opcode"));
  auto op = StringToHloOpcode(opname);
  if (!op.ok()) return Error(absl::StrCat("unknown opcode '", opname, "'"));
  RETURN_IF_ERROR(Expect('('));
  std::unique_ptr<HloInstruction> inst;
  if (*op == HloOpcode::kParameter) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt());
    if (n < 0) return Error("negative parameter number");
    inst = HloInstruction::CreateParameter(n, shape, name);
    RETURN_IF_ERROR(Expect(')'));
  } else if (*op == HloOpcode::kConstant) {
    if (!shape.is_array()) return Error("tuple constants are not supported");
    std::vector<double> values;
    RETURN_IF_ERROR(ParseLiteralValues(&values, 0));
    RETURN_IF_ERROR(Expect(')'));
    if (static_cast<int64_t>(values.size()) != shape.numel())
      return Error(absl::StrCat("constant has ", values.size(), " values but its shape has ",
                                shape.numel()));
    Literal lit(shape, std::move(values));
    lit.RoundToType();
    inst = HloInstruction::CreateConstant(std::move(lit));
    inst->set_name(name);
  } else {
    std::vector<HloInstruction*> operands;
    if (!TryConsume(')')) {
      do {
        SkipWs();
        size_t save = pos_;
        // An operand may be written with its shape first (XLA style): `f32[2]{0} %x`.
        while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) ++pos_;
        bool has_shape = (pos_ < s_.size() && s_[pos_] == '[') || (s_.substr(save, 1) == "(");
        pos_ = save;
        if (has_shape) RETURN_IF_ERROR(ParseShape().status());
        ASSIGN_OR_RETURN(std::string oname, ParseName("an operand name"));
        auto it = scope_.find(oname);
        if (it == scope_.end()) return Error(absl::StrCat("unknown operand '", oname, "'"));
        operands.push_back(it->second);
      } while (TryConsume(','));
      RETURN_IF_ERROR(Expect(')'));
    }
    int arity = HloOpcodeArity(*op);
    if (arity >= 0 && static_cast<int>(operands.size()) != arity)
      return Error(absl::StrCat(opname, " takes ", arity, " operands, got ", operands.size()));
    inst = HloInstruction::Create(*op, shape, std::move(operands));
    inst->set_name(name);
  }
  while (TryConsume(',')) {
    ASSIGN_OR_RETURN(std::string key, ParseIdent("an attribute name"));
    RETURN_IF_ERROR(Expect('='));
    RETURN_IF_ERROR(ParseAttribute(inst.get(), key));
  }
  switch (*op) {  // attributes that must be present
    case HloOpcode::kFusion:
    case HloOpcode::kConditional:
      if (inst->called_computations().empty())
        return Error(absl::StrCat(opname, " needs its computations"));
      break;
    case HloOpcode::kWhile:
      if (inst->called_computations().size() != 2 || !inst->called_computations()[0] ||
          !inst->called_computations()[1])
        return Error("while needs condition= and body=");
      break;
    case HloOpcode::kConvolution:
      if (inst->attrs().conv.in_spatial.size() != inst->attrs().window.size() &&
          !inst->attrs().window.empty())
        return Error("window rank differs from dim_labels");
      break;
    default: break;
  }
  if (*op == HloOpcode::kFusion) inst->fused_computation()->set_fusion_instruction(inst.get());
  HloInstruction* raw = comp->AddInstruction(std::move(inst));
  scope_[name] = raw;
  return absl::OkStatus();
}

Status Parser::ParseWindow(std::vector<WindowDim>* w) {
  RETURN_IF_ERROR(Expect('{'));
  while (!TryConsume('}')) {
    ASSIGN_OR_RETURN(std::string key, ParseIdent("a window field"));
    RETURN_IF_ERROR(Expect('='));
    std::vector<std::pair<int64_t, int64_t>> vals;  // pad gives pairs
    do {
      ASSIGN_OR_RETURN(int64_t a, ParseInt());
      int64_t b = 0;
      if (key == "pad") {
        RETURN_IF_ERROR(Expect('_'));
        ASSIGN_OR_RETURN(b, ParseInt());
      }
      vals.push_back({a, b});
    } while (TryConsume('x'));
    if (key == "size") {
      w->assign(vals.size(), WindowDim());
    } else if (vals.size() != w->size()) {
      return Error("window fields disagree on the rank (size= must come first)");
    }
    for (size_t i = 0; i < vals.size(); ++i) {
      WindowDim& d = (*w)[i];
      if (key == "size")
        d.size = vals[i].first;
      else if (key == "stride")
        d.stride = vals[i].first;
      else if (key == "pad") {
        d.pad_lo = vals[i].first;
        d.pad_hi = vals[i].second;
      } else if (key == "lhs_dilate")
        d.lhs_dilation = vals[i].first;
      else if (key == "rhs_dilate")
        d.rhs_dilation = vals[i].first;
      else
        return Error(absl::StrCat("unknown window field '", key, "'"));
    }
  }
  return absl::OkStatus();
}

StatusOr<std::vector<SliceDim>> Parser::ParseSlice() {
  std::vector<SliceDim> out;
  RETURN_IF_ERROR(Expect('{'));
  if (TryConsume('}')) return out;
  do {
    RETURN_IF_ERROR(Expect('['));
    SliceDim d;
    ASSIGN_OR_RETURN(d.start, ParseInt());
    RETURN_IF_ERROR(Expect(':'));
    ASSIGN_OR_RETURN(d.limit, ParseInt());
    if (TryConsume(':')) {
      ASSIGN_OR_RETURN(d.stride, ParseInt());
    }
    RETURN_IF_ERROR(Expect(']'));
    out.push_back(d);
  } while (TryConsume(','));
  RETURN_IF_ERROR(Expect('}'));
  return out;
}

StatusOr<std::vector<PadDim>> Parser::ParsePadding() {
  std::vector<PadDim> out;
  if (TryConsume('{')) {
    RETURN_IF_ERROR(Expect('}'));
    return out;
  }
  do {
    PadDim d;
    ASSIGN_OR_RETURN(d.lo, ParseInt());
    RETURN_IF_ERROR(Expect('_'));
    ASSIGN_OR_RETURN(d.hi, ParseInt());
    if (TryConsume('_')) {
      ASSIGN_OR_RETURN(d.interior, ParseInt());
    }
    out.push_back(d);
  } while (TryConsume('x'));
  return out;
}

Status Parser::ParseAttribute(HloInstruction* inst, const std::string& key) {
  HloAttrs* a = inst->mutable_attrs();
  const HloOpcode op = inst->opcode();
  auto set_called = [&](size_t slot, HloComputation* c) {
    std::vector<HloComputation*> called = inst->called_computations();
    if (called.size() <= slot) called.resize(slot + 1, nullptr);
    called[slot] = c;
    inst->set_called_computations(std::move(called));
  };
  if (key == "dimensions") {
    ASSIGN_OR_RETURN(a->dimensions, ParseIntList());
  } else if (key == "lhs_batch_dims") {
    ASSIGN_OR_RETURN(a->dot.lhs_batch, ParseIntList());
  } else if (key == "lhs_contracting_dims") {
    ASSIGN_OR_RETURN(a->dot.lhs_contracting, ParseIntList());
  } else if (key == "rhs_batch_dims") {
    ASSIGN_OR_RETURN(a->dot.rhs_batch, ParseIntList());
  } else if (key == "rhs_contracting_dims") {
    ASSIGN_OR_RETURN(a->dot.rhs_contracting, ParseIntList());
  } else if (key == "offset_dims") {
    ASSIGN_OR_RETURN(a->gather.offset_dims, ParseIntList());
  } else if (key == "collapsed_slice_dims") {
    ASSIGN_OR_RETURN(a->gather.collapsed_slice_dims, ParseIntList());
  } else if (key == "start_index_map") {
    ASSIGN_OR_RETURN(a->gather.start_index_map, ParseIntList());
  } else if (key == "slice_sizes" || key == "dynamic_slice_sizes") {
    ASSIGN_OR_RETURN(a->slice_sizes, ParseIntList());
  } else if (key == "update_window_dims") {
    ASSIGN_OR_RETURN(a->scatter.update_window_dims, ParseIntList());
  } else if (key == "inserted_window_dims") {
    ASSIGN_OR_RETURN(a->scatter.inserted_window_dims, ParseIntList());
  } else if (key == "scatter_dims_to_operand_dims") {
    ASSIGN_OR_RETURN(a->scatter.scatter_dims_to_operand_dims, ParseIntList());
  } else if (key == "index_vector_dim") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt());
    (op == HloOpcode::kScatter ? a->scatter.index_vector_dim : a->gather.index_vector_dim) = v;
  } else if (key == "feature_group_count") {
    ASSIGN_OR_RETURN(a->feature_group_count, ParseInt());
  } else if (key == "iota_dimension" || key == "index") {
    ASSIGN_OR_RETURN(a->index, ParseInt());
  } else if (key == "slice") {
    ASSIGN_OR_RETURN(a->slice, ParseSlice());
  } else if (key == "padding") {
    ASSIGN_OR_RETURN(a->padding, ParsePadding());
  } else if (key == "window") {
    RETURN_IF_ERROR(ParseWindow(&a->window));
  } else if (key == "dim_labels") {
    SkipWs();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '-' || s_[pos_] == '>'))
      ++pos_;
    auto dims = ConvDims::Parse(std::string(s_.substr(start, pos_ - start)));
    if (!dims.ok()) {
      pos_ = start;
      return Error(std::string(dims.status().message()));
    }
    a->conv = *dims;
  } else if (key == "direction") {
    ASSIGN_OR_RETURN(std::string v, ParseIdent("a direction"));
    auto d = StringToComparisonDirection(v);
    if (!d.ok()) return Error(std::string(d.status().message()));
    a->direction = *d;
  } else if (key == "distribution") {
    ASSIGN_OR_RETURN(std::string v, ParseIdent("a distribution"));
    auto d = StringToRngDistribution(v);
    if (!d.ok()) return Error(std::string(d.status().message()));
    a->distribution = *d;
  } else if (key == "kind") {
    ASSIGN_OR_RETURN(std::string v, ParseIdent("a kind"));
    if (op == HloOpcode::kFusion) {
      auto k = StringToFusionKind(v);
      if (!k.ok()) return Error(std::string(k.status().message()));
      a->fusion_kind = *k;
    } else {
      auto k = StringToReduceKind(v);
      if (!k.ok()) return Error(std::string(k.status().message()));
      a->reduce_kind = *k;
    }
  } else if (key == "custom_call_target") {
    ASSIGN_OR_RETURN(a->custom_call_target, ParseString());
  } else if (key == "backend_config") {
    ASSIGN_OR_RETURN(a->backend_config, ParseString());
  } else if (key == "to_apply" || key == "calls" || key == "condition") {
    ASSIGN_OR_RETURN(HloComputation * c, ParseComputationRef());
    set_called(0, c);
  } else if (key == "body") {
    ASSIGN_OR_RETURN(HloComputation * c, ParseComputationRef());
    set_called(1, c);
  } else if (key == "branch_computations") {
    RETURN_IF_ERROR(Expect('{'));
    std::vector<HloComputation*> branches;
    do {
      ASSIGN_OR_RETURN(HloComputation * c, ParseComputationRef());
      branches.push_back(c);
    } while (TryConsume(','));
    RETURN_IF_ERROR(Expect('}'));
    inst->set_called_computations(std::move(branches));
  } else
    return Error(absl::StrCat("unknown attribute '", key, "'"));
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(absl::string_view text) {
  Parser p(text);
  return p.ParseModule();
}

StatusOr<HloShape> ParseHloShape(absl::string_view text) {
  Parser p(text);
  return p.ParseShapeOnly();
}

}  // namespace oneflow_like::hlo
